#!/usr/bin/env bash
# The whole test suite: cargo tests of the Rust core (no R), the node
# interoperability tests, and testthat against the INSTALLED package
# (run tools/install.sh first). Prints one summary line per runner and a final
# "N passed, N failed"; exits non-zero if anything failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0 failed=0 skipped=0 status=0

echo "== cargo test (Rust core, no R)"
start=$SECONDS
tools/cargo.sh test -p mcplite-core -p mcplite-devtools 2>&1 | tee "$out/cargo.log" | grep -E "^test result|panicked|FAILED" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
p=$(grep -Eo '[0-9]+ passed' "$out/cargo.log" | awk '{s+=$1} END {print s+0}')
f=$(grep -Eo '[0-9]+ failed' "$out/cargo.log" | awk '{s+=$1} END {print s+0}')
grep -q "test result" "$out/cargo.log" || { f=$((f + 1)); status=1; }
echo "cargo: $p passed, $f failed ($((SECONDS - start)) s)"
passed=$((passed + p)); failed=$((failed + f))

if [ -x tests/node/run.sh ]; then
  echo "== node --test (official MCP clients)"
  start=$SECONDS
  tests/node/run.sh >"$out/node.log" 2>&1
  [ $? -eq 0 ] || status=1
  grep -E "^# (tests|pass|fail|skipped)|^not ok" "$out/node.log" || tail -20 "$out/node.log"
  p=$(awk '/^# pass /{s+=$3} END {print s+0}' "$out/node.log")
  f=$(awk '/^# fail /{s+=$3} END {print s+0}' "$out/node.log")
  grep -q "^# pass" "$out/node.log" || { f=$((f + 1)); status=1; }
  echo "node: $p passed, $f failed ($((SECONDS - start)) s)"
  passed=$((passed + p)); failed=$((failed + f))
fi

echo "== testthat (installed package)"
start=$SECONDS
# CRAN mcplite 0.2.0 for the interop test, installed there by tools/install.sh.
# Tests that drive the npm example server fail here, rather than skip, when
# it is missing (see tests/testthat/helper-client.R).
export MCPLITE_CRAN_LIB="${MCPLITE_CRAN_LIB:-$root/bench/.lib-cran}"
# Test files run in MCPLITE_TEST_JOBS testthat worker processes at once
# (default 3; 1 runs them one after another in this process). Most of a file's
# time is spent waiting on the servers, clients and workers it starts, not on
# the CPU, so three workers keep two cores busy. R CMD check runs the files
# one after another (DESCRIPTION does not set Config/testthat/parallel).
jobs="${MCPLITE_TEST_JOBS:-3}"
if [ "$jobs" -gt 1 ] 2>/dev/null; then
  export TESTTHAT_PARALLEL=TRUE TESTTHAT_CPUS="$jobs"
else
  export TESTTHAT_PARALLEL=FALSE
fi
echo "testthat: $jobs test process(es)"
MCPLITE_REQUIRE_NODE_TESTS=true NOT_CRAN=true Rscript --vanilla - "$out/testthat.counts" <<'RS'
out <- commandArgs(TRUE)[1]
library(testthat)
# Each file's wall time from its first event to its last, as the main
# process sees them: testthat's own per-test times are not kept for tests run
# in worker processes. Events arrive as they happen (the parallel_updates
# capability of the reporter passed to test_dir(), the only one testthat
# asks), so a file's time is right to within testthat's polling interval.
FileClock <- R6::R6Class("FileClock", inherit = Reporter, public = list(
  first = numeric(), secs = numeric(), file = "",
  start_file = function(filename) {
    filename <- basename(filename)
    self$file <- filename
    if (is.na(self$first[filename])) self$first[filename] <- proc.time()[[3]]
  },
  end_file = function() {
    self$secs[self$file] <- proc.time()[[3]] - self$first[self$file]
  }
))
clock <- FileClock$new()
# In parallel, testthat's own parallel progress reporter (a line per file as
# it ends, failures in full), without its spinner when the output is a log
# (it would add ten lines a second); one after another, the summary reporter.
if (Sys.getenv("TESTTHAT_PARALLEL") == "TRUE") {
  shown <- testthat:::ParallelProgressReporter$new()
  if (!cli::is_dynamic_tty()) shown$update_interval <- Inf
} else {
  shown <- SummaryReporter$new()
}
reporter <- MultiReporter$new(list(shown, clock))
reporter$capabilities$parallel_updates <- TRUE
res <- as.data.frame(test_dir("tests/testthat", package = "mcplite",
                              load_package = "installed", reporter = reporter,
                              stop_on_failure = FALSE))
counts <- c(passed = sum(res$passed), failed = sum(res$failed) + sum(res$error),
            skipped = sum(res$skipped))
writeLines(format(counts), out)
# Where the time goes: the slowest files (wall time, overlapping when parallel).
secs <- sort(clock$secs, decreasing = TRUE)
top <- head(secs, 8)
cat(sprintf("testthat file time: %.0f s in all; slowest files: %s\n", sum(secs),
            paste(sprintf("%s %.0f s", sub("^test-(.*)[.]R$", "\\1", names(top)), top), collapse = ", ")))
cat(sprintf("testthat: %d passed, %d failed, %d skipped\n",
            counts[["passed"]], counts[["failed"]], counts[["skipped"]]))
RS
echo "testthat wall time: $((SECONDS - start)) s"
if [ -f "$out/testthat.counts" ]; then
  mapfile -t c <"$out/testthat.counts"
  passed=$((passed + ${c[0]})); failed=$((failed + ${c[1]})); skipped=$((skipped + ${c[2]}))
  [ "${c[1]}" -eq 0 ] || status=1
else
  failed=$((failed + 1)); status=1
fi

[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed, $skipped skipped (${SECONDS} s)"
exit $status
