# Live sessions: tools served from the user's interactive R session
# (mcp_session(), this file's first half) to the stdio server a client starts
# (mcp_session_server()). The link between them is in the glue
# (src/rust/src/session/); see src/rust/ARCHITECTURE.md, "Live sessions".

#' Serve tools from your live R session
#'
#' Makes the current interactive R session reachable by MCP clients of the
#' same user: the client starts [mcp_session_server()], which forwards each
#' tool call to this session, where the tool runs on R's main thread with the
#' session's global environment (the data you loaded, the models you fit).
#' `mcp_session()` returns at once and the console stays usable: a call runs
#' only while the console is idle (never inside your own command) and prints
#' one line, `mcplite: <tool> for <client>`. Starting to serve prints one line too
#' (a message: `suppressMessages()` silences it).
#'
#' A server started in a folder picks the session whose working directory it
#' is (the registration follows `setwd()` after each command).
#'
#' Outside an interactive session (Rscript, knitr, `R CMD check`) it does
#' nothing and returns `NULL` invisibly, so it can sit in `.Rprofile`.
#' Calling it again replaces the tools (attached servers learn of the
#' change). Needs the `later` package. Only this OS user can reach the
#' session: a Unix socket in a private directory (`MCPLITE_SESSION_DIR`, else
#' `/tmp/mcplite-<uid>`) and a secret token; on Windows a named pipe that only
#' this user may open, registered in `MCPLITE_SESSION_DIR`, else the folder
#' `mcplite/sessions` in the user's `LOCALAPPDATA`. Windows: compiled and its
#' platform layer checked under wine, but a whole session has not been run
#' there; the guard against prompts does nothing there (a tool that calls
#' `readline()` waits for the console), and cancelling a running call does
#' not interrupt it.
#'
#' @param tools A tool made with [tool()], or a list of tools, as for
#'   [mcp_server()].
#' @param name The session's name, by which a server can pin it
#'   (`MCPLITE_SESSION`); by default the working directory's folder name.
#' @return Invisibly, what [mcp_session_info()] returns; `NULL` when not
#'   interactive.
#' @seealso [mcp_session_server()], [mcp_session_stop()], [mcp_session_info()].
#' @examples
#' if (interactive() && requireNamespace("later", quietly = TRUE)) {
#'   head_rows <- tool(
#'     function(name, n = 5) utils::head(get(name, envir = globalenv()), n),
#'     name = "head_rows",
#'     description = "The first rows of a data frame in the session.",
#'     arguments = list(name = type_string(), n = type_integer())
#'   )
#'   mcp_session(head_rows)
#'   mcp_session_stop()
#' }
#' @export
mcp_session <- function(tools, name = basename(getwd())) {
  if (!interactive()) return(invisible(NULL))
  call <- sys.call()
  if (missing(tools)) {
    abort_mcplite("`tools` is missing; give a tool or a list of tools.",
      class = "tools", arg = "tools", call = call
    )
  }
  specs <- server_specs(tools, call)
  check_string(name, "name", call = call, allow_empty = FALSE)
  opts <- payload_options(call)
  if (!requireNamespace("later", quietly = TRUE)) {
    abort_mcplite(
      "`mcp_session()` needs the later package; install it with install.packages(\"later\").",
      class = "dependency", arg = "later", call = call
    )
  }
  current <- rust_session_info()
  if (!is.null(current) && !identical(current$name, name)) rust_session_stop()
  specs <- lapply(specs, function(spec) {
    fun <- spec[["fun"]]
    spec["formals"] <- list(if (is.primitive(fun)) NULL else as.character(names(formals(fun))))
    spec
  })
  out <- rust_session_start(list(
    specs = specs, name = name, invoke = session_call, dispatch = session_dispatch,
    info = server_identity(), json_opts = opts, helpers = json_helpers()
  ))
  if (!is.null(out[["error"]])) {
    abort_mcplite(paste0("The session cannot be served: ", out[["error"]]),
      class = "session", call = call
    )
  }
  if (is.null(current)) {
    # q() ends serving: the socket and the registration go with the session.
    reg.finalizer(session_exit_hook, function(e) rust_session_stop(), onexit = TRUE)
    # After each top-level command: the registration names the console's
    # working directory now (servers choose the session whose directory is theirs).
    session_cwd_callback()
  }
  # One line, so the user knows the session is reachable and how a client
  # reaches it (message(): suppressMessages() silences it in .Rprofile).
  message(sprintf(
    if (is.null(current)) "mcplite: serving %1$d tool%2$s as session \"%3$s\"; clients start the session server (mcp_config(session = TRUE) prints their entry)."
    else "mcplite: session \"%3$s\" now serves %1$d tool%2$s.",
    length(specs), if (length(specs) == 1) "" else "s", name
  ))
  invisible(out[["value"]])
}

session_cwd_task <- "mcplite-session"

session_cwd_callback <- function() {
  if (session_cwd_task %in% getTaskCallbackNames()) return(invisible())
  addTaskCallback(function(...) {
    if (is.null(rust_session_info())) return(FALSE)
    rust_session_cwd()
    TRUE
  }, name = session_cwd_task)
  invisible()
}

# Kept alive by the namespace; its exit finalizer stops serving.
session_exit_hook <- new.env(parent = emptyenv())

#' Stop serving the live session
#'
#' Ends [mcp_session()]: attached servers see the session end (a call
#' waiting gets a tool error), and the socket and registration file are
#' removed.
#'
#' @return Invisibly, `TRUE` if a session was served.
#' @seealso [mcp_session()]
#' @export
mcp_session_stop <- function() {
  if (session_cwd_task %in% getTaskCallbackNames()) removeTaskCallback(session_cwd_task)
  invisible(rust_session_stop())
}

#' What the live session serves
#'
#' @return `NULL` when [mcp_session()] is not serving; otherwise a list:
#'   `name`, `socket` and `registration` (paths), `tools` (names), `servers`
#'   (servers attached now), `waiting` (calls waiting for the console) and
#'   `revision` (how often the tools were given).
#' @seealso [mcp_session()]
#' @export
mcp_session_info <- function() {
  rust_session_info()
}

# Runs one call's tool for the session, under the console guard
# (R/console-guard.R): no prompts, the console's state put back.
session_call <- function(fun, args, name) {
  session_guarded_call(fun, args, name)
}

# later's callback (through the glue): a call runs only at the console's top
# level. Inside later::run_now() (Shiny, httpuv, promises) or any other R
# code, it looks again a little later.
session_dispatch <- function() {
  if (sys.nframe() > 1L) {
    rust_session_reschedule()
    return(invisible(NULL))
  }
  call <- rust_session_next()
  if (is.null(call)) return(invisible(NULL))
  try(message(sprintf("mcplite: %s for %s", call[["tool"]], call[["client"]])), silent = TRUE)
  rust_session_run()
  invisible(NULL)
}

#' Serve a live R session's tools to an MCP client
#'
#' The command an MCP client starts to reach a session that called
#' [mcp_session()]: `Rscript --vanilla -e "mcplite::mcp_session_server()"`.
#' A stdio MCP server like [mcp_server()] whose tools are those of the
#' chosen session. Choosing: `name` or the environment variable
#' `MCPLITE_SESSION`; else the session whose working directory is the
#' server's; else the only one. With several and no choice, it lists tools
#' that list the sessions and choose one; with none, a tool that says how to
#' start one. A call waits for a busy console up to
#' `MCPLITE_SESSION_BUSY_WAIT` seconds (or `options(mcplite.session.busy_wait)`,
#' default 120), reporting progress, then gets a tool error. A cancelled
#' call that waits never runs; one that runs is interrupted while the tool's
#' own function runs (not on Windows, where the call runs to its end and its
#' answer is dropped).
#'
#' @param name The session to serve, or `NULL` to choose as above.
#' @return `NULL`, invisibly, when the client disconnects.
#' @seealso [mcp_session()]
#' @export
mcp_session_server <- function(name = NULL) {
  call <- sys.call()
  check_string(name, "name", call = call, allow_null = TRUE, allow_empty = FALSE)
  if (is.null(name) && nzchar(Sys.getenv(session_env_var))) name <- Sys.getenv(session_env_var)
  busy <- session_busy_wait(call)
  serve_specs(list(), json_opts = payload_options(call), session = list(name = name, busy_wait = busy),
              info = server_identity("mcplite-session"))
  invisible(NULL)
}

# Seconds a call waits for a busy session: the environment variable, else
# the option, else the glue's default (DEFAULT_BUSY_WAIT_SECS).
session_busy_wait <- function(call = sys.call(-1)) {
  env <- Sys.getenv("MCPLITE_SESSION_BUSY_WAIT")
  value <- if (nzchar(env)) suppressWarnings(as.numeric(env)) else getOption("mcplite.session.busy_wait")
  if (is.null(value)) return(NULL)
  if (!is.numeric(value) || length(value) != 1 || is.na(value) || value < 0) {
    abort_mcplite(
      "The busy wait (MCPLITE_SESSION_BUSY_WAIT or options(mcplite.session.busy_wait)) must be a number of seconds, 0 or more.",
      class = "option", arg = "mcplite.session.busy_wait", call = call
    )
  }
  as.numeric(value)
}
