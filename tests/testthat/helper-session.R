# Live sessions (mcp_session()) at a real pseudo-terminal: an interactive R
# in a tmux session, driven by typing lines; and the session server started
# as a client starts it, over real pipes (helper-mcp.R's reader).
#
# session_skip()                    skip on CRAN, on Windows, without tmux or later
# session_dir_new()                 a private session directory for one test
# session_r(dir, cwd, env)          an interactive R in tmux (killed at the end of the test)
# session_type(s, code)             type one line and press Enter
# session_barrier(s)                a fresh barrier file path in the test's directory
# session_wait(path)                wait until a file exists (a barrier the typed code writes)
# session_server(dir, cwd, env)     `Rscript --vanilla -e "mcplite::mcp_session_server()"`

# Run `expr` when the frame `envir` (a test) exits.
session_defer <- function(expr, envir = parent.frame()) {
  thunk <- as.call(list(function() expr))
  # Last in, first out: processes go before the directories they use.
  do.call(base::on.exit, list(thunk, add = TRUE, after = FALSE), envir = envir)
}

session_skip <- function() {
  skip_if_no_tmux()
  skip_if_no_mcplite_child()
}

# Short: socket paths inside must fit sun_path.
session_dir_new <- function(env = parent.frame()) {
  dir <- tempfile("mcpls-", tmpdir = "/tmp")
  dir.create(dir, mode = "0700")
  Sys.chmod(dir, "0700")
  # rm: R's unlink() leaves sockets behind.
  session_defer(system2("rm", c("-rf", shQuote(dir))), envir = env)
  dir
}

session_r <- function(dir, cwd = NULL, env = character(), envir = parent.frame()) {
  if (is.null(cwd)) {
    cwd <- tempfile("mcpls-cwd-")
    dir.create(cwd)
  }
  s <- new.env(parent = emptyenv())
  s$name <- tmux_r_start(c(R_LIBS = mcp_child_libs(), MCPLITE_SESSION_DIR = dir, env), cwd = cwd,
                         args = c("--vanilla", "-q"), .local_envir = envir)
  s$cwd <- cwd
  s$dir <- dir
  s$barriers <- tempfile("mcpls-barriers-")
  dir.create(s$barriers)
  s$n <- 0L
  session_defer(unlink(s$barriers, recursive = TRUE), envir = envir)
  s
}

session_type <- function(s, code) {
  tmux_type(s$name, code)
  invisible(s)
}

session_barrier <- function(s) {
  s$n <- s$n + 1L
  file.path(s$barriers, sprintf("b%d", s$n))
}

# What the terminal shows now (for failure messages).
session_screen <- function(s) tmux_screen(s$name)

session_wait <- function(s, path, timeout = 60) {
  ok <- wait_until(function() file.exists(path), timeout)
  if (!ok) testthat::fail(sprintf("barrier %s never appeared; the terminal shows:\n%s", path, session_screen(s)))
  invisible(ok)
}

# Type `code`, then a line that writes a barrier once it has run.
session_run <- function(s, code) {
  b <- session_barrier(s)
  session_type(s, sprintf("%s; writeLines('ok', %s)", code, deparse(b)))
  session_wait(s, b)
}

# Load mcplite in the session and serve `tools_code` (R code for a tool list).
session_serve <- function(s, tools_code, name = NULL) {
  session_run(s, "suppressMessages(library(mcplite))")
  call <- if (is.null(name)) sprintf("mcp_session(%s)", tools_code) else sprintf("mcp_session(%s, name = %s)", tools_code, deparse(name))
  session_run(s, call)
}

session_server <- function(dir, cwd = tempdir(), env = character(), envir = parent.frame()) {
  state <- new.env(parent = emptyenv())
  state$script <- "-e mcplite::mcp_session_server()"
  state$buffer <- raw()
  state$stdout <- raw()
  state$lines <- character()
  state$queue <- list()
  state$stderr_file <- tempfile("mcp-stderr-", fileext = ".txt")
  child_env <- c("current", R_LIBS = mcp_child_libs(), MCPLITE_SESSION_DIR = dir, env)
  state$process <- processx::process$new(
    mcp_rscript(), c("--vanilla", "-e", "mcplite::mcp_session_server()"),
    stdin = "|", stdout = mcp_stdout_pipe(state), stderr = state$stderr_file,
    env = child_env, wd = cwd, encoding = "UTF-8", cleanup = TRUE
  )
  class(state) <- "mcp_server_process"
  session_defer(mcp_kill(state), envir = envir)
  state
}

# Send one request and read lines until its answer; returns list(answer,
# before) where `before` holds the lines read first (notifications, other
# answers).
session_ask <- function(proc, line, id, timeout = 60) {
  mcp_send(proc, line)
  session_await(proc, id, timeout)
}

# Read lines until the answer to `id`.
session_await <- function(proc, id, timeout = 60) {
  before <- list()
  repeat {
    got <- mcp_read(proc, 1, timeout = timeout)
    if (length(got) == 0) return(list(answer = NULL, before = before))
    msg <- got[[1]]
    if (!is.null(msg$id) && identical(as.character(msg$id), as.character(id))) return(list(answer = msg, before = before))
    before[[length(before) + 1L]] <- msg
  }
}
