# A server meant to be run with OpenTelemetry tracing sent to standard error:
#
#   OTEL_R_TRACES_EXPORTER=stderr Rscript --vanilla /absolute/path/to/tracing.R
#
# mcplite then writes one span per MCP request to standard error, as OTLP
# JSON, one document per line; `OTEL_R_TRACES_EXPORTER=otlp` sends them to a
# collector instead. A stdout or console exporter is refused: standard output
# carries the MCP protocol, and anything else written there would break the
# connection. Without an exporter the server works exactly the same and
# records nothing. The otel R package is only needed for spans that tool code
# starts itself, like the one below.

slow_echo <- mcplite::tool(
  function(text, delay_ms = 0) {
    delay_ms <- as.numeric(delay_ms)
    if (is.na(delay_ms) || delay_ms < 0 || delay_ms > 5000) {
      stop("`delay_ms` must be between 0 and 5000.", call. = FALSE)
    }
    # An optional span of the tool's own; it becomes a child of the server's
    # span for this call when tracing is active, and does nothing otherwise.
    if (requireNamespace("otel", quietly = TRUE)) {
      otel::start_local_active_span("slow_echo wait")
    }
    Sys.sleep(delay_ms / 1000)
    # Diagnostics go to standard error, which clients show as a log.
    message("slow_echo waited ", delay_ms, " ms")
    text
  },
  name = "slow_echo",
  description = "Wait a little, then return the given text unchanged.",
  arguments = list(
    text = mcplite::type_string("Text to return."),
    delay_ms = mcplite::type_number("Milliseconds to wait first (default 0).", required = FALSE)
  )
)

mcplite::mcp_server(slow_echo)
