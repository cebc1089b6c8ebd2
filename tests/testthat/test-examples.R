# Each server in inst/examples is started the way an MCP client starts it
# (`Rscript --vanilla <script>`), driven over stdio with the legacy handshake,
# and every tool it lists is called. Nothing but JSON-RPC may reach stdout.

example_rscript <- function() {
  file.path(R.home("bin"), if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript")
}

# The child R must find the same mcplite installation as this process.
example_env <- function(...) {
  c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), ...)
}

example_state <- new.env(parent = emptyenv())

skip_if_examples_cannot_run <- function() {
  skip_if_not_installed("processx")
  skip_if_not_installed("jsonlite")
  if (is.null(example_state$child_ok)) {
    res <- processx::run(
      example_rscript(),
      c("--vanilla", "-e", "quit(status = if (requireNamespace('mcplite', quietly = TRUE)) 0 else 1)"),
      env = example_env(), error_on_status = FALSE, timeout = 60
    )
    example_state$child_ok <- identical(res$status, 0L)
  }
  if (!example_state$child_ok) {
    skip("mcplite is not installed where a child Rscript can load it")
  }
}

example_start <- function(name, env = character()) {
  skip_if_examples_cannot_run()
  path <- system.file("examples", name, package = "mcplite")
  expect_true(file.exists(path))
  stderr_file <- tempfile(fileext = ".txt")
  proc <- processx::process$new(
    example_rscript(), c("--vanilla", path),
    stdin = "|", stdout = "|", stderr = stderr_file,
    env = example_env(env),
    # A failed test leaves the server behind: kill it when it is collected.
    cleanup = TRUE
  )
  client <- new.env(parent = emptyenv())
  client$proc <- proc
  client$stderr_file <- stderr_file
  client$lines <- character() # every stdout line, in order
  client$pending <- list()    # parsed messages not yet claimed
  client$next_id <- 1L
  client
}

example_stderr <- function(client) {
  if (file.exists(client$stderr_file)) paste(readLines(client$stderr_file, warn = FALSE), collapse = "\n") else ""
}

# Spans written by the stderr trace exporter: one OTLP JSON document per line.
example_spans <- function(lines) {
  docs <- lapply(grep('^\\{"resourceSpans"', lines, value = TRUE),
                 jsonlite::fromJSON, simplifyVector = FALSE)
  spans <- list()
  for (doc in docs) {
    for (rs in doc$resourceSpans) {
      for (ss in rs$scopeSpans) spans <- c(spans, ss$spans)
    }
  }
  spans
}

example_send <- function(client, msg) {
  line <- as.character(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null"))
  client$proc$write_input(paste0(line, "\n"))
}

example_read_reply <- function(client, id, timeout = 60) {
  deadline <- Sys.time() + timeout
  repeat {
    for (i in seq_along(client$pending)) {
      msg <- client$pending[[i]]
      if (identical(msg$id, id)) {
        client$pending[[i]] <- NULL
        return(msg)
      }
    }
    if (Sys.time() > deadline) {
      stop("No reply to request ", id, " within ", timeout, " s. stderr:\n", example_stderr(client))
    }
    if (!client$proc$is_alive()) {
      got <- client$proc$read_all_output_lines()
    } else {
      client$proc$poll_io(500)
      got <- client$proc$read_output_lines()
    }
    for (line in got) {
      client$lines <- c(client$lines, line)
      msg <- tryCatch(jsonlite::fromJSON(line, simplifyVector = FALSE), error = function(e) NULL)
      if (!is.null(msg)) client$pending[[length(client$pending) + 1]] <- msg
    }
    if (length(got) == 0 && !client$proc$is_alive()) {
      stop("The server exited before replying to request ", id, ". stderr:\n", example_stderr(client))
    }
  }
}

example_request <- function(client, method, params = NULL) {
  id <- client$next_id
  client$next_id <- id + 1L
  msg <- list(jsonrpc = "2.0", id = id, method = method)
  if (!is.null(params)) msg$params <- params
  example_send(client, msg)
  reply <- example_read_reply(client, id)
  expect_null(reply$error)
  reply$result
}

example_handshake <- function(client, version = "2025-11-25") {
  init <- example_request(client, "initialize", list(
    protocolVersion = version,
    capabilities = structure(list(), names = character()),
    clientInfo = list(name = "mcplite-tests", version = "1.0")
  ))
  expect_equal(init$protocolVersion, version)
  expect_false(is.null(init$capabilities$tools))
  example_send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  init
}

example_tools <- function(client) {
  tools <- example_request(client, "tools/list")$tools
  names(tools) <- vapply(tools, function(t) t$name, character(1))
  tools
}

example_call <- function(client, name, arguments = NULL) {
  if (is.null(arguments)) arguments <- structure(list(), names = character())
  example_request(client, "tools/call", list(name = name, arguments = arguments))
}

example_text <- function(result) {
  texts <- vapply(Filter(function(b) identical(b$type, "text"), result$content),
                  function(b) b$text, character(1))
  paste(texts, collapse = "\n")
}

# Close stdin like a client shutting down: the server must exit cleanly, and
# every line it ever wrote to stdout must have been a JSON-RPC message.
example_finish <- function(client) {
  close(client$proc$get_input_connection())
  client$proc$wait(20000)
  expect_false(client$proc$is_alive())
  rest <- client$proc$read_all_output_lines()
  client$lines <- c(client$lines, rest)
  expect_equal(client$proc$get_exit_status(), 0L)
  for (line in client$lines) {
    msg <- tryCatch(jsonlite::fromJSON(line, simplifyVector = FALSE), error = function(e) NULL)
    expect_true(is.list(msg) && identical(msg$jsonrpc, "2.0"),
                label = paste("stdout line is a JSON-RPC message:", substr(line, 1, 200)))
  }
  # One line per request sent (notifications get no reply).
  expect_equal(length(client$lines), client$next_id - 1L)
}

test_that("minimal.R adds two numbers", {
  client <- example_start("minimal.R")
  example_handshake(client)
  tools <- example_tools(client)
  expect_named(tools, "add")
  expect_equal(tools$add$inputSchema$type, "object")
  expect_setequal(unlist(tools$add$inputSchema$required), c("a", "b"))

  res <- example_call(client, "add", list(a = 1, b = 2))
  expect_false(isTRUE(res$isError))
  expect_equal(example_text(res), "3")
  res <- example_call(client, "add", list(a = 0.5, b = -2.25))
  expect_equal(example_text(res), "-1.75")
  example_finish(client)
})

test_that("minimal.R also answers a modern (2026-07-28) client", {
  client <- example_start("minimal.R")
  meta <- list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())
  )
  disc <- example_request(client, "server/discover", list(`_meta` = meta))
  expect_true("2026-07-28" %in% unlist(disc$supportedVersions))
  res <- example_request(client, "tools/call",
                         list(name = "add", arguments = list(a = 40, b = 2), `_meta` = meta))
  expect_equal(res$resultType, "complete")
  expect_equal(example_text(res), "42")
  example_finish(client)
})

test_that("structured.R returns structured content matching its output schema", {
  client <- example_start("structured.R")
  example_handshake(client)
  tools <- example_tools(client)
  expect_named(tools, "summarise_numbers")
  schema <- tools$summarise_numbers$outputSchema
  expect_equal(schema$type, "object")
  expect_setequal(names(schema$properties), c("n", "mean", "min", "max"))
  expect_equal(tools$summarise_numbers$inputSchema$properties$values$type, "array")

  res <- example_call(client, "summarise_numbers", list(values = list(1, 2, 3, 4)))
  expect_false(isTRUE(res$isError))
  expected <- list(n = 4, mean = 2.5, min = 1, max = 4)
  expect_equal(res$structuredContent[names(expected)], expected)
  # The same data travels as JSON text for clients without structured output.
  fallback <- jsonlite::fromJSON(example_text(res), simplifyVector = FALSE)
  expect_equal(fallback[names(expected)], expected)

  res <- example_call(client, "summarise_numbers", list(values = list()))
  expect_true(isTRUE(res$isError))
  expect_match(example_text(res), "non-empty array", fixed = TRUE)
  example_finish(client)
})

test_that("structured.R falls back to text for a 2024-11-05 client", {
  client <- example_start("structured.R")
  example_handshake(client, "2024-11-05")
  tools <- example_tools(client)
  expect_null(tools$summarise_numbers$outputSchema)
  res <- example_call(client, "summarise_numbers", list(values = list(2, 4)))
  expect_null(res$structuredContent)
  fallback <- jsonlite::fromJSON(example_text(res), simplifyVector = FALSE)
  expect_equal(fallback$mean, 3)
  example_finish(client)
})

test_that("plot-image.R returns a PNG image of a base R plot", {
  client <- example_start("plot-image.R")
  example_handshake(client)
  tools <- example_tools(client)
  expect_named(tools, "plot_histogram")
  expect_length(unlist(tools$plot_histogram$inputSchema$required), 0)

  png_magic <- as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))
  for (args in list(NULL, list(n = 50, bins = 5))) {
    res <- example_call(client, "plot_histogram", args)
    expect_false(isTRUE(res$isError))
    types <- vapply(res$content, function(b) b$type, character(1))
    expect_equal(types, c("text", "image"))
    image <- res$content[[2]]
    expect_equal(image$mimeType, "image/png")
    expect_false(grepl("\n", image$data, fixed = TRUE))
    bytes <- jsonlite::base64_dec(image$data)
    expect_gt(length(bytes), 100)
    expect_equal(bytes[1:8], png_magic)
  }
  expect_match(example_text(res), "50 normal draws in 5 bins", fixed = TRUE)

  res <- example_call(client, "plot_histogram", list(n = -1))
  expect_true(isTRUE(res$isError))
  expect_match(example_text(res), "`n` must be between 1 and 100000.", fixed = TRUE)
  example_finish(client)
})

test_that("tool-errors.R reports each kind of failure as a tool error", {
  client <- example_start("tool-errors.R")
  example_handshake(client)
  tools <- example_tools(client)
  expect_setequal(names(tools), c("always_fails", "lookup_colour", "square_root"))

  res <- example_call(client, "always_fails")
  expect_true(isTRUE(res$isError))
  expect_match(example_text(res), "This tool always fails.", fixed = TRUE)

  res <- example_call(client, "lookup_colour", list(name = "red"))
  expect_false(isTRUE(res$isError))
  expect_equal(example_text(res), "#FF0000")
  res <- example_call(client, "lookup_colour", list(name = "purple"))
  expect_true(isTRUE(res$isError))
  expect_equal(example_text(res), "Unknown colour 'purple'. Try one of: red, green, blue.")

  res <- example_call(client, "square_root", list(x = 16))
  expect_false(isTRUE(res$isError))
  expect_equal(example_text(res), "4")
  res <- example_call(client, "square_root", list(x = -1))
  expect_true(isTRUE(res$isError))
  expect_match(example_text(res), "`x` must not be negative.", fixed = TRUE)
  res <- example_call(client, "square_root", list(x = "sixteen"))
  expect_true(isTRUE(res$isError))
  expect_match(example_text(res), "`x` must be a single number.", fixed = TRUE)

  # The server survives all of that.
  res <- example_call(client, "square_root", list(x = 2.25))
  expect_equal(example_text(res), "1.5")
  example_finish(client)
})

test_that("tracing.R works with the stderr trace exporter and keeps stdout clean", {
  client <- example_start("tracing.R", env = c(OTEL_R_TRACES_EXPORTER = "stderr"))
  example_handshake(client)
  tools <- example_tools(client)
  expect_named(tools, "slow_echo")

  res <- example_call(client, "slow_echo", list(text = "hello"))
  expect_false(isTRUE(res$isError))
  expect_equal(example_text(res), "hello")
  res <- example_call(client, "slow_echo", list(text = "later", delay_ms = 20))
  expect_equal(example_text(res), "later")
  res <- example_call(client, "slow_echo", list(text = "x", delay_ms = -5))
  expect_true(isTRUE(res$isError))
  example_finish(client)
  # The tool's diagnostics went to stderr, not into the protocol stream.
  stderr_lines <- readLines(client$stderr_file, warn = FALSE)
  expect_true("slow_echo waited 20 ms" %in% stderr_lines)

  # So did the spans: one SERVER span per tools/call, and the tool's own span
  # (started through the otel package) as its child.
  spans <- example_spans(stderr_lines)
  calls <- Filter(function(s) identical(s$name, "tools/call slow_echo"), spans)
  expect_length(calls, 3)
  expect_true(all(vapply(calls, function(s) identical(s$kind, 2L), logical(1))))
  skip_if_not_installed("otel")
  waits <- Filter(function(s) identical(s$name, "slow_echo wait"), spans)
  # The third call fails validation before it starts its span.
  expect_length(waits, 2)
  call_ids <- vapply(calls, function(s) s$spanId, character(1))
  expect_true(all(vapply(waits, function(s) s$parentSpanId %in% call_ids, logical(1))))
})

test_that("tracing.R traces nothing and still works without an exporter", {
  client <- example_start("tracing.R", env = c(OTEL_R_TRACES_EXPORTER = "none"))
  example_handshake(client)
  res <- example_call(client, "slow_echo", list(text = "quiet"))
  expect_equal(example_text(res), "quiet")
  example_finish(client)
  expect_length(example_spans(readLines(client$stderr_file, warn = FALSE)), 0)
})

test_that("client-demo.R prints a legacy and a modern exchange", {
  skip_if_examples_cannot_run()
  demo <- system.file("examples", "client-demo.R", package = "mcplite")
  exchange <- function(...) {
    res <- processx::run(example_rscript(), c("--vanilla", demo, ...),
                         env = example_env(), error_on_status = FALSE, timeout = 120)
    expect_equal(res$status, 0L)
    out <- strsplit(res$stdout, "\n", fixed = TRUE)[[1]]
    list(
      sent = lapply(sub("^-> ", "", grep("^-> ", out, value = TRUE)), jsonlite::fromJSON, simplifyVector = FALSE),
      received = lapply(sub("^<- ", "", grep("^<- ", out, value = TRUE)), jsonlite::fromJSON, simplifyVector = FALSE)
    )
  }
  # The minimal server, with arguments made up from the schema (a = b = 1).
  ex <- exchange()
  methods <- vapply(ex$sent, function(m) m$method, character(1))
  expect_equal(methods, c("initialize", "notifications/initialized", "tools/list", "tools/call",
                          "server/discover", "tools/list", "tools/call"))
  # Every request gets one reply; the notification gets none.
  expect_length(ex$received, 6)
  expect_equal(ex$received[[1]]$result$protocolVersion, "2025-11-25")
  expect_equal(ex$received[[3]]$result$content[[1]]$text, "2")
  expect_true("2026-07-28" %in% unlist(ex$received[[4]]$result$supportedVersions))
  expect_equal(ex$received[[6]]$result$resultType, "complete")
  expect_equal(ex$received[[6]]$result$content[[1]]$text, "2")
  # Modern requests carry the version in _meta; legacy ones do not.
  expect_equal(ex$sent[[7]]$params$`_meta`$`io.modelcontextprotocol/protocolVersion`, "2026-07-28")
  expect_null(ex$sent[[4]]$params$`_meta`)

  # Any server script, tool and arguments.
  server <- system.file("examples", "tool-errors.R", package = "mcplite")
  ex <- exchange(server, "square_root", '{"x": 81}')
  calls <- Filter(function(m) identical(m$method, "tools/call"), ex$sent)
  expect_equal(calls[[1]]$params, list(name = "square_root", arguments = list(x = 81L)))
  answers <- Filter(function(m) !is.null(m$result$content), ex$received)
  expect_equal(vapply(answers, function(m) m$result$content[[1]]$text, ""), c("9", "9"))
})

test_that("workers.R runs its tools on workers", {
  skip_if_not_installed("mirai")
  client <- example_start("workers.R")
  on.exit(if (client$proc$is_alive()) client$proc$kill(), add = TRUE)
  example_handshake(client)
  expect_setequal(names(example_tools(client)), c("bootstrap_mpg", "count_cars"))
  counts <- jsonlite::fromJSON(example_text(example_call(client, "count_cars")))
  expect_equal(counts, list(`4` = 11L, `6` = 7L, `8` = 14L))
  boot <- example_call(client, "bootstrap_mpg", list(cylinders = 6, reps = 500))
  expect_false(isTRUE(boot$isError))
  expect_equal(boot$structuredContent$cylinders, 6)
  expect_equal(boot$structuredContent$mean, round(mean(mtcars$mpg[mtcars$cyl == 6]), 4))
  expect_true(boot$structuredContent$lower <= boot$structuredContent$mean)
  expect_true(boot$structuredContent$upper >= boot$structuredContent$mean)
  bad <- example_call(client, "bootstrap_mpg", list(cylinders = 5))
  expect_true(bad$isError)
  expect_equal(example_text(bad), "No cars with 5 cylinders; try 4, 6 or 8.")
  example_finish(client)
})

test_that("progress.R reports each walk to a client that asks for progress, and only then", {
  client <- example_start("progress.R")
  example_handshake(client, "2025-06-18")
  res <- example_request(client, "tools/call", list(
    name = "simulate_walks", arguments = list(walks = 5, steps = 100),
    `_meta` = list(progressToken = "walks")
  ))
  expect_false(isTRUE(res$isError))
  expect_equal(res$structuredContent$walks, 5)
  notes <- Filter(function(m) identical(m$method, "notifications/progress"), client$pending)
  values <- vapply(notes, function(m) as.numeric(m$params$progress), numeric(1))
  expect_true(length(values) >= 1 && all(diff(values) > 0))
  expect_equal(values[[length(values)]], 5)
  expect_true(all(vapply(notes, function(m) identical(m$params$progressToken, "walks"), logical(1))))
  # Without a token: the answer only.
  res <- example_call(client, "simulate_walks", list(walks = 2, steps = 10))
  expect_equal(res$structuredContent$walks, 2)
  progress_lines <- grepl('"method":"notifications/progress"', client$lines, fixed = TRUE)
  expect_equal(sum(progress_lines), length(notes))
  client$lines <- client$lines[!progress_lines]
  example_finish(client)
})
