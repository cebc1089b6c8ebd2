# Signals. A SIGINT, SIGTERM or SIGHUP while no tool runs in the server
# process is a request to stop: serving ends as at end of input (every request
# already read is answered, calls on workers are awaited within the grace) and
# Rscript exits 0. MCP clients stop their servers this way (Claude Code sends
# SIGINT, then SIGTERM), and terminal clients run in raw mode, so a SIGINT that
# reaches a server is meant for it. A SIGTERM or SIGHUP during the grace ends
# it at once; calls still running then get a tool error saying the server
# stopped. More SIGINTs change nothing. A SIGINT while a tool runs in the server process interrupts
# that tool only (a tool error), and serving goes on; SIGTERM then interrupts it
# and stops. When standard input is a terminal, the server says on stderr that
# it waits for an MCP client and how to stop it, and Ctrl-C ends it.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# One request at a time, with its answer.
hs_one <- function(s, tool, args = "{}", timeout = 10) {
  id <- hs_id(s)
  a <- hs_batch(s, list(list(id = id, line = hs_call_line(s, id, tool, args), label = sprintf("%s %s", tool, args))), timeout = timeout)
  a[[id]]
}

# Wait for the process to exit after a signal; TRUE if it did. The timeout
# only stops a hung test: how long the exit took is a figure for bench/.
sig_wait_exit <- function(proc, timeout = 60) {
  wait_until(function() {
    mcp_pump(proc)
    !proc$process$is_alive()
  }, timeout)
}

sig_send <- function(proc, signal) {
  switch(signal,
    SIGINT = proc$process$interrupt(),
    SIGTERM = proc$process$signal(tools::SIGTERM),
    SIGHUP = proc$process$signal(tools::SIGHUP)
  )
}

# Wait until the file a tool creates when it starts exists.
sig_wait_file <- function(path, timeout = 20) wait_until(function() file.exists(path), timeout)

# Wait until the server's stderr has a line containing `text`.
sig_wait_stderr <- function(proc, text, timeout = 20) {
  deadline <- Sys.time() + timeout
  while (!grepl(text, mcp_stderr(proc), fixed = TRUE) && Sys.time() < deadline && proc$process$is_alive()) {
    if (mcp_pump(proc) == 0) Sys.sleep(0.01)
  }
  grepl(text, mcp_stderr(proc), fixed = TRUE)
}

test_that("SIGINT, SIGTERM or SIGHUP while idle stops the server promptly with exit status 0", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  for (signal in c("SIGINT", "SIGTERM", "SIGHUP")) {
    for (version in c("2025-11-25", "2026-07-28")) {
      s <- hs_start(version)
      warm <- hs_one(s, "echo", '{"x":"ready"}')
      expect_identical(hs_text(warm), "ready")
      sig_send(s$proc, signal)
      expect_true(sig_wait_exit(s$proc), info = sprintf("%s (%s): still running", signal, version))
      out <- mcp_close(s$proc)
      expect_identical(out$status, 0L, info = sprintf("%s (%s)", signal, version))
      expect_length(out$responses, 0)
      expect_match(out$stderr, "asked to stop", fixed = TRUE)
      hs_report(s$problems, sprintf("idle %s (%s)", signal, version))
    }
  }
})

test_that("requests read before a stop are each answered once: the running tool is interrupted, the rest run in order", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  s <- hs_start("2026-07-28")
  started <- tempfile("spin-started-")
  lines <- c(
    hs_call_line(s, "a", "spin", sprintf('{"seconds":20,"started":"%s"}', started)),
    hs_call_line(s, "b", "echo", '{"x":"after"}'),
    hs_call_line(s, "c", "echo", '{"x":"third"}')
  )
  # One write: all three are read before the signal comes.
  mcp_send(s$proc, paste(lines, collapse = "\n"))
  # The tool writes the file once it runs: the signal then interrupts it.
  expect_true(sig_wait_file(started))
  sig_send(s$proc, "SIGTERM")
  expect_true(sig_wait_exit(s$proc))
  out <- mcp_close(s$proc)
  expect_identical(out$status, 0L)
  ids <- vapply(out$responses, function(r) as.character(r$id), "")
  expect_identical(sort(ids), c("a", "b", "c"))
  a <- mcp_by_id(out$responses, "a")
  expect_true(hs_is_error(a))
  expect_match(hs_text(a), "interrupted", fixed = TRUE)
  expect_identical(hs_text(mcp_by_id(out$responses, "b")), "after")
  expect_identical(hs_text(mcp_by_id(out$responses, "c")), "third")
  mcp_validate(out$responses, "2026-07-28", "CallToolResult")
})

sig_workers_server <- function() {
  skip_if_not_installed("mirai")
  mcp_start(mcp_fixture_server("workers-server.R"), env = c(MCPLITE_TEST_WORKERS = "1"))
}

test_that("with workers: a stop waits for running calls; a second SIGTERM ends the wait and they get a tool error", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  for (first in c("SIGINT", "end of input")) {
    proc <- sig_workers_server()
    started <- tempfile("block-started-")
    mcp_send(proc, modern_call("blocked", "block", sprintf('{"started":"%s"}', started)))
    expect_true(sig_wait_file(started, 60))
    if (first == "end of input") {
      try(close(proc$process$get_input_connection()), silent = TRUE)
    } else {
      sig_send(proc, first)
    }
    # Serving winds down, says that it waits for the call (the grace is
    # 10 s) and stays ...
    expect_true(sig_wait_stderr(proc, "waiting up to 10 s for 1 running tool call"), info = first)
    expect_true(proc$process$is_alive(), info = first)
    # ... until the usual escalation.
    sig_send(proc, "SIGTERM")
    expect_true(sig_wait_exit(proc), info = first)
    out <- mcp_close(proc)
    expect_identical(out$status, 0L, info = first)
    expect_length(out$responses, 1)
    r <- out$responses[[1]]
    expect_identical(r$id, "blocked")
    expect_true(hs_is_error(r))
    expect_identical(hs_text(r), "The server stopped before tool block finished.")
    mcp_validate(out$responses, "2026-07-28", "CallToolResult")
  }
})

test_that("with workers: SIGINT while idle stops the server promptly with exit status 0", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  proc <- sig_workers_server()
  mcp_send(proc, modern_call("p", "add", '{"x":1,"y":2}'))
  r <- mcp_read(proc, 1, timeout = 60)
  expect_identical(r[[1]]$result$content[[1]]$text, "3")
  sig_send(proc, "SIGINT")
  expect_true(sig_wait_exit(proc))
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 0)
})

test_that("SIGINT during a tool interrupts that call only; the next call succeeds", {
  skip_if_no_mcplite_child()
  skip_unless_posix("SIGINT")
  s <- hs_start("2026-07-28")
  for (round in 1:3) {
    id <- hs_id(s)
    started <- tempfile("spin-started-")
    # The tool would spin for a minute: an answer before then is the interrupt's.
    mcp_send(s$proc, hs_call_line(s, id, "spin", sprintf('{"seconds":60,"started":"%s"}', started)))
    # Interrupt only once the tool runs (an interrupt before it starts is idle).
    expect_true(sig_wait_file(started, 10))
    s$proc$process$interrupt()
    r <- hs_quiet(s, mcp_read(s$proc, 1, timeout = 30))
    expect_length(r, 1)
    if (length(r)) {
      expect_identical(r[[1]]$id, id)
      expect_true(hs_is_error(r[[1]]))
      expect_match(hs_text(r[[1]]), "interrupt", ignore.case = TRUE)
    }
    after <- hs_one(s, "spin", '{"seconds":0.3}')
    expect_false(hs_is_error(after), info = hs_text(after))
    expect_match(hs_text(after), "^spun [0-9]+ times$")
  }
  hs_close(s)
  hs_report(s$problems, "SIGINT during a tool")
})

test_that("on a terminal: one line on stderr says the server waits for an MCP client and how to stop it; Ctrl-C ends it", {
  skip_if_no_mcplite_child()
  skip_unless_posix("a pseudo-terminal")
  skip_if(!nzchar(Sys.which("script")), "needs script(1) from util-linux")
  cmd <- sprintf("%s --vanilla %s", shQuote(mcp_rscript()), shQuote(normalizePath(hostile_server())))
  # script(1) runs the server on a pseudo-terminal (stdin, stdout and stderr
  # all the terminal) and copies what it prints to its own stdout; bytes
  # written to script's stdin are typed on that terminal.
  p <- processx::process$new("script", c("-qfec", cmd, "/dev/null"), stdin = "|", stdout = "|", stderr = "|",
                             env = c("current", R_LIBS = mcp_child_libs()), cleanup = TRUE)
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  seen <- ""
  # Until the server's first line (the bound only stops a hung test).
  deadline <- Sys.time() + 60
  while (Sys.time() < deadline && !grepl("\n", seen)) {
    p$poll_io(200)
    seen <- paste0(seen, p$read_output())
  }
  # Ctrl-C typed on the terminal, once the server has spoken.
  # Without it the server would wait on the terminal for ever; the wait's
  # bound only stops a hung test.
  p$write_input("\x03")
  p$wait(30000)
  expect_false(p$is_alive())
  # Everything the terminal showed, up to the exit: the one waiting line, the
  # echoed ^C and the line that says the server stopped.
  deadline <- Sys.time() + 5
  while (p$is_incomplete_output() && Sys.time() < deadline) {
    p$poll_io(200)
    seen <- paste0(seen, p$read_output())
  }
  lines <- strsplit(gsub("\r", "", gsub("^C", "", seen, fixed = TRUE)), "\n")[[1]]
  lines <- lines[nzchar(trimws(lines))]
  expect_length(grep("asked to stop", lines, fixed = TRUE), 1)
  lines <- grep("asked to stop", lines, fixed = TRUE, value = TRUE, invert = TRUE)
  expect_length(lines, 1)
  expect_match(paste(lines, collapse = "\n"), "MCP client", ignore.case = TRUE)
  expect_match(paste(lines, collapse = "\n"), "Ctrl|\\^C|\\^D|interrupt|end of (file|input)", ignore.case = TRUE)
})

test_that("with workers: a SIGINT storm during many quick calls fails no call and stops the server cleanly", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  proc <- sig_workers_server()
  mcp_send(proc, modern_call("warm", "add", '{"x":0,"y":0}'))
  expect_length(mcp_read(proc, 1, timeout = 60), 1)
  n <- 300
  lines <- vapply(seq_len(n), function(i) modern_call(sprintf("q%d", i), "add", sprintf('{"x":%d,"y":1}', i)), "")
  mcp_send(proc, paste(lines, collapse = "\n"))
  # SIGINTs every millisecond or so while the calls are submitted and polled.
  for (k in 1:200) {
    if (!proc$process$is_alive()) break
    proc$process$interrupt()
    Sys.sleep(0.001)
  }
  expect_true(sig_wait_exit(proc))
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  ids <- vapply(out$responses, function(r) as.character(r$id), "")
  expect_false(anyDuplicated(ids) > 0)
  expect_true(all(ids %in% sprintf("q%d", seq_len(n))))
  for (r in out$responses) {
    i <- as.integer(sub("^q", "", r$id))
    expect_false(isTRUE(r$result$isError), info = paste(r$id, r$result$content[[1]]$text))
    expect_identical(r$result$content[[1]]$text, as.character(i + 1L))
  }
  # Requests are read in order, so the answered ones are the first ones read.
  if (length(ids)) expect_setequal(ids, sprintf("q%d", seq_len(length(ids))))
  message(sprintf("SIGINT storm with workers: %d of %d calls read and answered before the stop", length(ids), n))
})
