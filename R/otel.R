# Tool-authored spans. While a traced server runs, mcplite offers R's otel
# package a tracer provider whose spans are made by the server's own Rust
# OpenTelemetry SDK: a span that tool code starts with
# otel::start_local_active_span() becomes a child of the MCP server span and
# goes to the same exporter. otel finds the provider through the
# OTEL_R_TRACES_EXPORTER = "mcplite::otel_tracer_provider" convention.

otel_provider_spec <- "mcplite::otel_tracer_provider"

# Called by the Rust core once it has read the tracing configuration. otel
# takes its default tracer provider from OTEL_R_TRACES_EXPORTER the first time
# it needs one and keeps it: the variable names mcplite's provider only for
# that moment, so neither tool code nor the child processes it starts ever see
# a value other than the user's. (If the script used otel before serving,
# otel keeps the provider it already has.)
otel_on_start <- function(tracing) {
  if (!isTRUE(tracing) || !nzchar(system.file(package = "otel"))) {
    return(invisible(NULL))
  }
  old <- Sys.getenv("OTEL_R_TRACES_EXPORTER", NA_character_)
  on.exit(
    if (is.na(old)) Sys.unsetenv("OTEL_R_TRACES_EXPORTER")
    else Sys.setenv(OTEL_R_TRACES_EXPORTER = old)
  )
  Sys.setenv(OTEL_R_TRACES_EXPORTER = otel_provider_spec)
  tryCatch(otel::get_default_tracer_provider(), error = function(e) NULL)
  invisible(NULL)
}

#' An otel tracer provider backed by the mcplite server
#'
#' Not called directly: while a server started by [mcp_server()] has tracing
#' turned on, mcplite points the otel package at this provider, so spans that
#' tool code starts with `otel::start_local_active_span()` join the server's
#' trace as children of the span of the current MCP request. Outside a
#' running server the spans it makes are inert.
#'
#' @format A list with a `new()` function, as otel expects of providers named
#'   in `OTEL_R_TRACES_EXPORTER`.
#' @keywords internal
#' @export
#' @examples
#' provider <- otel_tracer_provider$new()
#' tracer <- provider$get_tracer("example")
#' span <- tracer$start_span("not traced outside a server")
#' span$is_recording()
#' span$end()
otel_tracer_provider <- list(new = function() {
  self <- structure(list(
    get_tracer = function(name = NULL, version = NULL, schema_url = NULL,
                          attributes = NULL, ...) {
      otel_tracer(name)
    },
    flush = function() invisible(self),
    get_spans = function() list()
  ), class = c("mcplite_otel_tracer_provider", "otel_tracer_provider"))
  self
})

otel_tracer <- function(name) {
  self <- structure(list(
    start_span = function(name = NULL, attributes = NULL, links = NULL,
                          options = NULL, ...) {
      otel_span(name, attributes, options)
    },
    is_enabled = function() TRUE,
    flush = function() invisible(self),
    get_active_span_context = function() otel_span_context(NULL),
    get_active_span = function() otel_span(NULL, NULL, NULL, start = FALSE),
    extract_http_context = function(headers) otel_span_context(NULL)
  ), class = c("mcplite_otel_tracer", "otel_tracer"))
  self
}

otel_span_context <- function(ptr) {
  ids <- if (is.null(ptr)) NULL else rust_otel_span_ids(ptr)
  structure(list(
    is_valid = function() !is.null(ids),
    get_trace_id = function() if (is.null(ids)) strrep("0", 32) else ids[[1]],
    get_span_id = function() if (is.null(ids)) strrep("0", 16) else ids[[2]],
    is_remote = function() FALSE,
    is_sampled = function() !is.null(ids),
    get_trace_flags = function() list(is_sampled = !is.null(ids)),
    to_http_headers = function() {
      if (is.null(ids)) return(character())
      c(traceparent = paste0("00-", ids[[1]], "-", ids[[2]], "-01"))
    }
  ), class = c("mcplite_otel_span_context", "otel_span_context"))
}

otel_span <- function(name, attributes, options, start = TRUE) {
  kind <- if (is.list(options) && is.character(options[["kind"]])) options[["kind"]] else "internal"
  ptr <- if (start) {
    rust_otel_start_span(if (is.null(name)) "<NA>" else as.character(name)[1],
                         as.list(attributes), kind[1])
  }
  self <- structure(list(
    name = name,
    get_context = function() otel_span_context(ptr),
    is_valid = function() !is.null(ptr),
    is_recording = function() !is.null(ptr),
    set_attribute = function(name, value = NULL) {
      if (!is.null(ptr)) rust_otel_span_set_attributes(ptr, stats_list(name, value))
      invisible(self)
    },
    add_event = function(name, attributes = NULL, timestamp = NULL) {
      if (!is.null(ptr)) rust_otel_span_add_event(ptr, as.character(name)[1], as.list(attributes))
      invisible(self)
    },
    add_link = function(target, attributes = NULL) invisible(self),
    set_status = function(status_code = c("unset", "ok", "error"), description = NULL) {
      status_code <- match.arg(status_code)
      if (!is.null(ptr)) {
        rust_otel_span_set_status(ptr, status_code,
                                  if (is.null(description)) "" else as.character(description)[1])
      }
      invisible(self)
    },
    update_name = function(name) {
      if (!is.null(ptr)) rust_otel_span_update_name(ptr, as.character(name)[1])
      invisible(self)
    },
    end = function(options = NULL, status_code = NULL) {
      if (!is.null(status_code)) self[["set_status"]](status_code)
      if (!is.null(ptr)) rust_otel_span_end(ptr)
      invisible(self)
    },
    record_exception = function(attributes = NULL) {
      if (!is.null(ptr)) rust_otel_span_add_event(ptr, "exception", as.list(attributes))
      invisible(self)
    },
    activate = function(activation_scope, end_on_exit = FALSE) {
      if (!is.null(ptr)) {
        rust_otel_span_activate(ptr)
        cleanup <- if (end_on_exit) {
          bquote({ .(rust_otel_span_deactivate)(.(ptr)); .(rust_otel_span_end)(.(ptr)) })
        } else {
          bquote(.(rust_otel_span_deactivate)(.(ptr)))
        }
        do.call(base::on.exit, list(cleanup, TRUE, FALSE), envir = activation_scope)
      }
      invisible(self)
    },
    deactivate = function(activation_scope) {
      if (!is.null(ptr)) rust_otel_span_deactivate(ptr)
      invisible(self)
    }
  ), class = c("mcplite_otel_span", "otel_span"))
  self
}

stats_list <- function(name, value) {
  out <- list(value)
  names(out) <- as.character(name)[1]
  out
}
