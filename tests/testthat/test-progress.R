# mcp_progress(): notifications/progress over real pipes, in every version,
# validated against each version's schema. Tools that must be seen running
# wait on a barrier file the test creates once it has seen what it waits for.

skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

progress_server <- function() mcp_fixture_server("progress-server.R")

# A tools/call line carrying a progress token (`token_json`: its JSON text).
progress_call <- function(version, id, name, arguments = "{}", token_json = NULL) {
  meta <- c(
    if (!is.null(token_json)) paste0('"progressToken":', token_json),
    if (version == "2026-07-28") sprintf(
      '"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":{}', version)
  )
  params <- call_params(name, arguments)
  if (length(meta)) params <- paste0(params, ',"_meta":{', paste(meta, collapse = ","), "}")
  rpc(id, "tools/call", paste0("{", params, "}"))
}

# A server, past the handshake for a legacy version. `workers`: run the
# tools on workers (MCPLITE_TEST_WORKERS of the fixture).
progress_start <- function(version, workers = NULL) {
  skip_if_no_mcplite_child()
  if (!is.null(workers)) skip_if_not_installed("mirai")
  env <- if (!is.null(workers)) c(MCPLITE_TEST_WORKERS = workers)
  proc <- mcp_start(progress_server(), env = env)
  if (version != "2026-07-28") {
    mcp_send(proc, initialize_line(version))
    mcp_send(proc, initialized_line())
    init <- mcp_read(proc, 1)[[1]]
    expect_identical(init$result$protocolVersion, version)
  }
  proc
}

is_progress <- function(msg) identical(msg$method, "notifications/progress")

json_arg <- function(x) as.character(jsonlite::toJSON(x, auto_unbox = TRUE))

# Read messages until the answer with `id`; returns them all, answer last.
read_until_answer <- function(proc, id, timeout = 60) {
  out <- list()
  repeat {
    msg <- mcp_read(proc, 1, timeout = timeout)
    if (!length(msg)) break
    out <- c(out, msg)
    if (identical(msg[[1]]$id, id)) break
  }
  out
}

test_that("a tool's progress reaches the client while it runs, in every version, before its answer", {
  tokens <- c("2026-07-28" = '"t\\u00e9-26"', "2025-11-25" = "7", "2025-06-18" = '"tok \\"q\\""',
              "2024-11-05" = "-3")
  for (version in all_versions) {
    proc <- progress_start(version)
    barrier <- tempfile("progress-barrier-")
    token_json <- tokens[[version]]
    mcp_send(proc, progress_call(version, 5, "report_wait", sprintf('{"barrier":%s}', json_arg(barrier)),
                                 token_json))
    # The tool is still running (it waits for the barrier): this came from it.
    first <- mcp_read(proc, 1)[[1]]
    expect_true(is_progress(first), info = version)
    expect_null(first$id)
    # The token is echoed exactly as the client wrote it (same JSON text).
    expect_true(grepl(paste0('"progressToken":', token_json), attr(first, "json"), fixed = TRUE),
                info = attr(first, "json"))
    expect_identical(first$params$progress, 1L)
    expect_identical(first$params$total, 2L)
    if (version == "2024-11-05") {
      expect_false("message" %in% names(first$params), info = "2024-11-05 has no message field")
    } else {
      expect_identical(first$params$message, "started")
    }
    file.create(barrier)
    rest <- mcp_read(proc, 2)
    expect_true(is_progress(rest[[1]]), info = version)
    expect_identical(rest[[1]]$params$progress, 2L)
    expect_identical(rest[[2]]$id, 5L)
    expect_identical(first_text(rest[[2]]), "finished")
    mcp_validate(c(list(first), rest), version,
                 def = c("ProgressNotification", "ProgressNotification", "CallToolResult"))
    # Nothing follows the answer.
    out <- mcp_close(proc)
    expect_length(out$responses, 0)
    unlink(barrier)
  }
})

# The `held` tool reports 1, waits until the test has seen it, reports 2
# (within the rate window of 1: held back) and holds the second barrier: 2
# can only come from the server's own thread, before the barrier is released.
expect_held_back_sent <- function(version, workers = NULL) {
  where <- if (is.null(workers)) "in-process" else workers
  proc <- progress_start(version, workers = workers)
  seen <- tempfile("progress-seen-")
  release <- tempfile("progress-release-")
  args <- sprintf('{"seen":%s,"release":%s}', json_arg(seen), json_arg(release))
  mcp_send(proc, progress_call(version, "h", "held", args, '"h"'))
  first <- mcp_read(proc, 1)[[1]]
  expect_identical(first$params$progress, 1L, info = where)
  file.create(seen)
  second <- mcp_read(proc, 1)[[1]]
  expect_true(is_progress(second), info = where)
  expect_identical(second$params$progress, 2L)
  expect_identical(second$params$message, "held back")
  mcp_validate(list(first, second), version, def = "ProgressNotification")
  file.create(release)
  answer <- mcp_read(proc, 1)[[1]]
  expect_identical(answer$id, "h")
  expect_identical(first_text(answer), "released")
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
  unlink(c(seen, release))
}

test_that("a value held back by the rate limit is sent by the server while the tool still runs", {
  for (version in c("2025-06-18", "2026-07-28")) {
    expect_held_back_sent(version)
  }
})

test_that("a loop of 1e5 reports sends at most what the rate limit allows, the latest last", {
  proc <- progress_start("2025-06-18")
  n <- 100000L
  mcp_send(proc, progress_call("2025-06-18", 1, "loop", sprintf('{"n":%d}', n), '"loop"'))
  msgs <- read_until_answer(proc, 1L)
  answer <- msgs[[length(msgs)]]
  notes <- msgs[-length(msgs)]
  expect_identical(answer$id, 1L)
  expect_true(all(vapply(notes, is_progress, logical(1))))
  values <- vapply(notes, function(m) as.numeric(m$params$progress), numeric(1))
  expect_true(all(diff(values) > 0))
  # Never lose the latest value: it is the last one, before the answer.
  expect_identical(values[[length(values)]], as.numeric(n))
  # One at once, then at most one per window while the loop ran (the loop's
  # own measure of its time), plus the one written with the answer.
  elapsed <- as.numeric(jsonlite::fromJSON(first_text(answer)))
  expect_lte(length(notes), 2 + ceiling(elapsed / 0.1) + 1)
  mcp_validate(notes[unique(c(1, length(notes)))], "2025-06-18", def = "ProgressNotification")
  mcp_close(proc)
})

test_that("mcp_progress() never waits for a client that does not read: values are coalesced, the latest kept", {
  for (workers in list(NULL, "1")) {
    proc <- progress_start("2025-06-18", workers = workers)
    done <- tempfile("progress-flood-")
    mcp_send(proc, progress_call("2025-06-18", 1, "flood", sprintf('{"steps":30,"done":%s}', json_arg(done)), '"f"'))
    # The test reads nothing until the tool has finished its loop: its
    # notifications (60 KB each) fill the pipe after one or two, and the tool
    # (in the server, or on its worker) goes on all the same.
    expect_true(wait_until(function() file.exists(done)))
    msgs <- read_until_answer(proc, 1L)
    notes <- Filter(is_progress, msgs)
    values <- vapply(notes, function(m) m$params$progress, integer(1))
    expect_true(all(diff(values) > 0))
    expect_identical(values[[length(values)]], 30L)
    # Not one per report: held back by the rate limit, or replaced while a
    # write waited.
    expect_lt(length(notes), 30)
    expect_identical(first_text(msgs[[length(msgs)]]), "flooded")
    expect_length(mcp_close(proc)$responses, 0)
    unlink(done)
  }
})

test_that("values that do not increase are dropped, and the author is told once (in-process and on workers)", {
  for (workers in list(NULL, "1")) {
    proc <- progress_start("2025-11-25", workers = workers)
    mcp_send(proc, progress_call("2025-11-25", 2, "wobbly", token_json = "2"))
    msgs <- read_until_answer(proc, 2L)
    notes <- Filter(is_progress, msgs)
    # 5 and 6 come close together: 5 may be replaced by 6 before it is sent.
    values <- vapply(notes, function(m) m$params$progress, integer(1))
    expect_true(all(values %in% c(5L, 6L)) && all(diff(values) > 0))
    expect_identical(values[[length(values)]], 6L)
    expect_identical(first_text(msgs[[length(msgs)]]), "wobbled")
    out <- mcp_close(proc)
    expect_length(out$responses, 0)
    said <- grep("does not exceed", strsplit(out$stderr, "\n")[[1]], value = TRUE)
    expect_length(said, 1)
    expect_match(said, "tool wobbly: mcp_progress(5) does not exceed the previous value (5)", fixed = TRUE)
  }
})

test_that("without a token (or with one of a kind MCP does not allow) nothing is sent", {
  proc <- progress_start("2025-06-18")
  barrier <- tempfile("progress-none-")
  file.create(barrier)
  args <- sprintf('{"barrier":%s}', json_arg(barrier))
  mcp_send(proc, progress_call("2025-06-18", 1, "report_wait", args))
  mcp_send(proc, progress_call("2025-06-18", 2, "report_wait", args, token_json = "1.5"))
  mcp_send(proc, progress_call("2025-06-18", 3, "report_wait", args, token_json = '{"a":1}'))
  got <- mcp_read(proc, 3)
  expect_identical(vapply(got, function(m) m$id, integer(1)), 1:3)
  expect_true(all(vapply(got, function(m) identical(first_text(m), "finished"), logical(1))))
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
  unlink(barrier)
})

test_that("bad arguments fail the tool with a message naming the argument, and send nothing", {
  proc <- progress_start("2026-07-28")
  cases <- c(progress = "`progress`", na = "`progress`", negative = "`progress`", total = "`total`",
             message = "`message`")
  for (i in seq_along(cases)) {
    mcp_send(proc, progress_call("2026-07-28", i, "bad", sprintf('{"which":"%s"}', names(cases)[[i]]), '"b"'))
    answer <- mcp_read(proc, 1)[[1]]
    expect_identical(answer$id, i)
    expect_true(isTRUE(answer$result$isError))
    expect_match(first_text(answer), cases[[i]], fixed = TRUE)
  }
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
})

test_that("outside a server mcp_progress() does nothing and returns invisibly", {
  expect_invisible(mcp_progress(1))
  expect_null(mcp_progress(2, total = 10, message = "two"))
  expect_null(mcp_progress(0L, total = 0L))
})

test_that("mcp_progress() refuses bad arguments with a classed error", {
  expect_error(mcp_progress("half"), class = "mcplite_error_progress")
  expect_error(mcp_progress(1, total = 0.5), class = "mcplite_error_argument")
  expect_snapshot(error = TRUE, {
    mcp_progress("half")
    mcp_progress(NA_real_)
    mcp_progress(-1)
    mcp_progress(Inf)
    mcp_progress(1:2)
    mcp_progress(factor("a"))
    mcp_progress(3, total = 2)
    mcp_progress(1, total = NA)
    mcp_progress(1, message = c("a", "b"))
    mcp_progress(1, message = NA_character_)
  })
})

# ---- on workers: relayed by the server, under the same rules ------------------

test_that("on workers, progress reaches the client while the tool runs, in every version, before its answer", {
  tokens <- c("2026-07-28" = '"w\\u00e9"', "2025-11-25" = "8", "2025-06-18" = '"w \\"q\\""',
              "2024-11-05" = "-4")
  for (version in all_versions) {
    proc <- progress_start(version, workers = "1")
    barrier <- tempfile("progress-barrier-")
    token_json <- tokens[[version]]
    # Without a token first: nothing but the answer.
    file.create(barrier)
    args <- sprintf('{"barrier":%s}', json_arg(barrier))
    mcp_send(proc, progress_call(version, 4, "report_wait", args))
    plain <- mcp_read(proc, 1)[[1]]
    expect_identical(plain$id, 4L)
    unlink(barrier)
    mcp_send(proc, progress_call(version, 5, "report_wait", args, token_json))
    # The tool is still running on its worker (it waits for the barrier).
    first <- mcp_read(proc, 1)[[1]]
    expect_true(is_progress(first), info = version)
    expect_true(grepl(paste0('"progressToken":', token_json), attr(first, "json"), fixed = TRUE),
                info = attr(first, "json"))
    expect_identical(first$params$progress, 1L)
    expect_identical(first$params$total, 2L)
    if (version == "2024-11-05") {
      expect_false("message" %in% names(first$params))
    } else {
      expect_identical(first$params$message, "started")
    }
    file.create(barrier)
    rest <- mcp_read(proc, 2)
    expect_true(is_progress(rest[[1]]), info = version)
    expect_identical(rest[[1]]$params$progress, 2L)
    expect_identical(rest[[2]]$id, 5L)
    expect_identical(first_text(rest[[2]]), "finished")
    mcp_validate(c(list(plain, first), rest), version,
                 def = c("CallToolResult", "ProgressNotification", "ProgressNotification", "CallToolResult"))
    out <- mcp_close(proc)
    expect_length(out$responses, 0)
    unlink(barrier)
  }
})

test_that("on workers, a value held back by the rate limit is sent by the server while the tool still runs", {
  for (workers in c("1", "mirai")) {
    expect_held_back_sent("2025-06-18", workers)
  }
})

test_that("on workers, a loop of 1e5 reports arrives increasing, coalesced, the latest last and before the answer", {
  proc <- progress_start("2026-07-28", workers = "1")
  n <- 100000L
  for (id in 1:2) {
    mcp_send(proc, progress_call("2026-07-28", id, "loop", sprintf('{"n":%d}', n), sprintf('"loop%d"', id)))
    msgs <- read_until_answer(proc, id)
    answer <- msgs[[length(msgs)]]
    notes <- msgs[-length(msgs)]
    expect_identical(answer$id, id)
    expect_true(all(vapply(notes, is_progress, logical(1))))
    expect_true(all(vapply(notes, function(m) identical(m$params$progressToken, sprintf("loop%d", id)), logical(1))))
    values <- vapply(notes, function(m) as.numeric(m$params$progress), numeric(1))
    expect_true(all(diff(values) > 0))
    expect_identical(values[[length(values)]], as.numeric(n))
    expect_lt(length(notes), n)
    mcp_validate(c(notes[unique(c(1, length(notes)))], list(answer)), "2026-07-28",
                 def = c(rep("ProgressNotification", length(unique(c(1, length(notes))))), "CallToolResult"))
  }
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
})

test_that("on workers, the answer waits for every report its worker sent", {
  # The last report (a 20 MB message) is still being read by the server
  # when the worker returns: it comes all the same, before the answer.
  proc <- progress_start("2024-11-05", workers = "1")
  for (id in 1:3) {
    mcp_send(proc, progress_call("2024-11-05", id, "long_last", '{"chars":20000000}', sprintf('"l%d"', id)))
    msgs <- read_until_answer(proc, id)
    expect_identical(first_text(msgs[[length(msgs)]]), "long")
    notes <- msgs[-length(msgs)]
    expect_true(length(notes) >= 1)
    expect_identical(notes[[length(notes)]]$params$progress, 2L, info = paste("call", id))
    mcp_validate(msgs, "2024-11-05", def = c(rep("ProgressNotification", length(notes)), "CallToolResult"))
  }
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
})

test_that("on workers, nothing is sent for a call once it is cancelled", {
  proc <- progress_start("2025-06-18", workers = "1")
  barrier <- tempfile("progress-cancel-")
  args <- sprintf('{"barrier":%s}', json_arg(barrier))
  mcp_send(proc, progress_call("2025-06-18", 7, "report_wait", args, '"c"'))
  first <- mcp_read(proc, 1)[[1]]
  expect_identical(first$params$progress, 1L)
  mcp_send(proc, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}')
  file.create(barrier)
  mcp_send(proc, rpc(8, "ping"))
  pong <- mcp_read(proc, 1)[[1]]
  expect_identical(pong$id, 8L)
  # The worker is free again: a new call with a token works.
  unlink(barrier)
  file.create(barrier)
  mcp_send(proc, progress_call("2025-06-18", 9, "report_wait", args, '"d"'))
  msgs <- read_until_answer(proc, 9L)
  # 1 and 2 come at once (the barrier is there): 1 may be replaced by 2.
  notes <- msgs[-length(msgs)]
  expect_true(all(vapply(notes, function(m) identical(m$params$progressToken, "d"), logical(1))))
  expect_identical(notes[[length(notes)]]$params$progress, 2L)
  expect_identical(msgs[[length(msgs)]]$id, 9L)
  out <- mcp_close(proc)
  expect_length(out$responses, 0)
  unlink(barrier)
})

# ---- mcp_client(): $call(progress = ) and $progress() -------------------------

test_that("mcp_client()'s $call() hands each progress notification to a callback while it waits", {
  skip_if_no_mcplite_child()
  for (protocol in c("2024-11-05", "2026-07-28")) {
    client <- fixture_client(protocol, server = "progress-server.R")
    barrier <- tempfile("client-barrier-")
    done <- tempfile("client-done-")
    seen <- list()
    # The tool waits for files only the callback creates: the callback runs
    # while the call waits, as each notification arrives.
    res <- client$call("report_wait", list(barrier = barrier, done = done), progress = function(progress, total, message) {
      seen[[length(seen) + 1L]] <<- list(progress = progress, total = total, message = message)
      file.create(if (progress == 1) barrier else done)
    })
    expect_identical(res$content[[1]]$text, "finished")
    expect_identical(vapply(seen, function(p) p$progress, integer(1)), 1:2)
    expect_identical(seen[[1]]$total, 2L)
    if (protocol == "2024-11-05") expect_null(seen[[1]]$message) else expect_identical(seen[[1]]$message, "started")
    recorded <- client$progress()
    expect_length(recorded, 2)
    expect_identical(recorded[[2]]$progress, 2L)
    expect_false(is.null(recorded[[1]]$progressToken))
    unlink(c(barrier, done))
  }
})

test_that("$call(progress = TRUE) records the notifications; without it the server sends none", {
  skip_if_no_mcplite_child()
  client <- fixture_client("2025-06-18", server = "progress-server.R")
  res <- client$call("wobbly", progress = TRUE)
  expect_identical(res$content[[1]]$text, "wobbled")
  values <- vapply(client$progress(), function(p) p$progress, integer(1))
  expect_identical(values[[length(values)]], 6L)
  expect_true(all(diff(values) > 0))
  before <- length(client$notifications())
  client$call("wobbly")
  expect_length(client$notifications(), before)
  expect_snapshot(error = TRUE, client$call("wobbly", progress = "yes"))
})

test_that("mcp_check(calls = ) reports progress the server dropped and bad mcp_progress() arguments", {
  skip_if_no_mcplite_child()
  res <- mcp_check(mcp_fixture_server("progress-server.R"), env = child_env(),
                   calls = list(wobbly = list(), bad = list(which = "total")))
  found <- res$problems[res$problems$rule == "progress_not_increasing", ]
  expect_true(nrow(found) >= 1)
  expect_true(all(found$tool == "wobbly"))
  expect_true(all(found$severity == "warning"))
  failed <- res$problems[res$problems$rule == "call_tool_error" & res$problems$tool == "bad", ]
  expect_true(nrow(failed) >= 1)
  expect_match(failed$message[[1]], "`total` (2) must not be smaller than `progress` (3)", fixed = TRUE)
})
