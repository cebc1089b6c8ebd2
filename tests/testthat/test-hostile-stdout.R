# Issue 36, section 3: standard output that does not take what the server
# writes. A full stdout means wait, never "closed", and a line is written
# whole: on a stdout whose file description is non-blocking (O_NONBLOCK set
# by whoever started the server) large answers still arrive whole. A server
# blocked writing to a client that does not read ends when it is asked to
# stop: at once on SIGTERM or SIGHUP; after SIGINT or the end of its input,
# once the client has read nothing for the 10 s grace. Either way it exits 0,
# says so on stderr, and the line it was writing is the last thing on stdout.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# A tools/call of the fixture server's echo whose answer text is `kb` kB
# (far more than a pipe holds when kb is in the thousands).
so_big_call <- function(id, kb) modern_call(id, "echo", sprintf('{"text":"%s","times":%d}', strrep("x", 999), kb))

so_big_text <- function(kb) paste(rep(strrep("x", 999), kb), collapse = " ")

# Start the fixture server like mcp_start() (stdout the harness's FIFO), its
# stdout file description blocking or non-blocking (perl sets O_NONBLOCK on
# it, then execs Rscript, which inherits it).
so_start <- function(stdout = c("blocking", "non-blocking")) {
  stdout <- match.arg(stdout)
  if (stdout == "blocking") return(mcp_start(mcp_fixture_server()))
  skip_if(!nzchar(Sys.which("perl")), "needs perl to set O_NONBLOCK on the server's stdout")
  proc <- new.env(parent = emptyenv())
  proc$script <- normalizePath(mcp_fixture_server())
  proc$buffer <- raw()
  proc$stdout <- raw()
  proc$lines <- character()
  proc$queue <- list()
  proc$stderr_file <- tempfile("mcp-stderr-", fileext = ".txt")
  nonblock <- paste(
    "use Fcntl;",
    "my $flags = fcntl(STDOUT, F_GETFL, 0) or die qq(F_GETFL: $!);",
    "fcntl(STDOUT, F_SETFL, $flags | O_NONBLOCK) or die qq(F_SETFL: $!);",
    "exec @ARGV or die qq(exec: $!);"
  )
  proc$process <- processx::process$new(
    "perl", c("-e", nonblock, mcp_rscript(), "--vanilla", proc$script),
    stdin = "|", stdout = mcp_stdout_pipe(proc), stderr = proc$stderr_file,
    env = c("current", R_LIBS = mcp_child_libs()), cleanup = TRUE
  )
  class(proc) <- "mcp_server_process"
  proc
}

# Wait (the safety timeout is not the assertion) until the process exits.
so_wait_exit <- function(proc, timeout = 60) wait_until(function() !proc$process$is_alive(), timeout)

so_wait_stderr <- function(proc, text, timeout = 60) {
  wait_until(function() grepl(text, mcp_stderr(proc), fixed = TRUE) || !proc$process$is_alive(), timeout)
  grepl(text, mcp_stderr(proc), fixed = TRUE)
}

test_that("a stdout with O_NONBLOCK set: large answers arrive whole, one line each, and the server goes on", {
  skip_if_no_mcplite_child()
  skip_unless_posix("O_NONBLOCK")
  proc <- so_start("non-blocking")
  on.exit(mcp_kill(proc), add = TRUE)
  sizes <- c(100, 3000, 8000, 1)
  ids <- sprintf("big%d", seq_along(sizes))
  # All at once: each answer is written behind the previous one.
  mcp_send(proc, paste(mapply(so_big_call, ids, sizes), collapse = "\n"))
  got <- mcp_read(proc, length(sizes), timeout = 120)
  expect_length(got, length(sizes))
  for (i in seq_along(got)) {
    r <- got[[i]]
    expect_identical(r$id, ids[[i]])
    expect_false(hs_is_error(r))
    expect_identical(nchar(hs_text(r)), nchar(so_big_text(sizes[[i]])), info = ids[[i]])
    expect_true(identical(hs_text(r), so_big_text(sizes[[i]])), info = ids[[i]])
  }
  after <- mcp_read(mcp_send(proc, modern_call("after", "echo", '{"text":"still here"}')), 1, timeout = 30)
  expect_length(after, 1)
  if (length(after)) expect_identical(hs_text(after[[1]]), "still here")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 0)
  mcp_validate(c(got, after), "2026-07-28", "CallToolResult")
})

# The server writes an answer of several MB to a client that read its first
# bytes and then stopped reading: the write blocks on the full pipe. `act`
# is done to it; returns what happened.
so_blocked <- function(act, stdout = "blocking", kb = 4000) {
  proc <- so_start(stdout)
  mcp_send(proc, so_big_call("big", kb))
  # Barrier: the answer has begun (the server writes it; the pipe fills).
  began <- wait_until(function() {
    mcp_pump(proc)
    length(proc$buffer) > 0 || !proc$process$is_alive()
  }, 60)
  act(proc)
  exited <- so_wait_exit(proc)
  if (!exited) mcp_kill(proc)
  # Everything left in the pipe: the writer is gone.
  repeat if (mcp_pump(proc) == 0) break
  out <- list(
    began = began, exited = exited, status = proc$process$get_exit_status(),
    stderr = mcp_stderr(proc), lines = proc$lines, tail = proc$buffer
  )
  mcp_kill(proc)
  out
}

# What every stop of a blocked write leaves: exit status 0, no complete line
# (the answer was cut), the cut line the last bytes of stdout.
so_expect_cut <- function(out, label, kb = 4000) {
  expect_true(out$began, info = label)
  expect_true(out$exited, info = sprintf("%s: the server was still blocked (killed)", label))
  if (!out$exited) return(invisible())
  expect_identical(out$status, 0L, info = label)
  expect_length(out$lines, 0)
  head <- rawToChar(out$tail[seq_len(min(30, length(out$tail)))])
  expect_true(startsWith(head, '{"jsonrpc":"2.0","id":"big"'), info = sprintf("%s: stdout starts %s", label, head))
  expect_lt(length(out$tail), kb * 1000)
  expect_false(as.raw(10L) %in% out$tail)
}

test_that("a write blocked on a client that does not read ends at once on SIGTERM or SIGHUP", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  cases <- list(
    list(signal = tools::SIGTERM, stdout = "blocking", label = "SIGTERM"),
    list(signal = tools::SIGHUP, stdout = "blocking", label = "SIGHUP"),
    list(signal = tools::SIGTERM, stdout = "non-blocking", label = "SIGTERM, stdout O_NONBLOCK")
  )
  for (case in cases) {
    out <- so_blocked(function(proc) proc$process$signal(case$signal), case$stdout)
    so_expect_cut(out, case$label)
    expect_match(out$stderr, "asked to stop (a signal) while the client was not reading standard output", fixed = TRUE,
                 info = case$label)
    expect_no_match(out$stderr, "waiting up to 10 s for the client", fixed = TRUE, info = case$label)
  }
})

test_that("after SIGINT or the end of input, a blocked write waits the grace for the client, then ends", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  stops <- list(
    SIGINT = function(proc) proc$process$interrupt(),
    `end of input` = function(proc) close(proc$process$get_input_connection())
  )
  for (label in names(stops)) {
    out <- so_blocked(stops[[label]])
    so_expect_cut(out, label)
    expect_match(out$stderr, "waiting up to 10 s for the client to read standard output", fixed = TRUE, info = label)
    expect_match(out$stderr, "the client read nothing from standard output for 10 s", fixed = TRUE, info = label)
  }
})

test_that("SIGTERM during that grace ends the wait at once", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  out <- so_blocked(function(proc) {
    proc$process$interrupt()
    # Barrier: the server says it waits for the client.
    expect_true(so_wait_stderr(proc, "waiting up to 10 s for the client to read standard output"))
    proc$process$signal(tools::SIGTERM)
  })
  so_expect_cut(out, "SIGINT, then SIGTERM")
  expect_match(out$stderr, "asked to stop (a signal) while the client was not reading standard output", fixed = TRUE)
  expect_no_match(out$stderr, "read nothing from standard output", fixed = TRUE)
})

test_that("after the end of input or a SIGINT, a client that reads slowly still gets every answer whole", {
  skip_if_no_mcplite_child()
  skip_unless_posix("signals")
  cases <- list(
    `end of input` = list(sizes = c(3000, 5000), stop = function(proc) close(proc$process$get_input_connection())),
    # One request: the signal comes once its answer has begun, so the server
    # has read it (a request not read before a stop is never answered).
    SIGINT = list(sizes = 8000, stop = function(proc) proc$process$interrupt())
  )
  for (label in names(cases)) {
    case <- cases[[label]]
    proc <- mcp_start(mcp_fixture_server())
    ids <- sprintf("big%d", seq_along(case$sizes))
    mcp_send(proc, paste(mapply(so_big_call, ids, case$sizes), collapse = "\n"))
    chunks <- list()
    sip <- function() {
      chunk <- mcp_stdout_bytes(proc, 65536L)
      chunks[[length(chunks) + 1L]] <<- chunk
      chunk
    }
    # Barrier: the first answer has begun.
    expect_true(wait_until(function() length(sip()) > 0, 60), info = label)
    case$stop(proc)
    # Read in sips between pauses: the pipe is full most of the time, but the
    # client keeps taking bytes, so the grace never runs out.
    done <- wait_until(function() {
      chunk <- sip()
      !proc$process$is_alive() && length(chunk) == 0
    }, 120)
    expect_true(done, info = label)
    lines <- strsplit(rawToChar(do.call(c, chunks)), "\n", fixed = TRUE)[[1]]
    expect_length(lines, length(case$sizes))
    for (i in seq_along(lines)) {
      r <- jsonlite::parse_json(lines[[i]])
      expect_identical(r$id, ids[[i]], info = label)
      expect_true(identical(hs_text(r), so_big_text(case$sizes[[i]])), info = sprintf("%s: %s", label, ids[[i]]))
    }
    expect_identical(proc$process$get_exit_status(), 0L, info = label)
    expect_no_match(mcp_stderr(proc), "read nothing from standard output", fixed = TRUE, info = label)
    mcp_kill(proc)
  }
})
