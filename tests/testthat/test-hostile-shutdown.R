# Issue 13, classes 9 and 10: ending. With an OTLP collector that accepts
# connections and never answers, the server exits on its own after stdin
# closes (the final flush is bounded; bench/limits.R measures how long it takes)
# and says once on stderr that exporting failed. A tool that calls quit()
# gets its request answered (a tool error saying the tool ended R) before the
# process exits with the status the tool chose.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

test_that("a silent OTLP collector does not hold the exit, and the failure is said once on stderr", {
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
    # The collector never answers: a server that waited for it would never
    # exit, and mcp_close() would kill it and fail (its timeout only stops
    # the hung test).
    out <- mcp_close(proc, timeout = 60)
    expect_true(sink$is_alive())
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

# R code the server runs on a call's behalf after the tool returned: the
# serializer calls as.character() for "hms" values, and a method the script
# defines (here without the hms package) can call quit() there.
late_quit_server <- function(workers) {
  c(
    "as.character.hms <- function(x, ...) quit(save = 'no', status = 4)",
    "wait_for <- function(path) { for (i in 1:3000) { if (file.exists(path)) return('released'); Sys.sleep(0.02) }; 'gave up' }",
    "late <- structure(61, units = 'secs', class = c('hms', 'difftime'))",
    "mcplite::mcp_server(list(",
    "  mcplite::tool(function() late, 'A duration.', name = 'late_value'),",
    "  mcplite::tool(function() data.frame(id = 1L, took = late), 'A frame.', name = 'late_column'),",
    "  mcplite::tool(function(path) wait_for(path), 'Waits.', name = 'wait_for', arguments = list(path = mcplite::type_string()))",
    sprintf("), workers = %s)", workers)
  )
}

test_that("quit() in R code converting a result still answers that call and every other one in flight", {
  skip_if_no_mcplite_child()
  for (tool in c("late_value", "late_column")) {
    for (workers in c(0, 2)) {
      if (workers > 0) skip_if_not_installed("mirai")
      info <- sprintf("%s, workers = %d", tool, workers)
      proc <- mcp_start(late_quit_server(workers))
      on.exit(mcp_kill(proc), add = TRUE)
      mcp_send(proc, initialize_line("2025-11-25"))
      mcp_read(proc, 1, timeout = 60)
      ids <- "late"
      if (workers > 0) {
        # A call that is still running on another worker when R ends.
        started <- tempfile("never-")
        mcp_send(proc, legacy_call("waiting", "wait_for", sprintf('{"path":"%s"}', started)))
        ids <- c(ids, "waiting")
      }
      mcp_send(proc, legacy_call("late", tool))
      if (workers > 0) {
        # Daemons of ours convert their results themselves: quit() there ends
        # that worker only. The call is answered, and the server goes on
        # serving (the other worker's call, then a clean end).
        got <- mcp_read(proc, 1, timeout = 60)
        expect_identical(vapply(got, function(r) r$id, ""), "late", info = info)
        expect_true(hs_is_error(got[[1]]), info = info)
        expect_match(hs_text(got[[1]]), "Tool late_[a-z]+ stopped: the worker process running it ended", info = info)
        file.create(started)
        released <- mcp_read(proc, 1, timeout = 60)
        expect_identical(hs_text(released[[1]]), "released", info = info)
        out <- mcp_close(proc, timeout = 30)
        expect_identical(out$status, 0L, info = info)
        expect_length(out$responses, 0)
        mcp_validate(c(got, released), "2025-11-25", "CallToolResult")
        next
      }
      proc$process$wait(30000)
      out <- mcp_close(proc, timeout = 5)
      expect_identical(out$status, 4L, info = info)
      expect_setequal(vapply(out$responses, function(r) r$id, ""), ids)
      for (r in out$responses) {
        expect_true(hs_is_error(r), info = info)
        expect_match(hs_text(r), "R process ended", fixed = TRUE, info = info)
      }
      expect_match(hs_text(mcp_by_id(out$responses, "late")), sprintf("before tool %s was answered", tool), fixed = TRUE)
      # Nothing but protocol lines on stdout.
      expect_identical(length(out$lines), length(ids) + 1L, info = info)
      mcp_validate(out$responses, "2025-11-25", "CallToolResult")
    }
  }
})
