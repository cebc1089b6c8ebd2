# session_tools(): served by mcp_server() from a script and called over real
# pipes; every answer validated against its protocol version's schema.

session_tools_client <- function(protocol = "2025-11-25", eval = TRUE, .local_envir = parent.frame()) {
  script <- server_script(c(
    "big_list <- as.list(seq_len(200000))",
    "many_strings <- data.frame(id = seq_len(200000), label = as.character(seq_len(200000)))",
    "many_numbers <- data.frame(x = seq_len(1000000) + 0)",
    "cars_model <- lm(dist ~ speed, data = cars)",
    "people <- data.frame(name = c('Zoë', 'Ana', NA), age = c(31L, NA, 45L), stringsAsFactors = FALSE)",
    sprintf("mcplite::mcp_server(mcplite::session_tools(eval = %s))", eval)
  ))
  checked_client(script, env = child_env(), protocol = protocol, .local_envir = .local_envir)
}

call_checked <- function(client, name, args) {
  res <- client$call(name, args)
  validate_last(client, "CallToolResult")
  res
}

texts <- function(res) {
  unlist(lapply(res$content, function(b) if (identical(b$type, "text")) b$text))
}

test_that("session_tools() serves the reading tools, and run_r_code only when asked", {
  expect_named(session_tools(), c("list_r_objects", "describe_r_object", "read_r_help"))
  expect_named(session_tools(eval = TRUE), c("list_r_objects", "describe_r_object", "read_r_help", "run_r_code"))
  expect_snapshot(error = TRUE, session_tools(eval = "yes"))
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client(eval = FALSE)
  listed <- vapply(client$tools(), function(t) t$name, "")
  expect_setequal(listed, c("list_r_objects", "describe_r_object", "read_r_help"))
})

test_that("run_r_code returns printed output, messages, warnings and the error, in order", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  for (v in c("2024-11-05", "2025-11-25", "2026-07-28")) {
    client <- session_tools_client(protocol = v)
    res <- call_checked(client, "run_r_code", list(code = paste(
      "x <- c(3, 1, 2)",
      "sort(x)",
      "invisible(99)",
      "message('a message')",
      "f <- function() warning('a warning')",
      "f()",
      "cat('no newline')",
      "summary(x)",
      "stop('it broke')",
      "cat('never')",
      sep = "\n"
    )))
    expect_true(res$isError, info = v)
    expect_equal(texts(res), paste(
      "[1] 1 2 3",
      "a message",
      "Warning in f() : a warning",
      "no newline   Min. 1st Qu.  Median    Mean 3rd Qu.    Max. ",
      "    1.0     1.5     2.0     2.0     2.5     3.0 ",
      "Error: it broke",
      sep = "\n"
    ), info = v)
    res <- call_checked(client, "run_r_code", list(code = "cat('no newline'); warning('then a warning')"))
    expect_equal(texts(res), paste(
      "no newline",
      "Warning: then a warning",
      sep = "\n"
    ), info = v)
    # Objects stay in the session.
    res <- call_checked(client, "run_r_code", list(code = "x * 2"))
    expect_false(isTRUE(res$isError))
    expect_equal(texts(res), "[1] 6 2 4")
  }
})

test_that("run_r_code: a syntax error runs nothing; silent code says so", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  res <- call_checked(client, "run_r_code", list(code = "y <- 1\n)("))
  expect_true(res$isError)
  expect_match(texts(res), "^Syntax error, nothing was run:\n")
  res <- call_checked(client, "run_r_code", list(code = "exists('y')"))
  expect_equal(texts(res), "[1] FALSE")
  res <- call_checked(client, "run_r_code", list(code = "y <- 1"))
  expect_equal(texts(res), "The code ran and printed nothing.")
})

test_that("run_r_code returns plots as PNG images, bounded in number", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  png_signature <- as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))
  for (v in c("2024-11-05", "2026-07-28")) {
    client <- session_tools_client(protocol = v)
    res <- call_checked(client, "run_r_code", list(code = "plot(1:10)\nabline(h = 5)\nhist(rnorm(50))\n'drawn'"))
    types <- vapply(res$content, function(b) b$type, "")
    expect_equal(types, c("text", "image", "image"), info = v)
    expect_equal(texts(res), "[1] \"drawn\"")
    for (img in res$content[2:3]) {
      expect_equal(img$mimeType, "image/png")
      expect_equal(jsonlite::base64_dec(img$data)[1:8], png_signature)
    }
    # Code that draws nothing returns no image (ragg writes a blank page
    # when nothing was drawn).
    res <- call_checked(client, "run_r_code", list(code = "1 + 1"))
    expect_equal(vapply(res$content, function(b) b$type, ""), "text")
  }
  n <- SESSION_MAX_PLOTS + 2L
  res <- call_checked(client, "run_r_code", list(code = sprintf("for (i in 1:%d) plot(i)", n)))
  types <- vapply(res$content, function(b) b$type, "")
  expect_equal(sum(types == "image"), SESSION_MAX_PLOTS)
  expect_equal(res$content[[length(res$content)]]$text, sprintf(
    "[%d plots were drawn; the first %d are shown (session tools return at most %d).]",
    n, SESSION_MAX_PLOTS, SESSION_MAX_PLOTS
  ))
})

test_that("run_r_code: printed text is bounded, with a note", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  # One long print, and many small writes.
  for (code in c("cat(strrep('x', 50000))", "for (i in 1:30000) cat('ab\\n')", "message(strrep('m', 30000))")) {
    res <- call_checked(client, "run_r_code", list(code = code))
    text <- texts(res)
    expect_match(text, sprintf("\n\\[\\.\\.\\. output cut: %d of [0-9]+ characters shown \\(session tools return at most %d\\)\\.\\]$",
                               SESSION_MAX_TEXT_CHARS, SESSION_MAX_TEXT_CHARS), info = code)
    expect_lt(nchar(text), SESSION_MAX_TEXT_CHARS + 200)
  }
})

test_that("run_r_code: non-ASCII code, names and output are UTF-8", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  res <- call_checked(client, "run_r_code", list(code = "`café` <- \"naïve – 日本語\"\ncat(`café`, '\\n')\nnchar(`café`)\nmessage('Zoë')"))
  expect_equal(texts(res), "naïve – 日本語 \n[1] 11\nZoë")
  res <- call_checked(client, "describe_r_object", list(name = "café"))
  expect_match(texts(res), "naïve – 日本語", fixed = TRUE)
})

test_that("list_r_objects lists the global environment, without sizing huge objects", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  res <- call_checked(client, "list_r_objects", list())
  lines <- strsplit(texts(res), "\n")[[1]]
  expect_match(lines[[1]], "^name +class +dims +size")
  expect_match(grep("^big_list ", lines, value = TRUE),
               sprintf("^big_list +list +200000 +\\(not computed: over %d elements\\)", SESSION_SIZE_MAX_ELEMENTS))
  expect_match(grep("^people ", lines, value = TRUE), "^people +data.frame +3 x 2 +[0-9.]+ kB")
  expect_match(grep("^many_strings ", lines, value = TRUE),
               sprintf("^many_strings +data.frame +200000 x 2 +\\(not computed: over %d elements\\)", SESSION_SIZE_MAX_ELEMENTS))
  expect_match(grep("^many_numbers ", lines, value = TRUE), "^many_numbers +data.frame +1000000 x 1 +8 MB$")
  expect_match(grep("^cars_model ", lines, value = TRUE), "^cars_model +lm +12 +")
  # More objects than the bound: a note says how many were left out.
  call_checked(client, "run_r_code", list(code = sprintf("local(for (i in 1:%d) assign(sprintf('v%%03d', i), i, envir = globalenv()))", SESSION_MAX_OBJECTS)))
  res <- call_checked(client, "list_r_objects", list())
  expect_match(texts(res), sprintf("\n\\[%d of %d objects listed \\(session tools list at most %d\\); ask for one by name with describe_r_object\\.\\]$",
                                   SESSION_MAX_OBJECTS, SESSION_MAX_OBJECTS + 5L, SESSION_MAX_OBJECTS))
})

test_that("describe_r_object: a data frame's columns, a model's summary, a missing object", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  res <- call_checked(client, "describe_r_object", list(name = "people"))
  text <- texts(res)
  expect_match(text, "^`people`: class data.frame, type list, dimensions 3 x 2, size ")
  expect_match(text, "Columns:\ncolumn  type       missing\nname    character  1\nage     integer    1\n", fixed = TRUE)
  expect_match(text, "Structure (str):\n'data.frame':\t3 obs. of  2 variables:", fixed = TRUE)
  expect_match(text, "summary():\n", fixed = TRUE)
  res <- call_checked(client, "describe_r_object", list(name = "cars_model"))
  text <- texts(res)
  expect_match(text, "^`cars_model`: class lm, type list, length 12")
  expect_match(text, "summary():\n\nCall:\nlm(formula = dist ~ speed, data = cars)", fixed = TRUE)
  expect_match(text, "Residual standard error: 15.38 on 48 degrees of freedom", fixed = TRUE)
  res <- call_checked(client, "describe_r_object", list(name = "nothing_here"))
  expect_true(res$isError)
  expect_equal(texts(res), "There is no object called `nothing_here` in the session (global environment or attached packages). list_r_objects lists the global environment.")
})

test_that("read_r_help reads a help page as text; a missing topic is a tool error", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  res <- call_checked(client, "read_r_help", list(topic = "nchar"))
  expect_false(isTRUE(res$isError))
  text <- texts(res)
  expect_match(text, "Count the Number of Characters (or Bytes or Width)", fixed = TRUE)
  expect_match(text, "Usage:", fixed = TRUE)
  expect_false(grepl("\b", text, fixed = TRUE))
  res <- call_checked(client, "read_r_help", list(topic = "median", package = "stats"))
  expect_match(texts(res), "Median Value", fixed = TRUE)
  res <- call_checked(client, "read_r_help", list(topic = "no_such_topic_anywhere"))
  expect_true(res$isError)
  expect_equal(texts(res), "No help topic \"no_such_topic_anywhere\" in the packages loaded in the session. Check the spelling, or name the package that documents it.")
  res <- call_checked(client, "read_r_help", list(topic = "lm", package = "no.such.package"))
  expect_true(res$isError)
  expect_equal(texts(res), "There is no installed package called \"no.such.package\".")
})

test_that("run_r_code draws on its own device and leaves the caller's sinks and devices, also when interrupted", {
  run <- session_tools(eval = TRUE)$run_r_code
  pdf(NULL)
  mine <- dev.cur()
  on.exit(dev.off(mine), add = TRUE)
  devices <- dev.list()
  sinks <- sink.number()
  res <- run("plot(1:3)\n'ok'")
  expect_equal(vapply(res$content, function(b) b$type, ""), c("text", "image"))
  expect_equal(dev.cur(), mine)
  expect_equal(dev.list(), devices)
  expect_equal(sink.number(), sinks)
  # An interrupt (Ctrl-C, or a cancelled call) unwinds through the tool.
  got <- tryCatch(
    run("cat('before')\nplot(1)\nsignalCondition(structure(class = c('interrupt', 'condition'), list()))\ncat('after')"),
    interrupt = function(i) "interrupted"
  )
  expect_equal(got, "interrupted")
  expect_equal(dev.cur(), mine)
  expect_equal(dev.list(), devices)
  expect_equal(sink.number(), sinks)
  expect_length(list.files(tempdir(), "^mcplite-session-"), 0)
})

test_that("run_r_code leaves out a plot whose PNG is over the image bound, with a note", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- session_tools_client()
  # Colour noise compresses badly: its PNG is over a megabyte.
  res <- call_checked(client, "run_r_code", list(code = paste(
    "n <- 720 * 540; par(mar = c(0, 0, 0, 0))",
    "plot(as.raster(matrix(rgb(runif(n), runif(n), runif(n)), 540)), interpolate = FALSE)",
    "plot(1)",
    sep = "\n"
  )))
  expect_equal(vapply(res$content, function(b) b$type, ""), c("text", "image", "text"))
  expect_match(res$content[[3]]$text, sprintf(
    "^\\[Plot 1 was not returned: its PNG has [0-9]+ bytes \\(session tools return at most %d\\)\\.\\]$",
    SESSION_MAX_IMAGE_BYTES
  ))
})
