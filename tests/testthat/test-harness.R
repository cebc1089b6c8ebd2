# Tests of the test harness itself (helper-mcp.R and tests/node/validate.mjs).
# The stand-in "servers" here are tiny R scripts, not mcplite: they check that
# the harness notices what it must notice. Tests of mcplite's behaviour live in
# the protocol test files and use the same helpers.

wire_examples <- function() {
  jsonlite::read_json(test_path("fixtures", "wire-examples.json"), simplifyVector = FALSE)
}

example_json <- function(ex) {
  as.character(jsonlite::toJSON(ex$message, auto_unbox = TRUE, null = "null", digits = NA))
}

test_that("the validator accepts the README wire examples and rejects broken variants", {
  examples <- wire_examples()
  expect_gt(length(examples), 30)
  for (ex in examples) {
    verdict <- mcp_validator_check(example_json(ex), ex$version, if (is.null(ex$def)) NA else ex$def, isTRUE(ex$strict))
    expect(
      identical(verdict$ok, ex$valid),
      sprintf("%s: expected ok = %s, validator said %s %s", ex$name, ex$valid, verdict$ok,
              paste(verdict$errors, collapse = "; "))
    )
  }
})

test_that("mcp_validate() fails with the validator's errors", {
  legacy_audio <- '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}}'
  msg <- structure(jsonlite::parse_json(legacy_audio), json = legacy_audio)
  expect_failure(mcp_validate(msg, "2024-11-05", "CallToolResult"), "CallToolResult")
  expect_success(mcp_validate(msg, "2025-06-18", "CallToolResult"))

  no_result_type <- '{"jsonrpc":"2.0","id":"a","result":{"tools":[],"ttlMs":300000,"cacheScope":"public"}}'
  msg <- structure(jsonlite::parse_json(no_result_type), json = no_result_type)
  expect_failure(mcp_validate(msg, "2026-07-28", "ListToolsResult"), "resultType")

  # Without the exact text the message is re-serialized; {} must stay {}.
  empty <- jsonlite::parse_json('{"jsonrpc":"2.0","id":2,"result":{}}')
  expect_success(mcp_validate(empty, "2025-06-18", "EmptyResult"))
})

test_that("the id-less error special case covers exactly unreadable ids", {
  parse_error <- '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}'
  for (v in c("2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28")) {
    expect_true(mcp_validator_check(parse_error, v)$ok)
  }
  not_found <- '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"}}'
  expect_false(mcp_validator_check(not_found, "2024-11-05")$ok)
  null_id <- '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
  expect_false(mcp_validator_check(null_id, "2025-06-18")$ok)
  expect_false(mcp_validator_check(null_id, "2026-07-28")$ok)
})

test_that("mcp_exchange() collects responses, stderr and exit status of a real process", {
  server <- c(
    'con <- file("stdin", "rb")',
    'n <- 0',
    'while (length(line <- readLines(con, n = 1, warn = FALSE))) {',
    '  n <- n + 1',
    '  cat(sprintf(\'{"jsonrpc":"2.0","id":%d,"result":{"bytes":%d}}\\n\', n, nchar(line, "bytes")))',
    '  message("got line ", n)',
    '}',
    'quit(status = 3)'
  )
  out <- mcp_exchange(c("abc", "h\u00e9llo"), server = server)
  expect_equal(out$status, 3)
  expect_length(out$responses, 2)
  expect_equal(out$responses[[2]]$result$bytes, 6) # "h\u00e9llo" is 6 UTF-8 bytes
  expect_equal(attr(out$responses[[1]], "json"), '{"jsonrpc":"2.0","id":1,"result":{"bytes":3}}')
  expect_equal(out$lines, vapply(out$responses, attr, "", "json"))
  expect_match(out$stderr, "got line 2")
  expect_equal(rawToChar(out$stdout), paste0(paste(out$lines, collapse = "\n"), "\n"))
})

test_that("mcp_send() delivers raw bytes exactly, including invalid UTF-8", {
  # The stand-in server answers with the hex of every byte it received.
  server <- c(
    'con <- file("stdin", "rb")',
    'bytes <- readBin(con, "raw", 1e6)',
    'cat(sprintf(\'{"jsonrpc":"2.0","id":1,"result":{"hex":"%s"}}\\n\', paste(as.character(bytes), collapse = "")))'
  )
  proc <- mcp_start(server)
  mcp_send(proc, as.raw(c(0xff, 0xfe, 0x7b)))
  mcp_send(proc, '{"a":1', newline = FALSE)
  out <- mcp_close(proc)
  expect_equal(out$responses[[1]]$result$hex, "fffe7b0a7b2261223a31")
})

test_that("the harness gets every stdout byte, whatever sizes the pipe holds when it reads", {
  # Each line is written only after the harness asked for it, so the pipe
  # holds exactly one line when the harness reads. A non-blocking fifo() read
  # with readBin() (R 4.2 reads it in 8 KB slices) lost a whole read when the
  # pipe ran dry exactly at a slice's end: these sizes are such ends, and
  # their neighbours.
  sizes <- c(8096L, 16192L, 8095L, 8097L, 4096L, 8192L, 65536L, 64768L, 1L + 8096L * 3L, 100L)
  server <- c(
    'con <- file("stdin", "r")',
    sprintf("for (size in c(%s)) {", paste0(sizes, "L", collapse = ", ")),
    '  if (!length(readLines(con, n = 1))) break',
    '  head <- sprintf(\'{"jsonrpc":"2.0","id":%d,"result":{"pad":"\', size)',
    '  pad <- strrep("x", size - nchar(head) - 4L)',
    '  cat(head, pad, \'"}}\', "\\n", sep = "")',
    '  flush(stdout())',
    '}'
  )
  proc <- mcp_start(server)
  for (size in sizes) {
    mcp_send(proc, "next")
    got <- mcp_read(proc, 1, timeout = 60)
    expect_length(got, 1)
    if (length(got)) {
      expect_identical(got[[1]]$id, size)
      expect_identical(nchar(attr(got[[1]], "json"), "bytes") + 1L, size)
    }
  }
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_identical(length(out$stdout), sum(sizes))
})

test_that("stdout pollution fails the test, whatever its form", {
  good <- '{"jsonrpc":"2.0","id":1,"result":{}}'
  # Each stand-in server, with the diagnosis the harness must give.
  polluters <- list(
    list(c(sprintf("cat('%s\\n')", good), "cat('hello from a tool\\n')"), "is not JSON"),
    list(sprintf("cat('%s')", good), "not a complete line"),
    list(c("cat('\\n')", sprintf("cat('%s\\n')", good)), "'' is not JSON"),
    list(c("con <- file(\"/dev/stdout\", \"wb\")", "writeBin(as.raw(c(0x7b, 0xff, 0x7d, 0x0a)), con)", "close(con)"),
         "not valid UTF-8"),
    list("cat('{\"id\":1,\"result\":{}}\\n')", "lacks jsonrpc"),
    list("cat('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}\\n')",
         "exactly one of result and error"),
    list("cat('[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\\n')", "not a JSON object"),
    list(sprintf("cat('%s\\r\\n')", good), "carriage return")
  )
  # Raw stdout bytes (and so invalid UTF-8) are only seen through the FIFO.
  if (.Platform$OS.type == "windows") polluters[[4]] <- NULL
  for (p in polluters) {
    expect_failure(mcp_exchange(character(), server = p[[1]]), p[[2]], fixed = TRUE)
  }
  clean <- mcp_exchange(character(), server = sprintf("cat('%s\\n')", good))
  expect_length(clean$responses, 1)
})

test_that("mcp_read() fails on timeout and on early exit instead of hanging", {
  proc <- mcp_start("Sys.sleep(30)")
  expect_failure(mcp_read(proc, 1, timeout = 0.5), "timed out")
  mcp_kill(proc)

  proc <- mcp_start("cat('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\\n'); quit(status = 1)")
  expect_failure(mcp_read(proc, 2, timeout = 10), "exited")
  mcp_kill(proc)
})

test_that("a real mcplite server answers the README handshake with schema-valid replies", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/list"'
  ))
  expect_equal(out$status, 0)
  expect_length(out$responses, 4)
  expect_equal(out$responses[[3]]$result$content[[1]]$text, "3")
  expect_equal(out$responses[[4]]$error$code, -32700)
  # Last: skips (without node) after the checks above have run.
  mcp_validate(out$responses, "2024-11-05", c("InitializeResult", "ListToolsResult", "CallToolResult", NA))
})

test_that("a real mcplite server answers modern requests with schema-valid replies", {
  skip_if_no_mcplite_child()
  meta <- '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
  out <- mcp_exchange(c(
    sprintf('{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{%s}}', meta),
    sprintf('{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{%s}}', meta),
    sprintf('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"summarise","arguments":{"values":[1,2,3]},%s}}', meta)
  ))
  expect_equal(out$status, 0)
  expect_equal(out$responses[[3]]$result$structuredContent, list(n = 3L, total = 6L, mean = 2L))
  mcp_validate(out$responses, "2026-07-28", c("DiscoverResult", "ListToolsResult", "CallToolResult"))
})

test_that("mcp_by_id() tells string ids from numeric ones", {
  responses <- list(
    jsonlite::parse_json('{"jsonrpc":"2.0","id":1,"result":{"n":"number"}}'),
    jsonlite::parse_json('{"jsonrpc":"2.0","id":"1","result":{"n":"string"}}')
  )
  expect_equal(mcp_by_id(responses, 1L)$result$n, "number")
  expect_equal(mcp_by_id(responses, "1")$result$n, "string")
  expect_failure(mcp_by_id(responses, 2L), "found 0")
})

test_that("a checked client fails the test on an answer the schema refuses or a stray stdout line, and passes a valid exchange", {
  skip_if_no_mcplite_child()
  skip_if_not_installed("jsonlite")
  tools <- tempfile(fileext = ".json")
  # A tool without its inputSchema: the client takes it, the schema does not.
  writeLines('[{"name":"echo","description":"Echo."}]', tools)
  broken <- function() {
    client <- checked_client(mcp_fixture_server("raw-server.R"), env = c(child_env(), RAW_TOOLS = tools))
    client$tools()
  }
  expect_failure(broken(), "inputSchema")
  # A line on stdout that is not a protocol message.
  banner <- function() {
    client <- checked_client(mcp_fixture_server("raw-server.R"), env = c(child_env(), RAW_BANNER = "1"))
    client$tools()
  }
  expect_failure(banner(), "server wrote a line that is not JSON-RPC: 'Welcome")
  client <- checked_client(mcp_fixture_server("raw-server.R"), env = child_env())
  client$tools()
  client$call("echo", list(x = 1))
  # Everything so far: the handshake (3 lines), the listing and the call (2 each).
  expect_equal(expect_valid_transcript(client), 7L)
})
