# mcp_client() against scripted broken servers (helper-client.R): answers it
# cannot read, waits a person interrupts, background processes, floods.

# Call the scripted server's tool; the error (or value). The clients have a
# 60 s timeout that only stops a hung test: an error of another class than the
# timeout's says the client did not wait for it.
scripted_call <- function(client) {
  list(res = tryCatch(client$call("t"), error = function(e) e))
}

test_that("an answer the client cannot read is a prompt protocol error, not a timeout", {
  skip_on_cran()
  skip_on_os("windows")
  deep <- function(n, inner = "1") paste0(strrep("[", n), inner, strrep("]", n))
  cases <- list(
    deeper_than_the_reader = scripted_result(sprintf('{"content":[],"structuredContent":{"x":%s}}', deep(1100))),
    not_utf8 = 'send_raw(c(charToRaw(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"\', id)), as.raw(0xff), charToRaw(\'"}]}}\')))',
    result_and_error = sprintf('send(sprintf(\'{"jsonrpc":"2.0","id":%%s,"result":{"content":[]},"error":{"code":1,"message":"x"}}\', id))'),
    neither = 'send(sprintf(\'{"jsonrpc":"2.0","id":%s}\', id))',
    not_jsonrpc = 'send(sprintf(\'{"id":%s,"result":{"content":[]}}\', id))',
    nul = scripted_result('{"content":[{"type":"text","text":"a\\\\u0000b"}]}')
  )
  messages <- character()
  for (case in names(cases)) {
    client <- local_mcp_client(scripted_server(cases[[case]]), timeout = 60)
    got <- scripted_call(client)
    expect_s3_class(got$res, "mcplite_error_client_protocol")
    expect_s3_class(got$res, "mcplite_error_client")
    expect_false(inherits(got$res, "mcplite_error_argument"))
    # Not the timeout a misread answer used to wait for.
    expect_false(inherits(got$res, "mcplite_error_client_timeout"))
    messages[[case]] <- conditionMessage(got$res)
    # The client goes on.
    expect_equal(client$request("ping"), structure(list(), names = character()))
    client$close()
  }
  expect_snapshot(cat(messages, sep = "\n"))
})

test_that("big numbers and answers nested 512 levels and more are read", {
  skip_on_cran()
  skip_on_os("windows")
  nested <- function(n) paste0(strrep('{"a":', n - 1), "1", strrep("}", n - 1))
  client <- local_mcp_client(scripted_server(scripted_result(sprintf(
    '{"content":[{"type":"text","text":"ok"}],"structuredContent":{"big":1e400,"small":-1e-400,"id":12345678901234567890,"deep":%s}}',
    nested(1000)
  ))))
  res <- client$call("t")
  expect_identical(res$structuredContent$big, Inf)
  expect_identical(res$structuredContent$small, 0)
  expect_identical(res$structuredContent$id, 12345678901234567890)
  depth <- 0
  x <- res$structuredContent$deep
  while (is.list(x)) {
    depth <- depth + 1
    x <- x$a
  }
  expect_equal(depth, 999)
  expect_identical(x, 1L)

  # A JSON record that only shares the request's id is stray output.
  record <- scripted_server(c(
    'send(sprintf(\'{"id":%s,"name":"a record"}\', id))',
    scripted_result('{"content":[{"type":"text","text":"ok"}]}')
  ))
  client <- local_mcp_client(record)
  expect_equal(client$call("t")$content[[1]]$text, "ok")
  expect_match(client$.state()$stray[[1]]$text, '"name":"a record"', fixed = TRUE)
})

test_that("every error a server causes is a client error; the caller's own mistakes are argument errors", {
  skip_on_cran()
  skip_on_os("windows")
  rpc <- 'send(sprintf(\'{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no","data":{"why":"a\\\\u0000b"}}}\', id))'
  client <- local_mcp_client(scripted_server(rpc))
  err <- expect_error(client$call("t"), class = "mcplite_error_client_rpc")
  expect_s3_class(err, "mcplite_error_client")
  expect_equal(err$code, -32000)
  # Data R cannot hold is left out, not an argument error.
  expect_null(err$data)
  expect_error(client$call(1), class = "mcplite_error_argument")
  expect_error(client$call("t", list(1)), class = "mcplite_error_argument")
  expect_error(client$call("t", timeout = -1), class = "mcplite_error_argument")
  expect_error(client$close(grace = NA), class = "mcplite_error_argument")
  exit <- scripted_server('quit(status = 4)')
  client <- local_mcp_client(exit)
  err <- expect_error(client$call("t"), class = "mcplite_error_client_exited")
  expect_false(inherits(err, "mcplite_error_argument"))
  silent <- scripted_server("invisible()")
  client <- local_mcp_client(silent)
  expect_error(client$call("t", timeout = 0.2), class = "mcplite_error_client_timeout")
  client$close()
  expect_error(client$call("t"), class = "mcplite_error_client_closed")
  expect_error(mcp_client(command = "/nonexistent/server"), class = "mcplite_error_client_start")
})

# Run `code` (R lines using `server` and `mark_dir`) in a child R process
# that prints "result: ..." lines; once the file `barrier` appears in
# mark_dir, send the child SIGINT. Returns the child's output. The child's
# waits (Inf, or 600 s) outlast the 60 s this waits for its "caught" line, so
# a wait the interrupt did not end shows as that line missing.
interrupt_child <- function(server, code, barrier) {
  mark_dir <- tempfile("marks-")
  dir.create(mark_dir)
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    sprintf("server <- %s", deparse(server)),
    sprintf("Sys.setenv(MARK_DIR = %s)", deparse(mark_dir)),
    code
  ), script)
  p <- processx::process$new(mcp_rscript(), c("--vanilla", script), stdout = "|", stderr = "2>&1",
                             env = c("current", R_LIBS = mcp_child_libs()), cleanup = TRUE)
  on.exit(p$kill(), add = TRUE)
  deadline <- Sys.time() + 60
  while (!file.exists(file.path(mark_dir, barrier)) && p$is_alive() && Sys.time() < deadline) {
    Sys.sleep(0.02)
  }
  expect_true(file.exists(file.path(mark_dir, barrier)))
  p$interrupt()
  out <- character()
  deadline <- Sys.time() + 60
  while (Sys.time() < deadline) {
    p$poll_io(200)
    out <- c(out, p$read_output_lines())
    if (!p$is_alive()) break
  }
  out <- c(out, p$read_all_output_lines())
  list(out = out)
}

test_that("an interrupt ends any wait at once and leaves the client usable or closed", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_no_mcplite_child()
  ignored <- sigint_ignored()
  expect_false(ignored, label = "SIGINT ignored in the test process (started in the background by a shell without job control?)")
  if (ignored) return(invisible())
  # tools/call is never answered; input ending is ignored for a minute.
  server <- scripted_server("invisible()", on_eof = "Sys.sleep(60)")

  # A wait without end, and a long finite one: each ends at the interrupt.
  for (timeout in c("Inf", "600")) {
    call <- interrupt_child(server, c(
      "client <- mcp_client(server)",
      sprintf('r <- tryCatch(client$call("t", timeout = %s), interrupt = function(e) "caught")', timeout),
      'cat(r, "\\n"); flush(stdout())',
      'cat("result: ping", length(client$request("ping", timeout = 10)), "\\n")',
      'cat("result: cancelled", file.exists(file.path(Sys.getenv("MARK_DIR"), "notifications-cancelled")), "\\n")'
    ), barrier = "tools-call")
    expect_true("caught " %in% call$out, label = paste(timeout, paste(call$out, collapse = "\n")))
    expect_true("result: ping 0 " %in% call$out, label = paste(timeout, paste(call$out, collapse = "\n")))
  }

  close <- interrupt_child(server, c(
    "client <- mcp_client(server)",
    'r <- tryCatch(client$close(grace = Inf), interrupt = function(e) "caught")',
    'cat(r, "\\n"); flush(stdout())',
    'cat("result: alive", client$is_alive(), "\\n")',
    'cat("result: closed", inherits(tryCatch(client$request("ping"), error = identity), "mcplite_error_client_closed"), "\\n")'
  ), barrier = "eof")
  expect_true("result: alive FALSE " %in% close$out, label = paste(close$out, collapse = "\n"))
  expect_true("caught " %in% close$out, label = paste(close$out, collapse = "\n"))
  expect_true("result: closed TRUE " %in% close$out)

  # A server script that never answers initialize.
  hang <- server_script(c(
    'file.create(file.path(Sys.getenv("MARK_DIR"), "started"))',
    "Sys.sleep(600)"
  ))
  check <- interrupt_child(hang, c(
    'r <- tryCatch(mcp_check(server, env = c(MARK_DIR = Sys.getenv("MARK_DIR")), timeout = Inf), interrupt = function(e) "caught")',
    'cat(if (is.character(r)) r else "not interrupted", "\\n"); flush(stdout())'
  ), barrier = "started")
  expect_true("caught " %in% check$out, label = paste(check$out, collapse = "\n"))
})

test_that("a server's background processes end with it: nothing grows over start/close cycles", {
  skip_on_cran()
  skip_if_no_proc()
  pids <- tempfile("bg-pids-")
  server <- scripted_server(scripted_result('{"content":[]}'), prelude = sprintf(
    "system('sleep 60 & echo $! >> %s')", pids
  ))
  threads <- function() proc_status("Threads")
  cycle <- function() {
    client <- mcp_client(server)
    client$call("t")
    expect_equal(client$close(), 0L)
  }
  cycle()
  # Background children are ended shortly after close.
  settle <- function(fds, n) {
    deadline <- Sys.time() + 20
    repeat {
      bg <- as.integer(readLines(pids))
      done <- open_fds() <= fds && threads() <= n && !any(vapply(bg, sleep_running, TRUE))
      if (done || Sys.time() > deadline) return(done)
      Sys.sleep(0.05)
    }
  }
  fds <- open_fds()
  n <- threads()
  expect_true(settle(fds, n))
  for (i in 1:20) cycle()
  expect_true(settle(fds, n))
  # Nothing grew. Not equal: on a loaded machine the first cycle's reader
  # threads and descriptors may still be ending when the baseline is taken.
  expect_lte(open_fds(), fds)
  expect_lte(threads(), n)
  bg <- as.integer(readLines(pids))
  expect_length(bg, 21)
  expect_false(any(vapply(bg, sleep_running, TRUE)))

  # A server that exits mid-call while its background child keeps the pipes
  # open is seen to have exited, not waited for until the timeout.
  dying <- scripted_server("quit(status = 5)", prelude = "system('sleep 60 &')")
  client <- local_mcp_client(dying, timeout = 60)
  got <- scripted_call(client)
  expect_s3_class(got$res, "mcplite_error_client_exited")
  expect_equal(got$res$status, 5L)

  # The server leads its own process group, away from the console's Ctrl-C.
  client <- local_mcp_client(server)
  stat <- strsplit(sub(".*\\) ", "", readLines(file.path("/proc", client$pid, "stat"))), " ")[[1]]
  expect_equal(as.integer(stat[[3]]), client$pid)
})

test_that("mcp_check() warns about processes a server leaves running", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  skip_if_no_proc()
  script <- server_script(c(
    "system('sleep 60 &')",
    'x <- mcplite::tool(function() "x", name = "x", description = "Return x.")',
    "mcplite::mcp_server(x)"
  ))
  fds <- open_fds()
  threads <- proc_status("Threads")
  res <- mcp_check(script, env = child_env())
  # Nothing of the four servers stays behind in this session.
  deadline <- Sys.time() + 20
  while ((open_fds() > fds || proc_status("Threads") > threads) && Sys.time() < deadline) Sys.sleep(0.05)
  # Not more than before (an earlier test's client may still be ending).
  expect_lte(open_fds(), fds)
  expect_lte(proc_status("Threads"), threads)
  leftover <- res$problems[res$problems$rule == "background_processes", , drop = FALSE]
  expect_equal(nrow(leftover), 1)
  expect_equal(leftover$severity, "warning")
  expect_snapshot(cat(leftover$message, "\n", leftover$fix, "\n"))
})

test_that("stdout floods are bounded in bytes", {
  skip_on_cran()
  skip_if_no_proc()
  flood <- scripted_server(c(
    'line <- strrep("x", 1e6)',
    "for (i in 1:600) send(line)",
    scripted_result('{"content":[{"type":"text","text":"done"}]}')
  ))
  client <- local_mcp_client(flood)
  res <- client$call("t", timeout = 300)
  expect_equal(res$content[[1]]$text, "done")
  state <- client$.state()
  # What the client keeps of 600 MB of stray lines, counted in bytes (the
  # process's memory figure is measured in bench/).
  expect_equal(state$stray_total, 600)
  expect_lte(length(state$stray), 17)
  expect_match(state$stray[[1]]$text, "[... 934464 more bytes not kept]", fixed = TRUE)
  kept <- sum(vapply(state$stray, function(s) nchar(s$text, type = "bytes"), 0))
  expect_lte(kept, 17 * (1e6 - 934464 + 100))
})
