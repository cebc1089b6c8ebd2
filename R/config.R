#' Print or write the client configuration for a server script
#'
#' @description
#' `mcp_config()` prints what to add to an MCP client's configuration so that
#' it starts your server script: the JSON entry for Claude Desktop, VS Code
#' or Cursor, the JSON entry and the command for Gemini CLI, the TOML table
#' and the command for Codex CLI, or the command for Claude Code. With `write = TRUE` it adds the entry to the
#' client's configuration file itself. Paths are absolute (the `Rscript` of
#' the R you are running, and the script), because clients start servers from
#' a directory of their own and without your shell's settings.
#'
#' `mcp_config(session = TRUE)` does the same for the session server, which
#' gives the assistant the tools of your live R session (see
#' `mcp_session()` and `vignette("live-session", package = "mcplite")`):
#' the command is `Rscript --vanilla -e "mcplite::mcp_session_server()"`,
#' with this R installation's `Rscript`, and no script.
#'
#' @details
#' Where each entry goes:
#'
#' * `"claude-desktop"`: `claude_desktop_config.json` (in Claude Desktop,
#'   Settings, Developer, Edit Config), inside its `mcpServers`; restart
#'   Claude Desktop afterwards.
#' * `"claude-code"`: a shell command that registers the server with Claude
#'   Code (add `--scope user` to make it available in every project). The
#'   name comes before `--env`, which takes several values.
#' * `"vscode"`: `.vscode/mcp.json` in the workspace, or the user
#'   configuration (the command "MCP: Open User Configuration" opens it),
#'   inside its `servers`.
#' * `"cursor"`: `.cursor/mcp.json` in the project or `~/.cursor/mcp.json`,
#'   inside its `mcpServers`.
#' * `"gemini"`: `.gemini/settings.json` in the project or
#'   `~/.gemini/settings.json`, inside its `mcpServers`, or the equivalent
#'   `gemini mcp add` command (its `--` comes after the program: Gemini CLI
#'   reads options such as `-e` among the program's arguments before it; not
#'   printed when an `env` value holds `=`, which its `-e` would cut).
#' * `"codex"`: a `[mcp_servers.<name>]` table of `~/.codex/config.toml`
#'   (`$CODEX_HOME/config.toml` when `CODEX_HOME` is set), or the equivalent
#'   `codex mcp add` command.
#'
#' Merge the entry into the file's existing servers if it has some, or let
#' `write = TRUE` do it. [mcp_check()] tells you which `env` entries the
#' server needs (for example `R_LIBS` when packages live in a library only
#' your shell knows about) and ends by printing this snippet with them filled
#' in.
#'
#' @section Writing the file:
#' `write = TRUE` adds the entry to the client's own file, by default the
#' user-wide one:
#'
#' | client | Linux | macOS | Windows |
#' | --- | --- | --- | --- |
#' | `"claude-desktop"` | `~/.config/Claude/claude_desktop_config.json` | `~/Library/Application Support/Claude/claude_desktop_config.json` | `%APPDATA%\Claude\claude_desktop_config.json` |
#' | `"cursor"` | `~/.cursor/mcp.json` | `~/.cursor/mcp.json` | `%USERPROFILE%\.cursor\mcp.json` |
#' | `"vscode"` | `~/.config/Code/User/mcp.json` | `~/Library/Application Support/Code/User/mcp.json` | `%APPDATA%\Code\User\mcp.json` |
#' | `"gemini"` | `~/.gemini/settings.json` | `~/.gemini/settings.json` | `%USERPROFILE%\.gemini\settings.json` |
#' | `"codex"` | `~/.codex/config.toml` | `~/.codex/config.toml` | `%USERPROFILE%\.codex\config.toml` |
#'
#' On Linux `~/.config` is `$XDG_CONFIG_HOME` when that is set (Claude
#' Desktop has no Linux release; the path follows the same convention).
#' Gemini CLI's `~` is `$GEMINI_CLI_HOME` when that is set, and Codex's
#' directory `$CODEX_HOME`. Give `path` for another file, such as a project's
#' `.vscode/mcp.json` or `.gemini/settings.json`; a missing file is created.
#'
#' The file keeps everything else: other servers, other settings, their
#' order. Only the entry's own text changes: in a JSON file the entry is
#' replaced where it is, or added after the last server and indented as the
#' servers around it, and every other byte stays as it was (keys written
#' twice, numbers beyond double precision, spacing); a TOML file is edited
#' in place, so its comments and layout stay too. An entry of the same name
#' is updated: its `command`, `args` and `env` become the ones shown, the
#' keys of another transport go (`url`, `type`, `headers`, Gemini CLI's
#' `httpUrl` and `tcp`, Codex's `bearer_token_env_var`, `http_headers`,
#' ...), so the client starts the script instead of calling a remote
#' server, and anything else in it (timeouts, `trust`, `required`) is kept.
#' A server name that appears twice in the file is refused: clients differ
#' in which one they read.
#'
#' The file is replaced safely. The new content and a copy of the previous
#' file are written to new files in the same directory, each created
#' exclusively (an existing file or symbolic link of that name is never
#' followed) with the file's permissions from the start, so a private
#' (`0600`) file's settings are never readable by others, and with its owner
#' and group, so a file written by root (`sudo R`) stays its owner's; where
#' the owner cannot be kept the file is left alone with an error. Just
#' before the copy replaces `<file>.bak` and the new content replaces the
#' file, each in one step (a client never reads half a file), the file is
#' checked to be the one read (its device, inode, size, modification time
#' and content): when another program, such as the client, has saved it
#' meanwhile, `mcp_config()` reads it again and merges into that, and after
#' three such attempts stops with an error. A full disk, or any other
#' failure before the files are replaced, leaves the file and its old
#' backup as they were. The file may be a symbolic link (as dotfiles
#' managers make them): its target is edited and the link kept. A file with
#' several hard links is refused, because replacing it would leave the other
#' names with the old content. On Windows new files get the directory's
#' permissions and there is no owner to keep.
#'
#' Nothing is changed, and an error of class `mcplite_error_config` is
#' raised, when the file is not valid JSON or TOML
#' (`mcplite_error_config_invalid`), is JSON with comments or trailing
#' commas, which VS Code accepts but rewriting would drop
#' (`mcplite_error_config_jsonc`), is laid out in a way `mcp_config()` does
#' not edit, such as an inline `mcp_servers = { ... }` table or a server
#' name written twice (`mcplite_error_config_layout`), has several hard
#' links (`mcplite_error_config_links`), kept changing while it was written
#' (`mcplite_error_config_changed`), cannot be given its owner and group
#' again (`mcplite_error_config_owner`), or cannot be read or written, for
#' example when it is read-only or the disk is full
#' (`mcplite_error_config_io`). The message says what happened, and where a
#' failure came after the backup was replaced, it says so.
#'
#' Claude Code keeps its servers in files of its own: run the command that
#' `mcp_config(script, "claude-code")` prints instead.
#'
#' @section The session server:
#' With `session = TRUE` the entry starts the session server,
#' `mcp_session_server()`, which serves the tools of the R session where you
#' ran `mcp_session()`. It chooses that session when it starts and again
#' after a session ends: the one whose working directory is the directory the
#' client starts it in (Claude Code and Gemini CLI start servers in the
#' folder they run in), or else the only one. With `session = "<name>"` the
#' entry pins it to the session started with
#' `mcp_session(tools, name = "<name>")`, which suits clients that start
#' servers elsewhere, such as Claude Desktop: the name goes into the entry's
#' `env` as `MCPLITE_SESSION`, and the default server name becomes
#' `r-session-` and the name (in lower case, with dashes), so entries for
#' several sessions sit side by side (otherwise it is `r-session`). After the snippet, `mcp_config()` reminds
#' you to call `mcp_session()` in R. One entry serves every project, so the
#' user-wide file (the default of `write = TRUE`) and Claude Code's
#' `--scope user` suit it. [mcp_check()] with the same `session` checks the
#' server as clients start it.
#'
#' @param script Path to the server script; it is made absolute. Give
#'   `script` or `session`.
#' @param client The client: `"claude-desktop"`, `"claude-code"`,
#'   `"vscode"`, `"cursor"`, `"gemini"` or `"codex"`.
#' @param env Environment variables the server needs, as a named character
#'   vector, or `NULL`.
#' @param name The name the client shows for the server; by default made from
#'   the script's file name (or its directory's, for `server.R`). Claude Code
#'   accepts letters, digits, `-` and `_`; Codex also `.`, `:`, `@` and `/`.
#' @param write `TRUE` to add the entry to the client's configuration file
#'   instead of printing it (see "Writing the file").
#' @param path With `write = TRUE`, the file to write; by default the
#'   client's user-wide configuration file.
#' @param session Instead of `script`: `TRUE` for the session server, which
#'   reaches your live R session (see "The session server"), or a session's
#'   name (the `name` given to `mcp_session()`) to pin the server to that
#'   session. `FALSE` (the default) for a script.
#'
#' @return Invisibly: the snippet as a single string (for Codex, the TOML
#'   table), printed with [cat()]; with `write = TRUE`, the path of the file
#'   written.
#' @seealso [mcp_check()] to check the script (or the session server) as
#'   clients start it.
#' @export
#' @examples
#' # A server script of your own; here, a copy of the package's example.
#' example <- system.file("examples", "minimal.R", package = "mcplite")
#' server <- file.path(tempdir(), "minimal.R")
#' invisible(file.copy(example, server))
#' mcp_config(server)
#' mcp_config(server, "claude-code", env = c(R_LIBS = "/opt/R/library"))
#' mcp_config(server, "vscode", name = "adder")
#' mcp_config(server, "codex")
#'
#' # Add the server to a Gemini CLI settings file (here a new one).
#' settings <- file.path(tempdir(), "gemini", "settings.json")
#' mcp_config(server, "gemini", write = TRUE, path = settings)
#' cat(readLines(settings), sep = "\n")
#'
#' # The session server, for the tools of your live R session.
#' mcp_config(session = TRUE, client = "claude-code")
#' mcp_config(session = "analysis", client = "vscode")
mcp_config <- function(script = NULL, client = c("claude-desktop", "claude-code", "vscode", "cursor", "gemini", "codex"),
                       env = NULL, name = NULL, write = FALSE, path = NULL, session = FALSE) {
  call <- sys.call()
  session <- check_session_choice(script, session, call)
  if (isFALSE(session)) check_string(script, "script", call = call, allow_empty = FALSE)
  known <- rust_config_clients()$value
  clients <- names(known)
  choices <- paste0(paste0("\"", clients[-length(clients)], "\"", collapse = ", "), " or \"", clients[[length(clients)]], "\"")
  if (!is.character(client) || length(client) < 1 || anyNA(client) || !client[[1]] %in% clients) {
    abort_mcplite(sprintf("`client` must be one of %s, not %s.", choices,
                          describe_value(if (is.character(client) && length(client) >= 1) client[[1]] else client)),
                  arg = "client", call = call)
  }
  client <- client[[1]]
  spec <- c(config_clients[[client]], known[[client]])
  env <- check_env(env, call)
  check_flag(write, "write", call = call)
  check_string(path, "path", call = call, allow_null = TRUE, allow_empty = FALSE)
  if (!write && !is.null(path)) {
    abort_mcplite("`path` is the file to write: give it with `write = TRUE`.", arg = "path", call = call)
  }
  if (write && is.null(spec$key)) {
    abort_mcplite(sprintf(
      "`write = TRUE` is not available for %s, which keeps its servers in files of its own; run the command that `%s` prints instead.",
      spec$label, config_call(session, client)), arg = "write", call = call)
  }
  if (isFALSE(session)) {
    if (!file.exists(script)) {
      abort_mcplite(sprintf("`script` must be the path of an existing file; there is no file at %s.",
                            format_scalar(script)), arg = "script", call = call)
    }
    script <- normalizePath(script, winslash = "/")
    launch <- list(program = rscript_path(), args = c("--vanilla", script))
    if (is.null(name)) name <- server_name(script)
  } else {
    launch <- session_launch(session, env, call)
    env <- launch$env
    if (is.null(name)) name <- session_server_name(session)
  }
  check_string(name, "name", call = call, allow_empty = FALSE)
  if (!is.null(spec$name_chars) && !grepl(paste0("^[", spec$name_chars, "]+$"), name)) {
    abort_mcplite(sprintf("`name` must consist of %s for %s, not %s.", spec$name_rule, spec$label,
                          describe_value(name)), arg = "name", call = call)
  }
  rscript <- normalizePath(launch$program, winslash = "/", mustWork = FALSE)
  args <- launch$args

  entry <- list(command = rscript, args = I(args))
  if (length(env)) entry$env <- as.list(env)
  if (client == "vscode") entry <- c(list(type = "stdio"), entry)

  if (write) {
    written <- config_write(client, spec, name, entry, path, call)
    if (!isFALSE(session)) cat(session_next_step(session), "\n", sep = "")
    return(invisible(written))
  }

  env_flags <- if (length(env)) paste("--env", shell_quote(paste0(names(env), "=", env)))
  command <- c(shell_quote(rscript), shell_quote(args))
  text <- if (is.null(spec$format)) {
    paste(c("claude", "mcp", "add", "--transport", "stdio", shell_quote(name), env_flags, "--", command),
          collapse = " ")
  } else {
    switch(spec$format,
      json = config_json(spec$key, name, entry),
      toml = config_toml(spec$key, name, entry)
    )
  }
  out <- c(spec$where, text)
  if (client == "codex") {
    out <- c(out, "Or run in a terminal:",
             paste(c("codex", "mcp", "add", shell_quote(name), env_flags, "--", command), collapse = " "))
  }
  if (client == "gemini") {
    # Gemini CLI reads options among the server's arguments (its own -e would
    # take Rscript's) up to `--`, which must follow the program; its -e goes
    # before the name, and keeps a value only up to a second `=`.
    cut <- names(env)[grepl("=", env, fixed = TRUE)]
    if (length(cut)) {
      out <- c(out, sprintf("(Not with gemini mcp add, which would cut the value of %s at its `=`: use `write = TRUE`.)",
                            paste(cut, collapse = ", ")))
    } else {
      gemini_env <- if (length(env)) paste("-e", shell_quote(paste0(names(env), "=", env)))
      out <- c(out, "Or run in the project's folder (add --scope user for every project):",
               paste(c("gemini", "mcp", "add", gemini_env, shell_quote(name), command[[1]], "--", command[-1]),
                     collapse = " "))
    }
  }
  if (!isFALSE(session)) out <- c(out, session_next_step(session))
  cat(out, sep = "\n")
  invisible(text)
}

# ---- the session server: the command a client launches to reach a live R
# session (mcp_session() in that session, mcp_session_server() here).

# The environment variable that pins the session server to a session by name.
session_env_var <- "MCPLITE_SESSION"

# `session` of mcp_config() and mcp_check(): FALSE (a script or a command),
# TRUE (the session server, choosing its session) or a session's name (the
# server pinned to it). Exactly one of `script` (or `command`) and `session`.
check_session_choice <- function(script, session, call, command = NULL) {
  ok <- is_flag(session) || is_string(session) && nzchar(session)
  if (!ok) {
    abort_mcplite(sprintf(
      "`session` must be `TRUE` (the session server), a session's name (a non-empty string) or `FALSE`, not %s.",
      describe_value(session)), arg = "session", call = call)
  }
  other <- if (is.null(command)) "`script` (the path of a server script)" else "`script` or `command`"
  given <- !is.null(script) || !is.null(command)
  if (isFALSE(session) && !given) {
    abort_mcplite(sprintf(
      "Give %s, or `session = TRUE` for the server that reaches your live R session (`session = \"<name>\"` pins it to one session).",
      other), arg = "session", call = call)
  }
  if (!isFALSE(session) && given) {
    abort_mcplite(sprintf(
      "Give `session` without %s: with `session` the command is the session server's, Rscript --vanilla -e \"mcplite::mcp_session_server()\".",
      if (is.null(command)) "`script`" else "`script` or `command`"), arg = "session", call = call)
  }
  session
}

# How a client starts the session server: this R installation's Rscript (as
# for a script), --vanilla, and mcp_session_server(); a pinned session goes
# into the environment, after the entries of `env`.
session_launch <- function(session, env, call) {
  if (is.character(session)) {
    given <- env[names(env) == session_env_var]
    if (length(given) && !identical(unname(given), rep(session, length(given)))) {
      abort_mcplite(sprintf(
        "`env` sets %s to %s and `session` names %s: give the session's name once, as `session`.",
        session_env_var, format_scalar(given[[1]]), format_scalar(session)), arg = "env", call = call)
    }
    env <- c(env[names(env) != session_env_var], structure(session, names = session_env_var))
  }
  list(program = rscript_path(), args = c("--vanilla", "-e", "mcplite::mcp_session_server()"),
       env = env)
}

# The default server name: r-session, and the session's name when pinned (so
# entries for several sessions sit side by side), in the characters every
# client accepts.
session_server_name <- function(session) {
  if (!is.character(session)) return("r-session")
  stem <- gsub("^-+|-+$", "", gsub("[^a-z0-9_-]+", "-", tolower(session)))
  if (nzchar(stem)) paste0("r-session-", stem) else "r-session"
}

# What to do in R after configuring the client.
session_next_step <- function(session) {
  sprintf(
    "Then, in the R session to work in, run mcplite::mcp_session(tools%s) with the tools to serve; see vignette(\"live-session\", package = \"mcplite\").",
    if (is.character(session)) paste0(", name = ", encodeString(session, quote = "\"")) else "")
}

# The mcp_config() call that prints a client's snippet, for messages.
config_call <- function(session, client) {
  if (isFALSE(session)) return(sprintf("mcp_config(script, \"%s\")", client))
  sprintf("mcp_config(session = %s, client = \"%s\")",
          if (isTRUE(session)) "TRUE" else encodeString(session, quote = "\""), client)
}

# Each client's words: its name in messages, what its own command accepts as
# a name (checked against `claude mcp add` and `codex mcp add`), and the line
# printed before the snippet. Which clients there are, their file format
# (none: the snippet is a shell command), the key holding the servers and
# their files are the core's (`devtools::config_file::CLIENTS`,
# rust_config_clients()).
config_clients <- list(
  "claude-desktop" = list(
    label = "Claude Desktop",
    where = "Claude Desktop: add to claude_desktop_config.json (Settings > Developer > Edit Config), then restart Claude Desktop:",
    after = "Restart Claude Desktop to load it."
  ),
  "claude-code" = list(
    label = "Claude Code",
    name_chars = "A-Za-z0-9_-", name_rule = "letters, digits, `-` and `_`",
    where = "Claude Code: run in a terminal (add --scope user for every project):"
  ),
  "vscode" = list(
    label = "VS Code",
    where = "VS Code: add to .vscode/mcp.json in the workspace:"
  ),
  "cursor" = list(
    label = "Cursor",
    where = "Cursor: add to .cursor/mcp.json in the project, or ~/.cursor/mcp.json:"
  ),
  "gemini" = list(
    label = "Gemini CLI",
    where = "Gemini CLI: add to .gemini/settings.json in the project, or ~/.gemini/settings.json:"
  ),
  "codex" = list(
    label = "Codex CLI",
    name_chars = "A-Za-z0-9_:@/.-", name_rule = "letters, digits, `-`, `_`, `.`, `:`, `@` and `/`",
    where = "Codex CLI: add to ~/.codex/config.toml:"
  )
)

# `~` as the clients read it (`devtools::config_file::expand_home`), or as R
# does when that variable is unset.
expand_home <- function(path) {
  expanded <- rust_config_expand_home(path)
  if (is.null(expanded)) path.expand(path) else expanded
}

config_toml <- function(key, name, entry) {
  res <- rust_config_merge("", "toml", key, name, entry, "the snippet")
  if (!is.null(res$error)) abort_mcplite(res$error$message, class = "serialize")
  sub("\n$", "", res$value)
}

# Add the entry to the client's file; returns the path written.
config_write <- function(client, spec, name, entry, path, call) {
  if (is.null(path)) {
    res <- rust_config_default_path(client)
    if (!is.null(res$error)) {
      abort_mcplite(sprintf("Cannot find the configuration file of %s: %s. Give the file as `path`.",
                            spec$label, res$error$message), arg = "path", call = call)
    }
    path <- res$value
  } else {
    path <- expand_home(path)
  }
  res <- rust_config_write(path, spec$format, spec$key, name, entry)
  if (!is.null(res$error)) {
    abort_mcplite(paste0(toupper(substring(res$error$message, 1, 1)), substring(res$error$message, 2)),
                  class = c(paste0("config_", res$error$kind), "config"), arg = "path", call = call,
                  path = path)
  }
  done <- res$value
  msg <- sprintf("%s: %s the server \"%s\" in %s.", spec$label,
                 if (isTRUE(done$replaced)) "updated" else "added", name, done$path)
  if (!is.null(done$backup)) msg <- paste(msg, sprintf("The previous file is kept as %s.", done$backup))
  if (!is.null(spec$after)) msg <- paste(msg, spec$after)
  cat(msg, "\n", sep = "")
  done$path
}

config_json <- function(key, name, entry) {
  servers <- structure(list(entry), names = name)
  value <- structure(list(servers), names = key)
  res <- rust_json_pretty(value)
  if (!is.null(res$error)) abort_mcplite(res$error$message, class = "serialize")
  res$value
}

# The default server name: the script's file name, or its directory's when
# the script has a generic name, in lower case with dashes.
server_name <- function(script) {
  stem <- sub("\\.[Rr]$", "", basename(script))
  if (tolower(stem) %in% c("server", "main", "run", "mcp")) stem <- basename(dirname(script))
  stem <- gsub("[^a-z0-9_-]+", "-", tolower(stem))
  stem <- gsub("^-+|-+$", "", stem)
  if (!nzchar(stem)) "r-tools" else stem
}

# Quote for a POSIX shell, or for cmd.exe on Windows, only when needed.
shell_quote <- function(x) {
  type <- if (.Platform$OS.type == "windows") "cmd" else "sh"
  # One by one: shQuote() picks its quotes for the whole vector.
  vapply(x, function(s) if (grepl("^[A-Za-z0-9_./:=@%+,-]+$", s)) s else shQuote(s, type = type), "",
         USE.NAMES = FALSE)
}
