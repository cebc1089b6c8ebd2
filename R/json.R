# Thin R faces over the Rust JSON entry points. Each Rust entry point returns
# list(value =, error =); these turn an error string into a classed condition.

json_parse <- function(text, arg, call = sys.call(-1)) {
  res <- rust_json_parse(text)
  if (!is.null(res[["error"]])) {
    abort_mcplite(
      sprintf("`%s` must contain valid JSON: %s", arg, res[["error"]]),
      class = "schema", arg = arg, call = call
    )
  }
  res[["value"]]
}

# Protocol (fixed) encoding: the encoding used for schemas, annotations and
# metadata on the wire. Its rules live in Rust (src/rust/core/src/r/fixed.rs);
# the error names the first element that has no fixed encoding.
json_fixed <- function(x, arg = "x", call = sys.call(-1), class = "serialize") {
  res <- rust_to_json_fixed(x, arg)
  if (!is.null(res[["error"]])) {
    abort_mcplite(res[["error"]], class = class, arg = arg, call = call)
  }
  res[["value"]]
}

# Checks at definition time that `x` has a fixed encoding, so an author sees
# a mistake where it is made rather than when a client connects.
check_fixed <- function(x, arg, call = sys.call(-1), class = "serialize") {
  json_fixed(x, arg, call = call, class = class)
  invisible(x)
}

# Payload encoding: jsonlite-compatible, driven by the payload options.
json_payload <- function(x, opts, arg = "x", call = sys.call(-1)) {
  res <- rust_to_json(x, opts, json_helpers())
  if (!is.null(res[["error"]])) {
    abort_mcplite(
      sprintf("`%s` cannot be written as JSON: %s", arg, res[["error"]]),
      class = "serialize", arg = arg, call = call
    )
  }
  res[["value"]]
}

# The conversions jsonlite makes through R (dates and times, complex numbers,
# hms), which the Rust serializer calls back for, and the session's locale.
# They live in the package namespace, so a user's own format() or
# as.character() cannot mask the base functions.
json_helpers <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      cache <<- list(
        time = function(x, cls, lt, date) {
          tryCatch({
            if (lt) x <- as.POSIXct(x) else class(x) <- cls
            out <- if (date) format(x) else format(x, format = "")
            as.character(unname(out))
          }, error = function(e) list(conditionMessage(e)))
        },
        complex = function(x, digits) {
          tryCatch(
            as.character(unname(prettyNum(as.vector(unclass(x)), digits = digits))),
            error = function(e) list(conditionMessage(e))
          )
        },
        as_character = function(x, cls) {
          tryCatch({
            class(x) <- cls
            out <- as.character(x)
            # A method that gives the wrong number of strings is reported by
            # the serializer, not padded here.
            na <- is.na(x)
            if (length(out) == length(na)) out[na] <- NA
            as.character(unname(out))
          }, error = function(e) list(conditionMessage(e)))
        },
        utf8 = isTRUE(l10n_info()[["UTF-8"]])
      )
    }
    cache
  }
})
