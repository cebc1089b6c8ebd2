# Classed conditions and small argument checkers, in base R only so that the
# package imports nothing and server scripts start fast.

#' Signal an mcplite error
#'
#' Every error raised by mcplite goes through here, so all of them share the
#' root class `mcplite_error` plus one specific subclass:
#' `argument` (a bad argument value), `schema` (a schema or type helper),
#' `content` (content blocks and results), `serialize` (a value that cannot be
#' written as JSON), `option` (a payload option), `tools` (the tool list
#' given to [mcp_server()]), `workers` (its `workers` argument; `workers_script`
#' first when the script R runs cannot be found for the workers), `client` (an exchange of [mcp_client()] that
#' failed, with a finer class first: `client_rpc`, `client_exited`,
#' `client_timeout`, `client_start`, `client_protocol`, `client_closed`,
#' `client_output`, `client_cancelled`) and
#' `config` (a client configuration file [mcp_config()] could not write, with a
#' finer class first: `config_invalid`, `config_jsonc`, `config_layout`,
#' `config_io`), `dependency` (a suggested package a function needs is
#' not installed) and `session` (a live session [mcp_session()] cannot serve).
#'
#' @param message The message, already formatted.
#' @param class The specific kind, without the `mcplite_error_` prefix.
#' @param arg Name of the offending argument, stored in the condition.
#' @param call The call to report; defaults to the caller's caller.
#' @param ... Further fields stored in the condition (the client errors
#'   carry `code`, `data`, `status` and `stderr`). `class` may hold several
#'   kinds, most specific first (`c("client_rpc", "client")`).
#' @return Never returns.
#' @noRd
abort_mcplite <- function(message, class = "argument", arg = NULL,
                          call = sys.call(-1), ...) {
  # Keep only the function name (`tool()`), so messages stay short and stable
  # however long the author's call was.
  if (is.call(call)) call <- as.call(list(call[[1]]))
  cnd <- structure(
    class = c(paste0("mcplite_error_", class), "mcplite_error", "error", "condition"),
    c(list(message = message, call = call, arg = arg), list(...))
  )
  # No "Calls:" line when Rscript stops on the error: the call chain inside
  # mcplite (`workers_config -> abort_mcplite`) means nothing to authors,
  # and the condition already names their call. Restored as stop() unwinds.
  old <- options(showErrorCalls = FALSE)
  on.exit(options(old))
  stop(cnd)
}

#' Signal an mcplite warning
#'
#' The warning counterpart of [abort_mcplite()]: root class `mcplite_warning`
#' plus one specific subclass, so authors can muffle one kind on purpose
#' (`suppressWarnings(..., classes = "mcplite_warning_missing_default")`).
#'
#' @param message The message, already formatted.
#' @param class The specific kind, without the `mcplite_warning_` prefix.
#' @param arg Name of the argument concerned, stored in the condition.
#' @param call The call to report; defaults to the caller's caller.
#' @return `NULL`, invisibly.
#' @noRd
warn_mcplite <- function(message, class, arg = NULL, call = sys.call(-1)) {
  if (is.call(call)) call <- as.call(list(call[[1]]))
  cnd <- structure(
    class = c(paste0("mcplite_warning_", class), "mcplite_warning", "warning", "condition"),
    list(message = message, call = call, arg = arg)
  )
  warning(cnd)
  invisible(NULL)
}

# Runs the Rust core's rule `kind` on `x` (see core/src/r/author.rs): the
# rules live there, once, for R's constructors and for the server. Gives its
# warnings, raises its problem as the classed condition (`class` replaces the
# rule's own where the caller's context names another) and returns what
# the rule found (`names`: for rules that rename, the name kept for each
# element, "" for one to drop).
author_check <- function(kind, x, arg, call = sys.call(-1), class = NULL) {
  res <- rust_check(kind, x, arg)
  for (w in res[["warnings"]]) {
    warn_mcplite(problem_message(w, x), class = w[["class"]], arg = w[["arg"]], call = call)
  }
  p <- res[["error"]]
  if (!is.null(p)) {
    abort_mcplite(problem_message(p, x), class = if (is.null(class)) p[["class"]] else class, arg = p[["arg"]], call = call)
  }
  invisible(res)
}

# A problem's message, with the value it is about (found at `at`, positions
# from `x`) where the core left {scalar}: the core describes values
# (`r::describe_for_r`), R prints them.
problem_message <- function(p, x) {
  message <- p[["message"]]
  if (!grepl("{scalar}", message, fixed = TRUE)) return(message)
  value <- x
  for (i in p[["at"]]) value <- value[[i]]
  with_scalar(message, value)
}

# A short description of what a value actually is, for error messages: the
# core's words (`r::describe_for_r`, which the server's messages use too),
# with a single value as R prints it.
describe_value <- function(x) with_scalar(rust_describe(x), x)

with_scalar <- function(message, x) {
  if (!grepl("{scalar}", message, fixed = TRUE)) return(message)
  sub("{scalar}", format_scalar(x), message, fixed = TRUE)
}

format_scalar <- function(x) {
  if (is.character(x)) {
    s <- if (nchar(x) > 40) paste0(substr(x, 1, 37), "...") else x
    return(encodeString(s, quote = "\""))
  }
  format(x)
}

is_string <- function(x) {
  is.character(x) && length(x) == 1 && !is.na(x)
}

is_flag <- function(x) {
  is.logical(x) && length(x) == 1 && !is.na(x)
}

check_string <- function(x, arg, call = sys.call(-1), allow_null = FALSE,
                          allow_empty = TRUE, class = "argument") {
  if (allow_null && is.null(x)) return(invisible(x))
  if (!is_string(x) || (!allow_empty && !nzchar(x))) {
    what <- if (allow_empty) "a single string" else "a single non-empty string"
    if (allow_null) what <- paste(what, "or NULL")
    abort_mcplite(
      sprintf("`%s` must be %s, not %s.", arg, what, describe_value(x)),
      class = class, arg = arg, call = call
    )
  }
  invisible(x)
}

check_flag <- function(x, arg, call = sys.call(-1), class = "argument") {
  if (!is_flag(x)) {
    abort_mcplite(
      sprintf("`%s` must be `TRUE` or `FALSE`, not %s.", arg, describe_value(x)),
      class = class, arg = arg, call = call
    )
  }
  invisible(x)
}

# `x` must be a named list (a JSON object); an unnamed empty list is accepted
# as "no entries". Returns the list with names guaranteed.
check_named_list <- function(x, arg, call = sys.call(-1), class = "argument") {
  ok <- is.list(x) && !is.object(x) || inherits(x, "AsIs") && is.list(x)
  if (!ok) {
    abort_mcplite(
      sprintf("`%s` must be a named list, not %s.", arg, describe_value(x)),
      class = class, arg = arg, call = call
    )
  }
  if (length(x) == 0) return(empty_object())
  nms <- names(x)
  if (is.null(nms) || anyNA(nms) || any(!nzchar(nms))) {
    abort_mcplite(
      sprintf("Every element of `%s` must be named.", arg),
      class = class, arg = arg, call = call
    )
  }
  dup <- unique(nms[duplicated(nms)])
  if (length(dup) > 0) {
    abort_mcplite(
      sprintf("Names in `%s` must be unique; %s is repeated.", arg, quote_names(dup)),
      class = class, arg = arg, call = call
    )
  }
  x
}

# A named empty list: the R spelling of the JSON object {}.
empty_object <- function() structure(list(), names = character(0))

# `a`, `b` and `c`: the core's wording (`r::spec::quote_names`).
quote_names <- function(x) {
  x <- as.character(x)
  x[is.na(x)] <- "NA"
  rust_quote_names(x)
}
