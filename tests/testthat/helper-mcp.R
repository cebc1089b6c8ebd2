# Test harness: real mcplite servers over real pipes.
#
# mcp_start()    start `Rscript --vanilla <script>` with stdin/stdout/stderr pipes
# mcp_send()     write one line (character sent byte for byte, raw as is, list as JSON)
# mcp_read()     read n response lines (parsed; the exact line is attr(x, "json"))
# mcp_close()    close stdin, wait for exit, return what is left
# mcp_exchange() start, send all lines, close stdin, collect everything until exit
# mcp_validate() validate responses against the official schema of a version
#                through one shared tests/node/validate.mjs process
#
# Every read asserts that every stdout byte belongs to a JSON-RPC response line:
# valid UTF-8, one JSON object per "\n"-terminated line, jsonrpc "2.0", exactly
# one of result / error (or a notifications/progress notification, without
# id). stdout is read as raw bytes (mcp_stdout_bytes()), so
# invalid UTF-8 cannot be silently dropped by a decoder. On Unix it is a FIFO
# (a pipe, as most clients give a server; processx's own "|" is a socket pair)
# read through processx's connection. Never read a non-blocking R connection
# (fifo(blocking = FALSE)) for this: R 4.2's buffered readBin() reads in 8 KB
# slices and, when the pipe runs dry exactly at a slice's end, signals an
# error for the EAGAIN that follows and drops every byte it had already taken
# out of the pipe (a pipe-full of answers lost, seen as a stalled server).

mcp_rscript <- function() {
  exe <- if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript"
  file.path(R.home("bin"), exe)
}

# Library path for the child: the caller's R_LIBS plus this session's library
# paths, so a server finds the mcplite under test (R CMD check, R_LIBS=...).
mcp_child_libs <- function() {
  libs <- c(strsplit(Sys.getenv("R_LIBS"), .Platform$path.sep, fixed = TRUE)[[1]], .libPaths())
  paste(unique(libs[nzchar(libs)]), collapse = .Platform$path.sep)
}

# Every process the tests start inherits a temporary folder inside this R's
# own, which R removes when it exits: a server killed before it cleans up
# (the private directory of `workers = n`), however it was started (mcp_start(),
# mcp_client(), mcp_check(), a client program), leaves nothing behind in the
# temporary folder of `R CMD check`. Tests that need another TMPDIR set it.
if (.Platform$OS.type != "windows" && !identical(Sys.getenv("MCPLITE_TEST_CHILD_TMPDIR"), "set")) {
  local({
    children <- file.path(tempdir(), "children")
    dir.create(children, showWarnings = FALSE)
    Sys.setenv(TMPDIR = children, MCPLITE_TEST_CHILD_TMPDIR = "set")
  })
}

# Start a server. `script_or_code` is a path to an existing .R file, or R code
# (a character vector) that is written to a temporary script. `env` is a named
# character vector of extra environment variables.
mcp_start <- function(script_or_code, env = NULL, args = character()) {
  if (length(script_or_code) == 1 && !grepl("\n", script_or_code) && file.exists(script_or_code)) {
    script <- normalizePath(script_or_code)
  } else {
    script <- tempfile("mcp-server-", fileext = ".R")
    writeLines(script_or_code, script, useBytes = TRUE)
  }
  state <- new.env(parent = emptyenv())
  state$script <- script
  state$buffer <- raw() # bytes read but not yet split into lines
  state$stdout <- raw() # every stdout byte ever read
  state$lines <- character() # every complete line (without "\n")
  state$queue <- list() # parsed responses not yet returned by mcp_read()
  state$stderr_file <- tempfile("mcp-stderr-", fileext = ".txt")

  child_env <- c("current", R_LIBS = mcp_child_libs())
  if (length(env)) child_env <- c(child_env, env)
  # A temporary folder of the server's own, removed by mcp_kill(): a server
  # killed before it cleans up (a workers server's private directory, R's
  # session directory) leaves nothing in the tests' temporary folder.
  if (.Platform$OS.type != "windows" && !"TMPDIR" %in% names(env)) {
    state$tmpdir <- tempfile("srv-")
    dir.create(state$tmpdir)
    child_env <- c(child_env, TMPDIR = state$tmpdir)
  }

  state$process <- processx::process$new(
    mcp_rscript(), c("--vanilla", script, args),
    stdin = "|", stdout = mcp_stdout_pipe(state), stderr = state$stderr_file,
    env = child_env, encoding = "UTF-8", cleanup = TRUE
  )
  class(state) <- "mcp_server_process"
  state
}


print.mcp_server_process <- function(x, ...) {
  cat("<mcp server process> ", x$script, " alive: ", x$process$is_alive(), "\n", sep = "")
  invisible(x)
}

# What a server's stdout is, for processx::process$new(stdout =): on Unix a
# FIFO whose reading end `proc$stdout_con` the harness holds, elsewhere "|".
mcp_stdout_pipe <- function(proc) {
  if (.Platform$OS.type != "unix") return("|")
  proc$stdout_kind <- "fifo"
  proc$stdout_con <- processx::conn_create_fifo(tempfile("mcp-stdout-"), read = TRUE)
  processx::conn_file_name(proc$stdout_con)
}

# The stdout bytes a server has written and nobody has read yet, without
# waiting: every byte exactly once (raw(0) when none is ready, and at end of
# file). At most `n` bytes when n >= 0.
mcp_stdout_bytes <- function(proc, n = -1) {
  if (!is.null(proc$stdout_con)) return(processx::conn_read_bytes(proc$stdout_con, n))
  if (identical(proc$stdout_kind, "fifo")) return(raw()) # released: the server is gone
  proc$process$read_output_bytes(n)
}

# Let go of the FIFO (once the server is gone, or given up on).
mcp_stdout_release <- function(proc) {
  if (is.null(proc$stdout_con)) return(invisible())
  path <- processx::conn_file_name(proc$stdout_con)
  try(close(proc$stdout_con), silent = TRUE)
  unlink(path)
  proc$stdout_con <- NULL
  invisible()
}

# Read whatever stdout bytes are available now; returns the number read.
mcp_pump <- function(proc) {
  chunk <- mcp_stdout_bytes(proc)
  if (length(chunk)) {
    proc$stdout <- c(proc$stdout, chunk)
    proc$buffer <- c(proc$buffer, chunk)
    nl <- which(proc$buffer == as.raw(10L))
    if (length(nl)) {
      last <- nl[length(nl)]
      complete <- proc$buffer[seq_len(last)]
      proc$buffer <- proc$buffer[-seq_len(last)]
      starts <- c(1L, nl[-length(nl)] + 1L)
      for (i in seq_along(nl)) {
        bytes <- complete[starts[i]:nl[i]]
        line <- rawToChar(bytes[-length(bytes)])
        proc$lines <- c(proc$lines, line)
        proc$queue[[length(proc$queue) + 1L]] <- mcp_check_line(line)
      }
    }
  }
  length(chunk)
}

# The stdout purity assertion for one line: fails the current test with the
# offending line. Returns the parsed message with attr "json" = the exact line.
mcp_check_line <- function(line) {
  shown <- if (validUTF8(line)) {
    encodeString(substr(line, 1, 300), quote = "'")
  } else {
    paste0("<bytes ", paste(utils::head(charToRaw(line), 100), collapse = " "), ">")
  }
  problem <- if (!validUTF8(line)) {
    "is not valid UTF-8"
  } else if (grepl("\r", line, fixed = TRUE)) {
    "contains a carriage return"
  } else if (!isTRUE(jsonlite::validate(line))) {
    "is not JSON"
  } else {
    msg <- jsonlite::parse_json(line, simplifyVector = FALSE)
    if (!is.list(msg) || is.null(names(msg)) || !startsWith(trimws(line), "{")) {
      "is not a JSON object"
    } else if (!identical(msg$jsonrpc, "2.0")) {
      "lacks jsonrpc \"2.0\""
    } else if (isTRUE(msg$method %in% c("notifications/progress", "notifications/tools/list_changed")) &&
               !("id" %in% names(msg))) {
      # The messages a server sends unasked: mcp_progress(), and the
      # session server's change of tools (mcp_session()).
      if (any(c("result", "error") %in% names(msg))) "is a notification with a result or error" else NULL
    } else if (("result" %in% names(msg)) == ("error" %in% names(msg))) {
      "does not hold exactly one of result and error"
    } else {
      NULL
    }
  }
  # Only failures are signalled, so expect_failure() in a caller sees the
  # first real problem rather than a success per clean line.
  if (!is.null(problem)) {
    testthat::fail(sprintf("stdout line %s %s", shown, problem))
    return(structure(list(), json = line, invalid = problem))
  }
  structure(jsonlite::parse_json(line, simplifyVector = FALSE), json = line)
}

# Send one line. A list is serialized with jsonlite (auto_unbox; use a JSON
# string when exact numbers or {} vs [] matter). A character string is sent
# byte for byte; a raw vector is sent as is. A "\n" is appended unless
# `newline = FALSE`.
mcp_send <- function(proc, line_or_list, newline = TRUE) {
  bytes <- if (is.raw(line_or_list)) {
    line_or_list
  } else if (is.character(line_or_list)) {
    charToRaw(paste(line_or_list, collapse = "\n"))
  } else {
    charToRaw(enc2utf8(as.character(
      jsonlite::toJSON(line_or_list, auto_unbox = TRUE, null = "null", digits = NA)
    )))
  }
  if (newline) bytes <- c(bytes, as.raw(10L))
  # Written in slices: write_input() returns the bytes it could not write, a
  # copy, so handing it a 100 MB line whole costs a copy per pipe-full. The
  # deadline is for the server to take no byte at all for 30 s.
  slice <- 1048576
  at <- 0
  deadline <- Sys.time() + 30
  while (at < length(bytes)) {
    if (!proc$process$is_alive()) {
      testthat::fail(sprintf("server exited before it read all input; stderr:\n%s", mcp_stderr(proc)))
      return(invisible(proc))
    }
    chunk <- bytes[seq.int(at + 1, min(at + slice, length(bytes)))]
    written <- length(chunk) - length(proc$process$write_input(chunk))
    at <- at + written
    if (written > 0) deadline <- Sys.time() + 30
    if (at < length(bytes) && written < length(chunk)) {
      # The server may be blocked writing stdout; keep draining it.
      mcp_pump(proc)
      if (Sys.time() > deadline) stop("timed out writing to the server's stdin: it took no byte for 30 s")
      proc$process$poll_io(5)
    }
  }
  invisible(proc)
}

# Read `n` response lines, waiting at most `timeout` seconds. Returns a list of
# parsed messages; each carries its exact line as attr(x, "json").
mcp_read <- function(proc, n = 1, timeout = 10) {
  deadline <- Sys.time() + timeout
  while (length(proc$queue) < n) {
    got <- mcp_pump(proc)
    if (got == 0) {
      if (!proc$process$is_alive()) {
        mcp_pump(proc)
        if (length(proc$queue) >= n) break
        testthat::fail(sprintf(
          "server exited (status %s) after %d of %d expected lines; stderr:\n%s",
          proc$process$get_exit_status(), length(proc$queue), n, mcp_stderr(proc)
        ))
        break
      }
      if (Sys.time() > deadline) {
        testthat::fail(sprintf(
          "timed out after %ss waiting for %d lines (got %d); stderr:\n%s",
          timeout, n, length(proc$queue), mcp_stderr(proc)
        ))
        break
      }
      Sys.sleep(0.005)
    }
  }
  k <- min(n, length(proc$queue))
  out <- proc$queue[seq_len(k)]
  proc$queue <- proc$queue[-seq_len(k)]
  out
}

mcp_stderr <- function(proc) {
  if (!file.exists(proc$stderr_file)) return("")
  paste(readLines(proc$stderr_file, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
}

# Barrier: a line of the server's standard error that starts with `prefix`
# (for example "mcplite: workers ready"), or the server's exit. Whether it
# came.
wait_stderr_line <- function(proc, prefix, timeout = 60) {
  wait_until(function() {
    any(startsWith(strsplit(mcp_stderr(proc), "\n", fixed = TRUE)[[1]], prefix)) || !proc$process$is_alive()
  }, timeout)
}

# Close stdin, wait for the server to exit (killing it after `timeout`
# seconds, which fails the test), and check the tail of stdout.
# Returns list(responses, lines, stdout, stderr, status).
mcp_close <- function(proc, timeout = 30) {
  conn <- proc$process$get_input_connection()
  try(close(conn), silent = TRUE)
  deadline <- Sys.time() + timeout
  while (proc$process$is_alive()) {
    if (mcp_pump(proc) == 0) Sys.sleep(0.005)
    if (Sys.time() > deadline) {
      proc$process$kill()
      testthat::fail(sprintf("server did not exit within %ss of stdin closing; stderr:\n%s", timeout, mcp_stderr(proc)))
      break
    }
  }
  proc$process$wait(1000)
  # Drain: the writer has exited, so everything is in the pipe now.
  repeat if (mcp_pump(proc) == 0) break
  mcp_stdout_release(proc)
  if (length(proc$buffer)) {
    tail <- proc$buffer[seq_len(min(200, length(proc$buffer)))]
    tail <- if (validUTF8(rawToChar(tail))) encodeString(rawToChar(tail)) else paste(tail, collapse = " ")
    testthat::fail(sprintf("stdout ends with %d bytes that are not a complete line: %s", length(proc$buffer), tail))
  }
  responses <- proc$queue
  proc$queue <- list()
  list(
    responses = responses,
    lines = proc$lines,
    stdout = proc$stdout,
    stderr = mcp_stderr(proc),
    status = proc$process$get_exit_status()
  )
}

# Kill a server (for tests that stop early).
mcp_kill <- function(proc) {
  if (proc$process$is_alive()) proc$process$kill()
  mcp_stdout_release(proc)
  # rm: R's unlink() leaves sockets (and so their directories) behind.
  if (!is.null(proc$tmpdir) && !proc$process$is_alive()) system2("rm", c("-rf", shQuote(proc$tmpdir)))
  invisible(proc)
}

# The common pattern: start a server, send all `lines`, close stdin, collect
# everything until exit. `lines` is a character vector (each element one line,
# sent as is), or a list whose elements are strings, raw vectors or lists.
mcp_exchange <- function(lines, server = mcp_fixture_server(), env = NULL, timeout = 30) {
  proc <- mcp_start(server, env = env)
  on.exit(mcp_kill(proc), add = TRUE)
  if (is.character(lines)) lines <- as.list(lines)
  for (line in lines) mcp_send(proc, line)
  mcp_close(proc, timeout = timeout)
}

# The fixture server shipped with the tests (tests/testthat/fixtures/server.R).
mcp_fixture_server <- function(name = "server.R") {
  testthat::test_path("fixtures", name)
}

# The pipe tests run servers in child `Rscript --vanilla` processes, which load
# the mcplite installed in R_LIBS / .libPaths(), not the code being tested.
# On CRAN, skip when the child cannot load mcplite. Anywhere else a skip would
# hide every pipe test (or test a stale build) without a word, so fail with
# what to run instead:
# - the child cannot load mcplite;
# - under devtools::test() (the package loaded from its sources by pkgload),
#   the child's mcplite is another version, or was built by tools/install.sh
#   from other sources (its MCPLITE_SOURCE_HASH).
skip_if_no_mcplite_child <- function() {
  problem <- mcp_state$mcplite_child
  if (is.null(problem)) problem <- mcp_state$mcplite_child <- mcplite_child_problem()
  if (!nzchar(problem)) return(invisible())
  on_cran <- !interactive() && !isTRUE(as.logical(Sys.getenv("NOT_CRAN", "false")))
  if (on_cran) testthat::skip(problem)
  stop(problem, call. = FALSE)
}

mcplite_child_install_hint <- paste(
  "Install the package under test first: `tools/install.sh` from the source tree,",
  "or `R CMD INSTALL -l <lib> .` and run the tests with R_LIBS=<lib>."
)

# "" when a child Rscript loads the mcplite being tested, else what is wrong.
mcplite_child_problem <- function() {
  res <- processx::run(
    mcp_rscript(), c("--vanilla", "-e", paste(
      "stopifnot(is.function(mcplite::mcp_server));",
      "cat(as.character(utils::packageVersion('mcplite')), system.file(package = 'mcplite'), sep = '\\n')"
    )),
    env = c("current", R_LIBS = mcp_child_libs()), error_on_status = FALSE
  )
  if (res$status != 0) {
    return(paste("A child Rscript cannot load an installed mcplite with mcp_server(), so the tests that",
                 "start servers cannot run.", mcplite_child_install_hint))
  }
  child <- strsplit(res$stdout, "\n", fixed = TRUE)[[1]]
  source_dir <- mcplite_dev_source_dir()
  if (is.null(source_dir)) return("")
  tested <- as.character(read.dcf(file.path(source_dir, "DESCRIPTION"), "Version")[1, 1])
  if (!identical(child[[1]], tested)) {
    return(sprintf("The child Rscript loads mcplite %s from %s, but the sources being tested are %s. %s",
                   child[[1]], child[[2]], tested, mcplite_child_install_hint))
  }
  built_from <- file.path(child[[2]], "MCPLITE_SOURCE_HASH")
  want <- mcplite_source_hash(source_dir)
  if (file.exists(built_from) && !is.na(want)) {
    have <- trimws(readLines(built_from, warn = FALSE)[1])
    if (!identical(have, want)) {
      return(sprintf(paste("The child Rscript loads mcplite from %s, built from other sources than %s",
                           "(MCPLITE_SOURCE_HASH %s, the sources hash to %s). %s"),
                     child[[2]], source_dir, substr(have, 1, 12), substr(want, 1, 12), mcplite_child_install_hint))
    }
  }
  ""
}

# The source tree when mcplite is loaded from it by pkgload (devtools::test(),
# load_all()), else NULL (an installed package: R CMD check, test_dir() with
# load_package = "installed").
mcplite_dev_source_dir <- function() {
  if (!isNamespaceLoaded("mcplite")) return(NULL)
  dev <- requireNamespace("pkgload", quietly = TRUE) && pkgload::is_dev_package("mcplite")
  path <- getNamespaceInfo("mcplite", "path")
  if (!dev && !file.exists(file.path(path, "tools", "install.sh"))) return(NULL)
  if (!file.exists(file.path(path, "DESCRIPTION"))) return(NULL)
  normalizePath(path)
}

# The hash tools/install.sh writes into the package it installs, computed by
# its own source_hash() (one definition), or NA when that cannot run here.
mcplite_source_hash <- function(source_dir) {
  script <- file.path(source_dir, "tools", "install.sh")
  if (!file.exists(script) || !nzchar(Sys.which("bash"))) return(NA_character_)
  code <- sprintf("cd %s && eval \"$(sed -n -e '/^hash_cmd=/p' -e '/^source_hash() {/,/^}/p' tools/install.sh)\" && source_hash",
                  shQuote(source_dir))
  res <- processx::run("bash", c("-c", code), error_on_status = FALSE)
  hash <- trimws(res$stdout)
  if (res$status == 0 && grepl("^[0-9a-f]{64}$", hash)) hash else NA_character_
}

# ---- schema validation through one shared node process ----------------------

mcp_state <- new.env(parent = emptyenv())

# The validator reads the official schemas from tests/schema beside it (see
# tests/schema/README.md), so only the repository is needed.
mcp_validator_script <- function() {
  env <- Sys.getenv("MCPLITE_VALIDATOR")
  candidates <- c(
    if (nzchar(env)) env,
    tryCatch(testthat::test_path("..", "node", "validate.mjs"), error = function(e) NULL),
    # R CMD check runs a copy of tests/; look beside the source package too.
    file.path(Sys.getenv("MCPLITE_SOURCE_DIR", "."), "tests", "node", "validate.mjs")
  )
  hit <- candidates[file.exists(candidates)]
  if (length(hit)) normalizePath(hit[[1]]) else NA_character_
}

mcp_validator <- function() {
  v <- mcp_state$validator
  if (!is.null(v) && v$is_alive()) return(v)
  node <- Sys.which("node")
  if (!nzchar(node)) testthat::skip("schema validation needs node, which is not on PATH")
  script <- mcp_validator_script()
  if (is.na(script)) {
    testthat::skip("schema validation needs tests/node/validate.mjs (set MCPLITE_VALIDATOR)")
  }
  if (!dir.exists(file.path(dirname(script), "node_modules", "ajv"))) {
    testthat::skip(sprintf("schema validation needs node modules: run `npm ci` in %s", dirname(script)))
  }
  v <- processx::process$new(node, script, stdin = "|", stdout = "|", stderr = "|",
                             encoding = "UTF-8", cleanup = TRUE)
  mcp_state$validator <- v
  v
}

# Validate one message (its exact JSON text) and return the verdict:
# list(ok = TRUE/FALSE, errors = character(), checked = character()).
mcp_validator_check <- function(json, version, def = NA, strict = TRUE) {
  v <- mcp_validator()
  head <- list(version = version, strict = strict)
  if (!is.na(def)) head$def <- def
  head_json <- as.character(jsonlite::toJSON(head, auto_unbox = TRUE))
  line <- paste0(substr(head_json, 1, nchar(head_json) - 1), ',"message":', json, "}")
  # write_input() writes what the pipe takes and returns the rest.
  left <- charToRaw(paste0(gsub("\n", " ", line, fixed = TRUE), "\n"))
  deadline <- Sys.time() + 60
  while (length(left)) {
    left <- v$write_input(left)
    if (length(left)) {
      if (Sys.time() > deadline) stop("timed out writing to validate.mjs")
      Sys.sleep(0.002)
    }
  }
  out <- character()
  while (!length(out)) {
    v$poll_io(200)
    out <- v$read_output_lines(n = 1)
    if (!v$is_alive() && !length(out)) stop("validate.mjs died: ", paste(v$read_all_error_lines(), collapse = "\n"))
    if (Sys.time() > deadline) stop("validate.mjs did not answer within 60s")
  }
  res <- jsonlite::parse_json(out, simplifyVector = TRUE)
  res$errors <- as.character(unlist(res$errors))
  res$checked <- as.character(unlist(res$checked))
  res
}

mcp_message_json <- function(msg) {
  json <- attr(msg, "json")
  if (is.null(json)) {
    json <- as.character(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null", digits = NA))
  }
  json
}

# Validate responses against the schema of `version` and fail the test with
# the validator's errors. `responses` is one parsed message or a list of them
# (as returned by mcp_read() / mcp_exchange()$responses). `def` names the
# result body per response (InitializeResult, ListToolsResult, CallToolResult,
# EmptyResult, DiscoverResult) or a whole-message definition such as
# UnsupportedProtocolVersionError; NA validates the envelope only. Requests
# and notifications are validated too (their envelope, and `def` such as
# CallToolRequest). `strict` (one, or one per message) also rejects members
# the version's schema does not define (leaked newer fields), which plain
# schema validation cannot see.
mcp_validate <- function(responses, version, def = NA, strict = TRUE) {
  if (!is.null(names(responses)) && "jsonrpc" %in% names(responses)) responses <- list(responses)
  failures <- mcp_validation_failures(responses, version, def, strict)
  testthat::expect(length(failures) == 0, paste(c("schema validation failed:", failures), collapse = "\n"))
  invisible(responses)
}

# What mcp_validate() reports: one text per message the validator refused.
mcp_validation_failures <- function(responses, version, def = NA, strict = TRUE) {
  def <- rep_len(def, length(responses))
  strict <- rep_len(strict, length(responses))
  failures <- character()
  for (i in seq_along(responses)) {
    json <- mcp_message_json(responses[[i]])
    verdict <- mcp_validator_check(json, version, def[[i]], strict[[i]])
    if (!isTRUE(verdict$ok)) {
      failures <- c(failures, sprintf(
        "message %d (%s, %s): %s\n  %s", i, version, if (is.na(def[[i]])) "envelope" else def[[i]],
        substr(json, 1, 500), paste(verdict$errors, collapse = "\n  ")
      ))
    }
  }
  failures
}

# The one response whose id equals `id` (compared as JSON text, so "1" and 1
# differ); fails the test unless exactly one matches.
mcp_by_id <- function(responses, id) {
  want <- as.character(jsonlite::toJSON(id, auto_unbox = TRUE, digits = NA))
  ids <- vapply(responses, function(r) {
    if (is.null(r$id)) NA_character_ else as.character(jsonlite::toJSON(r$id, auto_unbox = TRUE, digits = NA))
  }, character(1))
  hit <- which(ids == want)
  if (length(hit) != 1) {
    testthat::fail(sprintf("expected one response with id %s, found %d", want, length(hit)))
    return(NULL)
  }
  responses[[hit]]
}

# Wait (without asserting on time) until `cond()` holds; FALSE if it never does.
wait_until <- function(cond, timeout = 60) {
  deadline <- Sys.time() + timeout
  while (!cond()) {
    if (Sys.time() > deadline) return(FALSE)
    Sys.sleep(0.01)
  }
  TRUE
}

# A one-file package `name` installed into a new temporary library (a package
# a test needs somewhere in particular, or broken on purpose); returns the
# library. `code` defines the functions `exports` names.
test_package_lib <- function(name, code, exports, version = "0.0.1", title = "A Test Package") {
  src <- file.path(tempfile("test-pkg-"), name)
  dir.create(file.path(src, "R"), recursive = TRUE)
  writeLines(c(sprintf("Package: %s", name), sprintf("Version: %s", version), sprintf("Title: %s", title),
               "Description: A package made by the mcplite tests.", "License: MIT",
               "Authors@R: person('Test', 'Double', email = 't@example.com', role = c('aut', 'cre'))"),
             file.path(src, "DESCRIPTION"))
  writeLines(sprintf("export(%s)", exports), file.path(src, "NAMESPACE"))
  writeLines(code, file.path(src, "R", "code.R"))
  lib <- tempfile("test-pkg-lib-")
  dir.create(lib)
  res <- processx::run(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "--no-test-load", "-l", lib, src),
                       error_on_status = FALSE)
  if (res$status != 0) stop(sprintf("installing the test package %s: %s", name, res$stderr))
  lib
}
