# Wrappers for the #[extendr] functions in src/rust/src/lib.rs, in the form
# rextendr generates. Keep one line per registered function.

#' @useDynLib mcplite, .registration = TRUE
NULL

rust_json_parse <- function(text) .Call(wrap__rust_json_parse, text)

rust_to_json_fixed <- function(x) .Call(wrap__rust_to_json_fixed, x)

rust_serve <- function(specs, instructions, opts, invoker, info) .Call(wrap__rust_serve, specs, instructions, opts, invoker, info)
