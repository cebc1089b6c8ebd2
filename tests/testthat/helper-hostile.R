# Helpers for the test-hostile-*.R files (issue 13: the attacker's suite).
#
# A "session" is one server process that many generated requests go through.
# hs_batch() pipelines a batch of requests, matches answers by id and turns
# every fault into a line in s$problems instead of stopping at the first: a
# request answered twice, an answer nobody asked for, a server that died or
# stalled (the first unanswered request of the batch is blamed, since the
# server runs tools one at a time and in order; the server is then restarted and
# the rest of the batch resent). hs_report() fails the test once with all of
# them. Stdout purity is asserted line by line by the harness (mcp_check_line).

hostile_server <- function() mcp_fixture_server("hostile-server.R")

hostile_fixture_env <- new.env(parent = emptyenv())

# hostile-cases.R, loaded once into an environment of its own.
hostile_case_env <- function() {
  if (is.null(hostile_fixture_env$cases)) {
    env <- new.env(parent = globalenv())
    sys.source(mcp_fixture_server("hostile-cases.R"), envir = env)
    hostile_fixture_env$cases <- env
  }
  hostile_fixture_env$cases
}

hs_start <- function(version, server = hostile_server(), env = NULL, spawn = NULL) {
  s <- new.env(parent = emptyenv())
  s$version <- version
  s$server <- server
  s$env <- env
  s$spawn <- if (is.null(spawn)) function() mcp_start(server, env = env) else spawn
  s$problems <- character()
  s$crashes <- 0L
  s$next_id <- 0L
  hs_boot(s)
  s
}

# Run `expr`, turning the harness's failed expectations (a stdout line that is
# not a response, a write to a dead server) into problems of the session: one
# report at the end instead of thousands of slow failures.
hs_quiet <- function(s, expr) {
  withCallingHandlers(expr, expectation_failure = function(e) {
    s$problems <- c(s$problems, hs_show(conditionMessage(e), 400))
    invokeRestart("continue_test")
  })
}

hs_boot <- function(s) {
  s$proc <- s$spawn()
  s$pid <- s$proc$process$get_pid()
  if (!identical(s$version, "2026-07-28")) {
    mcp_send(s$proc, initialize_line(s$version, id = "init"))
    init <- mcp_read(s$proc, 1, timeout = 30)
    if (length(init) != 1 || !identical(init[[1]]$id, "init")) stop("the hostile server did not initialize")
    mcp_send(s$proc, initialized_line())
  }
  invisible(s)
}

# A fresh string id for the session (never 99, never numeric).
hs_id <- function(s) {
  s$next_id <- s$next_id + 1L
  sprintf("h%d", s$next_id)
}

# A tools/call line in the session's protocol version.
hs_call_line <- function(s, id, tool, arguments = "{}") {
  if (identical(s$version, "2026-07-28")) modern_call(id, tool, arguments) else legacy_call(id, tool, arguments)
}

# One item per request: list(id, line, label). Returns the answers as a list
# named by id (NULL for requests that never got one). `timeout`: seconds
# without any new answer before the server counts as stalled.
hs_batch <- function(s, items, timeout = 60) {
  ids <- vapply(items, `[[`, "", "id")
  answers <- setNames(vector("list", length(ids)), ids)
  # Ids seen on any stdout line, even a broken one: a request the server did
  # answer (however badly) is not the one that killed it.
  seen <- character()
  lines_done <- length(s$proc$lines)
  start <- 1L
  while (start <= length(items)) {
    todo <- items[start:length(items)]
    for (it in todo) {
      if (!s$proc$process$is_alive()) break
      hs_quiet(s, tryCatch(mcp_send(s$proc, it$line), error = function(e) NULL))
    }
    deadline <- Sys.time() + timeout
    repeat {
      got <- hs_quiet(s, mcp_pump(s$proc))
      # The harness keeps every stdout byte; nothing here needs them, and
      # appending to an ever larger vector makes long batches quadratic.
      s$proc$stdout <- raw()
      if (length(s$proc$lines) > lines_done) {
        fresh <- s$proc$lines[(lines_done + 1):length(s$proc$lines)]
        lines_done <- length(s$proc$lines)
        hit <- regmatches(fresh, regexpr('"id":"h[0-9]+"', fresh, useBytes = TRUE))
        seen <- c(seen, gsub('^"id":"|"$', "", hit))
      }
      while (length(s$proc$queue)) {
        msg <- s$proc$queue[[1]]
        s$proc$queue <- s$proc$queue[-1]
        id <- msg$id
        if (!is.null(attr(msg, "invalid"))) {
          # Already recorded by the harness's line check (through hs_quiet).
        } else if (!is.character(id) || length(id) != 1 || !(id %in% ids)) {
          s$problems <- c(s$problems, sprintf("answer nobody asked for: %s", hs_show(attr(msg, "json"), 300)))
        } else if (!is.null(answers[[id]])) {
          s$problems <- c(s$problems, sprintf("second answer to %s (%s)", id, items[[match(id, ids)]]$label))
        } else {
          answers[[id]] <- msg
        }
      }
      unanswered <- which(vapply(answers, is.null, TRUE) & !(ids %in% seen))
      unanswered <- unanswered[unanswered >= start]
      if (!length(unanswered)) {
        start <- length(items) + 1L
        break
      }
      alive <- s$proc$process$is_alive()
      if (got == 0 && (!alive || Sys.time() > deadline)) {
        if (!alive) hs_quiet(s, mcp_pump(s$proc))
        culprit <- unanswered[1]
        s$crashes <- s$crashes + 1L
        err <- mcp_stderr(s$proc)
        s$problems <- c(s$problems, sprintf(
          "%s: no answer to %s; server %s; stderr ends: %s",
          items[[culprit]]$label, ids[culprit],
          if (alive) sprintf("stalled for %ss (killed)", timeout) else sprintf("exited with status %s", s$proc$process$get_exit_status()),
          hs_tail(err, 300)
        ))
        mcp_kill(s$proc)
        hs_boot(s)
        lines_done <- length(s$proc$lines)
        start <- culprit + 1L
        break
      }
      if (got == 0) Sys.sleep(0.003) else deadline <- Sys.time() + timeout
    }
  }
  answers
}

# Close stdin and check the end: no stray line, exit status 0.
hs_close <- function(s, status = 0L) {
  out <- mcp_close(s$proc)
  for (msg in out$responses) {
    s$problems <- c(s$problems, sprintf("line after the last request: %s", hs_show(attr(msg, "json"), 300)))
  }
  if (!identical(out$status, status)) {
    s$problems <- c(s$problems, sprintf("server exit status %s at end of input (expected %s)", out$status, status))
  }
  invisible(out)
}

# Any string, shortened and shown safely (invalid UTF-8 as <xx> bytes).
hs_show <- function(x, n = 200) {
  if (!is.character(x) || length(x) != 1 || is.na(x)) return(paste(format(x), collapse = " "))
  if (!validUTF8(x)) x <- iconv(x, "UTF-8", "UTF-8", sub = "byte")
  if (nchar(x) > n) paste0(substr(x, 1, n), "...") else x
}

# The end of a text (stderr), on one line.
hs_tail <- function(x, n = 300) {
  x <- gsub("\n", " | ", hs_show(x, .Machine$integer.max))
  if (nchar(x) > n) paste0("...", substr(x, nchar(x) - n + 1, nchar(x))) else x
}

hs_problem <- function(s, label, what) {
  s$problems <- c(s$problems, sprintf("%s: %s", label, what))
  invisible(FALSE)
}

# One failure listing every problem (at most `show` of them in full).
hs_report <- function(problems, what, show = as.integer(Sys.getenv("MCPLITE_HOSTILE_SHOW", "40"))) {
  n <- length(problems)
  testthat::expect(
    n == 0,
    sprintf("%s: %d problem(s)%s\n%s", what, n, if (n > show) sprintf(" (first %d shown)", show) else "",
            paste0("  - ", utils::head(problems, show), collapse = "\n"))
  )
}

# Schema-validate answers (a list, NULLs skipped): results as `def`, errors
# as envelopes (the checks of each test say whether an error was right).
hs_validate <- function(answers, version, def = "CallToolResult") {
  got <- unname(Filter(Negate(is.null), answers))
  if (!length(got)) return(invisible())
  defs <- vapply(got, function(r) if (is.null(r$result)) NA_character_ else def, "")
  hs_validate_many(got, version, defs)
}

# mcp_validate() for thousands of answers: the same requests to the same
# shared validate.mjs process, but written in one go and read back in order
# (one round trip per answer costs seconds per thousand).
hs_validate_many <- function(responses, version, def = NA, strict = TRUE) {
  v <- mcp_validator()
  def <- rep_len(def, length(responses))
  requests <- vapply(seq_along(responses), function(i) {
    head <- list(version = version, strict = strict)
    if (!is.na(def[[i]])) head$def <- def[[i]]
    head_json <- as.character(jsonlite::toJSON(head, auto_unbox = TRUE))
    line <- paste0(substr(head_json, 1, nchar(head_json) - 1), ',"message":', mcp_message_json(responses[[i]]), "}")
    gsub("\n", " ", line, fixed = TRUE)
  }, "")
  verdicts <- character()
  left <- charToRaw(paste0(paste(requests, collapse = "\n"), "\n"))
  deadline <- Sys.time() + 120
  while (length(verdicts) < length(requests)) {
    if (length(left)) left <- v$write_input(left)
    v$poll_io(if (length(left)) 10 else 200)
    verdicts <- c(verdicts, v$read_output_lines())
    if (!v$is_alive()) stop("validate.mjs died: ", paste(v$read_all_error_lines(), collapse = "\n"))
    if (Sys.time() > deadline) stop("validate.mjs did not answer within 120s")
  }
  failures <- character()
  for (i in seq_along(verdicts)) {
    res <- jsonlite::parse_json(verdicts[[i]], simplifyVector = TRUE)
    if (!isTRUE(res$ok)) {
      failures <- c(failures, sprintf("response %d (%s, %s): %s\n  %s", i, version,
                                      if (is.na(def[[i]])) "envelope" else def[[i]],
                                      hs_show(mcp_message_json(responses[[i]]), 400),
                                      paste(utils::head(unlist(res$errors), 6), collapse = "\n  ")))
    }
  }
  testthat::expect(length(failures) == 0, paste(c(sprintf("schema validation failed for %d of %d answers:", length(failures), length(responses)),
                                                  utils::head(failures, 30)), collapse = "\n"))
  invisible(responses)
}

# Texts of all text blocks of a tools/call answer, joined.
hs_text <- function(response) {
  blocks <- response$result$content
  paste(vapply(blocks, function(b) if (is.character(b$text)) paste(b$text, collapse = "") else "", ""), collapse = "\n")
}

hs_is_error <- function(response) isTRUE(response$result$isError)

# TRUE when `x` is one string that is valid JSON text (jsonlite's reading).
hs_valid_json <- function(x) {
  is.character(x) && length(x) == 1 && !is.na(x) && isTRUE(tryCatch(jsonlite::validate(x), error = function(e) FALSE))
}

# `x` in UTF-8, or NA when it cannot be (invalid bytes, "bytes" encoding).
hs_utf8 <- function(x) {
  if (!is.character(x) || length(x) != 1 || is.na(x)) return(NA_character_)
  x <- as.character(x) # drops classes and attributes
  # enc2utf8() writes invalid native bytes as "<ff>" text: refuse them first.
  if (Encoding(x) == "bytes" || (Encoding(x) == "unknown" && !validUTF8(x))) return(NA_character_)
  y <- tryCatch(enc2utf8(x), error = function(e) NA_character_)
  if (is.na(y) || !validUTF8(y)) NA_character_ else y
}

# A JSON string literal for any R string (UTF-8), for building argument JSON.
json_str <- function(x) as.character(jsonlite::toJSON(enc2utf8(x), auto_unbox = TRUE))

# Start a server like mcp_start() does (stdout the same FIFO, so the same
# line checks apply), but with standard error either closed before R
# starts (`stderr = "closed"`, the shell's 2>&-) or a pipe the caller may close
# (`stderr = "pipe"`; close(proc$process$get_error_connection()) leaves it a
# pipe without a reader).
hs_spawn <- function(script, stderr = c("closed", "pipe"), env = NULL) {
  stderr <- match.arg(stderr)
  proc <- new.env(parent = emptyenv())
  proc$script <- normalizePath(script)
  proc$buffer <- raw()
  proc$stdout <- raw()
  proc$lines <- character()
  proc$queue <- list()
  proc$stderr_file <- tempfile("mcp-stderr-", fileext = ".txt")
  child_env <- c("current", R_LIBS = mcp_child_libs(), env)
  proc$process <- if (stderr == "closed") {
    processx::process$new("sh", c("-c", 'exec "$0" --vanilla "$1" 2>&-', mcp_rscript(), proc$script),
                          stdin = "|", stdout = mcp_stdout_pipe(proc), stderr = NULL, env = child_env, cleanup = TRUE)
  } else {
    processx::process$new(mcp_rscript(), c("--vanilla", proc$script),
                          stdin = "|", stdout = mcp_stdout_pipe(proc), stderr = "|", env = child_env, cleanup = TRUE)
  }
  class(proc) <- "mcp_server_process"
  proc
}

# Skip where a class of fault needs POSIX signals or pipes.
skip_unless_posix <- function(what) {
  if (.Platform$OS.type != "unix") testthat::skip(sprintf("%s needs POSIX signals and pipes", what))
}

# Whether this process has SIGINT ignored (Linux: /proc), which every child
# inherits and R then keeps: R installs no interrupt handler, so an
# interrupt sent to a child R is lost. A shell without job control starts
# background commands so; tests that interrupt R say so instead of waiting.
sigint_ignored <- function() {
  status <- tryCatch(readLines("/proc/self/status", warn = FALSE), error = function(e) character())
  mask <- sub("^SigIgn:\\s*", "", grep("^SigIgn:", status, value = TRUE))
  if (length(mask) != 1) return(FALSE)
  # SIGINT is signal 2: bit 1 of the last hexadecimal digit.
  last <- strtoi(substring(mask, nchar(mask)), 16L)
  !is.na(last) && bitwAnd(last, 2L) != 0L
}
