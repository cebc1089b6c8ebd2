# An idle server makes no wake-ups (issue 41, goal 3): with no call running
# and no tracing exporter, its threads wait on their inputs (standard input,
# the stop bell, the progress relay) and are never switched in while nothing
# arrives. Counted from /proc/<pid>/task/*/status (Linux only).

# Context switches (voluntary + nonvoluntary) of each thread of `pid`, named
# by thread id and name.
thread_switches <- function(pid) {
  tasks <- list.files(file.path("/proc", pid, "task"))
  out <- integer()
  for (tid in tasks) {
    status <- tryCatch(readLines(file.path("/proc", pid, "task", tid, "status"), warn = FALSE),
                       error = function(e) character())
    if (!length(status)) next
    field <- function(k) {
      line <- grep(paste0("^", k, ":"), status, value = TRUE)
      if (length(line)) sub(paste0("^", k, ":\\s*"), "", line[[1]]) else NA_character_
    }
    switches <- as.integer(field("voluntary_ctxt_switches")) + as.integer(field("nonvoluntary_ctxt_switches"))
    out[paste0(tid, " ", field("Name"))] <- switches
  }
  out
}

# The threads counted: R's main thread (it runs the serve loop; its name is
# the process's) and mcplite's own (named "mcplite-..."). The mirai
# dispatcher's and nanonext's threads in a server with workers are mirai's
# (their timers are theirs to keep; bench/idle.mjs shows them).
ours <- function(switches, pid) {
  keep <- startsWith(names(switches), paste0(pid, " ")) | grepl(" mcplite-", names(switches), fixed = TRUE)
  switches[keep]
}

# The test's own work between the two snapshots: a fixed number of R
# processes started and finished (a count of events, each a barrier: the
# child has exited). No timing is asserted: a server that ticks (every 50 ms
# before) is switched in many times while they run, one that waits on its
# inputs never, however long they take.
test_own_work <- function(n = 4) {
  for (i in seq_len(n)) processx::run(mcp_rscript(), c("--vanilla", "-e", "invisible(NULL)"))
}

expect_idle_server_quiet <- function(proc, ready = NULL) {
  pid <- proc$process$get_pid()
  mcp_send(proc, initialize_line("2025-11-25"))
  init <- mcp_read(proc, 1)
  expect_identical(init[[1]]$id, 0L)
  # Workers start while the server serves: idle means after they are ready.
  if (!is.null(ready)) expect_true(wait_stderr_line(proc, ready), label = mcp_stderr(proc))
  mcp_send(proc, initialized_line())
  # Barrier: the answer to a ping sent after the notification, so the server
  # has handled everything sent and has gone back to waiting.
  mcp_send(proc, rpc(1, "ping"))
  expect_identical(mcp_read(proc, 1)[[1]]$id, 1L)
  # The first snapshot may be taken while a thread is still on its way back
  # to its wait (the loop after writing the answer, the reader after
  # handing the line on): one switch each is allowed there, once.
  before <- ours(thread_switches(pid), pid)
  test_own_work()
  middle <- ours(thread_switches(pid), pid)
  test_own_work()
  after <- ours(thread_switches(pid), pid)
  expect_true(any(grepl(" mcplite-stdin$", names(before))), info = paste(names(before), collapse = ", "))
  common <- intersect(names(before), intersect(names(middle), names(after)))
  first_half <- middle[common] - before[common]
  second_half <- after[common] - middle[common]
  # A server that ticks grows in both halves; one that waits grows in
  # neither.
  expect_true(all(first_half <= 1L),
              info = paste(sprintf("%s: +%d", common, first_half)[first_half > 1L], collapse = "; "))
  expect_true(all(second_half == 0L),
              info = paste(sprintf("%s: +%d", common, second_half)[second_half != 0L], collapse = "; "))
  # Still serving: an answer comes at once.
  mcp_send(proc, rpc(2, "ping"))
  expect_identical(mcp_read(proc, 1)[[1]]$id, 2L)
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
}

test_that("an idle server (in-process) makes no wake-ups while nothing arrives", {
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if_no_proc()
  skip_if_no_mcplite_child()
  proc <- mcp_start(mcp_fixture_server("server.R"))
  on.exit(mcp_kill(proc), add = TRUE)
  expect_idle_server_quiet(proc)
})

test_that("an idle server with workers makes no wake-ups while nothing arrives", {
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if_no_proc()
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  proc <- mcp_start(mcp_fixture_server("workers-server.R"), env = c(MCPLITE_TEST_WORKERS = "2"))
  on.exit(mcp_kill(proc), add = TRUE)
  expect_idle_server_quiet(proc, ready = "mcplite: workers ready")
})
