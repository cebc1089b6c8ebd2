# mcp_client()'s $call_async(): calls in flight at once over real pipes,
# each answer matched to its handle. Tools wait on barrier files the test
# creates (never on durations).

# A server whose tools wait on barrier files, on `workers` workers.
async_script <- function(workers = 2) {
  server_script(c(
    "library(mcplite)",
    "wait_for <- function(path) while (!file.exists(path)) Sys.sleep(0.01)",
    "slow <- tool(function(started, go, answer = 'slow') {",
    "  file.create(started)",
    "  wait_for(go)",
    "  answer",
    "}, 'Mark `started`, wait for `go`, answer.', name = 'slow',",
    "arguments = list(started = type_string(), go = type_string(), answer = type_string(required = FALSE)))",
    "quick <- tool(function() 'quick', 'Answer at once.', name = 'quick')",
    sprintf("mcp_server(list(slow, quick), workers = %d)", workers)
  ))
}

barriers <- function(...) {
  dir <- tempfile("async-")
  dir.create(dir)
  stats::setNames(file.path(normalizePath(dir), c(...)), c(...))
}

async_client <- function(..., .local_envir = parent.frame()) {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  checked_client(async_script(), env = child_env(), ..., .local_envir = .local_envir)
}

text_of <- function(res) res$content[[1]]$text

test_that("a slow call on a worker leaves the others answering: $call() answers while $call_async() is blocked", {
  client <- async_client()
  b <- barriers("started", "go")
  slow <- client$call_async("slow", list(started = b[["started"]], go = b[["go"]]))
  expect_s3_class(slow, "mcplite_call")
  expect_true(wait_until(function() file.exists(b[["started"]])))
  expect_false(slow$done())
  # The quick tool answers on the other worker while the slow one is blocked.
  expect_identical(text_of(client$call("quick")), "quick")
  expect_false(slow$done())
  file.create(b[["go"]])
  expect_identical(text_of(slow$wait()), "slow")
  expect_true(slow$done())
  # A handle keeps its answer.
  expect_identical(text_of(slow$wait()), "slow")
  expect_length(client$.state()$unmatched, 0)
})

test_that("answers that arrive out of order reach the right handles", {
  client <- async_client()
  b <- barriers("a_started", "a_go", "b_started", "b_go")
  a <- client$call_async("slow", list(started = b[["a_started"]], go = b[["a_go"]], answer = "a"))
  z <- client$call_async("slow", list(started = b[["b_started"]], go = b[["b_go"]], answer = "b"))
  expect_true(wait_until(function() all(file.exists(b[c("a_started", "b_started")]))))
  # The second call is answered first; polling the first reads that answer.
  file.create(b[["b_go"]])
  expect_true(wait_until(function() z$done()))
  expect_false(a$done())
  file.create(b[["a_go"]])
  expect_identical(text_of(a$wait()), "a")
  expect_identical(text_of(z$wait()), "b")
  expect_length(client$.state()$unmatched, 0)
})

test_that("a cancelled call ends with a classed error, the server is told, and the client goes on", {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  client <- local_mcp_client(async_script(), env = child_env(), transcript = TRUE)
  b <- barriers("started", "go")
  slow <- client$call_async("slow", list(started = b[["started"]], go = b[["go"]]))
  expect_true(wait_until(function() file.exists(b[["started"]])))
  client$transcript()
  expect_true(slow$cancel())
  expect_false(slow$cancel())
  expect_true(slow$done())
  expect_error(slow$wait(), class = "mcplite_error_client_cancelled")
  expect_snapshot(error = TRUE, slow$wait())
  sent <- grep("notifications/cancelled", client$transcript(), value = TRUE, fixed = TRUE)
  expect_length(sent, 1)
  expect_match(sent, "\"requestId\":1[,}]")
  expect_identical(text_of(client$call("quick")), "quick")
  # Its late answer, if any, is dropped, never kept as unmatched.
  file.create(b[["go"]])
  expect_identical(text_of(client$call("quick")), "quick")
  expect_length(client$.state()$unmatched, 0)
})

test_that("$wait(timeout) cancels the call when it passes; a closed client's handles fail", {
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  client <- local_mcp_client(async_script(), env = child_env(), transcript = TRUE)
  b <- barriers("started", "never", "started2")
  slow <- client$call_async("slow", list(started = b[["started"]], go = b[["never"]]))
  expect_error(slow$wait(timeout = 0.2), class = "mcplite_error_client_timeout")
  expect_length(grep("notifications/cancelled", client$transcript(), fixed = TRUE), 1)
  expect_error(slow$wait(), class = "mcplite_error_client_timeout")
  held <- client$call_async("slow", list(started = b[["started2"]], go = b[["never"]]))
  expect_true(wait_until(function() file.exists(b[["started2"]])))
  client$close()
  expect_error(held$wait(), class = "mcplite_error_client_closed")
  expect_snapshot(error = TRUE, held$wait())
  expect_error(client$call_async("quick"), class = "mcplite_error_client_closed")
})

test_that("progress callbacks of async calls run while the session waits, in $call() too", {
  skip_if_no_mcplite_child()
  client <- fixture_client("2025-06-18", server = "progress-server.R")
  barrier <- tempfile("async-barrier-")
  done <- tempfile("async-done-")
  seen <- integer()
  # The tool waits for files only the callback creates. The server runs one
  # call at a time: `wobbly` is answered only after `report_wait`, which the
  # callback releases while $call() waits.
  h <- client$call_async("report_wait", list(barrier = barrier, done = done), progress = function(progress, total, message) {
    seen[[length(seen) + 1L]] <<- progress
    file.create(if (progress == 1) barrier else done)
  })
  expect_identical(text_of(client$call("wobbly")), "wobbled")
  expect_identical(seen, 1:2)
  expect_identical(text_of(h$wait()), "finished")
  recorded <- h$progress()
  expect_length(recorded, 2)
  expect_identical(recorded[[2]]$message, "done")
  expect_length(client$progress(), 0)

  # An error in the callback cancels its call; $wait() raises it.
  files <- c(barrier = tempfile("async-barrier-"), done = tempfile("async-done-"))
  h <- client$call_async("report_wait", as.list(files), progress = function(...) stop("callback failed"))
  expect_error(h$wait(), "callback failed")
  expect_true(h$done())
  # Where the server cannot interrupt its tool (Windows), it runs to its end.
  file.create(files)
  expect_identical(text_of(client$call("wobbly")), "wobbled")
  expect_length(client$.state()$unmatched, 0)
})

test_that("$call_async() checks what $call() checks", {
  skip_if_no_mcplite_child()
  client <- local_mcp_client(conformance_script(), env = child_env())
  client$tools()
  wrong <- client$call_async("wrong_type")
  right <- client$call_async("right")
  expect_error(wrong$wait(), class = "mcplite_error_client_output")
  expect_identical(right$wait()$structuredContent$total, 2L)
  expect_snapshot(error = TRUE, {
    client$call_async("right", progress = "yes")
    client$call_async(1)
    client$call_async("right", arguments = 1)
    handle <- client$call_async("right")
    handle$wait(timeout = -1)
  })
})
