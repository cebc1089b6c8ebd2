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
# metadata on the wire.
json_fixed <- function(x, arg = "x", call = sys.call(-1)) {
  res <- rust_to_json_fixed(x)
  if (!is.null(res[["error"]])) {
    abort_mcplite(
      sprintf("`%s` cannot be written as JSON: %s", arg, res[["error"]]),
      class = "serialize", arg = arg, call = call
    )
  }
  res[["value"]]
}

# Payload encoding: jsonlite-compatible, driven by the payload options.
json_payload <- function(x, opts, arg = "x", call = sys.call(-1)) {
  res <- rust_to_json(x, opts)
  if (!is.null(res[["error"]])) {
    abort_mcplite(
      sprintf("`%s` cannot be written as JSON: %s", arg, res[["error"]]),
      class = "serialize", arg = arg, call = call
    )
  }
  res[["value"]]
}

# Checks that `x` can be written by the fixed encoding (lists, plain atomic
# vectors, NULL) and says where the first problem is. Run in R so that the
# message can point at the exact element an author wrote.
check_fixed_tree <- function(x, arg, call = sys.call(-1), class = "serialize",
                             path = arg) {
  bad <- function(what) {
    abort_mcplite(
      sprintf("`%s` must be JSON-serializable, but `%s` is %s.", arg, path, what),
      class = class, arg = arg, call = call
    )
  }
  if (is.null(x)) return(invisible(TRUE))
  cls <- setdiff(oldClass(x), "AsIs")
  if (length(cls) > 0 || is.function(x) || is.environment(x)) {
    bad(describe_value(x))
  }
  if (is.list(x)) {
    nms <- names(x)
    if (!is.null(nms) && length(x) > 0) {
      if (anyNA(nms) || any(!nzchar(nms))) {
        bad("a list with some elements unnamed (use all names for an object, none for an array)")
      }
      dup <- unique(nms[duplicated(nms)])
      if (length(dup) > 0) {
        bad(sprintf("a list with the repeated name %s", quote_names(dup)))
      }
    }
    for (i in seq_along(x)) {
      sub <- if (is.null(nms)) {
        sprintf("%s[[%d]]", path, i)
      } else if (make.names(nms[[i]]) == nms[[i]]) {
        sprintf("%s$%s", path, nms[[i]])
      } else {
        sprintf("%s[[\"%s\"]]", path, nms[[i]])
      }
      check_fixed_tree(x[[i]], arg = arg, call = call, class = class, path = sub)
    }
    return(invisible(TRUE))
  }
  if (!typeof(x) %in% c("logical", "integer", "double", "character")) {
    bad(describe_value(x))
  }
  if (is.double(x) && any(is.nan(x) | is.infinite(x))) {
    bad("a number that is NaN or infinite")
  }
  invisible(TRUE)
}
