#' Print the client configuration for a server script
#'
#' @description
#' `mcp_config()` prints what to add to an MCP client's configuration so that
#' it starts your server script: the JSON snippet for Claude Desktop, VS Code
#' or Cursor, or the command for Claude Code. Paths are absolute (the
#' `Rscript` of the R you are running, and the script), because clients start
#' servers from a directory of their own and without your shell's settings.
#'
#' @details
#' Where each snippet goes:
#'
#' * `"claude-desktop"`: `claude_desktop_config.json` (in Claude Desktop,
#'   Settings, Developer, Edit Config), inside its `mcpServers`; restart
#'   Claude Desktop afterwards.
#' * `"claude-code"`: a shell command that registers the server with Claude
#'   Code (add `--scope user` to make it available in every project).
#' * `"vscode"`: `.vscode/mcp.json` in the workspace (or the user
#'   configuration opened by the command "MCP: Open User Configuration"),
#'   inside its `servers`.
#' * `"cursor"`: `.cursor/mcp.json` in the project or `~/.cursor/mcp.json`,
#'   inside its `mcpServers`.
#'
#' Merge the entry into the file's existing servers if it has some.
#' [mcp_check()] tells you which `env` entries the server needs (for example
#' `R_LIBS` when packages live in a library only your shell knows about) and
#' ends by printing this snippet with them filled in.
#'
#' @param script Path to the server script; it is made absolute.
#' @param client The client: `"claude-desktop"`, `"claude-code"`, `"vscode"`
#'   or `"cursor"`.
#' @param env Environment variables the server needs, as a named character
#'   vector, or `NULL`.
#' @param name The name the client shows for the server; by default made from
#'   the script's file name (or its directory's, for `server.R`).
#'
#' @return The snippet, invisibly, as a single string. It is printed with
#'   [cat()].
#' @seealso [mcp_check()] to check the script as clients start it.
#' @export
#' @examples
#' server <- system.file("examples", "minimal.R", package = "mcplite")
#' mcp_config(server)
#' mcp_config(server, "claude-code", env = c(R_LIBS = "/opt/R/library"))
#' mcp_config(server, "vscode", name = "adder")
mcp_config <- function(script, client = c("claude-desktop", "claude-code", "vscode", "cursor"),
                       env = NULL, name = NULL) {
  call <- sys.call()
  check_string(script, "script", call = call, allow_empty = FALSE)
  if (!is.character(client) || length(client) < 1 || anyNA(client)) {
    abort_mcplite(sprintf("`client` must be one of \"claude-desktop\", \"claude-code\", \"vscode\" or \"cursor\", not %s.",
                          describe_value(client)), arg = "client", call = call)
  }
  client <- client[[1]]
  if (!client %in% c("claude-desktop", "claude-code", "vscode", "cursor")) {
    abort_mcplite(sprintf("`client` must be one of \"claude-desktop\", \"claude-code\", \"vscode\" or \"cursor\", not %s.",
                          describe_value(client)), arg = "client", call = call)
  }
  env <- check_env(env, call)
  if (!file.exists(script)) {
    abort_mcplite(sprintf("`script` must be the path of an existing file; there is no file at %s.",
                          format_scalar(script)), arg = "script", call = call)
  }
  script <- normalizePath(script, winslash = "/")
  if (is.null(name)) name <- server_name(script)
  check_string(name, "name", call = call, allow_empty = FALSE)
  rscript <- normalizePath(rscript_path(), winslash = "/", mustWork = FALSE)
  args <- c("--vanilla", script)

  entry <- list(command = rscript, args = I(args))
  if (length(env)) entry$env <- as.list(env)
  text <- switch(client,
    "claude-desktop" = config_json("mcpServers", name, entry),
    "cursor" = config_json("mcpServers", name, entry),
    "vscode" = config_json("servers", name, c(list(type = "stdio"), entry)),
    "claude-code" = paste(c(
      "claude", "mcp", "add", "--transport", "stdio",
      if (length(env)) paste("--env", shell_quote(paste0(names(env), "=", env))),
      shell_quote(name), "--", shell_quote(rscript), shell_quote(args)
    ), collapse = " ")
  )
  where <- switch(client,
    "claude-desktop" = "Claude Desktop: add to claude_desktop_config.json (Settings > Developer > Edit Config), then restart Claude Desktop:",
    "cursor" = "Cursor: add to .cursor/mcp.json in the project, or ~/.cursor/mcp.json:",
    "vscode" = "VS Code: add to .vscode/mcp.json in the workspace:",
    "claude-code" = "Claude Code: run in a terminal (add --scope user for every project):"
  )
  cat(where, "\n", text, "\n", sep = "")
  invisible(text)
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
  plain <- grepl("^[A-Za-z0-9_./:=@%+,-]+$", x)
  type <- if (.Platform$OS.type == "windows") "cmd" else "sh"
  ifelse(plain, x, shQuote(x, type = type))
}
