# Helpers for the mcp_config() tests: a temporary home directory for every
# client, and the real clients' command-line programs from npm.

# The variables through which mcp_config() and the clients find their files:
# all of them point into `home`, so nothing reads or writes the real home.
config_home_env <- function(home) {
  c(
    HOME = home, USERPROFILE = home,
    APPDATA = file.path(home, "AppData", "Roaming"),
    LOCALAPPDATA = file.path(home, "AppData", "Local"),
    XDG_CONFIG_HOME = file.path(home, ".config"),
    XDG_CACHE_HOME = file.path(home, ".cache"),
    XDG_DATA_HOME = file.path(home, ".local", "share"),
    XDG_STATE_HOME = file.path(home, ".local", "state"),
    CODEX_HOME = file.path(home, ".codex"),
    GEMINI_CLI_HOME = home,
    CLAUDE_CONFIG_DIR = file.path(home, ".claude")
  )
}

# Run `code` with the environment pointing at a new temporary home; the
# previous values come back afterwards. `code` sees the home as `home`.
with_config_home <- function(code) {
  home <- tempfile("home-")
  dir.create(home)
  home <- normalizePath(home, winslash = "/")
  vars <- config_home_env(home)
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  on.exit({
    set <- old[!is.na(old)]
    if (length(set)) do.call(Sys.setenv, as.list(set))
    Sys.unsetenv(names(old)[is.na(old)])
    unlink(home, recursive = TRUE)
  }, add = TRUE)
  do.call(Sys.setenv, as.list(vars))
  eval(substitute(code), list(home = home), parent.frame())
}

# Scrub temporary paths from printed messages.
scrub_home <- function(x, home) {
  x <- gsub(home, "<home>", x, fixed = TRUE)
  gsub(normalizePath(tempdir(), winslash = "/"), "<tmp>", x, fixed = TRUE)
}

# A real client's program, installed by `npm ci` in tests/clients (see
# tools/install.sh). tools/test.sh sets MCPLITE_REQUIRE_NODE_TESTS=true:
# there a missing program fails instead of skipping.
client_program <- function(name) {
  exe <- if (.Platform$OS.type == "windows") paste0(name, ".cmd") else name
  bin <- tryCatch(testthat::test_path("..", "clients", "node_modules", ".bin", exe), error = function(e) "")
  have <- nzchar(bin) && file.exists(bin) && nzchar(Sys.which("node"))
  if (!have) {
    why <- sprintf(
      "the %s command-line client is not installed (run `npm ci` in tests/clients, as tools/install.sh does; the R CMD check tarball has no tests/clients)",
      name)
    if (identical(Sys.getenv("MCPLITE_REQUIRE_NODE_TESTS"), "true")) testthat::fail(why)
    testthat::skip(why)
  }
  normalizePath(bin)
}

# Run a client program in `dir` with the temporary home `home`, telemetry,
# error reports and update checks off (each client's own switches), bounded
# by a timeout. Returns processx's result, stdout and stderr joined in `$out`.
run_client <- function(program, args, home, dir = home, env = NULL, timeout = 90) {
  vars <- c(
    "current", config_home_env(home),
    # Claude Code
    DISABLE_TELEMETRY = "1", DISABLE_ERROR_REPORTING = "1", DISABLE_AUTOUPDATER = "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1",
    # Gemini CLI (also privacy.usageStatisticsEnabled = false in its settings)
    GEMINI_TELEMETRY_ENABLED = "false", GEMINI_CLI_TRUST_WORKSPACE = "true",
    NO_COLOR = "1",
    env
  )
  res <- processx::run(program, args, wd = dir, env = vars, timeout = timeout,
                       error_on_status = FALSE, stdin = NULL)
  res$out <- paste0(res$stdout, res$stderr)
  res
}

# mcp_config(write = TRUE) in an R process of its own, as a user runs it.
# Its output is "written", or the error's first class and message. `pause`:
# the prefix of the write path's test barrier (MCPLITE_CONFIG_TEST_PAUSE, see
# config_pause()); `wrap`: a command put in front of Rscript (prlimit).
config_writer <- function(script, client, path, pause = NULL, env = NULL, wrap = character()) {
  code <- sprintf(paste0(
    "tryCatch({invisible(capture.output(mcplite::mcp_config(%s, %s, env = %s, write = TRUE, path = %s))); ",
    "cat('written\\n')}, mcplite_error = function(e) cat(class(e)[[1]], conditionMessage(e), sep = '\\n'))"),
    deparse(script), deparse(client), paste(deparse(env), collapse = ""), deparse(path))
  file <- tempfile("writer-", fileext = ".R")
  writeLines(code, file)
  cmd <- c(wrap, mcp_rscript(), "--vanilla", file)
  processx::process$new(cmd[[1]], cmd[-1], stdout = "|", stderr = "2>&1",
                        env = c("current", R_LIBS = mcp_child_libs(),
                                MCPLITE_CONFIG_TEST_PAUSE = if (is.null(pause)) "" else pause))
}

# The writer's output lines, once it has ended (killed after a minute).
config_writer_output <- function(p) {
  p$wait(60000)
  if (p$is_alive()) p$kill()
  p$read_all_output_lines()
}

# The write path's test barrier: wait until attempt `attempt` has written its
# new files and stopped before checking the original (FALSE if it never does),
# or let it go on.
config_pause <- function(pause, attempt = 1) {
  wait_until(function() file.exists(sprintf("%s.ready.%d", pause, attempt)))
}
config_go <- function(pause, attempt = 1) {
  invisible(file.create(sprintf("%s.go.%d", pause, attempt)))
}

# A directory directly under /tmp (R's own temporary directory is private).
config_shared_dir <- function(mode = "0755") {
  dir <- tempfile("mcplite-config-", tmpdir = "/tmp")
  dir.create(dir)
  Sys.chmod(dir, mode, use_umask = FALSE)
  dir
}

# Claude Code, driven through one whole tool call by a scripted model
# (tests/clients/mock-anthropic.mjs: it asks for `tool` with `input` while the
# conversation holds no tool result, then answers with a text quoting the
# result). `mcp_config_file`: a file in the `{"mcpServers": ...}` form Claude
# Code's `--mcp-config` reads. Tool search is off so the tool is offered to
# the model at once. Returns the client's stream-json events (parsed), the
# model's request log (parsed) and the raw output.
claude_tool_call <- function(home, project, mcp_config_file, tool, input, prompt = "Use the tool.") {
  mock <- client_script("mock-anthropic.mjs")
  claude <- client_program("claude")
  port_file <- file.path(home, "anthropic-port")
  requests <- file.path(home, "anthropic-requests.jsonl")
  unlink(c(port_file, requests))
  model <- processx::process$new("node", c(mock, port_file, requests, tool,
                                          jsonlite::toJSON(input, auto_unbox = TRUE)), cleanup = TRUE)
  on.exit(model$kill(), add = TRUE)
  testthat::expect_true(wait_until(function() file.exists(port_file) && length(readLines(port_file, warn = FALSE)) > 0, 30))
  port <- readLines(port_file, warn = FALSE)
  res <- run_client(claude, c("-p", prompt, "--mcp-config", mcp_config_file, "--strict-mcp-config",
                              "--allowedTools", tool, "--output-format", "stream-json", "--verbose"),
                    home, project, timeout = 120,
                    env = c(ANTHROPIC_BASE_URL = paste0("http://127.0.0.1:", port),
                            ANTHROPIC_API_KEY = "sk-ant-not-a-key", ENABLE_TOOL_SEARCH = "false"))
  parse_lines <- function(x) {
    x <- x[startsWith(x, "{")]
    lapply(x, function(l) tryCatch(jsonlite::parse_json(l), error = function(e) NULL))
  }
  list(events = parse_lines(strsplit(res$stdout, "\n", fixed = TRUE)[[1]]),
       requests = if (file.exists(requests)) parse_lines(readLines(requests, warn = FALSE)) else list(),
       out = res$out)
}

# The tool results Claude Code handed back to the model, in order.
claude_tool_results <- function(call) {
  out <- list()
  for (e in call$events) {
    if (!identical(e$type, "user")) next
    for (b in e$message$content) if (identical(b$type, "tool_result")) out[[length(out) + 1]] <- b
  }
  out
}

# A script of the helpers in tests/clients (node); skips (or fails, see
# client_program()) without the client it drives.
client_script <- function(name) {
  client_program(switch(name, "gemini-call.mjs" = "gemini", "mock-anthropic.mjs" = "claude", "codex"))
  normalizePath(testthat::test_path("..", "clients", name))
}
