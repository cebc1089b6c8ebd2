# Tool calls on mirai workers: real servers over real pipes. Overlap is
# proven with barriers (a tool that waits for a file another call or the
# test creates), never with timings.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# ---- checks before serving -------------------------------------------------

test_that("`workers` is checked before anything is read", {
  expect_null(workers_config(0, script = NA, has_mirai = FALSE))
  expect_null(workers_config(0L, script = NA, has_mirai = FALSE))
  expect_snapshot(error = TRUE, {
    workers_config("two", script = "s.R", has_mirai = TRUE)
    workers_config(-1, script = "s.R", has_mirai = TRUE)
    workers_config(1.5, script = "s.R", has_mirai = TRUE)
    workers_config(NA, script = "s.R", has_mirai = TRUE)
    workers_config(c(1, 2), script = "s.R", has_mirai = TRUE)
    workers_config(2, script = "s.R", has_mirai = FALSE)
    workers_config("mirai", script = "s.R", has_mirai = FALSE)
    workers_config(2, script = NA, has_mirai = TRUE)
  })
  skip_if_not_installed("mirai")
  skip_if(mirai::daemons_set(), "this session has mirai daemons")
  expect_snapshot(error = TRUE, workers_config("mirai", script = "s.R", has_mirai = TRUE))
  hello <- tool(function() "hi", name = "hello", description = "Hi.")
  expect_error(mcp_server(hello, workers = "many"), class = "mcplite_error_workers")
})

test_that("workers settings carry the script and the payload options", {
  skip_if_not_installed("mirai")
  old <- options(mcplite.json.digits = I(3), mcplite.json.null = NULL)
  on.exit(options(old))
  cfg <- workers_config(3, script = "/srv/server.R", has_mirai = TRUE)
  expect_identical(cfg$n, 3L)
  expect_identical(cfg$script, "/srv/server.R")
  expect_identical(cfg$options$mcplite.json.digits, I(3))
  expect_true("mcplite.json.null" %in% names(cfg$options))
  expect_null(cfg$options$mcplite.json.null)
})

test_that("the server script is found in R's command line", {
  script <- tempfile("a server ", fileext = ".R")
  writeLines("1", script)
  on.exit(unlink(script))
  encoded <- gsub(" ", "~+~", script, fixed = TRUE)
  expect_identical(running_script(c("/usr/lib/R/bin/exec/R", paste0("--file=", encoded))), normalizePath(script))
  expect_identical(running_script(c("R", "-e", "1")), NA_character_)
  expect_identical(running_script(c("R", "--file=/no/such/file.R")), NA_character_)
})

test_that("asking for workers without mirai stops the script before it reads anything", {
  skip_on_os("windows") # file.symlink()
  skip_if_no_mcplite_child()
  # A library path with mcplite and nothing else: mirai cannot be found.
  lib <- tempfile("lib-")
  dir.create(lib)
  on.exit(unlink(lib, recursive = TRUE))
  file.symlink(system.file(package = "mcplite"), file.path(lib, "mcplite"))
  empty <- tempfile("empty-")
  dir.create(empty)
  on.exit(unlink(empty, recursive = TRUE), add = TRUE)
  script <- tempfile("server-", fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  writeLines(c(
    "hello <- mcplite::tool(function() 'hi', name = 'hello', description = 'Hi.')",
    "mcplite::mcp_server(hello, workers = 2)"
  ), script)
  # A valid request waits on stdin; it must never be answered.
  input <- tempfile("input-")
  on.exit(unlink(input), add = TRUE)
  writeLines(initialize_line("2025-06-18"), input)
  res <- processx::run(
    mcp_rscript(), c("--vanilla", script),
    stdin = input, error_on_status = FALSE,
    env = c("current", R_LIBS = lib, R_LIBS_USER = empty, R_LIBS_SITE = empty)
  )
  expect_false(identical(res$status, 0L))
  expect_identical(res$stdout, "")
  expect_match(res$stderr, "`workers` needs the mirai package", fixed = TRUE)
})

# ---- serving on workers ------------------------------------------------------

workers_server <- function(workers = "2", env = NULL) {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  mcp_start(mcp_fixture_server("workers-server.R"),
            env = c(MCPLITE_TEST_WORKERS = workers, env))
}

barrier_dir <- function() {
  dir <- tempfile("barrier-")
  dir.create(dir)
  normalizePath(dir)
}

args_json <- function(...) as.character(jsonlite::toJSON(list(...), auto_unbox = TRUE))

ids_of <- function(responses) vapply(responses, function(r) as.character(r$id), "")

# The socket inodes a process holds open.
socket_inodes <- function(pid) {
  links <- Sys.readlink(list.files(file.path("/proc", pid, "fd"), full.names = TRUE))
  sub("^socket:\\[([0-9]+)\\]$", "\\1", grep("^socket:", links, value = TRUE))
}

# /proc/net/unix's rows: inode and path ("" when unnamed, "@..." abstract).
unix_sockets <- function() {
  rows <- strsplit(trimws(readLines("/proc/net/unix")[-1]), "\\s+")
  data.frame(inode = vapply(rows, `[`, "", 7),
             path = vapply(rows, function(r) if (length(r) >= 8) r[[8]] else "", ""))
}

# The inodes of the TCP sockets (v4 and v6) on the machine.
tcp_inodes <- function() {
  files <- intersect(c("/proc/net/tcp", "/proc/net/tcp6"), list.files("/proc/net", full.names = TRUE))
  unlist(lapply(files, function(f) {
    vapply(strsplit(trimws(readLines(f)[-1]), "\\s+"), `[`, "", 10)
  }))
}

# The private directory of a server with workers (from its sockets).
server_private_dir <- function(proc) {
  server <- proc$process$get_pid()
  named <- unix_sockets()
  named <- named[named$inode %in% socket_inodes(server), ]
  pool <- grep("/w$", named$path, value = TRUE)
  if (length(pool)) dirname(pool[[1]]) else NA_character_
}

test_that("calls run at once on workers, and the server keeps answering meanwhile (legacy)", {
  proc <- workers_server("2")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  a <- file.path(dir, "a")
  b <- file.path(dir, "b")
  mcp_send(proc, initialize_line("2025-11-25"))
  init <- mcp_read(proc, 1)
  # Call 1 can only finish once b exists, which only call 5 creates.
  mcp_send(proc, legacy_call(1, "rendezvous", args_json(me = a, other = b)))
  mcp_send(proc, rpc(2, "ping"))
  mcp_send(proc, rpc(3, "tools/list"))
  mcp_send(proc, legacy_call(4, "add", '{"x":1,"y":2}'))
  meanwhile <- mcp_read(proc, 3)
  expect_setequal(ids_of(meanwhile), c("2", "3", "4"))
  expect_identical(first_text(mcp_by_id(meanwhile, 4)), "3")
  expect_false(file.exists(b))
  mcp_send(proc, legacy_call(5, "rendezvous", args_json(me = b, other = a)))
  met <- mcp_read(proc, 2)
  expect_setequal(ids_of(met), c("1", "5"))
  expect_identical(first_text(mcp_by_id(met, 1)), "a met b")
  expect_identical(first_text(mcp_by_id(met, 5)), "b met a")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 0)
  mcp_validate(init, "2025-11-25", "InitializeResult")
  mcp_validate(mcp_by_id(meanwhile, 2), "2025-11-25", "EmptyResult")
  mcp_validate(mcp_by_id(meanwhile, 3), "2025-11-25", "ListToolsResult")
  mcp_validate(c(list(mcp_by_id(meanwhile, 4)), met), "2025-11-25", "CallToolResult")
})

test_that("while a call runs on a worker, the server answers what it reads, woken by the doorbell", {
  # The server waits in mirai's condition variable while calls run; the input
  # reader rings a doorbell that signals it. The doorbell is set up (the
  # server says so when it cannot be), and each ping is answered while the
  # call runs. How fast (a silent bell would make each wait for the 50 ms
  # bound of that wait) is measured in bench/workers.mjs (the inflight
  # scenario), not asserted here.
  proc <- workers_server("2")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  go <- file.path(dir, "go")
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "wait_for", args_json(path = go)))
  mcp_send(proc, legacy_call(2, "add", '{"x":1,"y":2}'))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "3")
  for (i in seq_len(100)) {
    mcp_send(proc, rpc(100 + i, "ping"))
    pong <- mcp_read(proc, 1)
    expect_equal(pong[[1]]$id, 100 + i)
  }
  # Still running: its answer comes only once the test releases it.
  file.create(go)
  released <- mcp_read(proc, 1)
  expect_identical(first_text(released[[1]]), "released")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_no_match(out$stderr, "input cannot wake", fixed = TRUE)
})

test_that("calls in flight at end of input are answered before the server exits (modern)", {
  proc <- workers_server("2")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  go <- file.path(dir, "go")
  mcp_send(proc, modern_call("x", "wait_for", args_json(path = go)))
  mcp_send(proc, modern("d", "server/discover"))
  mcp_send(proc, modern_call("z", "add", '{"x":2,"y":3}'))
  early <- mcp_read(proc, 2)
  expect_setequal(ids_of(early), c("d", "z"))
  # End of input while x and y wait; they are released only afterwards.
  mcp_send(proc, modern_call("y", "wait_for", args_json(path = go)))
  close(proc$process$get_input_connection())
  file.create(go)
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_setequal(ids_of(out$responses), c("x", "y"))
  for (r in out$responses) expect_identical(first_text(r), "released")
  mcp_validate(out$responses, "2026-07-28", "CallToolResult")
  mcp_validate(mcp_by_id(early, "d"), "2026-07-28", "DiscoverResult")
})

test_that("a worker evaluates the script again when what it set up is gone (workers = \"mirai\")", {
  # Daemons of ours keep what the script and the tools set up, as the server
  # does (their link task never ends, so mirai's cleanup never runs); the
  # script's own daemons run a mirai task per call.
  proc <- workers_server("mirai")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "forget"))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "forgotten")
  # The one worker lost `lookup` and package:tools; the next call finds them again.
  mcp_send(proc, legacy_call(2, "top_level", args_json(key = "a")))
  r <- mcp_read(proc, 1)[[1]]
  expect_false(isTRUE(r$result$isError))
  expect_identical(first_text(r), "a is alpha; csv; hello")
  expect_identical(mcp_close(proc)$status, 0L)
})

test_that("an edit of structured_content on a worker is sent, as in the server", {
  # The result reaches the server as plain strings, which no longer tell
  # the edit: the worker writes the JSON again (with the server's digits, 2).
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  proc <- mcp_start(c(
    "library(mcplite)",
    "options(mcplite.json.digits = 2)",
    "edited <- tool(function(how) {",
    "  r <- if (how == 'removed') {",
    "    tool_result(content_text('Mine.'), structured_content = list(x = pi))",
    "  } else {",
    "    tool_result(structured_content = list(x = pi))",
    "  }",
    "  if (how == 'nested') r$structured_content$y <- 1L",
    "  if (how == 'removed') r$structured_content <- NULL",
    "  if (how == 'unwritable') r$structured_content$e <- new.env()",
    "  r",
    "}, name = 'structured_edited', description = 'Edits its result.', arguments = list(how = type_string()))",
    "mcp_server(list(edited), workers = 1)"
  ))
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  for (i in 1:3) mcp_send(proc, legacy_call(i, "structured_edited", args_json(how = c("nested", "removed", "unwritable")[[i]])))
  out <- mcp_read(proc, 3)
  r <- mcp_by_id(out, 1)$result
  expect_false(isTRUE(r$isError))
  expect_identical(r$content[[1]]$text, '{"x":3.14,"y":1}')
  expect_identical(r$structuredContent, list(x = 3.14, y = 1L))
  r <- mcp_by_id(out, 2)$result
  expect_identical(r$content, list(list(type = "text", text = "Mine.")))
  expect_null(r$structuredContent)
  r <- mcp_by_id(out, 3)$result
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "`structured_content`: cannot convert an object of R type 'environment'", fixed = TRUE)
  expect_identical(mcp_close(proc)$status, 0L)
})

test_that("tools use the script's top-level data, packages and options on workers", {
  proc <- workers_server("2")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  # Four calls one after another on two workers: some worker runs two, so
  # what the script set up survives mirai's cleanup between tasks.
  for (i in 1:4) {
    key <- c("a", "b")[(i %% 2) + 1]
    mcp_send(proc, legacy_call(i, "top_level", args_json(key = key)))
    r <- mcp_read(proc, 1)[[1]]
    expected <- sprintf("%s is %s; csv; hello", key, c(a = "alpha", b = "beta")[[key]])
    expect_identical(first_text(r), expected)
    expect_false(isTRUE(r$result$isError))
  }
  # The payload options of the server (digits = 2) hold on the worker too.
  mcp_send(proc, legacy_call(10, "structured_pi"))
  mcp_send(proc, legacy_call(11, "plain_pi"))
  pis <- mcp_read(proc, 2)
  expect_identical(mcp_by_id(pis, 10)$result$structuredContent$x, 3.14)
  expect_match(attr(mcp_by_id(pis, 10), "json"), '"structuredContent":{"x":3.14}', fixed = TRUE)
  expect_identical(first_text(mcp_by_id(pis, 11)), "3.14")
  # Errors, messages and printed output behave as in the server.
  mcp_send(proc, legacy_call(12, "fails"))
  mcp_send(proc, legacy_call(13, "noisy"))
  rest <- mcp_read(proc, 2)
  fails <- mcp_by_id(rest, 12)
  expect_true(fails$result$isError)
  expect_identical(first_text(fails), "the worker says no")
  expect_identical(first_text(mcp_by_id(rest, 13)), "noisy")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_match(out$stderr, "mcplite: tool fails failed: the worker says no", fixed = TRUE)
  expect_match(out$stderr, "printed on a worker", fixed = TRUE)
  expect_match(out$stderr, "a message from a worker", fixed = TRUE)
  expect_match(out$stderr, "Warning in tool noisy: a warning from a worker", fixed = TRUE)
  mcp_validate(c(pis, rest), "2025-06-18", "CallToolResult")
})

test_that("a worker that ends its process gives a tool error, and the next call works", {
  proc <- workers_server("1")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "pid"))
  before <- first_text(mcp_read(proc, 1)[[1]])
  mcp_send(proc, legacy_call(2, "quitter"))
  ended <- mcp_read(proc, 1)[[1]]
  expect_true(ended$result$isError)
  expect_match(first_text(ended), "Tool quitter stopped: the worker process running it ended", fixed = TRUE)
  # The only worker is gone; a new one takes the next calls. It evaluates the
  # script when its first call arrives, and the server's payload options
  # still win over the ones the script sets on workers.
  mcp_send(proc, legacy_call(5, "structured_pi"))
  expect_identical(mcp_read(proc, 1)[[1]]$result$structuredContent$x, 3.14)
  mcp_send(proc, legacy_call(3, "pid"))
  after <- mcp_read(proc, 1)[[1]]
  expect_false(isTRUE(after$result$isError))
  expect_false(identical(first_text(after), before))
  mcp_send(proc, legacy_call(4, "top_level", args_json(key = "a")))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "a is alpha; csv; hello")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  mcp_validate(list(ended, after), "2025-06-18", "CallToolResult")
})

test_that("a daemon killed mid-call fails that call only; a new daemon serves the calls that waited and the next", {
  skip_on_os("windows") # pskill
  proc <- workers_server("1")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "pid"))
  daemon <- as.integer(first_text(mcp_read(proc, 1)[[1]]))
  started <- file.path(barrier_dir(), "started")
  mcp_send(proc, legacy_call(2, "block", args_json(started = started)))
  expect_true(wait_until(function() file.exists(started)))
  # Waits in the server for the only daemon, which is busy.
  mcp_send(proc, legacy_call(3, "add", '{"x":1,"y":2}'))
  tools::pskill(daemon, tools::SIGKILL)
  got <- mcp_read(proc, 2, timeout = 60)
  expect_setequal(ids_of(got), c("2", "3"))
  killed <- mcp_by_id(got, 2)
  expect_true(killed$result$isError)
  expect_match(first_text(killed), "Tool block stopped: the worker process running it ended", fixed = TRUE)
  expect_identical(first_text(mcp_by_id(got, 3)), "3")
  mcp_send(proc, legacy_call(4, "pid"))
  fresh <- as.integer(first_text(mcp_read(proc, 1)[[1]]))
  expect_false(identical(fresh, daemon))
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  mcp_validate(got, "2025-06-18", "CallToolResult")
})

test_that("a call waiting on a busy daemon goes to another as soon as that one is idle", {
  proc <- workers_server("2")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  a <- file.path(dir, "a")
  b <- file.path(dir, "b")
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_read(proc, 1)
  # Both daemons busy; the third call waits on one of them (behind a or b).
  mcp_send(proc, legacy_call(1, "wait_for", args_json(path = a)))
  mcp_send(proc, legacy_call(2, "wait_for", args_json(path = b)))
  mcp_send(proc, legacy_call(3, "add", '{"x":1,"y":2}'))
  # Whichever daemon finishes first takes it, even if it waited behind a.
  file.create(b)
  got <- mcp_read(proc, 2)
  expect_setequal(ids_of(got), c("2", "3"))
  expect_identical(first_text(mcp_by_id(got, 3)), "3")
  file.create(a)
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "released")
  expect_identical(mcp_close(proc)$status, 0L)
})

test_that("the link socket closes connections without the token, and the pool still serves", {
  skip_if_not(dir.exists("/proc/self/fd"), "needs /proc")
  proc <- workers_server("1")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  link <- paste0("ipc://", file.path(server_private_dir(proc), "link"))
  # A wrong token followed by a forged hello and answer, a silent
  # connection, one that sends part of a token, and a forged hello alone:
  # the server closes each (the receive ends with an error, not at its time
  # limit, which is nanonext's 5) and takes no call from them.
  closed <- function(send) {
    s <- nanonext::stream(dial = link)
    on.exit(close(s))
    if (length(send)) nanonext::send(s, send, mode = "raw", block = 5000L)
    got <- nanonext::recv(s, mode = "raw", block = 30000L)
    nanonext::is_error_value(got) && !identical(as.integer(got), 5L)
  }
  hello <- '{"op":"hello","pid":1,"start":1}\n'
  forged <- charToRaw(paste0(strrep("0", 32), hello, '{"op":"answer","call":1,"result":{"content":[]}}\n'))
  expect_true(closed(forged))
  expect_true(closed(raw()))
  expect_true(closed(charToRaw(strrep("0", 31))))
  expect_true(closed(charToRaw(hello)))
  for (i in 1:3) {
    mcp_send(proc, legacy_call(i, "add", sprintf('{"x":%d,"y":2}', i)))
    expect_identical(first_text(mcp_read(proc, 1)[[1]]), as.character(i + 2))
  }
  expect_identical(mcp_close(proc)$status, 0L)
})

test_that("a script that fails on the workers is reported at start and by every call", {
  proc <- workers_server("1", env = c(MCPLITE_TEST_REFUSE_WORKERS = "1"))
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, modern_call(1, "add", '{"x":1,"y":2}'))
  mcp_send(proc, modern("2", "tools/list"))
  got <- mcp_read(proc, 2)
  failed <- mcp_by_id(got, 1)
  expect_true(failed$result$isError)
  expect_match(first_text(failed), "The worker could not evaluate the server script", fixed = TRUE)
  expect_match(first_text(failed), "this script refuses to run on a worker", fixed = TRUE)
  expect_length(mcp_by_id(got, "2")$result$tools, 16)
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_match(out$stderr, "mcplite: a worker could not define the tools: The worker could not evaluate", fixed = TRUE)
})

# A server with one worker whose evaluation of the script waits for the file
# `go` in `dir` (it creates `evaluating` first), then stops with an error if
# `fail`.
gated_workers_server <- function(dir, fail = FALSE) {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  gate <- sprintf(
    "if (mirai::on_daemon()) { file.create('%s'); while (!file.exists('%s')) Sys.sleep(0.01)%s }",
    file.path(dir, "evaluating"), file.path(dir, "go"),
    if (fail) "; stop('no database on this worker')" else ""
  )
  mcp_start(c(
    gate,
    "add <- mcplite::tool(function(x, y) x + y, 'Add.', name = 'add',",
    "  arguments = list(x = mcplite::type_number(), y = mcplite::type_number()))",
    "mcplite::mcp_server(add, workers = 1)"
  ))
}

# Wait until the server's stderr has a line starting with `prefix`.
test_that("the server answers while its workers evaluate the script; a call made meanwhile waits for them, answered once", {
  dir <- barrier_dir()
  proc <- gated_workers_server(dir)
  on.exit(mcp_kill(proc), add = TRUE)
  on.exit(file.create(file.path(dir, "go")), add = TRUE)
  mcp_send(proc, initialize_line("2025-11-25"))
  init <- mcp_read(proc, 1)[[1]]
  expect_identical(init$result$protocolVersion, "2025-11-25")
  mcp_send(proc, rpc(1, "tools/list"))
  listed <- mcp_read(proc, 1)[[1]]
  expect_identical(vapply(listed$result$tools, `[[`, "", "name"), "add")
  # The worker is evaluating the script, and cannot finish until `go`
  # exists: the answers above came before the workers were ready.
  expect_true(wait_until(function() file.exists(file.path(dir, "evaluating"))))
  expect_false(file.exists(file.path(dir, "go")))
  stderr <- strsplit(mcp_stderr(proc), "\n", fixed = TRUE)[[1]]
  expect_true("mcplite: starting 1 worker; tool calls wait until they have evaluated the script." %in% stderr)
  expect_false(any(startsWith(stderr, "mcplite: workers ready")))
  mcp_send(proc, legacy_call(2, "add", '{"x":1,"y":2}'))
  file.create(file.path(dir, "go"))
  answer <- mcp_read(proc, 1)[[1]]
  expect_equal(answer$id, 2)
  expect_false(isTRUE(answer$result$isError))
  expect_identical(first_text(answer), "3")
  expect_true(wait_stderr_line(proc, "mcplite: workers ready: 1 worker evaluated the script in "))
  mcp_send(proc, legacy_call(3, "add", '{"x":2,"y":2}'))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "4")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  # Nothing more: each request was answered once.
  expect_length(out$responses, 0)
  mcp_validate(list(answer), "2025-11-25", "CallToolResult")
})

test_that("workers that fail to evaluate the script give the calls waiting for them, and every later call, the error", {
  dir <- barrier_dir()
  proc <- gated_workers_server(dir, fail = TRUE)
  on.exit(mcp_kill(proc), add = TRUE)
  on.exit(file.create(file.path(dir, "go")), add = TRUE)
  mcp_send(proc, initialize_line("2025-11-25"))
  expect_identical(mcp_read(proc, 1)[[1]]$result$protocolVersion, "2025-11-25")
  expect_true(wait_until(function() file.exists(file.path(dir, "evaluating"))))
  mcp_send(proc, legacy_call(1, "add", '{"x":1,"y":2}'))
  mcp_send(proc, legacy_call(2, "add", '{"x":1,"y":2}'))
  file.create(file.path(dir, "go"))
  waited <- mcp_read(proc, 2)
  expect_true(wait_stderr_line(proc, "mcplite: a worker could not define the tools: "))
  mcp_send(proc, legacy_call(3, "add", '{"x":1,"y":2}'))
  later <- mcp_read(proc, 1)
  for (answer in c(waited, later)) {
    expect_true(answer$result$isError, info = answer$id)
    expect_match(first_text(answer), "The worker could not evaluate the server script ", fixed = TRUE, info = answer$id)
    expect_match(first_text(answer), "no database on this worker", fixed = TRUE, info = answer$id)
  }
  expect_setequal(ids_of(c(waited, later)), c("1", "2", "3"))
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 0)
  stderr <- strsplit(out$stderr, "\n", fixed = TRUE)[[1]]
  failed <- stderr[startsWith(stderr, "mcplite: a worker could not define the tools: ")]
  expect_length(failed, 1)
  expect_match(failed, "no database on this worker", fixed = TRUE)
  expect_false(any(startsWith(stderr, "mcplite: workers ready")))
})

# A server with one worker, past the 2025-11-25 handshake.
legacy_worker <- function() {
  proc <- workers_server("1")
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_read(proc, 1)
  proc
}

test_that("cancelling a call stops it on its worker, which takes the next call; nothing is sent for it", {
  proc <- legacy_worker()
  on.exit(mcp_kill(proc), add = TRUE)
  started <- file.path(barrier_dir(), "started")
  mcp_send(proc, legacy_call(7, "block", args_json(started = started)))
  expect_true(wait_until(function() file.exists(started)))
  mcp_send(proc, rpc(NULL, "notifications/cancelled", '{"requestId":7,"reason":"test"}'))
  # One worker only: this call is answered only if the cancelled one stopped.
  mcp_send(proc, legacy_call(8, "add", '{"x":4,"y":5}'))
  next_call <- mcp_read(proc, 1)[[1]]
  expect_identical(next_call$id, 8L)
  expect_identical(first_text(next_call), "9")
  # The same in the modern era.
  file.remove(started)
  mcp_send(proc, modern_call("m7", "block", args_json(started = started)))
  expect_true(wait_until(function() file.exists(started)))
  mcp_send(proc, rpc(NULL, "notifications/cancelled", '{"requestId":"m7"}'))
  mcp_send(proc, modern_call("m8", "add", '{"x":1,"y":1}'))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "2")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 0)
  expect_false(any(c("7", "m7") %in% ids_of(lapply(out$lines, jsonlite::parse_json))))
})

# A server with one worker, held by a call (id 7) of a tool that swallows
# interrupts, once that call has started: the server, the worker's pid and
# the file the tool wrote when it started (its temporary directory).
stubborn_worker <- function() {
  proc <- legacy_worker()
  started <- file.path(barrier_dir(), "started")
  mcp_send(proc, legacy_call(1, "pid"))
  stuck <- as.integer(first_text(mcp_read(proc, 1)[[1]]))
  mcp_send(proc, legacy_call(7, "stubborn", args_json(started = started)))
  testthat::expect_true(wait_until(function() file.exists(started)))
  list(proc = proc, stuck = stuck, started = started)
}

test_that("a cancelled call that ignores the interrupt loses its worker after a grace period; a new worker takes the next call", {
  held <- stubborn_worker()
  proc <- held$proc
  stuck <- held$stuck
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, rpc(NULL, "notifications/cancelled", '{"requestId":7}'))
  # One worker, held by a call that swallows interrupts: this call is
  # answered only once that worker is replaced.
  mcp_send(proc, legacy_call(8, "add", '{"x":4,"y":5}'))
  next_call <- mcp_read(proc, 1, timeout = 60)[[1]]
  expect_identical(next_call$id, 8L)
  expect_identical(first_text(next_call), "9")
  mcp_send(proc, legacy_call(9, "pid"))
  fresh <- as.integer(first_text(mcp_read(proc, 1)[[1]]))
  expect_false(identical(fresh, stuck))
  # The new worker evaluated the script: its top-level state is there.
  mcp_send(proc, legacy_call(10, "top_level", args_json(key = "b")))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "b is beta; csv; hello")
  if (dir.exists("/proc/self")) {
    expect_true(wait_until(function() !dir.exists(file.path("/proc", stuck)), timeout = 30))
  }
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_false("7" %in% ids_of(lapply(out$lines, jsonlite::parse_json)))
  expect_match(out$stderr, sprintf(
    "mcplite: tool stubborn was cancelled and ignored the interrupt for 2 s: its worker (process %d) was stopped and a new one started.",
    stuck
  ), fixed = TRUE)
  mcp_validate(list(next_call), "2025-11-25", "CallToolResult")
})

test_that("a cancelled call that ignores the interrupt is ended at its grace with nothing else read, and its temporary files go with its worker", {
  skip_if_not(dir.exists("/proc/self"), "needs /proc")
  held <- stubborn_worker()
  proc <- held$proc
  stuck <- held$stuck
  on.exit(mcp_kill(proc), add = TRUE)
  tmp <- readLines(held$started)
  expect_true(dir.exists(tmp))
  expect_length(list.files(tmp, "^tool-file-"), 1)
  mcp_send(proc, rpc(NULL, "notifications/cancelled", '{"requestId":7}'))
  # Nothing more is sent: the server acts when the grace ends, on its own.
  expect_true(wait_until(function() !dir.exists(file.path("/proc", stuck)), timeout = 30))
  expect_true(wait_until(function() !dir.exists(tmp), timeout = 30))
  mcp_send(proc, legacy_call(8, "add", '{"x":4,"y":5}'))
  expect_identical(first_text(mcp_read(proc, 1, timeout = 60)[[1]]), "9")
  expect_identical(mcp_close(proc)$status, 0L)
})

test_that("a process is killed by pid and start time only while both still match", {
  skip_on_os("windows") # sleep
  sleeper <- function() processx::process$new("sleep", "600")
  a <- sleeper()
  b <- sleeper()
  on.exit({ a$kill(); b$kill() }, add = TRUE)
  start_a <- rust_process_start(a$get_pid())
  start_b <- rust_process_start(b$get_pid())
  expect_false(is.na(start_a))
  # Another process's start time, a made-up one, and one that is not a number.
  for (wrong in c(if (!identical(start_a, start_b)) start_b, "1", "0", "x")) {
    expect_false(rust_kill_process(a$get_pid(), wrong)$value, info = wrong)
  }
  expect_true(a$is_alive())
  expect_true(rust_kill_process(a$get_pid(), start_a)$value)
  expect_true(wait_until(function() !a$is_alive()))
  # Gone: nothing to kill, whatever the start time.
  expect_false(rust_kill_process(a$get_pid(), start_a)$value)
  expect_true(b$is_alive())
})

# Write calls until the server says its queue is full and its input pipe is
# full too (or `max` calls are written); returns how many calls went in
# whole, the bytes of the one that did not, and whether the server said so.
queue_full_said <- function(proc) {
  grepl("the server reads no more input until calls finish", mcp_stderr(proc), fixed = TRUE)
}

write_until_full <- function(proc, line_of, max) {
  pending <- raw()
  i <- 0L
  repeat {
    if (!length(pending)) {
      if (i == max) break
      i <- i + 1L
      pending <- charToRaw(paste0(line_of(i), "\n"))
    }
    pending <- proc$process$write_input(pending)
    if (length(pending)) {
      if (queue_full_said(proc)) break
      Sys.sleep(0.005)
    }
  }
  list(whole = if (length(pending)) i - 1L else i, left = pending, said = queue_full_said(proc))
}

test_that("calls beyond the queue's bound (in calls, or in bytes) stop the server reading until workers are free, and every call is answered", {
  cases <- list(
    list(what = "4,096 small calls", max = 9000L, args = function(i) sprintf('{"x":%d,"y":1}', i),
         tool = "add", want = function(i) as.character(i + 1)),
    list(what = "64 MB of arguments", max = 1500L,
         args = function(i) args_json(name = strrep("n", 100000)),
         tool = "getenv", want = function(i) "<unset>")
  )
  for (case in cases) {
    proc <- legacy_worker()
    go <- file.path(barrier_dir(), "go")
    mcp_send(proc, legacy_call(1, "wait_for", args_json(path = go)))
    flood <- write_until_full(proc, function(i) legacy_call(i + 1, case$tool, case$args(i)), case$max)
    # The one worker is busy: the server queued calls up to its bound, then
    # stopped reading (it says so), and the pipe filled.
    expect_true(flood$said, label = case$what)
    expect_lt(flood$whole, case$max, label = case$what)
    file.create(go)
    sent <- flood$whole
    if (length(flood$left)) {
      mcp_send(proc, flood$left, newline = FALSE)
      sent <- sent + 1L
    }
    got <- mcp_read(proc, sent + 1L, timeout = 120)
    expect_setequal(ids_of(got), as.character(seq_len(sent + 1L)))
    wrong <- Filter(function(r) r$id > 1 && !identical(first_text(r), case$want(r$id - 1)), got)
    expect_length(wrong, 0)
    expect_identical(mcp_close(proc)$status, 0L)
    mcp_kill(proc)
  }
})

test_that("a stubborn call still running at the end leaves no worker behind", {
  skip_if_not(dir.exists("/proc/self"), "needs /proc")
  proc <- workers_server("1")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  started <- file.path(dir, "started")
  mcp_send(proc, modern_call(1, "pid"))
  worker <- as.integer(first_text(mcp_read(proc, 1)[[1]]))
  mcp_send(proc, modern_call(2, "stubborn", args_json(started = started)))
  expect_true(wait_until(function() file.exists(started)))
  out <- mcp_close(proc, timeout = 60)
  expect_identical(out$status, 0L)
  expect_identical(first_text(out$responses[[1]]), "The server stopped before tool stubborn finished.")
  expect_true(wait_until(function() !dir.exists(file.path("/proc", worker)), timeout = 30))
})

test_that("calls still running when the grace period after end of input ends get a tool error saying the server stopped", {
  proc <- workers_server("1")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  started <- file.path(dir, "started")
  mcp_send(proc, modern_call(1, "block", args_json(started = started)))
  expect_true(wait_until(function() file.exists(started)))
  out <- mcp_close(proc, timeout = 60)
  expect_identical(out$status, 0L)
  expect_length(out$responses, 1)
  r <- out$responses[[1]]
  expect_identical(r$id, 1L)
  expect_true(isTRUE(r$result$isError))
  expect_identical(first_text(r), "The server stopped before tool block finished.")
  mcp_validate(out$responses, "2026-07-28", "CallToolResult")
})

check_worker_streams <- function(workers) {
  skip_if_not(dir.exists("/proc/self/fd"), "needs /proc")
  proc <- workers_server(workers)
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "fds"))
  mcp_send(proc, legacy_call(2, "pid"))
  got <- mcp_read(proc, 2)
  fds <- jsonlite::parse_json(first_text(mcp_by_id(got, 1)))
  worker <- as.integer(first_text(mcp_by_id(got, 2)))
  # The server's protocol input and output: its private, close-on-exec
  # copies of the real stdin and stdout.
  server <- proc$process$get_pid()
  protocol <- character()
  for (fd in list.files(file.path("/proc", server, "fd"))) {
    info <- readLines(file.path("/proc", server, "fdinfo", fd), warn = FALSE)
    flags <- strtoi(sub("^flags:\\s*", "", grep("^flags:", info, value = TRUE)), 8L)
    if (bitwAnd(flags, strtoi("2000000", 8L)) != 0) {
      protocol <- c(protocol, Sys.readlink(file.path("/proc", server, "fd", fd)))
    }
  }
  protocol <- grep("^pipe:|mcp-stdout-", protocol, value = TRUE)
  expect_true(length(protocol) >= 2)
  expect_identical(fds[["0"]], "/dev/null")
  expect_identical(normalizePath(fds[["1"]]), normalizePath(proc$stderr_file))
  links <- unlist(fds)
  expect_false(any(links %in% protocol))
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  expect_true(wait_until(function() !dir.exists(file.path("/proc", worker)), timeout = 30))
}

test_that("daemons mcplite starts never hold the protocol streams and stop with the server", {
  check_worker_streams("1")
})

test_that("daemons the script started before mcp_server() let go of the protocol streams", {
  # They inherited the real stdin and stdout; a worker detaches from them
  # before it evaluates the script.
  check_worker_streams("mirai")
})

test_that("workers = \"mirai\" uses the daemons the script set up", {
  proc <- workers_server("mirai")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  a <- file.path(dir, "a")
  b <- file.path(dir, "b")
  mcp_send(proc, modern_call(1, "rendezvous", args_json(me = a, other = b)))
  mcp_send(proc, modern_call(2, "rendezvous", args_json(me = b, other = a)))
  mcp_send(proc, modern_call(3, "top_level", args_json(key = "b")))
  got <- mcp_read(proc, 3)
  expect_identical(first_text(mcp_by_id(got, 1)), "a met b")
  expect_identical(first_text(mcp_by_id(got, 2)), "b met a")
  expect_identical(first_text(mcp_by_id(got, 3)), "b is beta; csv; hello")
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  mcp_validate(got, "2026-07-28", "CallToolResult")
})

test_that("workers = \"mirai\" works with daemons connecting over TCP", {
  proc <- workers_server("mirai-tcp")
  on.exit(mcp_kill(proc), add = TRUE)
  dir <- barrier_dir()
  a <- file.path(dir, "a")
  b <- file.path(dir, "b")
  mcp_send(proc, initialize_line("2024-11-05"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "rendezvous", args_json(me = a, other = b)))
  mcp_send(proc, legacy_call(2, "rendezvous", args_json(me = b, other = a)))
  got <- mcp_read(proc, 2)
  expect_identical(first_text(mcp_by_id(got, 1)), "a met b")
  expect_identical(first_text(mcp_by_id(got, 2)), "b met a")
  mcp_send(proc, legacy_call(3, "top_level", args_json(key = "a")))
  mcp_send(proc, legacy_call(4, "structured_pi"))
  more <- mcp_read(proc, 2)
  expect_identical(first_text(mcp_by_id(more, 3)), "a is alpha; csv; hello")
  expect_identical(first_text(mcp_by_id(more, 4)), '{"x":3.14}')
  out <- mcp_close(proc)
  expect_identical(out$status, 0L)
  mcp_validate(c(got, more), "2024-11-05", "CallToolResult")
})

spans_of <- function(stderr) {
  lines <- strsplit(stderr, "\n", fixed = TRUE)[[1]]
  lines <- lines[grepl('^\\s*\\{\\s*"resourceSpans"', lines)]
  spans <- list()
  for (l in lines) {
    x <- jsonlite::parse_json(l)
    for (rs in x$resourceSpans) for (ss in rs$scopeSpans) for (sp in ss$spans) {
      spans[[length(spans) + 1]] <- sp
    }
  }
  spans
}

test_that("a traced call's span covers its time on the worker, whose spans join the trace", {
  skip_if_not_installed("otel")
  proc <- workers_server("1", env = c(OTEL_R_TRACES_EXPORTER = "stderr"))
  on.exit(mcp_kill(proc), add = TRUE)
  tp <- "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  mcp_send(proc, rpc(1, "tools/call", sprintf(
    '{"name":"traced","arguments":{},%s}',
    sub('}$', sprintf(',"traceparent":"%s"}', tp), modern_meta())
  )))
  r <- mcp_read(proc, 1)[[1]]
  expect_identical(first_text(r), "traced")
  # Workers see the user's tracing configuration, not the value mcplite
  # points R's otel package at for a moment while the server starts.
  mcp_send(proc, modern_call(2, "getenv", args_json(name = "OTEL_R_TRACES_EXPORTER")))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "stderr")
  out <- mcp_close(proc)
  spans <- spans_of(out$stderr)
  by_name <- function(n) {
    hit <- Filter(function(s) identical(s$name, n), spans)
    expect_length(hit, 1)
    hit[[1]]
  }
  server <- by_name("tools/call traced")
  worker <- by_name("execute_tool traced")
  inner <- by_name("tool work on a worker")
  expect_identical(server$traceId, "4bf92f3577b34da6a3ce929d0e0e4736")
  expect_identical(server$parentSpanId, "00f067aa0ba902b7")
  expect_identical(worker$traceId, server$traceId)
  expect_identical(worker$parentSpanId, server$spanId)
  expect_identical(inner$traceId, server$traceId)
  expect_identical(inner$parentSpanId, worker$spanId)
  # The server span is open for the whole time the call runs on the worker.
  nanos <- function(x) as.numeric(x)
  expect_true(nanos(server$startTimeUnixNano) <= nanos(worker$startTimeUnixNano))
  expect_true(nanos(server$endTimeUnixNano) >= nanos(worker$endTimeUnixNano))
})

# ---- files next to the script ------------------------------------------------

# The layout of the Get started vignette: app/server.R sources app/tools.R
# through script_file(), then moves to app/data with setwd(), where a tool
# reads a file by a relative name.
project_layout <- function(workers, chdir) {
  root <- tempfile("project-")
  dir.create(file.path(root, "app", "data"), recursive = TRUE)
  writeLines("alpha,1", file.path(root, "app", "data", "x.csv"))
  writeLines(c(
    "first_line <- function(file) readLines(file)[[1]]",
    "tools <- list(",
    "  mcplite::tool(function() first_line('x.csv'), 'x.csv, by a relative name.', name = 'relative'),",
    "  mcplite::tool(function() normalizePath(getwd()), 'The working directory.', name = 'wd'),",
    "  mcplite::tool(function() mcplite::script_file(), 'The server script.', name = 'script'),",
    "  mcplite::tool(function() mcplite::script_file('data', 'x.csv'), 'A file next to it.', name = 'data')",
    ")"
  ), file.path(root, "app", "tools.R"))
  writeLines(c(
    "source(mcplite::script_file('tools.R'))",
    chdir,
    sprintf("mcplite::mcp_server(tools, workers = %s)", workers)
  ), file.path(root, "app", "server.R"))
  normalizePath(root)
}

test_that("script_file() and setwd() in the script mean the same in the server and on workers, whatever the folder and path the client starts it with", {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  cases <- list(
    list(workers = 0, chdir = "setwd(mcplite::script_file('data'))", relative = FALSE),
    list(workers = 2, chdir = "setwd(mcplite::script_file('data'))", relative = FALSE),
    list(workers = 2, chdir = "setwd(mcplite::script_file('data'))", relative = TRUE),
    # A relative setwd() is relative to the folder R started in.
    list(workers = 1, chdir = "setwd('app/data')", relative = TRUE)
  )
  for (case in cases) {
    root <- project_layout(case$workers, case$chdir)
    script <- file.path(root, "app", "server.R")
    # Started from the project's parent folder, or from an unrelated one.
    client <- if (case$relative) {
      mcp_client(command = mcp_rscript(), args = c("--vanilla", "app/server.R"),
                 cwd = root, env = child_env())
    } else {
      mcp_client(script, cwd = tempdir(), env = child_env())
    }
    info <- sprintf("workers = %s, %s, %s path", case$workers, case$chdir,
                    if (case$relative) "relative" else "absolute")
    # Several calls each, so that every worker answers some.
    for (i in 1:3) {
      expect_identical(client$call("relative")$content[[1]]$text, "alpha,1", info = info)
      expect_identical(client$call("wd")$content[[1]]$text,
                       normalizePath(file.path(root, "app", "data")), info = info)
      expect_identical(client$call("script")$content[[1]]$text, normalizePath(script, winslash = "/"), info = info)
      expect_identical(client$call("data")$content[[1]]$text,
                       normalizePath(file.path(root, "app", "data", "x.csv"), winslash = "/"), info = info)
    }
    client$close()
  }
})

test_that("a script that cannot open a file on a worker says which file", {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  script <- server_script(c(
    "if (mirai::on_daemon()) source('no-such-helpers.R')",
    "mcplite::mcp_server(list(mcplite::tool(function() 'ok', 'Answer ok.', name = 'ping')), workers = 1)"
  ))
  client <- checked_client(script, env = child_env())
  res <- client$call("ping")
  expect_true(res$isError)
  text <- res$content[[1]]$text
  expect_match(text, sprintf("The worker could not evaluate the server script %s", script), fixed = TRUE)
  expect_match(text, "no-such-helpers.R", fixed = TRUE)
  expect_snapshot(cat(gsub(script, "<script>", text, fixed = TRUE)))
})

test_that("script_file() finds the script R runs, the file source() reads, or the working directory", {
  skip_if_no_mcplite_child()
  dir <- normalizePath(tempfile("script-file-"), mustWork = FALSE)
  dir.create(file.path(dir, "sub"), recursive = TRUE)
  dir <- normalizePath(dir, winslash = "/")
  writeLines(c("setwd(tempdir())", "cat(mcplite::script_file('data', 'x.csv'), mcplite::script_file(), sep = '\\n')"),
             file.path(dir, "sub", "s.R"))
  run <- function(args, wd = dir) {
    res <- processx::run(mcp_rscript(), c("--vanilla", args), wd = wd,
                         env = c("current", child_env()), error_on_status = FALSE)
    expect_identical(res$status, 0L, info = res$stderr)
    strsplit(res$stdout, "\n")[[1]]
  }
  # Rscript with a relative path, the script moving elsewhere first: the
  # script's folder all the same (mcplite is loaded before the setwd()).
  writeLines(c("library(mcplite)", readLines(file.path(dir, "sub", "s.R"))), file.path(dir, "sub", "t.R"))
  expect_identical(run("sub/t.R"), c(file.path(dir, "sub", "data", "x.csv"), file.path(dir, "sub", "t.R")))
  # source() from an R session.
  expect_identical(run(c("-e", sprintf("source('%s')", file.path(dir, "sub", "s.R")))),
                   c(file.path(dir, "sub", "data", "x.csv"), file.path(dir, "sub", "s.R")))
  # At the console: the working directory, and no script.
  expect_identical(run(c("-e", "cat(mcplite::script_file('a', 'b.R'), mcplite::script_file(), sep = '\\n')")),
                   c(file.path(dir, "a", "b.R"), "NA"))
  expect_snapshot(error = TRUE, {
    script_file(1)
    script_file("a", NA)
  })
})

# ---- who can reach the workers -----------------------------------------------

test_that("a worker sends progress only when it runs on the server's machine", {
  here <- Sys.info()[["nodename"]]
  relays <- mcplite:::worker_relays
  expect_true(relays(c("ipc:///d/progress", "tok", "3", here)))
  expect_false(relays(c("ipc:///d/progress", "tok", "3", paste0(here, "-elsewhere"))))
  expect_false(relays(c("ipc:///d/progress", "tok", "3")))
  expect_false(relays(c("ipc:///d/progress", "tok", NA, here)))
  expect_false(relays(NULL))
  expect_false(relays(list("a", "b", "c", here)))
})

test_that("the progress socket closes connections without the token, and reads nothing from them", {
  skip_if_not(dir.exists("/proc/self/fd"), "needs /proc")
  proc <- workers_server("1")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  dir <- server_private_dir(proc)
  relay <- paste0("ipc://", file.path(dir, "progress"))
  # A wrong token followed by a forged report, a silent connection, and
  # one that sends part of a token: the server closes each (the receive
  # ends with an error, not at its time limit, which is nanonext's 5).
  closed <- function(send) {
    s <- nanonext::stream(dial = relay)
    on.exit(close(s))
    if (length(send)) nanonext::send(s, send, mode = "raw", block = 5000L)
    got <- nanonext::recv(s, mode = "raw", block = 30000L)
    nanonext::is_error_value(got) && !identical(as.integer(got), 5L)
  }
  forged <- charToRaw(paste0(strrep("0", 32), '{"task":1,"progress":99}\n'))
  expect_true(closed(forged))
  expect_true(closed(raw()))
  expect_true(closed(charToRaw(strrep("0", 31))))
  # The server serves on.
  mcp_send(proc, legacy_call(1, "add", '{"x":1,"y":2}'))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "3")
  expect_identical(mcp_close(proc)$status, 0L)
})

test_that("only this user's processes can join the workers' pool, reach the dispatcher, ring the doorbell or relay progress", {
  skip_if_not(dir.exists("/proc/self/fd"), "needs /proc")
  second_user_skip()
  proc <- workers_server("2")
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, initialize_line("2025-06-18"))
  mcp_read(proc, 1)
  mcp_send(proc, legacy_call(1, "add", '{"x":1,"y":2}'))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "3")
  server <- proc$process$get_pid()
  # No public endpoint: no abstract Unix socket (a name anyone can dial) and
  # no TCP socket at all in the server; its named sockets are files.
  mine <- socket_inodes(server)
  named <- unix_sockets()
  named <- named[named$inode %in% mine & nzchar(named$path), ]
  expect_false(any(startsWith(named$path, "@")), info = paste(named$path, collapse = " "))
  expect_false(any(mine %in% tcp_inodes()))
  # The daemons' socket (where the dispatcher listens) and the doorbell.
  pool <- grep("/w$", named$path, value = TRUE)[1]
  expect_false(is.na(pool))
  dir <- dirname(pool)
  bell <- file.path(dir, "bell")
  expect_true(bell %in% named$path)
  # Where workers send mcp_progress()'s reports.
  relay <- file.path(dir, "progress")
  expect_true(relay %in% named$path)
  urls <- paste0("ipc://", pool)
  if (is.na(pool)) {
    # (Before the fix: the daemons' abstract socket, which the other user
    # then tries.)
    abstract <- grep("^@", named$path, value = TRUE)
    urls <- if (length(abstract)) paste0("abstract://", substring(abstract[[1]], 2)) else "ipc:///nonexistent"
  }
  info <- file.info(dir)
  expect_identical(format(as.octmode(info$mode)), "700")
  expect_identical(info$uname, "root")
  # Another user dials both, as `mirai::daemon(<url>)` would: refused. A
  # socket it may reach shows that its dialling works.
  open_url <- second_user_open_socket()
  code <- sprintf(paste(
    "try_dial <- function(url) tryCatch({",
    "s <- nanonext::socket('req', dial = url, autostart = NA); close(s); 'joined'",
    "}, error = function(e) paste('refused:', conditionMessage(e)));",
    "try_bell <- function(url) tryCatch({",
    "s <- nanonext::stream(dial = url); close(s); 'connected'",
    "}, error = function(e) paste('refused:', conditionMessage(e)));",
    "cat('open', try_dial('%s'), '\\n');",
    "cat('pool', try_dial('%s'), '\\n');",
    "cat('bell', try_bell('%s'), '\\n');",
    "cat('relay', try_bell('%s'), '\\n')",
    sep = " "
  ), open_url, urls, paste0("ipc://", bell), paste0("ipc://", relay))
  res <- second_user_rscript(code, lib = second_user_lib(c("nanonext")))
  expect_identical(res$status, 0L, info = res$stderr)
  out <- strsplit(trimws(res$stdout), "\n")[[1]]
  expect_identical(trimws(out[[1]]), "open joined")
  expect_match(out[[2]], "^pool refused:")
  expect_match(out[[3]], "^bell refused:")
  expect_match(out[[4]], "^relay refused:")
  # The server goes on serving, and removes its private directory at the end.
  mcp_send(proc, legacy_call(2, "add", '{"x":2,"y":2}'))
  expect_identical(first_text(mcp_read(proc, 1)[[1]]), "4")
  expect_identical(mcp_close(proc)$status, 0L)
  expect_false(dir.exists(dir))
})
