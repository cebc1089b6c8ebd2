# Tracing with real servers, spans read back from every exporter.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

otel_server <- function() mcp_fixture_server("otel-server.R")
traceparent <- "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

traced_lines <- function() c(
  "",
  "this is not json",
  '{"jsonrpc":"1.0","id":1,"method":"ping"}',
  initialize_line("2025-06-18"),
  initialized_line(),
  rpc(2, "tools/call", sprintf('{"name":"secret","arguments":{"text":"argument-value-xyz"},"_meta":{"traceparent":"%s"}}', traceparent)),
  legacy_call(3, "fail"),
  rpc(4, "no/such/method"),
  modern_call("m", "secret", '{"text":"modern-arg-value"}'),
  rpc(5, "ping", '{"_meta":{"traceparent":"00-zz-garbage-01"}}')
)

# Spans from OTLP JSON documents: stderr or file lines, or request bodies.
spans_from_json_lines <- function(lines) {
  lines <- lines[grepl('^\\s*\\{\\s*"resourceSpans"', lines)]
  spans <- list()
  for (l in lines) {
    x <- jsonlite::parse_json(l)
    for (rs in x$resourceSpans) for (ss in rs$scopeSpans) for (sp in ss$spans) {
      sp$service <- Filter(function(a) a$key == "service.name", rs$resource$attributes)[[1]]$value$stringValue
      spans[[length(spans) + 1]] <- sp
    }
  }
  spans
}

span_attr <- function(span, key) {
  hit <- Filter(function(a) a$key == key, span$attributes)
  if (!length(hit)) return(NULL)
  v <- hit[[1]]$value
  v$stringValue %||% v$intValue %||% v$boolValue %||% v$doubleValue
}

`%||%` <- function(a, b) if (is.null(a)) b else a

check_traced_spans <- function(spans, raw_text) {
  names <- vapply(spans, `[[`, "", "name")
  expect_setequal(names, c("initialize", "notifications/initialized", "tools/call secret", "tools/call fail",
                           "no/such/method", "tools/call secret", "ping"))
  expect_true(all(vapply(spans, function(s) identical(as.integer(s$kind), 2L), TRUE)))
  expect_true(all(vapply(spans, function(s) identical(span_attr(s, "network.transport"), "pipe"), TRUE)))
  by_id <- function(id) Filter(function(s) identical(span_attr(s, "jsonrpc.request.id"), id), spans)[[1]]
  call <- by_id("2")
  expect_identical(call$traceId, "4bf92f3577b34da6a3ce929d0e0e4736")
  expect_identical(call$parentSpanId, "00f067aa0ba902b7")
  expect_identical(span_attr(call, "mcp.method.name"), "tools/call")
  expect_identical(span_attr(call, "gen_ai.tool.name"), "secret")
  expect_identical(span_attr(call, "gen_ai.operation.name"), "execute_tool")
  expect_identical(span_attr(call, "mcp.protocol.version"), "2025-06-18")
  fail <- by_id("3")
  expect_identical(span_attr(fail, "error.type"), "tool_error")
  expect_identical(as.integer(fail$status$code), 2L)
  unknown <- by_id("4")
  expect_identical(span_attr(unknown, "error.type"), "-32601")
  expect_identical(span_attr(unknown, "rpc.response.status_code"), "-32601")
  expect_identical(as.integer(unknown$status$code), 2L)
  expect_identical(span_attr(by_id("m"), "mcp.protocol.version"), "2026-07-28")
  ping <- by_id("5")
  expect_identical(ping$parentSpanId, "")
  for (secret in c("argument-value-xyz", "modern-arg-value", "result argument", "condition message",
                   "traceparent", "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7")) {
    expect_false(grepl(secret, raw_text, fixed = TRUE), info = secret)
  }
}

test_that("stderr exporter: one SERVER span per valid message, nothing else, nothing secret", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(traced_lines(), server = otel_server(), env = c(OTEL_R_TRACES_EXPORTER = "stderr"))
  expect_identical(out$status, 0L)
  expect_length(out$responses, 8)
  err <- strsplit(out$stderr, "\n", fixed = TRUE)[[1]]
  span_lines <- grep('^\\{"resourceSpans"', err, value = TRUE)
  check_traced_spans(spans_from_json_lines(err), paste(span_lines, collapse = "\n"))
  expect_identical(spans_from_json_lines(err)[[1]]$service, "mcplite")
})

test_that("otlp/file exporter writes OTLP JSON lines, with service name and resource attributes", {
  skip_if_no_mcplite_child()
  file <- tempfile(fileext = ".jsonl")
  out <- mcp_exchange(traced_lines(), server = otel_server(), env = c(
    OTEL_TRACES_EXPORTER = "otlp/file", OTEL_EXPORTER_OTLP_TRACES_FILE = file,
    OTEL_SERVICE_NAME = "my-tools", OTEL_RESOURCE_ATTRIBUTES = "deployment.environment=test"))
  expect_identical(out$status, 0L)
  lines <- readLines(file)
  spans <- spans_from_json_lines(lines)
  check_traced_spans(spans, paste(lines, collapse = "\n"))
  expect_identical(spans[[1]]$service, "my-tools")
  expect_match(lines[[1]], "deployment.environment", fixed = TRUE)
  expect_false(grepl("resourceSpans", out$stderr, fixed = TRUE))
})

test_that("an otlp/file exporter pointed at standard output writes to stderr, never into the protocol", {
  skip_if_no_mcplite_child()
  skip_if_not(file.exists("/dev/stdout"), "needs /dev/stdout")
  paths <- c("/dev/stdout", if (dir.exists("/proc/self/fd")) "/proc/self/fd/1", if (dir.exists("/dev/fd")) "/dev/fd/1")
  for (path in paths) {
    # The client reads both streams through pipes, as MCP clients do.
    client <- mcp_client(otel_server(), env = c(child_env(), OTEL_TRACES_EXPORTER = "otlp/file",
                                                OTEL_EXPORTER_OTLP_TRACES_FILE = path))
    client$tools()
    expect_true(client$call("fail")$isError)
    client$request("ping")
    # The spans went to stderr (its reader may still be catching up).
    span_names <- function() vapply(spans_from_json_lines(client$stderr()), `[[`, "", "name")
    deadline <- Sys.time() + 10
    while (length(span_names()) < 5 && Sys.time() < deadline) Sys.sleep(0.02)
    names <- span_names()
    # Every stdout line was a protocol message.
    expect_length(client$.state()$stray, 0)
    client$close()
    expect_setequal(names, c("initialize", "notifications/initialized", "tools/list", "tools/call fail", "ping"))
    expect_length(names, 5)
  }
})

test_that("an otlp/file exporter on a FIFO blocks neither start-up without a reader nor serving when the reader stalls", {
  skip_if_no_mcplite_child()
  skip_if_not(.Platform$OS.type == "unix" && nzchar(Sys.which("mkfifo")), "needs mkfifo")
  fifo <- tempfile("spans-")
  expect_identical(system2("mkfifo", shQuote(fifo)), 0L)
  env <- c(OTEL_TRACES_EXPORTER = "otlp/file", OTEL_EXPORTER_OTLP_TRACES_FILE = fifo)
  # Nobody reads: the server answers at once, without tracing, and says why.
  out <- mcp_exchange(c(initialize_line("2025-06-18"), rpc(2, "ping")), server = otel_server(), env = env)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 2)
  expect_match(out$stderr, "cannot open the OTLP trace file", fixed = TRUE)
  # A reader that never reads: once the pipe is full spans are dropped, and
  # every request is still answered.
  # (processx's reader: a non-blocking fifo() loses bytes, see helper-mcp.R.)
  con <- processx::conn_connect_fifo(fifo, read = TRUE)
  on.exit(close(con), add = TRUE)
  lines <- c(initialize_line("2025-06-18"), vapply(seq_len(600), function(i) rpc(i + 1, "ping"), ""))
  out <- mcp_exchange(lines, server = otel_server(), env = env)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 601)
  # Some spans did go through before the pipe filled.
  got <- processx::conn_read_bytes(con)
  expect_match(rawToChar(got[seq_len(min(200, length(got)))]), "resourceSpans", fixed = TRUE)
})

start_receiver <- function() {
  skip_if(!nzchar(Sys.which("node")), "node is needed for the OTLP receiver")
  file <- tempfile(fileext = ".jsonl")
  rx <- processx::process$new("node", c(test_path("fixtures", "otlp-receiver.js"), file),
                              stdout = "|", stderr = "|", cleanup = TRUE)
  rx$poll_io(10000)
  port <- as.integer(rx$read_output_lines()[1])
  list(process = rx, file = file, endpoint = sprintf("http://127.0.0.1:%d", port))
}

test_that("OTLP/HTTP exporter sends protobuf by default and JSON when asked, to a local receiver", {
  skip_if_no_mcplite_child()
  for (protocol in c("http/protobuf", "http/json")) {
    rx <- start_receiver()
    on.exit(rx$process$kill(), add = TRUE)
    env <- c(OTEL_R_TRACES_EXPORTER = "otlp", OTEL_EXPORTER_OTLP_ENDPOINT = rx$endpoint,
             OTEL_BSP_SCHEDULE_DELAY = "100")
    if (protocol == "http/json") env <- c(env, OTEL_EXPORTER_OTLP_PROTOCOL = "http/json")
    out <- mcp_exchange(traced_lines(), server = otel_server(), env = env)
    expect_identical(out$status, 0L)
    expect_length(out$responses, 8)
    reqs <- lapply(readLines(rx$file), jsonlite::parse_json)
    expect_gte(length(reqs), 1)
    expect_true(all(vapply(reqs, function(r) identical(r$path, "/v1/traces"), TRUE)))
    bodies <- lapply(reqs, function(r) jsonlite::base64_dec(r$body))
    if (protocol == "http/json") {
      expect_true(all(grepl("application/json", vapply(reqs, `[[`, "", "contentType"), fixed = TRUE)))
      spans <- spans_from_json_lines(vapply(bodies, rawToChar, ""))
      check_traced_spans(spans, paste(vapply(bodies, rawToChar, ""), collapse = "\n"))
    } else {
      expect_true(all(vapply(reqs, function(r) identical(r$contentType, "application/x-protobuf"), TRUE)))
      all_bytes <- do.call(c, bodies)
      has <- function(s) length(grepRaw(s, all_bytes, fixed = TRUE)) > 0
      for (name in c("tools/call secret", "tools/call fail", "no/such/method", "mcp.method.name", "gen_ai.tool.name")) {
        expect_true(has(name), info = name)
      }
      for (secret in c("argument-value-xyz", "modern-arg-value", "condition message")) expect_false(has(secret), info = secret)
    }
    rx$process$kill()
  }
})

# A library holding a package named mirai, recent enough for mcplite, whose
# daemons() fails: workers that cannot start, as with a broken mirai install.
failing_mirai_library <- function() {
  test_package_lib("mirai", 'daemons <- function(...) stop("this mirai starts no daemons")', "daemons",
                   version = "99.0.0", title = "Starts No Daemons")
}

test_that("when the workers fail to start, the server says why and shuts telemetry down (the start span is exported)", {
  skip_if_no_mcplite_child()
  rx <- start_receiver()
  on.exit(rx$process$kill(), add = TRUE)
  lib <- failing_mirai_library()
  script <- server_script("mcplite::mcp_server(mcplite::tool(function() 1, 'One.', name = 'one'), workers = 1)")
  # Spans leave a batch only when it is flushed: at shutdown, never on the
  # schedule (an hour).
  env <- c(R_LIBS = paste(lib, mcp_child_libs(), sep = .Platform$path.sep), OTEL_R_TRACES_EXPORTER = "otlp",
           OTEL_EXPORTER_OTLP_ENDPOINT = rx$endpoint, OTEL_EXPORTER_OTLP_PROTOCOL = "http/json",
           OTEL_BSP_SCHEDULE_DELAY = "3600000")
  res <- processx::run(mcp_rscript(), c("--vanilla", script), env = c("current", env), error_on_status = FALSE,
                       timeout = 60)
  expect_false(res$status == 0)
  expect_identical(res$stdout, "")
  expect_match(res$stderr, "The MCP server stopped: cannot start the workers: this mirai starts no daemons", fixed = TRUE)
  deadline <- Sys.time() + 10
  while (!length(readLines(rx$file, warn = FALSE)) && Sys.time() < deadline) Sys.sleep(0.02)
  bodies <- vapply(lapply(readLines(rx$file, warn = FALSE), jsonlite::parse_json),
                   function(r) rawToChar(jsonlite::base64_dec(r$body)), "")
  spans <- spans_from_json_lines(bodies)
  expect_identical(vapply(spans, `[[`, "", "name"), "start workers")
  expect_identical(span_attr(spans[[1]], "error.type"), "workers_start")
  expect_identical(as.integer(spans[[1]]$status$code), 2L)
  expect_match(spans[[1]]$status$message, "this mirai starts no daemons", fixed = TRUE)
})

test_that("an unreachable OTLP endpoint never blocks or breaks request handling", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(traced_lines(), vapply(10:60, function(i) legacy_call(i, "secret", '{"text":"x"}'), "")),
                      server = otel_server(),
                      env = c(OTEL_R_TRACES_EXPORTER = "otlp", OTEL_EXPORTER_OTLP_ENDPOINT = "http://127.0.0.1:9",
                              OTEL_EXPORTER_OTLP_TIMEOUT = "500"))
  expect_identical(out$status, 0L)
  # A blocked export would hold answers back past the exchange's timeout.
  expect_length(out$responses, 8 + 51)
})

test_that("stdout or console exporters are refused with one warning line, and nothing is traced", {
  skip_if_no_mcplite_child()
  for (value in c("stdout", "console")) {
    out <- mcp_exchange(traced_lines(), server = otel_server(), env = c(OTEL_TRACES_EXPORTER = value))
    expect_length(out$responses, 8)
    err <- strsplit(out$stderr, "\n", fixed = TRUE)[[1]]
    expect_length(grep("OTEL_TRACES_EXPORTER", err, fixed = TRUE), 1)
    expect_false(any(grepl("resourceSpans", err, fixed = TRUE)))
  }
})

test_that("without an exporter, or with OTEL_SDK_DISABLED, tracing is a no-op", {
  skip_if_no_mcplite_child()
  plain <- mcp_exchange(traced_lines(), server = otel_server())
  disabled <- mcp_exchange(traced_lines(), server = otel_server(),
                           env = c(OTEL_SDK_DISABLED = "true", OTEL_R_TRACES_EXPORTER = "stderr"))
  for (out in list(plain, disabled)) {
    expect_false(grepl("resourceSpans", out$stderr, fixed = TRUE))
    expect_length(out$responses, 8)
  }
  expect_identical(plain$lines, disabled$lines)
})

test_that("spans that tool code starts with otel are children of the server span", {
  skip_if_no_mcplite_child()
  skip_if_not_installed("otel")
  file <- tempfile(fileext = ".jsonl")
  out <- mcp_exchange(c(
    modern_call("t", "traced"),
    rpc(1, "tools/call", sprintf('{"name":"traced","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"%s"}}', traceparent))
  ), server = otel_server(), env = c(OTEL_R_TRACES_EXPORTER = "otlp/file", OTEL_EXPORTER_OTLP_FILE = file))
  expect_identical(vapply(out$responses, function(r) first_text(r), ""), c("traced", "traced"))
  spans <- spans_from_json_lines(readLines(file))
  by_name <- function(n) Filter(function(s) s$name == n, spans)
  servers <- by_name("tools/call traced")
  work <- by_name("tool work")
  steps <- by_name("inner step")
  expect_length(servers, 2)
  expect_length(work, 2)
  for (i in 1:2) {
    server <- Filter(function(s) s$traceId == work[[i]]$traceId, servers)[[1]]
    expect_identical(work[[i]]$parentSpanId, server$spanId)
    step <- Filter(function(s) s$traceId == work[[i]]$traceId, steps)[[1]]
    expect_identical(step$parentSpanId, work[[i]]$spanId)
    expect_identical(as.integer(work[[i]]$kind), 1L)
  }
  expect_identical(span_attr(work[[1]], "rows"), "3")
  remote <- Filter(function(s) s$traceId == "4bf92f3577b34da6a3ce929d0e0e4736", work)
  expect_length(remote, 1)
})

test_that("span attributes R holds as missing values are left out, never exported as numbers or text", {
  skip_if_no_mcplite_child()
  skip_if_not_installed("otel")
  file <- tempfile(fileext = ".jsonl")
  out <- mcp_exchange(modern_call("n", "na_attributes"), server = otel_server(),
                      env = c(OTEL_R_TRACES_EXPORTER = "otlp/file", OTEL_EXPORTER_OTLP_FILE = file))
  expect_identical(first_text(out$responses[[1]]), "done")
  span <- Filter(function(s) s$name == "na attributes", spans_from_json_lines(readLines(file)))[[1]]
  keys <- vapply(span$attributes, function(a) a$key, "")
  for (missing in c("int", "lgl", "chr", "dbl", "some_na")) expect_false(missing %in% keys, info = missing)
  expect_identical(span_attr(span, "count"), "2")
  expect_identical(span_attr(span, "flag"), FALSE)
  expect_identical(span_attr(span, "word"), "w")
  expect_identical(span_attr(span, "ratio"), 0.5)
  words <- Filter(function(a) a$key == "words", span$attributes)[[1]]$value$arrayValue$values
  expect_identical(vapply(words, function(v) v$stringValue, ""), c("a", "b"))
  expect_false(grepl("-2147483648", paste(readLines(file), collapse = ""), fixed = TRUE))
})

test_that("the standard sampler variables are honoured", {
  skip_if_no_mcplite_child()
  off <- mcp_exchange(traced_lines(), server = otel_server(),
                      env = c(OTEL_R_TRACES_EXPORTER = "stderr", OTEL_TRACES_SAMPLER = "always_off"))
  expect_length(off$responses, 8)
  expect_false(grepl("resourceSpans", off$stderr, fixed = TRUE))
  ratio <- mcp_exchange(traced_lines(), server = otel_server(),
                        env = c(OTEL_R_TRACES_EXPORTER = "stderr", OTEL_TRACES_SAMPLER = "traceidratio",
                                OTEL_TRACES_SAMPLER_ARG = "1"))
  expect_length(spans_from_json_lines(strsplit(ratio$stderr, "\n", fixed = TRUE)[[1]]), 7)
})
