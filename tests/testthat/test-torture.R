# The server survives what clients and tools throw at it: every request with
# an id gets exactly one answer, stdout holds nothing but protocol lines, and
# the server keeps serving afterwards.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# A lean client for bulk traffic: plain pipes, lines counted as they arrive,
# every byte checked once at the end (the general harness keeps per-line state
# that is too slow for 100 000 answers).
bulk_start <- function() {
  processx::process$new(
    mcp_rscript(), c("--vanilla", normalizePath(protocol_server())),
    stdin = "|", stdout = "|", stderr = tempfile(), env = c("current", R_LIBS = mcp_child_libs()),
    cleanup = TRUE
  )
}

bulk_exchange <- function(proc, lines, expect, chunk = 5000L, on_progress = NULL) {
  got <- character(expect)
  n <- 0L
  pump <- function(wait = 0) {
    if (wait > 0) proc$poll_io(wait)
    new <- proc$read_output_lines()
    if (length(new)) {
      got[n + seq_along(new)] <<- new
      n <<- n + length(new)
      if (!is.null(on_progress)) on_progress(n)
    }
  }
  for (start in seq(1L, length(lines), by = chunk)) {
    pending <- charToRaw(paste0(paste(lines[start:min(length(lines), start + chunk - 1L)], collapse = "\n"), "\n"))
    while (length(pending)) {
      pending <- proc$write_input(pending)
      pump(if (length(pending)) 10 else 0)
    }
  }
  close(proc$get_input_connection())
  deadline <- Sys.time() + 120
  while ((proc$is_alive() || proc$is_incomplete_output()) && Sys.time() < deadline) pump(100)
  got[seq_len(n)]
}

# The server's memory over this run is a figure for bench/limits.R.
test_that("100 000 pipelined requests: exactly one answer each, protocol-only stdout", {
  skip_if_no_mcplite_child()
  n <- 100000L
  lines <- c(initialize_line("2025-11-25"), initialized_line(),
             vapply(seq_len(n), function(i) legacy_call(i, "add", sprintf('{"a":%d,"b":1}', i)), ""))
  proc <- bulk_start()
  on.exit(if (proc$is_alive()) proc$kill(), add = TRUE)
  got <- bulk_exchange(proc, lines, n + 1L)
  proc$wait(5000)
  expect_identical(proc$get_exit_status(), 0L)
  expect_length(got, n + 1L)
  expect_true(all(vapply(got, jsonlite::validate, TRUE)))
  ids <- as.integer(sub('^\\{"jsonrpc":"2.0","id":([0-9]+),"result".*$', "\\1", got[-1]))
  expect_identical(sort(ids), seq_len(n))
  expect_identical(got[[n + 1L]], sprintf('{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d"}],"isError":false}}', ids[n], ids[n] + 1L))
})

test_that("a 50 MB message is read whole and answered", {
  skip_if_no_mcplite_child()
  big <- strrep("y", 5e7)
  out <- mcp_exchange(c(initialize_line("2025-11-25"), legacy_call(1, "size", sprintf('{"text":"%s"}', big)),
                        legacy_call(2, "add", '{"a":1,"b":1}')), server = protocol_server(), timeout = 120)
  expect_identical(first_text(mcp_by_id(out$responses, 1)), "50000000")
  expect_identical(first_text(mcp_by_id(out$responses, 2)), "2")
  expect_identical(out$status, 0L)
})

test_that("input that ends in the middle of a line is answered with a parse error, then exit 0", {
  skip_if_no_mcplite_child()
  proc <- mcp_start(protocol_server())
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_send(proc, legacy_call(1, "add", '{"a":1,"b":1}'))
  mcp_send(proc, '{"jsonrpc":"2.0","id":7,"method":"tools/ca', newline = FALSE)
  out <- mcp_close(proc)
  expect_length(out$responses, 3)
  expect_rpc_error(out$responses[[3]], -32700)
  expect_identical(out$status, 0L)
})

test_that("stdin closed while a tool runs: the answer still arrives, then exit 0", {
  skip_if_no_mcplite_child()
  proc <- mcp_start(protocol_server())
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_send(proc, legacy_call(1, "sleepy", '{"seconds":1}'))
  out <- mcp_close(proc)
  expect_identical(first_text(mcp_by_id(out$responses, 1)), "slept")
  expect_identical(out$status, 0L)
})

test_that("stdout closed by the client: the server exits quietly, without SIGPIPE or a hang", {
  skip_if_no_mcplite_child()
  skip_on_os("windows")
  proc <- bulk_start()
  on.exit(if (proc$is_alive()) proc$kill(), add = TRUE)
  proc$write_input(paste0(initialize_line("2025-11-25"), "\n"))
  proc$poll_io(10000)
  expect_length(proc$read_output_lines(), 1)
  close(proc$get_output_connection())
  proc$write_input(paste0(paste(vapply(1:200, function(i) legacy_call(i, "add", '{"a":1,"b":1}'), ""),
                                collapse = "\n"), "\n"))
  close(proc$get_input_connection())
  proc$wait(20000)
  expect_false(proc$is_alive())
  expect_identical(proc$get_exit_status(), 0L)
  err <- paste(readLines(proc$get_error_file(), warn = FALSE), collapse = "\n")
  expect_false(grepl("SIGPIPE|Broken pipe|panicked", err))
})

test_that("tools that recurse, exhaust memory, abort, meddle or print never break the server", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    initialize_line("2025-11-25"),
    legacy_call(1, "recurse"),
    legacy_call(2, "hog"),
    legacy_call(3, "abort"),
    legacy_call(4, "weird_error"),
    legacy_call(5, "noisy"),
    legacy_call(6, "meddle"),
    legacy_call(7, "add", '{"a":1,"b":1}'),
    legacy_call(8, "noisy"),
    legacy_call(9, "stats")
  ), server = protocol_server(), timeout = 120)
  r <- out$responses
  expect_length(r, 10)
  for (id in 1:4) expect_true(isTRUE(mcp_by_id(r, id)$result$isError), info = id)
  expect_match(first_text(mcp_by_id(r, 1)), "nested too deeply|stack", ignore.case = TRUE)
  expect_match(first_text(mcp_by_id(r, 2)), "allocate", ignore.case = TRUE)
  expect_identical(first_text(mcp_by_id(r, 5)), "quiet")
  expect_identical(first_text(mcp_by_id(r, 6)), '{"value":1}')
  # Options were read when the server started: auto_unbox = FALSE set by a
  # tool does not change later answers.
  expect_identical(first_text(mcp_by_id(r, 7)), "2")
  # Warnings are reported on stderr and never fail a tool, even with the
  # warn = 2 that `meddle` left behind.
  expect_identical(first_text(mcp_by_id(r, 8)), "quiet")
  # tool_result() reads the payload options when it is built, so a tool that
  # changes them changes the structured content built after it.
  expect_identical(mcp_by_id(r, 9)$result$structuredContent, list(n = list(3L), mean = list(2.5)))
  mcp_validate(r, "2025-11-25")
  expect_identical(out$status, 0L)
})

test_that("a tool slower than the client waits: its cancelled answer is dropped, the next one served", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    modern_call("slow", "sleepy", '{"seconds":1.5}'),
    rpc(NULL, "notifications/cancelled", '{"requestId":"slow","reason":"timeout"}'),
    modern_call("next", "add", '{"a":1,"b":1}')
  ), server = protocol_server())
  ids <- vapply(out$responses, function(r) r$id, "")
  expect_identical(ids, "next")
})

test_that("strings in any R encoding are sent as UTF-8 and never stop the server", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(initialize_line("2025-11-25"), legacy_call(1, "encodings"),
                        legacy_call(2, "add", '{"a":1,"b":1}')), server = protocol_server())
  expect_identical(out$status, 0L)
  expect_identical(first_text(mcp_by_id(out$responses, 1)), "caf\u00e9\ncaf\ufffd")
  expect_identical(first_text(mcp_by_id(out$responses, 2)), "2")
})
