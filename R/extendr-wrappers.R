# Wrappers for the #[extendr] functions in src/rust/src/lib.rs, in the form
# rextendr generates. Keep one line per registered function.

#' @useDynLib mcplite, .registration = TRUE
NULL

rust_json_parse <- function(text) .Call(wrap__rust_json_parse, text)

rust_to_json_fixed <- function(x, arg) .Call(wrap__rust_to_json_fixed, x, arg)

rust_to_json <- function(x, opts, helpers) .Call(wrap__rust_to_json, x, opts, helpers)

rust_serve <- function(specs, instructions, opts, invoker, info, helpers, on_start, workers) .Call(wrap__rust_serve, specs, instructions, opts, invoker, info, helpers, on_start, workers)

rust_on_exit <- function() .Call(wrap__rust_on_exit)

rust_otel_start_span <- function(name, attributes, kind) .Call(wrap__rust_otel_start_span, name, attributes, kind)

rust_otel_span_set_attributes <- function(ptr, attributes) .Call(wrap__rust_otel_span_set_attributes, ptr, attributes)

rust_otel_span_add_event <- function(ptr, name, attributes) .Call(wrap__rust_otel_span_add_event, ptr, name, attributes)

rust_otel_span_set_status <- function(ptr, code, description) .Call(wrap__rust_otel_span_set_status, ptr, code, description)

rust_otel_span_update_name <- function(ptr, name) .Call(wrap__rust_otel_span_update_name, ptr, name)

rust_otel_span_end <- function(ptr) .Call(wrap__rust_otel_span_end, ptr)

rust_otel_span_activate <- function(ptr) .Call(wrap__rust_otel_span_activate, ptr)

rust_otel_span_deactivate <- function(ptr) .Call(wrap__rust_otel_span_deactivate, ptr)

rust_otel_span_ids <- function(ptr) .Call(wrap__rust_otel_span_ids, ptr)

rust_worker_tracing_start <- function() .Call(wrap__rust_worker_tracing_start)

rust_worker_span_begin <- function(traceparent, tool) .Call(wrap__rust_worker_span_begin, traceparent, tool)

rust_worker_span_end <- function(failed) .Call(wrap__rust_worker_span_end, failed)

rust_worker_detach_stdio <- function() .Call(wrap__rust_worker_detach_stdio)
