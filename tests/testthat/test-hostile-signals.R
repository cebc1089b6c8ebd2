# Issue 13, class 5: interrupts. A SIGINT while the server waits for input is
# dropped (a client in the same terminal pressing Ctrl-C must not fail a later
# call or kill the server); a SIGINT during a tool interrupts that tool only.
# When standard input is a terminal (a person ran the script), the server says
# on stderr that it waits for an MCP client and how to stop it, and Ctrl-C
# ends it.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# One request at a time, with its answer.
hs_one <- function(s, tool, args = "{}", timeout = 10) {
  id <- hs_id(s)
  a <- hs_batch(s, list(list(id = id, line = hs_call_line(s, id, tool, args), label = sprintf("%s %s", tool, args))), timeout = timeout)
  a[[id]]
}

test_that("SIGINT while the server is idle is dropped: later interruptible tools succeed, the server lives", {
  skip_if_no_mcplite_child()
  skip_unless_posix("SIGINT")
  for (version in c("2025-11-25", "2026-07-28")) {
    s <- hs_start(version)
    pid <- s$proc$process$get_pid()
    # One answer first: the server is serving (a SIGINT while R still loads
    # the script is R's business, not the server's).
    warm <- hs_one(s, "echo", '{"x":"ready"}')
    expect_identical(hs_text(warm), "ready")
    got <- list()
    for (round in 1:4) {
      # After a restart (a crash is reported by hs_one), wait for the new
      # server to serve before the next SIGINT.
      if (s$crashes > 0 && round > 1) hs_one(s, "echo", '{"x":"ready"}')
      # Idle: after an answer, before the next request. Round 3 sends two.
      s$proc$process$interrupt()
      if (round == 3) {
        Sys.sleep(0.1)
        s$proc$process$interrupt()
      }
      Sys.sleep(0.3)
      r <- hs_one(s, "spin", '{"seconds":0.3}')
      got[round] <- list(r)
      expect_false(is.null(r), info = sprintf("%s round %d: no answer", version, round))
      if (!is.null(r)) {
        expect_false(hs_is_error(r), info = sprintf("%s round %d: %s", version, round, hs_text(r)))
        expect_match(hs_text(r), "^spun [0-9]+ times$", info = sprintf("%s round %d", version, round))
      }
    }
    expect_identical(s$proc$process$get_pid(), pid)
    expect_identical(s$crashes, 0L)
    hs_close(s)
    hs_validate(got, version)
    hs_report(s$problems, sprintf("idle SIGINT (%s)", version))
  }
})

test_that("SIGINT during a tool interrupts that call only; the next call succeeds", {
  skip_if_no_mcplite_child()
  skip_unless_posix("SIGINT")
  s <- hs_start("2026-07-28")
  for (round in 1:3) {
    id <- hs_id(s)
    started <- tempfile("spin-started-")
    mcp_send(s$proc, hs_call_line(s, id, "spin", sprintf('{"seconds":5,"started":"%s"}', started)))
    # Interrupt only once the tool runs (an interrupt before it starts is idle).
    deadline <- Sys.time() + 10
    while (!file.exists(started) && Sys.time() < deadline) Sys.sleep(0.02)
    Sys.sleep(0.1)
    s$proc$process$interrupt()
    t0 <- Sys.time()
    r <- hs_quiet(s, mcp_read(s$proc, 1, timeout = 10))
    expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 3)
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
  deadline <- Sys.time() + 8
  while (Sys.time() < deadline && !grepl("\n", seen)) {
    p$poll_io(200)
    seen <- paste0(seen, p$read_output())
  }
  Sys.sleep(0.5)
  seen <- paste0(seen, p$read_output())
  lines <- strsplit(gsub("\r", "", seen), "\n")[[1]]
  lines <- lines[nzchar(lines)]
  expect_length(lines, 1)
  expect_match(paste(lines, collapse = "\n"), "MCP client", ignore.case = TRUE)
  expect_match(paste(lines, collapse = "\n"), "Ctrl|\\^C|\\^D|interrupt|end of (file|input)", ignore.case = TRUE)
  # Ctrl-C typed on the terminal.
  t0 <- Sys.time()
  p$write_input("\x03")
  p$wait(4000)
  elapsed <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  expect_false(p$is_alive())
  expect_lt(elapsed, 2)
})
