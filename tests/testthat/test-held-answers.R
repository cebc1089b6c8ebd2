# Answers made while more requests wait are held back to share one write
# (src/rust/core/src/serve.rs, HOLD_MAX): never for long, never lost. The
# requests go in one write, so the server reads them together and holds the
# first answers while the rest wait; the tests wait on barriers (answers,
# files), never on durations.

skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

held_server <- function() {
  skip_if_no_mcplite_child()
  mcp_start(paste(
    "library(mcplite)",
    "quick <- tool(function(i) i, name = 'quick', description = 'Answers at once.',",
    "  arguments = list(i = type_integer()))",
    "# Marks that it started, then waits until the test creates the barrier.",
    "gate <- tool(function(started, barrier) {",
    "  file.create(started)",
    "  while (!file.exists(barrier)) Sys.sleep(0.01)",
    "  'opened'",
    "}, name = 'gate', description = 'Waits for a file.',",
    "arguments = list(started = type_string(), barrier = type_string()))",
    "quitter <- tool(function() quit(save = 'no', status = 0), name = 'quitter', description = 'Ends R.')",
    "mcp_server(list(quick, gate, quitter))",
    sep = "\n"
  ))
}

quick_calls <- function(ids) vapply(ids, function(i) modern_call(i, "quick", sprintf('{"i":%d}', i)), "")

test_that("answers held back while a long call runs after them are written before it ends", {
  proc <- held_server()
  dir <- tempfile("held-")
  dir.create(dir)
  started <- file.path(dir, "started")
  barrier <- file.path(dir, "barrier")
  args <- as.character(jsonlite::toJSON(list(started = started, barrier = barrier), auto_unbox = TRUE))
  for (round in 1:3) {
    ids <- (round - 1) * 100 + 1:50
    gate_id <- round * 100
    unlink(c(started, barrier))
    # One write: the quick calls' answers are made while the gate's request
    # waits behind them, then the gate runs until the barrier exists.
    mcp_send(proc, c(quick_calls(ids), modern_call(gate_id, "gate", args)))
    answers <- mcp_read(proc, length(ids))
    got <- vapply(answers, function(a) as.integer(a$id), 1L)
    expect_identical(got, as.integer(ids))
    if (!identical(got, as.integer(ids))) break
    expect_identical(vapply(answers, first_text, ""), as.character(ids))
    # They came while the gate still runs: it has not seen the barrier.
    expect_true(wait_until(function() file.exists(started)))
    expect_false(file.exists(barrier))
    file.create(barrier)
    gate <- mcp_read(proc, 1)[[1]]
    expect_identical(as.integer(gate$id), as.integer(gate_id))
    expect_identical(first_text(gate), "opened")
  }
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
  expect_identical(out$status, 0L)
})

test_that("answers held back when a tool ends R are still written, each once", {
  for (n in c(1, 30, 300)) {
    proc <- held_server()
    ids <- seq_len(n)
    mcp_send(proc, c(quick_calls(ids), modern_call(n + 1, "quitter")))
    out <- mcp_close(proc)
    got <- vapply(out$responses, function(a) as.integer(a$id), 1L)
    expect_identical(sort(got), as.integer(c(ids, n + 1)), info = sprintf("%d quick calls", n))
    quick <- Filter(function(a) a$id <= n, out$responses)
    expect_identical(sort(as.integer(vapply(quick, first_text, ""))), as.integer(ids), info = sprintf("%d quick calls", n))
    last <- Filter(function(a) a$id == n + 1, out$responses)
    expect_length(last, 1)
    expect_true(isTRUE(last[[1]]$result$isError), info = sprintf("%d quick calls", n))
    expect_match(first_text(last[[1]]), "quit", info = sprintf("%d quick calls", n))
  }
})
