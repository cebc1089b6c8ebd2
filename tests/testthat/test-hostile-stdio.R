# Issue 13, classes 3, 4 and 6: the process's standard streams while serving.
# Standard input belongs to the core (a tool reading it sees end of file at
# once and steals nothing), a second server inside a tool fails at once, and a
# standard error nobody can read never costs an answer.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

stdin_readers <- c("readLines_stdin", "readLines_file", "scan", "readline", "readBin", "system_cat", "system2_cat")

test_that("a tool that reads standard input sees end of file at once and steals no request", {
  skip_if_no_mcplite_child()
  for (version in c("2025-11-25", "2026-07-28")) {
    s <- hs_start(version)
    items <- list()
    followers <- character()
    for (how in stdin_readers) {
      id <- hs_id(s)
      items[[length(items) + 1]] <- list(id = id, line = hs_call_line(s, id, "read_stdin", sprintf('{"how":"%s"}', how)),
                                         label = sprintf("read_stdin(%s)", how), how = how)
      # Requests right behind the reading call: a thief would swallow these.
      for (k in 1:4) {
        fid <- hs_id(s)
        followers <- c(followers, fid)
        items[[length(items) + 1]] <- list(id = fid, line = hs_call_line(s, fid, "echo", sprintf('{"x":"after %s %d"}', how, k)),
                                           label = sprintf("echo %d after read_stdin(%s)", k, how), want = sprintf("after %s %d", how, k))
      }
    }
    answers <- hs_batch(s, items, timeout = 4)
    problems <- character()
    for (it in items) {
      r <- answers[[it$id]]
      if (is.null(r)) next
      if (!is.null(it$how)) {
        re <- sprintf("^%s read [01] element\\(s\\) in [01]\\.[0-9] s$", it$how)
        if (hs_is_error(r) || !grepl(re, hs_text(r))) {
          problems <- c(problems, sprintf("%s (%s): %s", it$label, version, hs_show(hs_text(r))))
        }
      } else if (!identical(hs_text(r), it$want)) {
        problems <- c(problems, sprintf("%s (%s): %s", it$label, version, hs_show(hs_text(r))))
      }
    }
    hs_close(s)
    hs_validate(answers, version)
    hs_report(c(s$problems, problems), sprintf("stdin readers in %s (%d server deaths or stalls)", version, s$crashes))
  }
})

test_that("a server started inside a tool fails at once with a classed error; the outer one goes on", {
  skip_if_no_mcplite_child()
  s <- hs_start("2025-11-25")
  items <- list(
    list(id = "r1", line = hs_call_line(s, "r1", "reenter"), label = "reenter"),
    list(id = "r2", line = hs_call_line(s, "r2", "reenter_class"), label = "reenter_class"),
    list(id = "r3", line = hs_call_line(s, "r3", "reenter"), label = "reenter again"),
    list(id = "r4", line = hs_call_line(s, "r4", "echo", '{"x":"outer"}'), label = "echo after")
  )
  # A nested server that waited for input would hold r1 for ever: the
  # timeout only stops a hung test, the answers after r1 are the ordering.
  a <- hs_batch(s, items, timeout = 60)
  hs_close(s)
  hs_report(s$problems, "re-entrancy")
  expect_true(hs_is_error(a$r1))
  expect_true(hs_is_error(a$r3))
  expect_match(hs_text(a$r2), "mcplite_error_server", fixed = TRUE)
  expect_match(hs_text(a$r2), "mcplite_error", fixed = TRUE)
  expect_false(hs_is_error(a$r2))
  expect_identical(hs_text(a$r4), "outer")
  hs_validate(a, "2025-11-25")
})

stderr_batch <- function(s) {
  items <- list()
  add <- function(tool, args, label, want) {
    id <- hs_id(s)
    items[[length(items) + 1]] <<- list(id = id, line = hs_call_line(s, id, tool, args), label = label, want = want)
  }
  for (k in 1:3) {
    add("fail", '{"reason":"first"}', sprintf("fail %d", k), "error")
    add("noisy", '{"bytes":100}', sprintf("noisy %d", k), "noisy done")
    add("fail", sprintf('{"reason":"%s"}', strrep("long ", 20000)), sprintf("fail with a 100 kB message %d", k), "error")
    add("noisy", '{"bytes":200000}', sprintf("noisy with a 200 kB message %d", k), "noisy done")
    add("echo", sprintf('{"x":"alive %d"}', k), sprintf("echo %d", k), sprintf("alive %d", k))
  }
  answers <- hs_batch(s, items, timeout = 10)
  problems <- character()
  for (it in items) {
    r <- answers[[it$id]]
    if (is.null(r)) next
    if (is.null(r$result)) {
      problems <- c(problems, sprintf("%s: protocol error %s (%s) instead of a result", it$label, r$error$code, r$error$message))
    } else if (identical(it$want, "error")) {
      if (!hs_is_error(r) || !grepl("hostile failure", hs_text(r))) problems <- c(problems, sprintf("%s: %s", it$label, hs_show(hs_text(r))))
    } else if (!identical(hs_text(r), it$want) || hs_is_error(r)) {
      problems <- c(problems, sprintf("%s: %s", it$label, hs_show(hs_text(r))))
    }
  }
  list(answers = answers, problems = problems)
}

test_that("with standard error closed (2>&-), failing and noisy tools still get their answers", {
  skip_if_no_mcplite_child()
  skip_unless_posix("closing standard error")
  s <- hs_start("2025-11-25", spawn = function() hs_spawn(hostile_server(), "closed"))
  out <- stderr_batch(s)
  hs_close(s)
  hs_validate(out$answers, "2025-11-25")
  hs_report(c(s$problems, out$problems), sprintf("stderr closed (%d server deaths or stalls)", s$crashes))
})

test_that("with standard error a pipe whose reader has gone, failing and noisy tools still get their answers", {
  skip_if_no_mcplite_child()
  skip_unless_posix("a pipe without a reader")
  s <- hs_start("2026-07-28", spawn = function() {
    proc <- hs_spawn(hostile_server(), "pipe")
    close(proc$process$get_error_connection())
    proc
  })
  out <- stderr_batch(s)
  hs_close(s)
  hs_validate(out$answers, "2026-07-28")
  hs_report(c(s$problems, out$problems), sprintf("stderr without a reader (%d server deaths or stalls)", s$crashes))
})
