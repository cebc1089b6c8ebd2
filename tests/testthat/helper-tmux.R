# An interactive R at a pseudo-terminal (tmux), for what only a real console
# shows: prompts that wait for the user, the console's state between
# commands, live sessions (helper-session.R). Tests type lines and wait on
# files the typed code writes (a barrier), never on durations.
#
# Each console runs on a tmux server of its own (`tmux -L <name>`), so
# consoles of tests running at once, or a `tmux kill-server` elsewhere, never
# touch each other, and ending one never ends the server another starts on.

# tools/test.sh (MCPLITE_REQUIRE_NODE_TESTS=true, after tools/install.sh
# installed tmux and later) fails instead of skipping without them.
skip_if_no_tmux <- function() {
  testthat::skip_on_cran()
  testthat::skip_on_os("windows")
  for (need in c("tmux", "later")) {
    have <- if (need == "tmux") nzchar(Sys.which("tmux")) else requireNamespace("later", quietly = TRUE)
    if (have) next
    why <- sprintf("%s is not installed (tools/install.sh installs it)", need)
    if (identical(Sys.getenv("MCPLITE_REQUIRE_NODE_TESTS"), "true")) testthat::fail(why)
    testthat::skip(why)
  }
}

# Run tmux on the console `name`'s own server.
tmux <- function(name, args, ...) {
  suppressWarnings(system2("tmux", c("-L", name, args), ...))
}

# Start R in a new tmux console with the environment `env` (the library under
# test first) in the folder `cwd`; killed when the calling test ends (its
# frame `.local_envir`). `args`: R's command-line arguments.
tmux_r_start <- function(env = child_env(), cwd = NULL,
                         args = c("--no-save", "--no-restore", "-q", "--interactive"),
                         .local_envir = parent.frame()) {
  name <- paste0("mcplite-", Sys.getpid(), "-", basename(tempfile("")))
  vars <- paste(sprintf("%s=%s", names(env), shQuote(env)), collapse = " ")
  cmd <- paste("env", vars, shQuote(file.path(R.home("bin"), "R")), paste(args, collapse = " "))
  where <- if (is.null(cwd)) character() else c("-c", shQuote(cwd))
  status <- tmux(name, c("new-session", "-d", "-s", name, "-x", "200", "-y", "50", where, shQuote(cmd)))
  testthat::expect_equal(status, 0L)
  do.call(base::on.exit, list(substitute(tmux_kill(n), list(n = name)), TRUE, FALSE), envir = .local_envir)
  name
}

# Type one line at the console and press Enter.
tmux_type <- function(name, line) {
  tmux(name, c("send-keys", "-t", name, "-l", shQuote(line)))
  tmux(name, c("send-keys", "-t", name, "Enter"))
}

# Press a key (tmux's name for it: "C-c").
tmux_key <- function(name, key) {
  tmux(name, c("send-keys", "-t", name, key))
}

# What the terminal shows, for failure messages.
tmux_screen <- function(name) {
  paste(tmux(name, c("capture-pane", "-p", "-S", "-40", "-t", name), stdout = TRUE), collapse = "\n")
}

# Wait until `path` exists (the typed code writes it last, whole, with
# file.rename()) and return its lines.
tmux_wait_file <- function(name, path, timeout = 60) {
  ok <- wait_until(function() file.exists(path), timeout = timeout)
  if (!ok) testthat::fail(paste0("no ", basename(path), "; the console shows:\n", tmux_screen(name)))
  readLines(path, encoding = "UTF-8")
}

tmux_kill <- function(name) {
  invisible(tmux(name, "kill-server", stdout = FALSE, stderr = FALSE))
}
