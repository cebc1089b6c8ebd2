# Issue 13, classes 9 and 10: ending. With an OTLP collector that accepts
# connections and never answers, the server exits within 2 s of stdin closing
# and says once on stderr that exporting failed. A tool that calls quit()
# gets its request answered (a tool error saying the tool ended R) before the
# process exits with the status the tool chose.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

test_that("a silent OTLP collector delays exit by at most 2 s, and the failure is said once on stderr", {
  skip_if_no_mcplite_child()
  skip_if(!nzchar(Sys.which("node")), "the silent collector is a node one-liner")
  sink <- processx::process$new("node", c("-e", paste(
    "const s = require('net').createServer(() => {});",
    "s.listen(0, '127.0.0.1', () => console.log(s.address().port));"
  )), stdout = "|", stderr = "|", cleanup = TRUE)
  on.exit(sink$kill(), add = TRUE)
  sink$poll_io(5000)
  port <- as.integer(sink$read_output_lines(1))
  expect_true(is.finite(port))
  for (var in c("OTEL_TRACES_EXPORTER", "OTEL_R_TRACES_EXPORTER")) {
    env <- c(OTEL_EXPORTER_OTLP_ENDPOINT = sprintf("http://127.0.0.1:%d", port))
    env[[var]] <- "otlp"
    proc <- mcp_start(hostile_server(), env = env)
    mcp_send(proc, initialize_line("2025-11-25"))
    for (i in 1:5) mcp_send(proc, legacy_call(i, "echo", sprintf('{"x":"span %d"}', i)))
    got <- mcp_read(proc, 6, timeout = 20)
    expect_length(got, 6)
    t0 <- Sys.time()
    out <- mcp_close(proc, timeout = 15)
    elapsed <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    # 2 s for the bounded final flush, plus a little for R to exit on a busy machine.
    expect_lt(elapsed, 2.5, label = sprintf("seconds to exit with %s=otlp", var))
    expect_identical(out$status, 0L)
    err <- strsplit(out$stderr, "\n")[[1]]
    said <- grep("export", err, ignore.case = TRUE, value = TRUE)
    said <- grep("fail|error|could not|cannot|timed? ?out|unreachable|unavailable", said, ignore.case = TRUE, value = TRUE)
    expect_length(said, 1)
    mcp_kill(proc)
  }
})

quit_cases <- list(
  list(how = "status3", status = 3L),
  list(how = "q_no", status = 0L),
  list(how = "save_no_status0", status = 0L)
)

for (qc in quit_cases) {
  local({
    qc <- qc
    test_that(sprintf("quit() in a tool (%s): the call is answered with a tool error, then R exits %d", qc$how, qc$status), {
      skip_if_no_mcplite_child()
      for (version in c("2025-11-25", "2026-07-28")) {
        proc <- mcp_start(hostile_server())
        on.exit(mcp_kill(proc), add = TRUE)
        call <- if (version == "2026-07-28") modern_call("q", "quitter", sprintf('{"how":"%s"}', qc$how)) else {
          mcp_send(proc, initialize_line(version))
          mcp_read(proc, 1)
          legacy_call("q", "quitter", sprintf('{"how":"%s"}', qc$how))
        }
        mcp_send(proc, call)
        proc$process$wait(10000)
        out <- mcp_close(proc, timeout = 5)
        expect_identical(out$status, qc$status, info = version)
        expect_length(out$responses, 1)
        if (length(out$responses) == 1) {
          r <- out$responses[[1]]
          expect_identical(r$id, "q")
          expect_true(hs_is_error(r), info = version)
          expect_match(hs_text(r), "ended|quit", ignore.case = TRUE, info = version)
          mcp_validate(r, version, "CallToolResult")
        }
      }
    })
  })
}
