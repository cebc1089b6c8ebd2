# mcp_client(): an MCP client in R. The protocol work (child process, pipes,
# JSON-RPC, handshake, timeouts, reaping) is done by the Rust core
# (src/rust/devtools/src/client.rs); this file builds the R object around it.

#' Talk to an MCP server from R, as a client does
#'
#' @description
#' `mcp_client()` starts an MCP server as a child process and talks to it
#' over its standard input and output, the way Claude Desktop, VS Code and
#' other clients do. Use it to try your tools while you write them, to test a
#' server with testthat, or to drive any stdio MCP server from R.
#'
#' `local_mcp_client()` does the same and closes the client when the calling
#' function (or test) ends, so the server never outlives a test.
#'
#' @details
#' ## Starting a server
#' `mcp_client("server.R")` runs the script with the `Rscript` of the R you
#' are using, with `--vanilla`, as clients are told to. For any other program
#' give `command` and `args` instead. The server inherits this session's
#' environment variables plus `env`, and starts in `cwd` (by default the
#' current directory). Clients start servers with a much smaller environment
#' and from another directory: [mcp_check()] reproduces that.
#'
#' ## Protocol versions
#' `protocol` picks one of the versions mcplite speaks. For
#' `r protocol_versions_text("legacy", final = "and")`
#' the client opens with the
#' `initialize` handshake (then `notifications/initialized`) and accepts
#' another of those versions if the server chooses one. For
#' `r protocol_versions_text("modern")`
#' there is no handshake: every request carries the version, empty client
#' capabilities and the client's name in `params._meta`, and the client
#' starts with `server/discover`.
#'
#' The default is the newest handshake version, `r latest_legacy_version()`,
#' because every MCP server in use today speaks the handshake versions, while
#' the newer ones need a server that knows them (mcplite servers do: choose
#' one to see what newer clients see).
#'
#' ## What comes back
#' Answers, notifications and progress are R lists as the JSON arrived:
#' objects become named lists and arrays unnamed lists (never simplified to
#' vectors), as tool arguments reach tools. A tool that fails gives a result with `isError = TRUE`, not an R
#' error. R errors, all of class `mcplite_error_client` (and `mcplite_error`),
#' are raised when the exchange itself fails:
#'
#' * `mcplite_error_client_rpc`: the server answered with a JSON-RPC error
#'   (an unknown tool, a method it lacks); the condition carries `code` and
#'   `data`.
#' * `mcplite_error_client_exited`: the server exited; the condition carries
#'   its exit `status` and everything it wrote to standard error (`stderr`),
#'   and the message shows the last lines.
#' * `mcplite_error_client_timeout`: no answer within `timeout` seconds. The
#'   request is cancelled (`notifications/cancelled`) and the client can go on.
#' * `mcplite_error_client_start`: the program could not be started.
#' * `mcplite_error_client_protocol`: a broken handshake, a version this
#'   client does not speak, or an answer the client cannot use. The wait ends
#'   as soon as such an answer arrives, and the message says what is wrong
#'   with it: not valid UTF-8, nested deeper than 1023 levels, both a result
#'   and an error (or neither), no `"jsonrpc": "2.0"`, or a string holding a
#'   NUL character (`\u0000`), which R cannot hold.
#' * `mcplite_error_client_closed`: the client was closed (for a
#'   `$call_async()` handle: before its answer arrived).
#' * `mcplite_error_client_cancelled`: a `$call_async()` call was cancelled
#'   by its handle's `$cancel()` or by an interrupted `$wait()`.
#' * `mcplite_error_client_output`: a `$call()` result that clients built on
#'   the official SDKs reject (see "What is checked").
#'
#' Every error a server can cause is one of these; mistakes in the arguments
#' you pass are errors of class `mcplite_error_argument`. Answers are read
#' with the same JSON reader mcplite servers use for what clients send: a
#' number too large for a double (`1e400`) is `Inf`, and nesting up to 1023
#' levels (mcplite servers send up to 512) is read.
#'
#' ## Waiting and interrupting
#' Every wait (for an answer, or for the server to exit in `$close()`) can be
#' interrupted with Ctrl-C (Escape in RStudio), whatever the `timeout`,
#' including `Inf`. An interrupted request is cancelled and the client stays
#' usable; an interrupted `$close()` kills the server at once.
#'
#' ## Processes the server starts
#' On Unix-alikes the server runs in a process group of its own: Ctrl-C at
#' the R console reaches R and not the server, and closing the client ends
#' the whole group, so processes the server started in the background (and
#' that would keep its output open) do not outlive it. On Windows this is not
#' done yet: background processes of a server may outlive it there.
#'
#' ## Memory
#' What the client keeps besides answers is bounded in bytes: the server's
#' standard error (the last 1 MB), notifications, server requests, unmatched
#' answers and stray output lines (the most recent 1 MB of each; a stray line
#' is cut at 64 KB, with a note of how much followed), output read ahead of
#' an answer (1 MB plus one line) and the transcript (8 MB).
#'
#' The client declares no capabilities. A request the server sends (sampling,
#' roots, elicitation) is answered with a "method not found" error (-32601);
#' notifications it sends (logging, progress) are kept for
#' `$notifications()`.
#'
#' ## What is checked
#' The official SDK clients (the TypeScript SDK's `Client.callTool()`, which
#' the MCP Inspector and many clients use) refuse a `tools/call` result when
#' the tool declares an `outputSchema` in the last `tools/list` and the
#' result, unless it is a tool error, has no `structuredContent` or has one
#' that does not validate against that schema. `$call()` checks the same:
#' after `$tools()`, such a result raises `mcplite_error_client_output`,
#' whose message gives each JSON path that fails and why. Like the SDK, the
#' client does not check arguments against input schemas, and checks
#' nothing before the first `$tools()`. `mcplite` servers never check a
#' tool's output against its schema (authors own that), so this is where a
#' mismatch shows up before a real client refuses it.
#'
#' ## The client object
#' A client is an environment with these functions and fields:
#'
#' * `$tools(timeout)`: the tools the server lists (all pages), a list of
#'   tool definitions.
#' * `$call(name, arguments = list(), timeout, progress = NULL)`: call a
#'   tool; `arguments` is a named list. Returns the result: `content` (a list
#'   of content blocks), and when present `structuredContent` and `isError`.
#'   With `progress = TRUE` or a function, the request asks for progress (it
#'   carries a progress token) and the notifications the server sends for it
#'   are recorded; a function is called with `progress`, `total` and
#'   `message` (`NULL` when absent) for each one, as it arrives, while the
#'   call waits (an error in it abandons the call).
#' * `$call_async(name, arguments = list(), timeout, progress = NULL)`:
#'   send a `tools/call` and return at once with a handle (see "Calls in
#'   flight at once").
#' * `$progress()`: the progress notifications the last `$call()` that asked
#'   for progress received, in order: a list of their `params` (`progress`,
#'   and when sent `total`, `message`, and the `progressToken`).
#' * `$request(method, params = NULL, timeout)`: any request; returns the
#'   result.
#' * `$notify(method, params = NULL)`: send a notification.
#' * `$notifications(clear = FALSE)`: the notifications received so far.
#' * `$stderr()`: what the server has written to standard error so far, as a
#'   character vector of lines.
#' * `$transcript()`: with `transcript = TRUE`, every line sent (marked
#'   `->`) and received (`<-`) since the previous call, in order, as a
#'   character vector.
#' * `$is_alive()`: whether the server process is running.
#' * `$close(grace = 5)`: close the server's input, wait up to `grace`
#'   seconds for it to exit, kill it if it has not, and return its exit
#'   status invisibly. Closing twice is harmless.
#' * `$protocol`, `$server_info`, `$capabilities`, `$instructions`, `$pid`:
#'   what the handshake settled.
#'
#' ## Calls in flight at once
#' `$call()` waits for its answer. To have several calls in flight, for
#' example to test that a slow tool on workers (`mcp_server(workers = )`)
#' leaves the others answering, start them with `$call_async()`, which
#' takes the arguments of `$call()`, sends the request and returns a handle
#' (of class `mcplite_call`) without waiting. Answers are matched to their
#' handles by request id, in whatever order they arrive, whichever wait
#' reads them. A handle has:
#'
#' * `$wait(timeout = NULL)`: wait for the answer and return what `$call()`
#'   would: the same result, the same checks (see "What is checked") and the
#'   same errors. The call's own `timeout` (given to `$call_async()`) counts
#'   from when it was sent; a `timeout` here limits this wait. When either
#'   passes, the call is cancelled and `mcplite_error_client_timeout` raised.
#'   An interrupted wait cancels the call too. Once the call has ended,
#'   `$wait()` returns its result (or raises its error) again at once.
#' * `$done()`: whether the call has ended (answered, failed or cancelled),
#'   reading what has arrived without waiting.
#' * `$cancel()`: cancel the call (`notifications/cancelled`; its late
#'   answer is dropped); `$wait()` then raises
#'   `mcplite_error_client_cancelled`. Returns `TRUE` invisibly if the call
#'   was still in flight.
#' * `$progress()`: the progress notifications received for this call (with
#'   `progress = TRUE` or a function).
#'
#' The client stays usable meanwhile: `$call()`, `$tools()` and the other
#' methods work while calls are in flight. A progress function of an async
#' call is called in this R session, never from another thread, whenever the
#' session waits for the server: in any handle's `$wait()` or `$done()`, and
#' in `$call()`, `$tools()` and `$request()`. An error in it cancels its call,
#' and that call's `$wait()` raises the error. Once the client is closed, a
#' call whose answer had not arrived fails with `mcplite_error_client_closed`.
#'
#' The server is always stopped and reaped: by `$close()`, by
#' `local_mcp_client()` when its frame ends, or at the latest when the client
#' is garbage collected.
#'
#' @param script Path to an R script that ends with [mcp_server()].
#' @param command,args Instead of `script`: the program to run and its
#'   arguments (a character vector).
#' @param env Environment variables for the server, as a named character
#'   vector, added to those of this session.
#' @param cwd The server's working directory; `NULL` for the current one.
#' @param protocol The protocol version, one of
#'   `r protocol_versions_text(quote = TRUE)`;
#'   `NULL` (the default) for the newest handshake version,
#'   `r latest_legacy_version()`.
#' @param timeout Seconds to wait for each answer, including the first;
#'   `Inf` waits as long as it takes. Each method takes its own `timeout` too.
#' @param client_info The name and version the client announces, as a list.
#' @param transcript Keep every line sent and received, for `$transcript()`.
#' @param check_output Check each `$call()` result as the official SDK
#'   clients do (see "What is checked"); `FALSE` takes results as they come.
#' @param .local_envir The frame whose end closes the client.
#' @param ... Arguments passed on to `mcp_client()`.
#'
#' @return An object of class `mcplite_client`.
#' @seealso [mcp_check()] to check a server the way clients start it.
#' @export
#' @examples
#' # A server script of your own; here, a copy of the package's example.
#' example <- system.file("examples", "minimal.R", package = "mcplite")
#' server <- file.path(tempdir(), "minimal.R")
#' invisible(file.copy(example, server))
#' client <- mcp_client(server)
#' client
#' vapply(client$tools(), function(t) t$name, "")
#' client$call("add", list(a = 1, b = 2))$content[[1]]$text
#' client$close()
mcp_client <- function(script = NULL, command = NULL, args = character(),
                       env = NULL, cwd = NULL, protocol = NULL,
                       timeout = 30, client_info = NULL, transcript = FALSE,
                       check_output = TRUE) {
  call <- sys.call()
  launch <- client_launch(script, command, args, call)
  env <- check_env(env, call)
  if (!is.null(cwd)) {
    check_string(cwd, "cwd", call = call)
    if (!dir.exists(cwd)) {
      abort_mcplite(sprintf("`cwd` must be an existing directory; %s is not.", format_scalar(cwd)),
                    arg = "cwd", call = call)
    }
  }
  protocol <- check_protocol(protocol, call)
  timeout <- check_timeout(timeout, call = call)
  if (is.null(client_info)) {
    client_info <- list(name = "mcplite", version = getNamespaceVersion("mcplite")[[1]])
  }
  client_info <- check_named_list(client_info, "client_info", call = call)
  check_flag(transcript, "transcript", call = call)
  check_flag(check_output, "check_output", call = call)
  client_start(launch, env, clear_env = FALSE, cwd = cwd, protocol = protocol,
               timeout = timeout, client_info = client_info, call = call,
               transcript = transcript, check_output = check_output)
}

#' @rdname mcp_client
#' @export
local_mcp_client <- function(..., .local_envir = parent.frame()) {
  client <- mcp_client(...)
  cleanup <- bquote(.(client)$close())
  do.call(base::on.exit, list(cleanup, TRUE, FALSE), envir = .local_envir)
  client
}

rscript_path <- function() {
  file.path(R.home("bin"), if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript")
}

client_launch <- function(script, command, args, call) {
  if (is.null(script) == is.null(command)) {
    abort_mcplite("Give either `script` (an R script) or `command` (a program), not both or neither.",
                  arg = "script", call = call)
  }
  if (!is.character(args) || anyNA(args)) {
    abort_mcplite(sprintf("`args` must be a character vector, not %s.", describe_value(args)),
                  arg = "args", call = call)
  }
  if (!is.null(script)) {
    check_string(script, "script", call = call, allow_empty = FALSE)
    if (!file.exists(script) || dir.exists(script)) {
      abort_mcplite(sprintf("`script` must be the path of an R script; there is no file at %s.",
                            format_scalar(script)), arg = "script", call = call)
    }
    script <- normalizePath(script)
    return(list(program = rscript_path(), args = c("--vanilla", script, args)))
  }
  check_string(command, "command", call = call, allow_empty = FALSE)
  list(program = command, args = args)
}

check_env <- function(env, call) {
  if (is.null(env)) return(character())
  ok <- is.character(env) && !anyNA(env) && !is.null(names(env)) &&
    !anyNA(names(env)) && all(nzchar(names(env)))
  if (!ok) {
    abort_mcplite(sprintf(
      "`env` must be a named character vector such as `c(R_LIBS = \"/path/to/library\")`, not %s.",
      describe_value(env)
    ), arg = "env", call = call)
  }
  env
}

check_protocol <- function(protocol, call) {
  if (is.null(protocol)) return(latest_legacy_version())
  served <- protocol_versions()$id
  if (!is_string(protocol) || !protocol %in% served) {
    abort_mcplite(sprintf(
      "`protocol` must be one of %s (or NULL), not %s.",
      paste0("\"", served, "\"", collapse = ", "), describe_value(protocol)
    ), arg = "protocol", call = call)
  }
  protocol
}

check_timeout <- function(timeout, arg = "timeout", call) {
  if (!is.numeric(timeout) || length(timeout) != 1 || is.na(timeout) || timeout <= 0) {
    abort_mcplite(sprintf("`%s` must be a positive number of seconds, not %s.", arg, describe_value(timeout)),
                  arg = arg, call = call)
  }
  as.double(timeout)
}

# Unwrap list(value, error) from a client entry point, raising the classed
# condition on error. `what` says what was being done, for the message.
# A string the client sends as UTF-8 (the rule every entry point that sends
# text follows: src/rust/src/rstring.rs), so that messages can show it too;
# one that cannot be text (a "bytes" string that is not UTF-8) is an error.
protocol_text <- function(x, arg, call) {
  res <- rust_protocol_text(x, arg)
  if (!is.null(res$error)) abort_mcplite(paste0(capitalize(res$error), "."), arg = arg, call = call)
  res$value
}

client_value <- function(res, what, call) {
  if (is.null(res$error)) return(res$value)
  client_abort(res$error, what, call)
}

client_abort <- function(err, what, call) {
  kind <- err$kind
  if (identical(kind, "invalid")) {
    abort_mcplite(paste0(capitalize(err$message), "."), call = call)
  }
  stderr <- if (is.null(err$stderr)) character() else split_lines(err$stderr)
  class <- switch(kind,
    rpc = "client_rpc", exited = "client_exited", timeout = "client_timeout",
    spawn = "client_start", closed = "client_closed", output = "client_output", "client_protocol"
  )
  message <- switch(kind,
    rpc = sprintf("The server answered %s with error %s: %s", what, format(err$code), err$message),
    exited = paste0(
      sprintf("The server exited before answering %s", what),
      if (!is.null(err$status)) sprintf(" (exit status %d)", err$status), ".",
      stderr_tail(stderr)
    ),
    timeout = sprintf("The server did not answer %s within %s seconds; the request was cancelled.",
                      what, format(err$seconds)),
    spawn = sprintf("Cannot start the server: %s.", sub("^cannot start the server: ", "", err$message)),
    closed = sprintf("Cannot send %s: the client is closed.", what),
    output = sprintf("Clients built on the official MCP SDKs reject the answer to %s: %s.", what, err$message),
    sprintf("The server broke the protocol during %s: %s.", what, err$message)
  )
  abort_mcplite(message, class = c(class, "client"), call = call,
                code = err$code, data = err$data, status = err$status, stderr = stderr)
}

stderr_tail <- function(lines, n = 20) {
  lines <- lines[nzchar(trimws(lines))]
  if (!length(lines)) return("\nIt wrote nothing to standard error.")
  shown <- lines[max(1, length(lines) - n + 1):length(lines)]
  head <- if (length(lines) > n) sprintf("\nThe last %d lines it wrote to standard error:", n) else
    "\nIt wrote to standard error:"
  paste0(head, "\n", paste0("  ", shown, collapse = "\n"))
}

split_lines <- function(text) {
  if (!nzchar(text)) return(character())
  strsplit(sub("\n$", "", text), "\r?\n")[[1]]
}

capitalize <- function(x) paste0(toupper(substr(x, 1, 1)), substr(x, 2, nchar(x)))

# Waits are made of slices this long (seconds): R checks for an interrupt
# between them.
wait_slice <- 0.1

# Let R act on a pending interrupt now: R's evaluator looks only every so
# many evaluations, which a loop of slices would take seconds to reach;
# Sys.sleep() looks at once.
check_interrupt <- function() Sys.sleep(0)

# Finish the operation a rust_client_begin_*() call started, one slice at a
# time, so that an interrupt (Ctrl-C) ends the wait at once. An interrupted
# wait abandons the request (the server is told it is cancelled) and leaves
# the client usable. Returns list(value, error) as the entry points do.
client_wait <- function(ptr, begun, each_slice = NULL) {
  if (!is.null(begun$error)) return(begun)
  done <- FALSE
  on.exit(if (!done) rust_client_abandon(ptr))
  repeat {
    res <- rust_client_step(ptr, wait_slice)
    if (!is.null(each_slice)) each_slice()
    if (!isTRUE(res$pending)) break
    check_interrupt()
  }
  done <- TRUE
  res
}

client_open <- function(ptr, timeout) client_wait(ptr, rust_client_begin_open(ptr, timeout))

# Close the server's input, give it `grace` seconds to exit (in slices),
# then kill it and its process group. Interrupted, it is killed at once, so
# the client is never left half-closed. Returns list(code, exit).
client_close <- function(ptr, grace) {
  done <- FALSE
  on.exit(if (!done) rust_client_close_step(ptr, 0, TRUE))
  deadline <- Sys.time() + grace
  repeat {
    left <- as.numeric(deadline - Sys.time(), units = "secs")
    res <- rust_client_close_step(ptr, max(0, min(wait_slice, left)), left <= 0)
    if (is.null(res$value) || isTRUE(res$value$done)) break
    check_interrupt()
  }
  done <- TRUE
  res$value$status
}

# `$call(progress = )`: NULL (no progress asked for), TRUE (asked for and
# recorded), FALSE (as NULL) or a function called with each notification.
check_progress_callback <- function(progress, call) {
  if (is.null(progress) || identical(progress, FALSE)) return(NULL)
  if (identical(progress, TRUE) || is.function(progress)) return(progress)
  abort_mcplite(
    sprintf("`progress` must be NULL, TRUE, FALSE or a function(progress, total, message), not %s.",
            describe_value(progress)),
    arg = "progress", call = call
  )
}

# Start and open a client; on a failed handshake the child is stopped before
# the error is raised.
client_start <- function(launch, env, clear_env, cwd, protocol, timeout, client_info, call,
                         transcript = FALSE, check_output = TRUE) {
  ptr <- client_value(
    rust_client_spawn(launch$program, launch$args, env, clear_env, cwd, protocol, client_info),
    "the start", call
  )
  started <- FALSE
  on.exit(if (!started) rust_client_close_step(ptr, 0, TRUE))
  if (transcript) rust_client_transcript(ptr, TRUE)
  if (!check_output) rust_client_check_output(ptr, FALSE)
  what <- if (is_modern_version(protocol)) "server/discover" else "initialize"
  opened <- client_open(ptr, timeout)
  if (!is.null(opened$error)) {
    client_close(ptr, 1)
    started <- TRUE
    client_abort(opened$error, what, call)
  }
  started <- TRUE
  new_client(ptr, opened$value, launch, timeout)
}

new_client <- function(ptr, opened, launch, timeout) {
  state <- rust_client_state(ptr)$value
  self <- new.env(parent = emptyenv())
  self$protocol <- state$protocol
  self$pid <- as.integer(state$pid)
  self$command <- c(launch$program, launch$args)
  self$server_info <- state$server_info
  self$capabilities <- opened$capabilities
  self$instructions <- opened$instructions
  default_timeout <- timeout

  resolve <- function(timeout, call) {
    if (is.null(timeout)) default_timeout else check_timeout(timeout, call = call)
  }
  self$tools <- function(timeout = NULL) {
    call <- sys.call()
    timeout <- resolve(timeout, call)
    client_value(client_wait(ptr, rust_client_begin_list_tools(ptr, timeout), run_async_progress),
                 "tools/list", call)
  }
  # Calls of $call_async() not yet ended, by id: the state of their handles.
  # Every wait hands them their progress (see async_progress()).
  in_flight <- new.env(parent = emptyenv())
  run_async_progress <- function() async_progress(ptr, in_flight)
  # The checked arguments of $call() and $call_async().
  call_args <- function(name, arguments, timeout, progress, call) {
    check_string(name, "name", call = call)
    name <- protocol_text(name, "name", call)
    list(name = name, arguments = check_named_list(arguments, "arguments", call = call),
         what = sprintf("tools/call (%s)", name), timeout = resolve(timeout, call),
         on_progress = check_progress_callback(progress, call))
  }
  self$call <- function(name, arguments = list(), timeout = NULL, progress = NULL) {
    call <- sys.call()
    a <- call_args(name, arguments, timeout, progress, call)
    on_progress <- a$on_progress
    begun <- rust_client_begin_call_tool(ptr, a$name, a$arguments, a$timeout, !is.null(on_progress))
    each_slice <- function() {
      if (is.function(on_progress)) {
        for (p in rust_client_progress(ptr, TRUE)$value) {
          on_progress(progress = p$progress, total = p$total, message = p$message)
        }
      }
      run_async_progress()
    }
    client_value(client_wait(ptr, begun, each_slice), a$what, call)
  }
  self$call_async <- function(name, arguments = list(), timeout = NULL, progress = NULL) {
    call <- sys.call()
    a <- call_args(name, arguments, timeout, progress, call)
    begun <- rust_client_begin_call_async(ptr, a$name, a$arguments, a$timeout, !is.null(a$on_progress))
    state <- new.env(parent = emptyenv())
    state$id <- client_value(begun, a$what, call)
    state$what <- a$what
    state$on_progress <- a$on_progress
    state$progress <- list()
    state$status <- "pending"
    assign(async_key(state$id), state, envir = in_flight)
    new_call_handle(ptr, state, in_flight, a$name)
  }
  self$progress <- function() rust_client_progress(ptr, FALSE)$value
  self$request <- function(method, params = NULL, timeout = NULL) {
    call <- sys.call()
    check_string(method, "method", call = call)
    method <- protocol_text(method, "method", call)
    if (!is.null(params)) params <- check_named_list(params, "params", call = call)
    timeout <- resolve(timeout, call)
    client_value(client_wait(ptr, rust_client_begin_request(ptr, method, params, timeout), run_async_progress),
                 method, call)
  }
  self$notify <- function(method, params = NULL) {
    call <- sys.call()
    check_string(method, "method", call = call)
    method <- protocol_text(method, "method", call)
    if (!is.null(params)) params <- check_named_list(params, "params", call = call)
    invisible(client_value(rust_client_notify(ptr, method, params), method, call))
  }
  self$notifications <- function(clear = FALSE) {
    check_flag(clear, "clear", call = sys.call())
    rust_client_notifications(ptr, clear)$value
  }
  self$stderr <- function() split_lines(rust_client_stderr(ptr)$value)
  self$transcript <- function() rust_client_transcript(ptr, NA)$value
  self$is_alive <- function() isTRUE(rust_client_state(ptr)$value$alive)
  self$close <- function(grace = 5) {
    grace <- check_timeout(grace, "grace", call = sys.call())
    invisible(client_close(ptr, grace)$code)
  }
  # For mcp_check(): the raw state (stray stdout lines, timing, ...).
  self$.state <- function() rust_client_state(ptr)$value
  lockEnvironment(self, bindings = TRUE)
  class(self) <- "mcplite_client"
  self
}

#' @export
print.mcplite_client <- function(x, ...) {
  state <- x$.state()
  info <- x$server_info
  who <- if (is.null(info$name)) "an MCP server" else paste(c(info$name, info$version), collapse = " ")
  status <- if (isTRUE(state$alive)) "running" else if (is.null(state$exit)) "stopped" else state$exit
  cat("<mcplite client> ", who, ", protocol ", x$protocol, "\n", sep = "")
  cat("  command: ", paste(x$command, collapse = " "), "\n", sep = "")
  cat("  process: ", x$pid, " (", status, ")\n", sep = "")
  cat("  $tools() $call(name, arguments, progress) $call_async(...) $request(method, params)\n",
      "  $notify(method, params) $notifications() $progress() $stderr() $transcript()\n",
      "  $is_alive() $close()\n", sep = "")
  invisible(x)
}

# ---- Calls in flight at once ($call_async()) ------------------------------
#
# A handle's state is an environment: `id`, `what` ("tools/call (name)"),
# `on_progress`, `progress` (the params received so far), `status`
# ("pending", "done" or "failed") and then `value` or `error`. While pending
# it is also in the client's `in_flight`, under async_key(id).

async_key <- function(id) sprintf("%.0f", id)

# The call is over: keep its value or condition, forget it as in flight.
async_settle <- function(state, in_flight, value = NULL, error = NULL) {
  state$status <- if (is.null(error)) "done" else "failed"
  state$value <- value
  state$error <- error
  key <- async_key(state$id)
  if (exists(key, envir = in_flight, inherits = FALSE)) rm(list = key, envir = in_flight)
}

# The condition client_abort() would raise.
client_condition <- function(err, what, call) {
  tryCatch(client_abort(err, what, call), mcplite_error = function(e) e)
}

# Cancel a call in flight (notifications/cancelled); it ends with
# `mcplite_error_client_cancelled`, saying `why`.
async_cancel <- function(ptr, state, in_flight, why, call) {
  rust_client_async_cancel(ptr, state$id)
  cnd <- tryCatch(
    abort_mcplite(sprintf("The request %s was cancelled: %s.", state$what, why),
                  class = c("client_cancelled", "client"), call = call),
    mcplite_error = function(e) e
  )
  async_settle(state, in_flight, error = cnd)
}

# Hand the progress that arrived for calls in flight to their handles, and
# call their callbacks (here, in the R session that waits). An error in a
# callback cancels its call, whose $wait() then raises it.
async_progress <- function(ptr, in_flight) {
  for (item in rust_client_async_progress(ptr)$value) {
    state <- in_flight[[async_key(item$id)]]
    if (is.null(state)) next
    p <- item$params
    state$progress[[length(state$progress) + 1]] <- p
    if (is.function(state$on_progress)) {
      tryCatch(
        state$on_progress(progress = p$progress, total = p$total, message = p$message),
        error = function(e) {
          rust_client_async_cancel(ptr, state$id)
          async_settle(state, in_flight, error = e)
        }
      )
    }
  }
}

# Wait at most `slice` seconds for a call in flight, then hand out progress.
async_step <- function(ptr, state, in_flight, slice, call) {
  res <- rust_client_async_step(ptr, state$id, slice)
  async_progress(ptr, in_flight)
  if (state$status != "pending" || isTRUE(res$pending)) return(invisible())
  if (is.null(res$error)) return(async_settle(state, in_flight, value = res$value))
  err <- res$error
  cnd <- if (identical(err$kind, "closed")) {
    tryCatch(abort_mcplite(sprintf("Cannot wait for %s: the client was closed before it answered.", state$what),
                           class = c("client_closed", "client"), call = call),
             mcplite_error = function(e) e)
  } else {
    client_condition(err, state$what, call)
  }
  async_settle(state, in_flight, error = cnd)
}

# Wait for a call in flight, in slices (interruptible: an interrupted wait
# cancels the call), at most `timeout` seconds (NULL: until its own timeout).
async_wait <- function(ptr, state, in_flight, timeout, call) {
  finished <- FALSE
  on.exit(if (!finished && state$status == "pending") {
    async_cancel(ptr, state, in_flight, "the wait for it was interrupted", call)
  })
  deadline <- as.numeric(Sys.time()) + if (is.null(timeout)) Inf else timeout
  repeat {
    left <- deadline - as.numeric(Sys.time())
    if (left <= 0) {
      rust_client_async_cancel(ptr, state$id)
      async_settle(state, in_flight, error = client_condition(list(kind = "timeout", seconds = timeout),
                                                              state$what, call))
      break
    }
    async_step(ptr, state, in_flight, min(wait_slice, left), call)
    if (state$status != "pending") break
    check_interrupt()
  }
  finished <- TRUE
}

new_call_handle <- function(ptr, state, in_flight, name) {
  self <- new.env(parent = emptyenv())
  self$name <- name
  self$wait <- function(timeout = NULL) {
    call <- sys.call()
    if (!is.null(timeout)) timeout <- check_timeout(timeout, call = call)
    if (state$status == "pending") async_wait(ptr, state, in_flight, timeout, call)
    if (state$status == "failed") {
      err <- state$error
      # Its own errors name this wait; an author's callback error stays as it was.
      if (inherits(err, "mcplite_error_client")) err$call <- as.call(list(call[[1]]))
      stop(err)
    }
    state$value
  }
  self$done <- function() {
    if (state$status == "pending") async_step(ptr, state, in_flight, 0, sys.call())
    state$status != "pending"
  }
  self$cancel <- function() {
    pending <- state$status == "pending"
    if (pending) async_cancel(ptr, state, in_flight, "`$cancel()` was called", sys.call())
    invisible(pending)
  }
  self$progress <- function() state$progress
  self$.state <- function() state$status
  lockEnvironment(self, bindings = TRUE)
  class(self) <- "mcplite_call"
  self
}

#' @export
print.mcplite_call <- function(x, ...) {
  cat("<mcplite call> tools/call (", x$name, "): ", x$.state(), "\n", sep = "")
  cat("  $wait(timeout) $done() $cancel() $progress()\n")
  invisible(x)
}
