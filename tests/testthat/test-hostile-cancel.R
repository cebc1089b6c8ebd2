# Issue 13, class 7: cancellation matches request ids exactly. A slow call is
# cancelled while it runs; its answer must never appear when the cancellation
# names the same id, and must appear when it names another. Numbers are equal
# when their mathematical values are (1, 1.0, 1e0, 10e-1), integers of any
# size are compared exactly (never through doubles), a string never equals a
# number, and the escaped method name is the method name.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# request id (JSON text), requestId in the cancellation (JSON text), method
# name as written in the JSON string, and whether the answer must be dropped.
cancel_cases <- list(
  list("1", "1.0", "notifications/cancelled", TRUE),
  list("2", "2e0", "notifications/cancelled", TRUE),
  list("3", "30e-1", "notifications/cancelled", TRUE),
  list("100", "1E2", "notifications/cancelled", TRUE),
  list("5", "5.000", "notifications/cancelled", TRUE),
  list("16", "1.6e1", "notifications/cancelled", TRUE),
  list("-7", "-7.0", "notifications/cancelled", TRUE),
  list("0", "-0", "notifications/cancelled", TRUE),
  list("18446744073709551616", "18446744073709551616", "notifications/cancelled", TRUE),
  list("18446744073709551618", "18446744073709551618.0", "notifications/cancelled", TRUE),
  list('"abc"', '"abc"', "notifications/cancelled", TRUE),
  list('"\u00e9t\u00e9"', '"\\u00e9t\\u00e9"', "notifications/cancelled", TRUE),
  list("13", "13", "notifications\\/cancelled", TRUE),
  list("14", "14", "notifications\\u002fcancelled", TRUE),
  list("8", '"8"', "notifications/cancelled", FALSE),
  list('"9"', "9", "notifications/cancelled", FALSE),
  list("18446744073709551617", "18446744073709551616", "notifications/cancelled", FALSE),
  list("9007199254740993", "9007199254740992", "notifications/cancelled", FALSE),
  list("123456789012345678901234567890", "123456789012345678901234567891", "notifications/cancelled", FALSE),
  list("-9223372036854775809", "-9223372036854775808", "notifications/cancelled", FALSE),
  list("12", "12.5", "notifications/cancelled", FALSE),
  list('"abd"', '"ABD"', "notifications/cancelled", FALSE),
  list('"x"', '"x "', "notifications/cancelled", FALSE),
  list("15", "15", "notifications/cancelle", FALSE)
)

raw_call <- function(version, id_json, tool, args) {
  meta <- if (version == "2026-07-28") paste0(",", modern_meta(version)) else ""
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s%s}}', id_json, tool, args, meta)
}

# The id of a response line exactly as written.
raw_id <- function(line) {
  m <- regmatches(line, regexec('^\\{"jsonrpc":"2\\.0","id":(.*),"(result|error)":', line))[[1]]
  if (length(m)) m[2] else NA_character_
}

run_cancel_cases <- function(version) {
  skip_if_no_mcplite_child()
  s <- hs_start(version)
  on.exit(mcp_kill(s$proc), add = TRUE)
  problems <- character()
  for (k in seq_along(cancel_cases)) {
    cc <- cancel_cases[[k]]
    # The cancellation is sent once the call runs (the tool writes `started`).
    started <- gsub("\\\\", "/", tempfile("cancel-started-"))
    hs_quiet(s, mcp_send(s$proc, raw_call(version, cc[[1]], "spin", sprintf('{"seconds":0.3,"started":"%s"}', started))))
    wait_until(function() file.exists(started) || !s$proc$process$is_alive(), timeout = 10)
    hs_quiet(s, mcp_send(s$proc, sprintf('{"jsonrpc":"2.0","method":"%s","params":{"requestId":%s,"reason":"hostile"}}', cc[[3]], cc[[2]])))
    nxt <- sprintf("next-%d", k)
    hs_quiet(s, mcp_send(s$proc, hs_call_line(s, nxt, "echo", sprintf('{"x":"%s"}', nxt))))
    deadline <- Sys.time() + 10
    while (!any(grepl(sprintf('"id":"%s"', nxt), s$proc$lines, fixed = TRUE)) && Sys.time() < deadline && s$proc$process$is_alive()) {
      if (hs_quiet(s, mcp_pump(s$proc)) == 0) Sys.sleep(0.005)
    }
    if (!any(grepl(sprintf('"id":"%s"', nxt), s$proc$lines, fixed = TRUE))) {
      problems <- c(problems, sprintf("request %s cancelled by %s: the next request was not answered", cc[[1]], cc[[2]]))
      if (!s$proc$process$is_alive()) {
        problems <- c(problems, sprintf("the server died: %s", hs_tail(mcp_stderr(s$proc))))
        break
      }
    }
  }
  out <- hs_quiet(s, mcp_close(s$proc))
  ids <- vapply(s$proc$lines, raw_id, "", USE.NAMES = FALSE)
  for (cc in cancel_cases) {
    n <- sum(ids == cc[[1]], na.rm = TRUE)
    want <- if (cc[[4]]) 0L else 1L
    if (n != want) {
      problems <- c(problems, sprintf("request %s, cancellation %s (method %s): %d answer(s), want %d",
                                      cc[[1]], cc[[2]], cc[[3]], n, want))
    }
  }
  for (k in seq_along(cancel_cases)) {
    if (sum(ids == sprintf('"next-%d"', k), na.rm = TRUE) != 1) problems <- c(problems, sprintf("next-%d not answered once", k))
  }
  expect_identical(out$status, 0L)
  mcp_validate(out$responses, version)
  hs_report(c(s$problems, problems), sprintf("cancellation in %s", version))
}

test_that("cancellation drops exactly the answer whose id it names (2026-07-28)", {
  run_cancel_cases("2026-07-28")
})

test_that("cancellation drops exactly the answer whose id it names (2025-11-25)", {
  run_cancel_cases("2025-11-25")
})
