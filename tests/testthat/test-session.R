# Live sessions: an interactive R at a pseudo-terminal (tmux) serving tools
# with mcp_session(), and the session server a client starts
# (`Rscript --vanilla -e "mcplite::mcp_session_server()"`), over real pipes.
# Every wait is on a barrier (a file the typed code or a tool writes, or an
# answer), never on a duration.

session_tools_code <- paste0(
  "list(",
  "tool(function(name) nrow(get(name, envir = globalenv())), name = 'count_rows', ",
  "description = 'Rows of a data frame', arguments = list(name = type_string())), ",
  "tool(function(path, started = '', steps = 0L) { if (nzchar(started)) writeLines('s', started); ",
  "for (i in seq_len(steps)) mcp_progress(i, steps); ",
  "while (!file.exists(path)) Sys.sleep(0.01); 'released' }, name = 'wait_for', ",
  "description = 'Waits for a file', arguments = list(path = type_string(), started = type_string(), steps = type_integer())), ",
  "tool(function(path) { writeLines('ran', path); 'touched' }, name = 'touch', ",
  "description = 'Writes a file', arguments = list(path = type_string()))",
  ")"
)

json_string <- function(x) encode_json_string(x)
json_string_arg <- function(name, value) sprintf('{"%s":%s}', name, json_string(value))

progress_call <- function(id, name, arguments, token) {
  rpc(id, "tools/call", sprintf('{"name":"%s","arguments":%s,"_meta":{"progressToken":%s}}',
                                name, arguments, json_string(token)))
}

# Start a session serving the test tools and a server attached to it (legacy 2025-06-18).
session_pair <- function(env = character(), server_env = character(), envir = parent.frame()) {
  dir <- session_dir_new(envir)
  s <- session_r(dir, envir = envir)
  session_serve(s, session_tools_code, name = "main")
  srv <- session_server(dir, cwd = s$cwd, env = server_env, envir = envir)
  init <- session_ask(srv, initialize_line("2025-06-18", id = 0), 0)$answer
  list(dir = dir, s = s, srv = srv, init = init)
}

test_that("a call reads a data frame created at the prompt, in all four versions", {
  session_skip()
  dir <- session_dir_new()
  s <- session_r(dir)
  session_run(s, "df <- data.frame(x = 1:7)")
  session_serve(s, session_tools_code, name = "main")
  srv <- session_server(dir, cwd = s$cwd)
  for (v in legacy_versions) {
    init <- session_ask(srv, initialize_line(v, id = 0), 0)$answer
    expect_true(init$result$capabilities$tools$listChanged)
    mcp_validate(list(init), v, "InitializeResult")
    listed <- session_ask(srv, rpc(1, "tools/list"), 1)$answer
    mcp_validate(list(listed), v, "ListToolsResult")
    expect_setequal(vapply(listed$result$tools, `[[`, "", "name"), c("count_rows", "wait_for", "touch"))
    called <- session_ask(srv, legacy_call(2, "count_rows", '{"name":"df"}'), 2)$answer
    mcp_validate(list(called), v, "CallToolResult")
    expect_equal(first_text(called), "7")
  }
  listed <- session_ask(srv, modern(3, "tools/list"), 3)$answer
  mcp_validate(list(listed), "2026-07-28", "ListToolsResult")
  expect_equal(listed$result$ttlMs, 0)
  expect_equal(listed$result$cacheScope, "private")
  called <- session_ask(srv, modern_call(4, "count_rows", '{"name":"df"}'), 4)$answer
  mcp_validate(list(called), "2026-07-28", "CallToolResult")
  expect_equal(first_text(called), "7")
  # Arguments are checked by the session's core as mcp_server() checks them.
  bad <- session_ask(srv, modern_call(5, "count_rows", '{"nam":"df"}'), 5)$answer
  mcp_validate(list(bad), "2026-07-28", "CallToolResult")
  expect_true(bad$result$isError)
  # An unknown tool is the protocol error mcp_server() gives.
  unknown <- session_ask(srv, modern_call(6, "nope"), 6)$answer
  expect_equal(unknown$error$code, -32602)
  # The console shows one line when serving starts, and one per call.
  expect_match(session_screen(s), 'mcplite: serving 3 tools as session "main"', fixed = TRUE)
  expect_match(session_screen(s), "mcplite: count_rows for testthat")
})

test_that("progress from a session call reaches the client before the answer", {
  session_skip()
  p <- session_pair()
  release <- session_barrier(p$s)
  writeLines("x", release)
  got <- session_ask(p$srv, progress_call(1, "wait_for", sprintf('{"path":%s,"steps":3}', json_string(release)), "tok"), 1)
  expect_equal(first_text(got$answer), "released")
  progress <- Filter(function(m) identical(m$method, "notifications/progress"), got$before)
  expect_gte(length(progress), 1)
  expect_equal(progress[[length(progress)]]$params$progress, 3)
  mcp_validate(c(got$before, list(got$answer)), "2025-06-18")
})

test_that("the user types commands while calls run: both work, each typed line runs once", {
  session_skip()
  p <- session_pair()
  started <- session_barrier(p$s)
  release <- session_barrier(p$s)
  log <- session_barrier(p$s)
  mcp_send(p$srv, legacy_call(1, "wait_for", sprintf('{"path":%s,"started":%s}', json_string(release), json_string(started))))
  session_wait(p$s, started)
  # Typed while the tool runs on the main thread: they wait for the console.
  for (i in 1:3) session_type(p$s, sprintf("cat('line%d\\n', file = %s, append = TRUE)", i, deparse(log)))
  writeLines("x", release)
  expect_equal(first_text(session_await(p$srv, 1)$answer), "released")
  session_run(p$s, "invisible(0)")
  expect_equal(readLines(log), c("line1", "line2", "line3"))
  # A child process of the console inherits none of the link's descriptors
  # (a server is attached: the listener and its connection are open).
  fds <- session_barrier(p$s)
  session_run(p$s, sprintf("system('ls -l /proc/self/fd > %s 2>&1')", fds))
  expect_gt(length(readLines(fds)), 2)
  expect_false(any(grepl("socket:", readLines(fds))), info = paste(readLines(fds), collapse = "\n"))
  # A call after the typed lines works too.
  expect_equal(first_text(session_ask(p$srv, legacy_call(3, "touch", sprintf('{"path":%s}', json_string(session_barrier(p$s)))), 3)$answer), "touched")
})

# The user's own command: waiting in Sys.sleep(), or running later's event
# loop itself as Shiny does (later::run_now() runs the session's callback,
# which must find itself not at top level and look again later).
busy_commands <- c(
  sleep = "while (!file.exists(%2$s)) Sys.sleep(0.02)",
  run_now = "while (!file.exists(%2$s)) later::run_now(0.02)"
)

for (busy in names(busy_commands)) test_that(paste("a busy console leaves ping and tools/list answered; the call hears progress, then the busy error, and never runs:", busy), {
  session_skip()
  p <- session_pair(server_env = c(MCPLITE_SESSION_BUSY_WAIT = "3"))
  busy_release <- session_barrier(p$s)
  busy_started <- session_barrier(p$s)
  never <- session_barrier(p$s)
  session_type(p$s, sprintf(paste("writeLines('b', %1$s);", busy_commands[[busy]]),
                            deparse(busy_started), deparse(busy_release)))
  session_wait(p$s, busy_started)
  mcp_send(p$srv, progress_call(1, "touch", sprintf('{"path":%s}', json_string(never)), 7))
  expect_equal(session_ask(p$srv, rpc(2, "ping"), 2)$answer$result, setNames(list(), character()))
  listed <- session_ask(p$srv, rpc(3, "tools/list"), 3)
  expect_length(listed$answer$result$tools, 3)
  got <- session_await(p$srv, 1)
  rest <- c(listed$before, got$before)
  call <- list(got$answer)
  expect_true(call[[1]]$result$isError)
  expect_match(first_text(call[[1]]), "busy")
  progress <- Filter(function(m) identical(m$method, "notifications/progress"), rest)
  expect_gte(length(progress), 1)
  expect_equal(progress[[1]]$params$progressToken, 7)
  mcp_validate(c(rest, call), "2025-06-18")
  writeLines("x", busy_release)
  session_run(p$s, "invisible(0)")
  # A later call runs (after where the withdrawn one would have): it never ran.
  later_file <- session_barrier(p$s)
  expect_equal(first_text(session_ask(p$srv, legacy_call(5, "touch", sprintf('{"path":%s}', json_string(later_file))), 5)$answer), "touched")
  expect_false(file.exists(never))
})

test_that("a cancelled waiting call never runs; a cancelled running call is interrupted, not the user's command", {
  session_skip()
  p <- session_pair()
  busy_release <- session_barrier(p$s)
  busy_started <- session_barrier(p$s)
  never <- session_barrier(p$s)
  user_done <- session_barrier(p$s)
  session_type(p$s, sprintf("writeLines('b', %s); while (!file.exists(%s)) Sys.sleep(0.02); writeLines('done', %s)",
                            deparse(busy_started), deparse(busy_release), deparse(user_done)))
  session_wait(p$s, busy_started)
  mcp_send(p$srv, legacy_call(1, "touch", sprintf('{"path":%s}', json_string(never))))
  mcp_send(p$srv, rpc(NULL, "notifications/cancelled", '{"requestId":1}'))
  expect_equal(names(session_ask(p$srv, rpc(2, "ping"), 2)$answer), c("jsonrpc", "id", "result"))
  writeLines("x", busy_release)
  session_wait(p$s, user_done)
  # Running: the tool waits on a file that never comes; the cancellation interrupts it.
  started <- session_barrier(p$s)
  mcp_send(p$srv, legacy_call(3, "wait_for", sprintf('{"path":%s,"started":%s}', json_string(session_barrier(p$s)), json_string(started))))
  session_wait(p$s, started)
  mcp_send(p$srv, rpc(NULL, "notifications/cancelled", '{"requestId":3}'))
  later_file <- session_barrier(p$s)
  got <- session_ask(p$srv, legacy_call(4, "touch", sprintf('{"path":%s}', json_string(later_file))), 4)
  expect_equal(first_text(got$answer), "touched")
  # Neither cancelled call was answered; the withdrawn one never ran.
  expect_length(Filter(function(m) !is.null(m$id), got$before), 0)
  expect_false(file.exists(never))
  # The console still works.
  session_run(p$s, "x <- 1")
})

test_that("two sessions: pinned by name, chosen by directory, or chosen with session_choose", {
  session_skip()
  dir <- session_dir_new()
  a <- session_r(dir)
  b <- session_r(dir)
  session_serve(a, "tool(function() 'alpha', name = 'who', description = 'Who')", name = "alpha")
  session_serve(b, "tool(function() 'beta', name = 'who', description = 'Who')", name = "beta")
  who <- function(srv) {
    session_ask(srv, initialize_line("2025-11-25", id = 0), 0)
    first_text(session_ask(srv, legacy_call(1, "who"), 1)$answer)
  }
  expect_equal(who(session_server(dir, cwd = b$cwd)), "beta")
  expect_equal(who(session_server(dir, cwd = a$cwd)), "alpha")
  elsewhere <- tempfile("mcpls-elsewhere-")
  dir.create(elsewhere)
  expect_equal(who(session_server(dir, cwd = elsewhere, env = c(MCPLITE_SESSION = "alpha"))), "alpha")
  # The directory is the console's current one: after setwd(), the server
  # started there finds that session.
  moved <- tempfile("mcpls-moved-")
  dir.create(moved)
  session_run(a, sprintf("setwd(%s)", deparse(moved)))
  session_run(a, "invisible(0)")
  expect_equal(who(session_server(dir, cwd = moved)), "alpha")
  # Neither: only tools that list and choose.
  srv <- session_server(dir, cwd = elsewhere)
  session_ask(srv, initialize_line("2025-11-25", id = 0), 0)
  listed <- session_ask(srv, rpc(1, "tools/list"), 1)$answer
  mcp_validate(list(listed), "2025-11-25", "ListToolsResult")
  expect_setequal(vapply(listed$result$tools, `[[`, "", "name"), c("session_list", "session_choose"))
  refused <- session_ask(srv, legacy_call(2, "who"), 2)$answer
  expect_true(refused$result$isError)
  expect_match(first_text(refused), "session_choose")
  sessions <- session_ask(srv, legacy_call(3, "session_list"), 3)$answer
  expect_match(first_text(sessions), "alpha")
  expect_match(first_text(sessions), "beta")
  chosen <- session_ask(srv, legacy_call(4, "session_choose", '{"name":"beta"}'), 4)
  expect_false(isTRUE(chosen$answer$result$isError))
  changed <- Filter(function(m) identical(m$method, "notifications/tools/list_changed"), chosen$before)
  next_answer <- session_ask(srv, rpc(5, "tools/list"), 5)
  changed <- c(changed, Filter(function(m) identical(m$method, "notifications/tools/list_changed"), next_answer$before))
  expect_length(changed, 1)
  mcp_validate(changed, "2025-11-25")
  expect_equal(vapply(next_answer$answer$result$tools, `[[`, "", "name"), "who")
  expect_equal(first_text(session_ask(srv, legacy_call(6, "who"), 6)$answer), "beta")
})

test_that("no session: a tool says how to attach; the session ends mid-call; the server re-attaches and says the tools changed", {
  session_skip()
  dir <- session_dir_new()
  cwd <- tempfile("mcpls-cwd-")
  dir.create(cwd)
  srv <- session_server(dir, cwd = cwd)
  session_ask(srv, initialize_line("2025-06-18", id = 0), 0)
  listed <- session_ask(srv, rpc(1, "tools/list"), 1)$answer
  mcp_validate(list(listed), "2025-06-18", "ListToolsResult")
  expect_equal(vapply(listed$result$tools, `[[`, "", "name"), "session_status")
  status <- session_ask(srv, legacy_call(2, "session_status"), 2)$answer
  expect_match(first_text(status), "mcplite::mcp_session(tools)", fixed = TRUE)
  # The server's own tools and answers are valid in every version.
  for (v in all_versions) {
    srv_v <- session_server(dir, cwd = cwd)
    if (v == "2026-07-28") {
      listed_v <- session_ask(srv_v, modern(1, "tools/list", version = v), 1)$answer
      called_v <- session_ask(srv_v, modern_call(2, "session_status", version = v), 2)$answer
      gone_v <- session_ask(srv_v, modern_call(3, "count_rows", '{"name":"df"}', version = v), 3)$answer
    } else {
      session_ask(srv_v, initialize_line(v, id = 0), 0)
      listed_v <- session_ask(srv_v, rpc(1, "tools/list"), 1)$answer
      called_v <- session_ask(srv_v, legacy_call(2, "session_status"), 2)$answer
      gone_v <- session_ask(srv_v, legacy_call(3, "count_rows", '{"name":"df"}'), 3)$answer
    }
    mcp_validate(list(listed_v, called_v, gone_v), v, c("ListToolsResult", "CallToolResult", "CallToolResult"))
    expect_true(gone_v$result$isError)
    mcp_kill(srv_v)
  }
  gone <- session_ask(srv, legacy_call(3, "count_rows", '{"name":"df"}'), 3)$answer
  expect_true(gone$result$isError)
  expect_match(first_text(gone), "mcplite::mcp_session(tools)", fixed = TRUE)
  # A session comes: the next request attaches.
  s <- session_r(dir, cwd = cwd)
  session_serve(s, session_tools_code)
  started <- session_barrier(s)
  mcp_send(srv, legacy_call(4, "wait_for", sprintf('{"path":%s,"started":%s}', json_string(session_barrier(s)), json_string(started))))
  session_wait(s, started)
  # The session ends mid-call (killed, as a crash).
  reg <- list.files(dir, "\\.json$", full.names = TRUE)
  pid <- jsonlite::fromJSON(reg)$pid
  tools::pskill(pid, tools::SIGKILL)
  got <- session_await(srv, 4)
  msgs <- got$before
  ended <- got$answer
  expect_true(ended$result$isError)
  expect_match(first_text(ended), "ended")
  mcp_validate(list(ended), "2025-06-18", "CallToolResult")
  # A new session in the same place: the server attaches again (and the
  # killed session's registration and socket are cleared away).
  s2 <- session_r(dir, cwd = cwd)
  session_serve(s2, session_tools_code)
  expect_false(file.exists(reg))
  expect_false(file.exists(sub("json$", "sock", reg)))
  session_run(s2, "df <- data.frame(x = 1:3)")
  again <- session_ask(srv, legacy_call(6, "count_rows", '{"name":"df"}'), 6)
  expect_equal(first_text(again$answer), "3")
  changes <- Filter(function(m) identical(m$method, "notifications/tools/list_changed"), c(msgs, again$before))
  expect_gte(length(changes), 1)
})

test_that("mcp_session() again replaces the tools and attached servers are told", {
  session_skip()
  p <- session_pair()
  expect_length(session_ask(p$srv, rpc(1, "tools/list"), 1)$answer$result$tools, 3)
  session_run(p$s, "mcp_session(tool(function() 'new', name = 'fresh', description = 'New'), name = 'main')")
  # The change arrives as a notification, the next line the server writes.
  note <- mcp_read(p$srv, 1, timeout = 60)
  expect_equal(note[[1]]$method, "notifications/tools/list_changed")
  mcp_validate(note, "2025-06-18")
  listed <- session_ask(p$srv, rpc(300, "tools/list"), 300)$answer
  expect_equal(vapply(listed$result$tools, `[[`, "", "name"), "fresh")
  expect_equal(first_text(session_ask(p$srv, legacy_call(301, "fresh"), 301)$answer), "new")
  info_file <- session_barrier(p$s)
  session_run(p$s, sprintf("i <- mcp_session_info(); writeLines(c(i$name, i$tools, i$servers), %s)", deparse(info_file)))
  expect_equal(readLines(info_file), c("main", "fresh", "1"))
  # Stopping removes the socket and the registration; the server's next call says so.
  session_run(p$s, "mcp_session_stop()")
  expect_length(list.files(p$dir), 0)
  stopped <- session_ask(p$srv, legacy_call(302, "fresh"), 302)$answer
  expect_true(stopped$result$isError)
})

test_that("outside an interactive session mcp_session() does nothing", {
  skip_if_no_mcplite_child()
  dir <- session_dir_new()
  out <- processx::run(mcp_rscript(), c("--vanilla", "-e",
    "x <- mcplite::mcp_session(mcplite::tool(function() 1, name = 'a', description = 'A')); cat(is.null(x), is.null(mcplite::mcp_session_info()))"),
    env = c("current", R_LIBS = mcp_child_libs(), MCPLITE_SESSION_DIR = dir))
  expect_equal(out$stdout, "TRUE TRUE")
  expect_length(list.files(dir), 0)
})

test_that("the session server's own mistakes are classed errors", {
  expect_snapshot(error = TRUE, mcp_session_server(name = 1))
  withr_busy <- Sys.getenv("MCPLITE_SESSION_BUSY_WAIT", unset = NA)
  Sys.setenv(MCPLITE_SESSION_BUSY_WAIT = "soon")
  on.exit(if (is.na(withr_busy)) Sys.unsetenv("MCPLITE_SESSION_BUSY_WAIT") else Sys.setenv(MCPLITE_SESSION_BUSY_WAIT = withr_busy))
  expect_snapshot(error = TRUE, mcp_session_server())
})

test_that("another user can neither read a session's registration nor connect to its socket", {
  session_skip()
  second_user_skip()
  skip_if_not_installed("nanonext")
  p <- session_pair()
  reg <- list.files(p$dir, "\\.json$", full.names = TRUE)
  sock <- list.files(p$dir, "\\.sock$", full.names = TRUE)
  expect_length(reg, 1)
  expect_identical(format(as.octmode(file.info(p$dir)$mode)), "700")
  expect_identical(format(as.octmode(file.info(reg)$mode)), "600")
  expect_identical(format(as.octmode(file.info(sock)$mode)), "600")
  # A socket it may reach shows that its connecting works.
  open_url <- second_user_open_socket()
  code <- sprintf(paste(
    "try_connect <- function(url) tryCatch({",
    "s <- nanonext::stream(dial = url); close(s); 'connected'",
    "}, error = function(e) paste('refused:', conditionMessage(e)));",
    "cat('open', try_connect('%s'), '\\n');",
    "cat('session', try_connect('ipc://%s'), '\\n');",
    "cat('registration', tryCatch(readLines('%s'), error = function(e) 'unreadable', warning = function(w) 'unreadable'), '\\n')",
    sep = " "
  ), open_url, sock, reg)
  res <- second_user_rscript(code, lib = second_user_lib(c("nanonext")))
  expect_identical(res$status, 0L, info = res$stderr)
  out <- trimws(strsplit(trimws(res$stdout), "\n")[[1]])
  expect_identical(out[[1]], "open connected")
  expect_match(out[[2]], "^session refused:")
  expect_identical(out[[3]], "registration unreadable")
  # The session goes on serving its own user.
  expect_equal(first_text(session_ask(p$srv, legacy_call(1, "touch", sprintf('{"path":%s}', json_string(session_barrier(p$s)))), 1)$answer), "touched")
})

test_that("a connection with a wrong token is closed; the right token is answered", {
  session_skip()
  skip_if_not_installed("nanonext")
  p <- session_pair()
  reg <- jsonlite::fromJSON(list.files(p$dir, "\\.json$", full.names = TRUE))
  hello <- function(token) {
    s <- nanonext::stream(dial = paste0("ipc://", reg$socket))
    on.exit(close(s))
    nanonext::send(s, charToRaw(paste0(token, '{"op":"hello"}\n')), mode = "raw", block = 5000)
    nanonext::recv(s, mode = "character", block = 10000)
  }
  good <- hello(reg$token)
  expect_match(good, '"op":"hello"', fixed = TRUE)
  expect_match(good, '"name":"main"', fixed = TRUE)
  wrong <- c(paste(rev(strsplit(reg$token, "")[[1]]), collapse = ""), strrep("0", 32), substr(reg$token, 1, 31))
  for (token in wrong) {
    got <- hello(token)
    expect_false(is.character(got) && grepl("hello", got), info = token)
  }
})

test_that("a registration that is a link, another user's, or open to others is refused", {
  session_skip()
  p <- session_pair()
  real <- list.files(p$dir, "\\.json$", full.names = TRUE)
  expect_equal(mcplite:::rust_session_registration(real)$value$name, "main")
  other <- session_dir_new()
  refused <- function(path) !is.null(mcplite:::rust_session_registration(path)$error)
  link <- file.path(other, "1.json")
  file.symlink(real, link)
  expect_true(refused(link))
  copy <- file.path(other, "2.json")
  file.copy(real, copy)
  Sys.chmod(copy, "0644", use_umask = FALSE)
  expect_true(refused(copy))
  Sys.chmod(copy, "0600", use_umask = FALSE)
  if (identical(unname(Sys.info()[["effective_user"]]), "root")) {
    system2("chown", c("nobody", shQuote(copy)))
    expect_true(refused(copy))
  } else {
    file.rename(copy, file.path(other, "2.txt"))
  }
  # The server finds no session through those files...
  elsewhere <- tempfile("mcpls-elsewhere-")
  dir.create(elsewhere)
  srv <- session_server(other, cwd = elsewhere)
  session_ask(srv, initialize_line("2025-06-18", id = 0), 0)
  listed <- session_ask(srv, rpc(1, "tools/list"), 1)$answer
  expect_equal(vapply(listed$result$tools, `[[`, "", "name"), "session_status")
  # ... and attaches once a sound copy is there (the same bytes, this user's, 0600).
  file.copy(real, file.path(other, "3.json"))
  Sys.chmod(file.path(other, "3.json"), "0600", use_umask = FALSE)
  expect_false(refused(file.path(other, "3.json")))
  listed <- session_ask(srv, rpc(2, "tools/list"), 2)$answer
  expect_setequal(vapply(listed$result$tools, `[[`, "", "name"), c("count_rows", "wait_for", "touch"))
})

test_that("mcp_session() refuses a session directory that is a link or open to others, and bad tools", {
  session_skip()
  target <- session_dir_new()
  link <- paste0(target, "-link")
  file.symlink(target, link)
  on.exit(unlink(link), add = TRUE)
  open <- session_dir_new()
  Sys.chmod(open, "0755", use_umask = FALSE)
  s <- session_r(link)
  session_run(s, "suppressMessages(library(mcplite)); t1 <- tool(function() 1, name = 'a', description = 'A')")
  out <- session_barrier(s)
  try_serve <- function(dir) {
    sprintf("Sys.setenv(MCPLITE_SESSION_DIR = %s); e <- tryCatch(mcp_session(t1), error = function(e) e); cat(class(e)[[1]], conditionMessage(e), '\\n', file = %s, append = TRUE)",
            deparse(dir), deparse(out))
  }
  session_run(s, try_serve(link))
  session_run(s, try_serve(open))
  session_run(s, sprintf("e <- tryCatch(mcp_session(1), error = function(e) e); cat(class(e)[[1]], conditionMessage(e), '\\n', file = %s, append = TRUE)", deparse(out)))
  lines <- readLines(out)
  expect_match(lines[[1]], "^mcplite_error_session .*not a private directory")
  expect_match(lines[[2]], "^mcplite_error_session .*not a private directory")
  expect_match(lines[[3]], "^mcplite_error_tools ")
  expect_length(list.files(target), 0)
  expect_length(list.files(open), 0)
})

test_that("without the later package mcp_session() says which package it needs", {
  session_skip()
  dir <- session_dir_new()
  # A library path that holds mcplite and not later.
  lib <- tempfile("mcpls-lib-")
  dir.create(lib)
  file.copy(system.file(package = "mcplite"), lib, recursive = TRUE)
  s <- session_r(dir, env = c(R_LIBS = lib, R_LIBS_SITE = lib, R_LIBS_USER = lib))
  out <- session_barrier(s)
  session_run(s, sprintf(paste(
    "suppressMessages(library(mcplite)); t1 <- tool(function() 1, name = 'a', description = 'A');",
    "e <- tryCatch(mcp_session(t1), error = function(e) e);",
    "writeLines(c(class(e)[[1]], conditionMessage(e), requireNamespace('later', quietly = TRUE)), %s)"
  ), deparse(out)))
  lines <- readLines(out)
  expect_equal(lines[[3]], "FALSE")
  expect_equal(lines[[1]], "mcplite_error_dependency")
  expect_snapshot(cat(lines[[2]]))
  expect_length(list.files(dir), 0)
})

test_that("a tool that runs later's loop itself does not run the next call inside it", {
  session_skip()
  dir <- session_dir_new()
  s <- session_r(dir)
  tools <- paste0(
    "list(tool(function(path, started, other) { writeLines('s', started); ",
    "while (!file.exists(path)) later::run_now(0.01); ",
    "paste(file.exists(other), length(mcp_session_info()$tools)) }, name = 'spin', description = 'Spins later', ",
    "arguments = list(path = type_string(), started = type_string(), other = type_string())), ",
    "tool(function(path) { writeLines('ran', path); 'touched' }, name = 'touch', ",
    "description = 'Writes a file', arguments = list(path = type_string())))"
  )
  session_serve(s, tools, name = "main")
  srv <- session_server(dir, cwd = s$cwd)
  session_ask(srv, initialize_line("2025-06-18", id = 0), 0)
  release <- session_barrier(s)
  started <- session_barrier(s)
  other <- session_barrier(s)
  mcp_send(srv, legacy_call(1, "spin", sprintf('{"path":%s,"started":%s,"other":%s}',
                                               json_string(release), json_string(started), json_string(other))))
  session_wait(s, started)
  mcp_send(srv, legacy_call(2, "touch", sprintf('{"path":%s}', json_string(other))))
  # The second call waits (a ping is answered meanwhile), then runs after the first.
  expect_named(session_ask(srv, rpc(3, "ping"), 3)$answer, c("jsonrpc", "id", "result"))
  writeLines("x", release)
  first <- session_await(srv, 1)
  expect_equal(first_text(first$answer), "FALSE 2")
  expect_equal(first_text(session_await(srv, 2)$answer), "touched")
})

test_that("the session server stops cleanly with a call waiting: one answer, and the call never runs", {
  session_skip()
  p <- session_pair()
  busy_release <- session_barrier(p$s)
  busy_started <- session_barrier(p$s)
  never <- session_barrier(p$s)
  session_type(p$s, sprintf("writeLines('b', %s); while (!file.exists(%s)) Sys.sleep(0.02)",
                            deparse(busy_started), deparse(busy_release)))
  session_wait(p$s, busy_started)
  mcp_send(p$srv, legacy_call(1, "touch", sprintf('{"path":%s}', json_string(never))))
  expect_named(session_ask(p$srv, rpc(2, "ping"), 2)$answer, c("jsonrpc", "id", "result"))
  # End of input, then a request to terminate: serving stops at once.
  close(p$srv$process$get_input_connection())
  p$srv$process$signal(tools::SIGTERM)
  out <- mcp_close(p$srv)
  expect_equal(out$status, 0L)
  expect_length(out$responses, 1)
  expect_equal(out$responses[[1]]$id, 1L)
  expect_match(first_text(out$responses[[1]]), "The server stopped before tool touch finished.", fixed = TRUE)
  mcp_validate(out$responses, "2025-06-18", "CallToolResult")
  writeLines("x", busy_release)
  session_run(p$s, "invisible(0)")
  expect_false(file.exists(never))
})

test_that("in a live session, code that would prompt is a tool error, plots come back as images, the console stays usable", {
  session_skip()
  skip_if_not_installed("ragg")
  dir <- session_dir_new()
  s <- session_r(dir)
  session_run(s, "suppressMessages(library(mcplite)); fit_data <- data.frame(x = 1:10, y = (1:10)^2)")
  session_run(s, "mcp_session(c(session_tools(eval = TRUE), list(tool(function() menu(c('a', 'b')), name = 'ask', description = 'Asks'))), name = 'main')")
  srv <- session_server(dir, cwd = s$cwd)
  invisible(session_ask(srv, initialize_line("2025-11-25", id = 0), 0))
  # Prompts: a tool of the user's own, and code run by run_r_code.
  asked <- session_ask(srv, legacy_call(1, "ask"), 1)$answer
  mcp_validate(list(asked), "2025-11-25", "CallToolResult")
  expect_true(asked$result$isError)
  expect_match(first_text(asked), "asked for input at the R console", fixed = TRUE)
  for (code in c("readline('name? ')", "menu(c('x', 'y'))", "browser()", "askYesNo('sure?')")) {
    got <- session_ask(srv, modern_call(2, "run_r_code", sprintf('{"code":%s}', json_string(code))), 2)$answer
    mcp_validate(list(got), "2026-07-28", "CallToolResult")
    expect_true(got$result$isError, info = code)
  }
  # A plot, drawn off-screen: an image block, and the console's device list unchanged.
  session_run(s, "before_devices <- dev.list()")
  plotted <- session_ask(srv, modern_call(3, "run_r_code", json_string_arg("code", "plot(fit_data$x, fit_data$y); summary(fit_data$y)")), 3)$answer
  mcp_validate(list(plotted), "2026-07-28", "CallToolResult")
  kinds <- vapply(plotted$result$content, `[[`, "", "type")
  expect_true("image" %in% kinds)
  image <- plotted$result$content[[which(kinds == "image")[[1]]]]
  expect_equal(image$mimeType, "image/png")
  expect_equal(jsonlite::base64_dec(image$data)[1:4], as.raw(c(0x89, 0x50, 0x4e, 0x47)))
  expect_match(first_text(plotted), "Median", fixed = TRUE)
  # Objects the assistant reads are the ones typed at the prompt.
  described <- session_ask(srv, modern_call(4, "describe_r_object", json_string_arg("name", "fit_data")), 4)$answer
  expect_false(isTRUE(described$result$isError))
  expect_match(first_text(described), "fit_data", fixed = TRUE)
  # The console still answers the user, and its devices are as they were.
  b <- session_barrier(s)
  session_type(s, sprintf("writeLines(c(format(identical(dev.list(), before_devices)), format(sink.number())), %s)", deparse(b)))
  session_wait(s, b)
  expect_equal(readLines(b), c("TRUE", "0"))
})

test_that("Claude Code lists the session server as connected and calls a session tool on an object defined at the prompt", {
  session_skip()
  claude <- client_program("claude")
  dir <- session_dir_new()
  s <- session_r(dir)
  session_run(s, "suppressMessages(library(mcplite)); penguins_like <- data.frame(mass = c(3750, 3800, 3250))")
  session_run(s, "mcp_session(session_tools(), name = 'main')")
  with_config_home({
    file <- file.path(home, "mcp.json")
    out <- capture.output(mcp_config(session = "main", client = "claude-desktop", name = "rsession",
                                     env = c(child_env(), MCPLITE_SESSION_DIR = dir), write = TRUE, path = file))
    project <- s$cwd
    # The `claude mcp add` line mcp_config() prints, then `claude mcp list`:
    # the session server connects (attached to the session by its name).
    shown <- capture.output(printed <- mcp_config(session = "main", client = "claude-code", name = "rsession",
                                                  env = c(child_env(), MCPLITE_SESSION_DIR = dir)))
    added <- run_client("sh", c("-c", sub("^claude", shQuote(claude), printed[[1]])), home, project)
    expect_equal(added$status, 0, info = added$out)
    listed <- run_client(claude, c("mcp", "list"), home, project)
    line <- grep("^rsession: ", strsplit(listed$out, "\n")[[1]], value = TRUE)
    expect_length(line, 1)
    expect_match(line, "\u2714 Connected", fixed = TRUE, info = listed$out)
    expect_match(line, "mcplite::mcp_session_server()", fixed = TRUE)
    call <- claude_tool_call(home, project, file, "mcp__rsession__describe_r_object", list(name = "penguins_like"))
    results <- claude_tool_results(call)
    expect_length(results, 1)
    expect_false(isTRUE(results[[1]]$is_error), info = call$out)
    expect_match(results[[1]]$content[[1]]$text, "mass", fixed = TRUE)
    expect_match(call$requests[[length(call$requests)]]$results[[1]]$text, "3750", fixed = TRUE)
  })
  expect_match(session_screen(s), "mcplite: describe_r_object for claude-code", fixed = TRUE)
})

test_that("a tool that quits R ends the session mid-call: a tool error, and the socket and registration go with it", {
  session_skip()
  dir <- session_dir_new()
  s <- session_r(dir)
  session_serve(s, "list(tool(function() q('no'), name = 'quit_now', description = 'Quits R'))", name = "main")
  reg <- list.files(dir, "\\.json$", full.names = TRUE)
  expect_length(reg, 1)
  srv <- session_server(dir, cwd = s$cwd)
  invisible(session_ask(srv, initialize_line("2025-11-25", id = 0), 0))
  ended <- session_ask(srv, legacy_call(1, "quit_now"), 1)$answer
  mcp_validate(list(ended), "2025-11-25", "CallToolResult")
  expect_true(ended$result$isError)
  expect_match(first_text(ended), "ended")
  # q() ran the session's exit hook: nothing is left to attach to.
  expect_true(wait_until(function() !file.exists(reg), 30))
  expect_false(file.exists(sub("json$", "sock", reg)))
  # The server goes on: with no session, it says how to start one.
  status <- session_ask(srv, legacy_call(2, "session_status"), 2)$answer
  expect_match(first_text(status), "mcplite::mcp_session(tools)", fixed = TRUE)
})
