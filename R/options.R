# Payload JSON options. Read once when a result is built and once when the
# server starts; the list returned here is exactly the `opts` argument of
# rust_to_json() (see src/rust/ARCHITECTURE.md).

payload_options <- function(call = sys.call(-1)) {
  digits <- option_digits(call)
  list(
    null = option_null(call),
    na = option_na(call),
    auto_unbox = option_auto_unbox(call),
    digits = digits[["digits"]],
    signif = digits[["signif"]]
  )
}

bad_option <- function(name, expected, value, call) {
  abort_mcplite(
    sprintf(
      "Option `%s` must be %s, not %s.\nReset it with `options(%s = NULL)`.",
      name, expected, describe_value(value), name
    ),
    class = "option", arg = name, call = call
  )
}

option_null <- function(call) {
  value <- getOption("mcplite.json.null")
  if (is.null(value)) return("null")
  if (!is_string(value) || !value %in% c("null", "list")) {
    bad_option("mcplite.json.null", "\"null\" or \"list\"", value, call)
  }
  value
}

option_na <- function(call) {
  value <- getOption("mcplite.json.na")
  # Unset means "leave jsonlite's class-specific defaults alone".
  if (is.null(value)) return(NA_character_)
  if (!is_string(value) || !value %in% c("null", "string")) {
    bad_option("mcplite.json.na", "\"null\", \"string\" or unset (NULL)", value, call)
  }
  value
}

option_auto_unbox <- function(call) {
  value <- getOption("mcplite.json.auto_unbox")
  if (is.null(value)) return(TRUE)
  if (!is_flag(value)) {
    bad_option("mcplite.json.auto_unbox", "`TRUE` or `FALSE`", value, call)
  }
  value
}

# Like jsonlite's `digits`: a whole number of decimal places (0 to 15), `I(n)`
# for n significant digits (1 to 15), or NA for full precision.
option_digits <- function(call) {
  value <- getOption("mcplite.json.digits")
  if (is.null(value)) return(list(digits = 4L, signif = FALSE))
  signif <- inherits(value, "AsIs")
  v <- unclass(value)
  if (length(v) == 1 && is.atomic(v) && is.na(v) && !signif &&
      (is.logical(v) || is.numeric(v))) {
    return(list(digits = NA_integer_, signif = FALSE))
  }
  lower <- if (signif) 1 else 0
  ok <- is.numeric(v) && length(v) == 1 && !is.na(v) && is.finite(v) &&
    v == round(v) && v >= lower && v <= 15
  if (!ok) {
    bad_option(
      "mcplite.json.digits",
      "a whole number from 0 to 15, `I(n)` with n from 1 to 15, or NA",
      value, call
    )
  }
  list(digits = as.integer(v), signif = signif)
}

# The payload options as set (NULL when unset), for setting them on workers.
payload_option_names <- c("mcplite.json.null", "mcplite.json.na",
                          "mcplite.json.auto_unbox", "mcplite.json.digits")

payload_option_values <- function() {
  values <- lapply(payload_option_names, getOption)
  names(values) <- payload_option_names
  values
}
