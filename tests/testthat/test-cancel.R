# Cancellation of calls in the server process (workers = 0) over real pipes:
# notifications/cancelled interrupts the tool's own function only, the
# cancelled call gets no answer, and the server goes on. Tools mark what they
# do in files; the test waits for those (never for a duration).

skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

cancel_start <- function(version = "2025-06-18") {
  skip_if_no_mcplite_child()
  proc <- mcp_start(mcp_fixture_server("cancel-server.R"))
  if (version != "2026-07-28") {
    mcp_send(proc, initialize_line(version))
    mcp_send(proc, initialized_line())
    expect_identical(mcp_read(proc, 1)[[1]]$result$protocolVersion, version)
  }
  proc
}

cancel_line <- function(id) rpc(NULL, "notifications/cancelled", sprintf('{"requestId":%s}', id))

marks <- function(...) {
  dir <- tempfile("cancel-")
  dir.create(dir)
  names <- c(...)
  stats::setNames(file.path(dir, names), names)
}

args_json <- function(x) as.character(jsonlite::toJSON(as.list(x), auto_unbox = TRUE))

test_that("a cancelled running tool is interrupted, gets no answer, and the next call is answered", {
  skip_on_os("windows") # there the function runs to its end (see vignette("long-running"))
  proc <- cancel_start()
  m <- marks("started", "interrupted")
  mcp_send(proc, legacy_call(1, "hold", args_json(m)))
  expect_true(wait_until(function() file.exists(m[["started"]])))
  mcp_send(proc, cancel_line(1))
  # The tool saw an interrupt condition.
  expect_true(wait_until(function() file.exists(m[["interrupted"]])))
  mcp_send(proc, legacy_call(2, "quick"))
  answer <- mcp_read(proc, 1)[[1]]
  expect_identical(answer$id, 2L)
  expect_identical(first_text(answer), "quick")
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
  expect_identical(out$status, 0L)
  # The interrupt was the cancellation's: not a failure to tell the author.
  expect_false(grepl("tool hold failed", out$stderr, fixed = TRUE))
})

test_that("a call read but not started, cancelled, never runs", {
  skip_on_os("windows")
  proc <- cancel_start()
  m <- marks("started", "interrupted", "recorded")
  mcp_send(proc, legacy_call(1, "hold", args_json(m[c("started", "interrupted")])))
  expect_true(wait_until(function() file.exists(m[["started"]])))
  # Call 2 waits behind call 1; it is cancelled, then call 1 is: once call 1
  # sees its interrupt, the server has read both cancellations.
  mcp_send(proc, legacy_call(2, "record", args_json(c(marker = m[["recorded"]]))))
  mcp_send(proc, cancel_line(2))
  mcp_send(proc, cancel_line(1))
  expect_true(wait_until(function() file.exists(m[["interrupted"]])))
  mcp_send(proc, legacy_call(3, "quick"))
  answer <- mcp_read(proc, 1)[[1]]
  expect_identical(answer$id, 3L)
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
  expect_false(file.exists(m[["recorded"]]))
})

test_that("a tool that swallows the interrupt runs to its end, is answered to nobody, and the server goes on", {
  skip_on_os("windows")
  proc <- cancel_start("2026-07-28")
  m <- marks("started", "finished")
  mcp_send(proc, modern_call(1, "swallow", args_json(m)))
  expect_true(wait_until(function() file.exists(m[["started"]])))
  mcp_send(proc, cancel_line(1))
  expect_true(wait_until(function() file.exists(m[["finished"]])))
  mcp_send(proc, modern_call(2, "quick"))
  answer <- mcp_read(proc, 1)[[1]]
  expect_identical(answer$id, 2L)
  mcp_validate(answer, "2026-07-28", def = "CallToolResult")
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
})

test_that("a cancellation while the server converts the result interrupts nothing and drops the result", {
  proc <- cancel_start()
  m <- marks("converting", "barrier", "converted")
  mcp_send(proc, legacy_call(1, "slow_convert", args_json(m)))
  expect_true(wait_until(function() file.exists(m[["converting"]])))
  mcp_send(proc, cancel_line(1))
  # The server says it read the cancellation and interrupts nothing.
  expect_true(wait_until(function() grepl("was cancelled while the server ran its own R code", mcp_stderr(proc))))
  file.create(m[["barrier"]])
  # The conversion ran to its end (it was not interrupted) ...
  expect_true(wait_until(function() file.exists(m[["converted"]])))
  mcp_send(proc, legacy_call(2, "quick"))
  answer <- mcp_read(proc, 1)[[1]]
  # ... and its result was dropped: the next answer is call 2's.
  expect_identical(answer$id, 2L)
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
})

test_that("cancelling one call never interrupts the next one", {
  skip_on_os("windows")
  proc <- cancel_start()
  # A cancellation of a call that already finished (answered) reaches
  # nothing: the call after it runs to its end.
  mcp_send(proc, legacy_call(1, "quick"))
  expect_identical(mcp_read(proc, 1)[[1]]$id, 1L)
  m <- marks("started", "finished")
  mcp_send(proc, cancel_line(1))
  mcp_send(proc, legacy_call(2, "swallow", args_json(m)))
  expect_true(wait_until(function() file.exists(m[["started"]])))
  # 2 waits for a file nobody creates; cancel it to end it. Had the
  # cancellation of 1 interrupted it, it would have finished already.
  expect_false(file.exists(m[["finished"]]))
  mcp_send(proc, cancel_line(2))
  expect_true(wait_until(function() file.exists(m[["finished"]])))
  mcp_send(proc, legacy_call(3, "quick"))
  expect_identical(mcp_read(proc, 1)[[1]]$id, 3L)
  mcp_close(proc)
})
