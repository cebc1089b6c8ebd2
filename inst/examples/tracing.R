# A server meant to be run with OpenTelemetry tracing sent to standard error:
#
#   OTEL_R_TRACES_EXPORTER=stderr Rscript --vanilla /absolute/path/to/tracing.R
#
# Never choose a stdout or console exporter: standard output carries the MCP
# protocol and anything else written there breaks the connection. Without an
# exporter (or without the otel packages) the server works exactly the same.

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
