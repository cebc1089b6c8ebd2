# Runs one tool call on behalf of the Rust core. Errors and interrupts are
# caught here and returned as data; warnings and messages go to stderr at
# once, so nothing a tool signals can reach the protocol stream or unwind
# through Rust.
invoke_tool <- function(fun, args, name) {
  withCallingHandlers(
    tryCatch(
      list(ok = TRUE, value = as_tool_value(tool_closure(fun, args))),
      error = function(e) list(ok = FALSE, message = condition_text(e, name)),
      interrupt = function(e) {
        list(ok = FALSE, message = sprintf("Tool %s was interrupted.", name))
      }
    ),
    warning = tool_warning(name),
    message = tool_message(name)
  )
}

# A tool's warnings and messages go to stderr at once (calling handlers).
tool_warning <- function(name) {
  function(w) {
    cat(sprintf("Warning in tool %s: %s\n", name, condition_text(w, name)),
        file = stderr())
    invokeRestart("muffleWarning")
  }
}

tool_message <- function(name) {
  function(m) {
    cat(condition_text(m, name, trim = FALSE), file = stderr())
    invokeRestart("muffleMessage")
  }
}

# invoke_tool() for a server that runs its tools in this process (the host
# in src/rust/src/host.rs), at a fraction of its cost. The host builds one
# call, serve_tool(tool_run(fun(x = 1, y = 2)), "name"), with the arguments
# in it (no list for do.call()), so `expr` is a promise: the handlers are set
# before the tool runs. No tryCatch() (its R closures took about half of a
# trivial call), and no list(ok, value) to read back: an error or interrupt
# hands its message to the host (rust_tool_failed()), then ends the call
# through R's top-level "abort" restart, which returns to the host's
# R_tryEval() without printing anything; the host answers the message. The
# last restart is the top-level one: a tool's own "abort" restart is skipped.
# Live sessions and traced calls on workers keep invoke_tool(), whose list they
# pass on.
serve_tool <- function(expr, name) {
  withCallingHandlers(
    as_tool_value(expr),
    warning = function(w) tool_warning(name)(w),
    message = function(m) tool_message(name)(m),
    error = function(e) abort_tool(condition_text(e, name)),
    interrupt = function(e) abort_tool(sprintf("Tool %s was interrupted.", name))
  )
}

abort_tool <- function(message) {
  rust_tool_failed(message)
  restarts <- computeRestarts()
  invokeRestart(restarts[[length(restarts)]])
}

# The tool's own call (a promise), as the run a cancellation interrupts (see
# tool_closure()). The host leaves the run again after an error or interrupt
# (which jump over the second .Call), so no on.exit(). The routines are
# called directly: rust_closure_scope()'s R wrapper cost as much again.
tool_run <- function(expr) {
  .Call(wrap__rust_closure_scope, TRUE)
  value <- expr
  .Call(wrap__rust_closure_scope, FALSE)
  value
}

# The tool's own function. In the server process, a cancellation of the call
# interrupts this and nothing else (not the conversion of its value, nor any
# other R code of the server's): see host::closure_scope in the glue.
tool_closure <- function(fun, args) {
  rust_closure_scope(TRUE)
  on.exit(rust_closure_scope(FALSE))
  do.call(fun, args)
}

# The message of a condition as one string, whatever the condition holds.
condition_text <- function(cnd, name, trim = TRUE) {
  msg <- tryCatch(conditionMessage(cnd), error = function(e) NULL)
  msg <- tryCatch(paste(as.character(msg), collapse = "\n"),
                  error = function(e) "")
  if (trim) msg <- sub("\n+$", "", msg)
  if (!nzchar(msg) && trim) msg <- sprintf("Tool %s failed.", name)
  msg
}

# The server's name and version for serverInfo (mcp_server()'s `name` and
# `version`): mcplite and its version unless the script names itself.
server_identity <- function(name = "mcplite", version = NULL) {
  if (is.null(version)) version <- unname(getNamespaceVersion("mcplite"))
  list(name = name, version = version)
}

# Serve already-validated tool specs (see src/rust/ARCHITECTURE.md).
# `workers` is NULL (calls run in this process) or what workers_config()
# returns.
serve_specs <- function(specs, instructions = NULL, json_opts = list(), workers = NULL,
                        info = server_identity(), session = NULL) {
  # If a tool ends R with quit(), R runs exit finalizers: the call in flight
  # still gets its answer.
  exit_hook <- new.env(parent = emptyenv())
  reg.finalizer(exit_hook, function(e) rust_on_exit(), onexit = TRUE)
  # The core checks argument names against the formals, read here so the
  # compiled code needs no access to closures (NULL: a primitive, unchecked).
  specs <- lapply(specs, function(spec) {
    fun <- spec[["fun"]]
    spec["formals"] <- list(if (is.primitive(fun)) NULL else as.character(names(formals(fun))))
    spec
  })
  if (!is.null(workers)) {
    workers <- list(config = workers, start = workers_start, submit = workers_submit,
                    wait = workers_wait, bell = workers_bell, cancel = workers_cancel,
                    stop = workers_stop, link = workers_link, relink = workers_relink,
                    settled = workers_settled)
  }
  out <- rust_serve(list(
    specs = specs, instructions = instructions, json_opts = json_opts,
    invoke = serve_tool, run = tool_run, info = info, helpers = json_helpers(),
    on_start = otel_on_start, workers = workers, session = session
  ))
  if (!is.null(out[["error"]])) {
    stop(structure(
      class = c("mcplite_error_server", "mcplite_error", "error", "condition"),
      list(message = paste0("The MCP server stopped: ", out[["error"]]), call = NULL)
    ))
  }
  invisible(NULL)
}
