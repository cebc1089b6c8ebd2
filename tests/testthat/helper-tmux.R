# An interactive R at a pseudo-terminal (tmux), for what only a real console
# shows: prompts that wait for the user, the console's state between
# commands. Tests type lines and wait on files the typed code writes (a
# barrier), never on durations.

skip_if_no_tmux <- function() {
  testthat::skip_on_cran()
  testthat::skip_if(!nzchar(Sys.which("tmux")), "tmux is not installed")
}

# Start `R --interactive` in a new tmux session with the library under test
# first; killed when the calling test ends.
tmux_r_start <- function(env = child_env(), .local_envir = parent.frame()) {
  name <- paste0("mcplite-", Sys.getpid(), "-", basename(tempfile("")))
  vars <- paste(sprintf("%s=%s", names(env), shQuote(env)), collapse = " ")
  r <- file.path(R.home("bin"), "R")
  cmd <- sprintf("env %s %s --no-save --no-restore -q --interactive", vars, shQuote(r))
  status <- system2("tmux", c("new-session", "-d", "-s", name, "-x", "200", "-y", "50", shQuote(cmd)))
  testthat::expect_equal(status, 0L)
  do.call(base::on.exit, list(substitute(tmux_kill(n), list(n = name)), TRUE, FALSE), envir = .local_envir)
  name
}

# Type one line at the console and press Enter.
tmux_type <- function(name, line) {
  system2("tmux", c("send-keys", "-t", name, "-l", shQuote(line)))
  system2("tmux", c("send-keys", "-t", name, "Enter"))
}

# What the terminal shows, for failure messages.
tmux_screen <- function(name) {
  paste(suppressWarnings(system2("tmux", c("capture-pane", "-p", "-S", "-40", "-t", name), stdout = TRUE)), collapse = "\n")
}

# Wait until `path` exists (the typed code writes it last, whole, with
# file.rename()) and return its lines.
tmux_wait_file <- function(name, path, timeout = 60) {
  ok <- wait_until(function() file.exists(path), timeout = timeout)
  if (!ok) testthat::fail(paste0("no ", basename(path), "; the console shows:\n", tmux_screen(name)))
  readLines(path, encoding = "UTF-8")
}

tmux_kill <- function(name) {
  invisible(suppressWarnings(system2("tmux", c("kill-session", "-t", name), stdout = FALSE, stderr = FALSE)))
}
