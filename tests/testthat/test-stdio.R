# Standard input while tools run (the platform layer, src/rust/src/platform):
# a tool, or a child process it starts, that reads standard input gets end of
# file at once instead of waiting on the client's pipe or taking its requests;
# and a child process that outlives the server does not keep the client's
# stdout open.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

stdio_server <- c(
  "library(mcplite)",
  "read_stdin <- tool(function() {",
  "  con <- file('stdin', open = 'r'); on.exit(close(con))",
  "  got <- readLines(con, warn = FALSE)",
  "  paste('read', length(got), 'lines')",
  "}, name = 'read_stdin', description = 'Read standard input to its end.')",
  "child_reads <- tool(function() {",
  "  out <- system('wc -c', intern = TRUE)",
  "  paste('child read', trimws(out), 'bytes')",
  "}, name = 'child_reads', description = 'A child process reads standard input to its end.')",
  "linger <- tool(function() { system('sleep 30 &'); 'started' },",
  "  name = 'linger', description = 'Leave a child process running.')",
  "add <- tool(function(a, b) a + b, name = 'add', description = 'Add.',",
  "  arguments = list(a = type_number(), b = type_number()))",
  "mcp_server(list(read_stdin, child_reads, linger, add))"
)

test_that("tools and their child processes reading stdin get end of file, and no request is lost", {
  skip_if_no_mcplite_child()
  skip_on_os("windows") # the child is a POSIX shell command
  proc <- mcp_start(stdio_server)
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_read(proc, 1, timeout = 60)
  # The client keeps stdin open: a tool reading the real stdin would wait here.
  mcp_send(proc, legacy_call(1, "read_stdin"))
  r1 <- mcp_read(proc, 1, timeout = 20)
  mcp_send(proc, legacy_call(2, "child_reads"))
  r2 <- mcp_read(proc, 1, timeout = 20)
  # Requests sent after the reads are all there.
  mcp_send(proc, legacy_call(3, "add", '{"a":1,"b":2}'))
  mcp_send(proc, legacy_call(4, "read_stdin"))
  rest <- mcp_read(proc, 2, timeout = 20)
  out <- mcp_close(proc)
  r <- c(r1, r2, rest, out$responses)
  expect_length(r, 4)
  expect_identical(first_text(mcp_by_id(r, 1)), "read 0 lines")
  expect_identical(first_text(mcp_by_id(r, 2)), "child read 0 bytes")
  expect_identical(first_text(mcp_by_id(r, 3)), "3")
  expect_identical(first_text(mcp_by_id(r, 4)), "read 0 lines")
  mcp_validate(r, "2025-11-25", "CallToolResult")
  expect_identical(out$status, 0L)
})

test_that("a child process left running by a tool does not hold the client's stdout open", {
  skip_if_no_mcplite_child()
  skip_on_os("windows")
  script <- tempfile("mcp-stdio-", fileext = ".R")
  writeLines(stdio_server, script)
  # Plain pipes (not the harness's FIFO): end of file on stdout is what a client waits for.
  proc <- processx::process$new(
    mcp_rscript(), c("--vanilla", script),
    stdin = "|", stdout = "|", stderr = tempfile(),
    env = c("current", R_LIBS = mcp_child_libs()), cleanup = TRUE
  )
  on.exit(if (proc$is_alive()) proc$kill(), add = TRUE)
  proc$write_input(paste0(initialize_line("2025-11-25"), "\n", legacy_call(1, "linger"), "\n"))
  close(proc$get_input_connection())
  lines <- character()
  deadline <- Sys.time() + 25
  while (proc$is_incomplete_output() && Sys.time() < deadline) {
    proc$poll_io(200)
    lines <- c(lines, proc$read_output_lines())
  }
  # The child sleeps 30 s: end of file within 25 s means it does not hold stdout.
  expect_false(proc$is_incomplete_output())
  expect_length(lines, 2)
  expect_match(lines[[2]], '"text":"started"', fixed = TRUE)
  proc$wait(5000)
  expect_identical(proc$get_exit_status(), 0L)
})
