# The console guard: how a tool runs in the user's live, interactive R
# session (mcp_session()) without hanging the console or changing its state.
#
# The link calls session_guarded_call() on R's main thread, at top level,
# while the console is idle. For the length of the call:
#
# * Reads from the console fail with an R error, so the tool gets a tool
#   error instead of waiting for the user: readline(), menu(), askYesNo(),
#   browser() (and options(error = recover), whose menu reads the console),
#   scan() and readLines() on the console, file.choose(), a mirror prompt of
#   install.packages() / chooseCRANmirror(). Every such read goes through the
#   front end's ReadConsole, which src/console.c swaps (R's Unix interface,
#   Rinterface.h; terminal R, RStudio and Positron set it). The call is then
#   a tool error, also when the tool caught the read's error. Windows front
#   ends fix their reader at start-up: there these reads are not guarded.
# * Descriptor 0 reads the null device (Unix), so file("stdin") sees end of
#   file instead of reading the terminal the console reads.
# * options(menu.graphics = FALSE) keeps menu() from opening a dialog (which
#   nothing would answer), and options(error = NULL) keeps an error handler
#   the user set (recover, browser) out of the tool's errors.
#
# Afterwards the console's state is as it was, also when the tool fails or
# is interrupted: the output and message sinks (sinks the tool left open are
# closed), the graphics devices (devices the tool opened are closed, the
# current device is current again), last.warning, and the options the guard
# sets plus options(warn). .Last.value needs nothing: only a read-eval loop
# writes it (the binding is locked), and the only one a tool could start,
# browser()'s, is refused its input. What the tool does on purpose
# stays: objects it assigns, packages it attaches, random numbers it draws
# (.Random.seed), files it writes, other options it sets.
#
# Same return value as invoke_tool(): list(ok = TRUE, value) or
# list(ok = FALSE, message).
session_guarded_call <- function(fun, args, name) {
  state <- console_state()
  on.exit(console_restore(state), add = TRUE)
  entered <- rust_console_guard(TRUE)
  # A nested guarded call (a tool that calls another) finds the guard on
  # already and leaves it on.
  guarded <- is.null(entered[["error"]]) && any(entered[["value"]])
  if (guarded) on.exit(rust_console_guard(FALSE), add = TRUE, after = FALSE)
  options(menu.graphics = FALSE, error = NULL)
  res <- invoke_tool(fun, args, name)
  if (guarded) {
    # A read the tool caught (try(readline())), or a browser() left at its
    # end of input, still makes the call an error: the tool wanted the user.
    if (rust_console_guard(FALSE)[["refused"]] > 0) {
      res <- list(ok = FALSE, message = console_read_message(name))
    }
  }
  res
}

console_read_message <- function(name) {
  sprintf(paste(
    "Tool %s asked for input at the R console (readline(), menu(), browser(), scan(), a prompt of",
    "install.packages(), ...): a tool called by an MCP client runs while nobody is at the console,",
    "so it cannot ask the user. Give the tool everything it needs as arguments."
  ), name)
}

# What console_restore() puts back.
console_state <- function() {
  base <- baseenv()
  list(
    sinks = sink.number(),
    message_sink = sink.number(type = "message"),
    devices = grDevices::dev.list(),
    device = grDevices::dev.cur(),
    has_last_warning = exists("last.warning", envir = base, inherits = FALSE),
    last_warning = base[["last.warning"]],
    options = options("warn", "menu.graphics", "error")
  )
}

# Each step on its own: one that fails does not keep the others from running.
console_restore <- function(state) {
  step <- function(expr) tryCatch(expr, error = function(e) NULL)
  step(while (sink.number() > state$sinks) sink())
  step(if (sink.number(type = "message") != state$message_sink) {
    if (state$message_sink == 2L) {
      sink(type = "message")
    } else {
      sink(getConnection(state$message_sink), type = "message")
    }
  })
  step({
    opened <- setdiff(grDevices::dev.list(), state$devices)
    for (d in opened) grDevices::dev.off(d)
    if (state$device > 1L && state$device %in% grDevices::dev.list()) {
      grDevices::dev.set(state$device)
    }
  })
  base <- baseenv()
  step(if (!state$has_last_warning) {
    if (exists("last.warning", envir = base, inherits = FALSE)) rm("last.warning", envir = base)
  } else if (!identical(base[["last.warning"]], state$last_warning)) {
    assign("last.warning", state$last_warning, envir = base)
  })
  step(options(state$options))
  invisible()
}
