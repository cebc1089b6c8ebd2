# The cost of an mcp_progress() call that sends nothing (issue 38): outside
# a server, in a call without a progress token, and in a call with one
# (where almost every value is held back by the rate limit and replaced by
# the next). Goal: under 5 microseconds each. Run from a clone after
# installing the package:
#
#   Rscript bench/progress.R          # R_LIBS picks the mcplite to measure
#
# Needs processx.

stopifnot(requireNamespace("processx", quietly = TRUE))
library(mcplite)
fixtures <- normalizePath(file.path("tests", "testthat", "fixtures"), mustWork = TRUE)
n <- as.integer(Sys.getenv("BENCH_PROGRESS_N", "200000"))

per_call_us <- function(seconds) 1e6 * seconds / n

# 1. Outside a server: the tool called as a plain function.
loop_here <- function() for (i in seq_len(n)) mcp_progress(i, total = n)
empty_here <- function() for (i in seq_len(n)) NULL
base <- system.time(empty_here())[["elapsed"]]
outside <- system.time(loop_here())[["elapsed"]] - base

# 2. and 3. In a server: the fixture's `loop` tool times its own loop.
proc <- processx::process$new(file.path(R.home("bin"), "Rscript"),
  c("--vanilla", file.path(fixtures, "progress-server.R")),
  stdin = "|", stdout = "|", stderr = tempfile(), cleanup = TRUE)
send <- function(line) proc$write_input(paste0(line, "\n"))
answer <- function(id) {
  repeat {
    proc$poll_io(1000)
    for (line in proc$read_output_lines()) {
      msg <- jsonlite::fromJSON(line, simplifyVector = FALSE)
      if (identical(msg$id, id)) return(msg)
    }
    if (!proc$is_alive()) stop("the server ended")
  }
}
send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}')
invisible(answer(0L))
call <- function(id, token) {
  meta <- if (token) ',"_meta":{"progressToken":"bench"}' else ""
  send(sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"loop","arguments":{"n":%d}%s}}',
               id, n, meta))
  as.numeric(answer(id)$result$content[[1]]$text)
}
no_token <- call(1L, FALSE)
with_token <- call(2L, TRUE)
invisible(close(proc$get_input_connection()))
invisible(proc$wait(10000))

cat(sprintf("mcp_progress(), %d calls; microseconds per call (loop overhead included in 2 and 3):\n", n))
cat(sprintf("  1. outside a server:           %.2f\n", per_call_us(outside)))
cat(sprintf("  2. in a call without a token:  %.2f\n", per_call_us(no_token)))
cat(sprintf("  3. in a call with a token:     %.2f\n", per_call_us(with_token)))
