# mcp_check(): start a server script exactly as MCP clients do and report
# what would go wrong, each problem with its fix. The per-tool rules live in
# the Rust core (src/rust/devtools/src/check.rs).

#' Check a server script the way MCP clients start it
#'
#' @description
#' `mcp_check()` starts your server script exactly as an MCP client would
#' and tells you what would go wrong there, each problem with a one-line fix.
#' Run it after writing `server.R` and before configuring a client: a client
#' usually only says "server disconnected" or shows no tools.
#'
#' @details
#' ## How the script is started
#' Like a client configured as [mcp_config()] shows: the absolute path of this
#' R installation's `Rscript`, `--vanilla`, the absolute path of the script,
#' from a new temporary directory (clients do not start servers in the
#' script's directory), and with only the environment variables that the
#' official MCP SDKs pass to servers by default, plus `env`:
#'
#' * on Unix-alikes `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER`;
#' * on Windows `APPDATA`, `HOMEDRIVE`, `HOMEPATH`, `LOCALAPPDATA`, `PATH`,
#'   `PROCESSOR_ARCHITECTURE`, `SYSTEMDRIVE`, `SYSTEMROOT`, `TEMP`,
#'   `USERNAME`, `USERPROFILE` and `PROGRAMFILES`.
#'
#' These are the `DEFAULT_INHERITED_ENV_VARS` of the TypeScript SDK
#' (`@modelcontextprotocol/sdk` 1.32.2, `client/stdio.js`), which Claude
#' Desktop and many other clients build on; the SDK also skips values that
#' start with `()`, as this check does. Variables such as `R_LIBS` set in your
#' shell or in `~/.Renviron` (which `--vanilla` skips) are therefore missing,
#' unless the client configuration sets them: pass them in `env` to check
#' such a configuration.
#'
#' ## The session server
#' `mcp_check(session = TRUE)` checks the session server, which gives the
#' assistant the tools of your live R session (see `mcp_session()` and
#' `vignette("live-session", package = "mcplite")`), exactly as
#' [mcp_config()] with the same `session` configures it: this R
#' installation's `Rscript --vanilla -e "mcplite::mcp_session_server()"`,
#' with `MCPLITE_SESSION` in the environment when `session` names a session.
#' It is the same check as
#' `mcp_check(command = c(<Rscript>, "--vanilla", "-e", "mcplite::mcp_session_server()"))`
#' (any such command line, for example with a plain `"Rscript"` found on
#' `PATH`, is checked that way), plus the configuration snippet at the end.
#' It finds, for example, that mcplite is installed in a library clients do
#' not see (and the `R_LIBS` entry that fixes it). The server chooses its
#' session as it would for a client: the pinned one, or else the one whose
#' working directory is the server's (the check's temporary directory is
#' nobody's), or else the only one; with no session, or several and no
#' choice, it lists the tools that say how to attach or choose. The
#' session's tools run only while its console is idle, so give `calls` from
#' another R process than the session they call (a call from the session's
#' own console waits until the session's busy limit, then fails as busy).
#'
#' ## What is reported
#' Problems come first: errors (clients will fail) and warnings (some
#' clients will fail, or the specification advises against it). Then notes.
#'
#' * the script does not exist;
#' * (a note) the script was given as a relative path: the check and the
#'   configuration it prints use its absolute path, as clients need;
#' * R stopped before serving, with what it wrote to standard error; when the
#'   reason is a package that cannot be found in the reduced environment but
#'   loads in this session (mcplite itself included), the `env` entry that
#'   fixes it (`R_LIBS`), after which the check goes on with that entry;
#' * packages the tools' code uses (calls through `::`, `library()` and the
#'   like, found by walking the script with codetools, when installed) that do
#'   not load in the client's environment, with the `R_LIBS` entry that
#'   fixes it: such a server starts, and its calls fail;
#' * a script that reads files by relative paths;
#' * warnings R gave while the script defined its tools (clients never show
#'   them);
#' * with `mcp_server(workers = n)`, workers that could not evaluate the
#'   script (every call would fail), or had still not evaluated it after
#'   the other checks and `timeout` more seconds; the server answers while its workers
#'   evaluate the script and says on standard error when they have, which
#'   the check waits for, so it sees a failure without `calls`;
#' * lines on standard output that are not protocol messages;
#' * processes the server started that were still running after it exited
#'   (Unix-alikes; they are ended with the server's process group);
#' * the time to the first answer;
#' * `tools/list` in each of the four protocol versions, and the version the
#'   server chose for each handshake;
#' * for every tool: the tool-name rule of the latest specification, a
#'   description, an input schema whose root is `"type": "object"`,
#'   `required` names missing from `properties`, a `$schema` dialect other
#'   than 2020-12 or draft-07, validity against the dialect's meta-schema,
#'   references and patterns a validator cannot use, the shapes the
#'   pre-2026 schema files demand, and which versions drop the output schema;
#' * schema features that particular clients are known to refuse, each with
#'   its source: a dot or more than 64 characters in a name (OpenAI and
#'   Anthropic APIs), `anyOf`/`oneOf`/`allOf` at the top of the input schema
#'   (Anthropic API), arrays without `items` (VS Code), references to other
#'   documents (2026-07-28 specification);
#' * with `calls`, tools whose results held a non-zero number that was sent
#'   as `0` because the payload option `mcplite.json.digits` keeps too few
#'   decimal places (the server says so once per tool on standard error);
#' * with `calls` (which ask for progress), tools whose [mcp_progress()]
#'   values did not increase, which the server dropped (it says so once per
#'   call on standard error); a bad argument to `mcp_progress()` fails the
#'   call, reported with the call's tool error;
#' * optionally, the results of calling tools with the arguments in `calls`,
#'   including results that SDK clients reject because their structured
#'   content does not match the tool's output schema (see [mcp_client()]).
#'
#' @param script Path to the server script. Give `script` or `command`.
#' @param command Instead of `script`, the command a client configuration
#'   runs, as a character vector: the program, then its arguments, for
#'   example `c("/usr/bin/Rscript", "-e", "source('/srv/tools/server.R')")`
#'   for a configuration without `--vanilla`. It runs exactly so (no
#'   `--vanilla` is added, so profiles and `.Rprofile` files run as they would
#'   for the client), from a temporary directory with the client's
#'   environment and `env`, and gets every check of a running server; the
#'   checks that need the script file (its path, files next to it, the
#'   packages its code uses) and the configuration snippet are skipped, with a
#'   note saying so.
#' @param session Instead of `script` or `command`: `TRUE` to check the
#'   session server, or a session's name to check it pinned to that session,
#'   as `mcp_config(session = )` configures it (see "The session server").
#' @param env Environment variables the client configuration sets, as a
#'   named character vector, for example `c(R_LIBS = "/path/to/library")`.
#' @param calls Tools to call, as a named list: names are tool names, values
#'   the arguments (named lists), for example
#'   `list(add = list(a = 1, b = 2))`. Each call is made in every version the
#'   server serves; a tool error or a failed call is a problem, reported once
#'   per cause with the versions it happened in (`version` is `NA` when there
#'   are several) and the fix for that cause: where to look for an R error in
#'   the tool, what in the result cannot be sent, the time limit, or the rule
#'   of [mcp_progress()].
#' @param timeout Seconds to wait for each answer.
#'
#' @return An object of class `mcplite_check`, a list with:
#'   `ok` (`TRUE` when there is no error), `problems` (errors and warnings)
#'   and `notes`, each a data frame with columns `severity`, `rule`, `tool`,
#'   `version`, `message`, `fix` and `source`; `script` (absolute path),
#'   `command` (what was run), `env` (the environment entries a client
#'   configuration needs, found ones included), `versions` (a data frame:
#'   version asked, version served, number of tools, error), `tools` (the
#'   tool definitions), `first_answer_seconds`, `calls` (results) and
#'   `stderr` (what the server wrote there), `session` (as given). Printing
#'   it shows the problems first and ends with the configuration snippet of
#'   [mcp_config()].
#' @seealso [expect_mcp_check()] in tests, [mcp_config()] for the
#'   configuration, [mcp_client()] to drive a server yourself.
#' @export
#' @examples
#' # A server script of your own; here, a copy of the package's example.
#' example <- system.file("examples", "minimal.R", package = "mcplite")
#' server <- file.path(tempdir(), "minimal.R")
#' invisible(file.copy(example, server))
#' \donttest{
#' # Where mcplite is in a library that only R_LIBS names, the report says so
#' # and shows the R_LIBS entry the client configuration needs.
#' res <- mcp_check(server)
#' res$ok
#' res
#' }
#' \dontrun{
#' # The session server, as mcp_config(session = TRUE) configures it.
#' mcp_check(session = TRUE)
#' }
mcp_check <- function(script = NULL, env = NULL, calls = NULL, timeout = 30, command = NULL,
                      session = FALSE) {
  call <- sys.call()
  if (!isFALSE(session)) {
    check_session_choice(script, session, call, command = command)
  } else if (is.null(script) == is.null(command)) {
    abort_mcplite(
      if (is.null(script)) {
        "Give `script` (the path of a server script) or `command` (the command a client runs)."
      } else {
        "Give `script` or `command`, not both: `command` already says what runs."
      },
      class = "argument", arg = if (is.null(script)) "script" else "command", call = call
    )
  }
  if (!is.null(script)) {
    check_string(script, "script", call = call)
  } else if (!is.null(command)) {
    check_command(command, call)
  }
  env <- check_env(env, call)
  if (!isFALSE(session)) {
    launch <- session_launch(session, env, call)
    env <- launch$env
  }
  timeout <- check_timeout(timeout, call = call)
  if (!is.null(calls)) {
    calls <- check_named_list(calls, "calls", call = call)
    for (nm in names(calls)) check_named_list(calls[[nm]], sprintf("calls$%s", nm), call = call)
  }
  # The checks below hand their facts to add(); the Rust core owns the
  # finding record, each rule's severity and its default fix
  # (REPORTED_RULES in src/rust/devtools/src/check.rs).
  findings <- list()
  add <- function(rule, message, fix = NULL, tool = NULL, version = NULL) {
    made <- rust_check_finding(rule, message, fix, tool, version)
    if (!is.null(made$error)) stop(made$error$message) # a mistake in this file
    findings[[length(findings) + 1L]] <<- made$value
  }
  out <- list(
    ok = FALSE, script = if (is.null(script)) NA_character_ else script, command = character(),
    env = env, versions = versions_frame(list()), tools = list(), first_answer_seconds = NA_real_,
    calls = list(), stderr = character(), session = session
  )
  cwd <- tempfile("mcp-check-")
  dir.create(cwd)
  on.exit(unlink(cwd, recursive = TRUE), add = TRUE)
  # With `session`, `launch` is already the session server's command.
  if (!is.null(script)) {
    launch <- check_script(script, out, add)
    if (is.null(launch)) return(check_result(out, findings))
    out$script <- launch$script
  } else if (!is.null(command)) {
    launch <- list(program = command[[1]], args = command[-1])
    add("command_only",
        "The check ran the command as given; the checks that need the script file (its path, files next to it, the packages its code uses) and the configuration snippet were skipped.")
  }
  out$command <- c(launch$program, launch$args)
  info <- list(name = "mcplite-check", version = getNamespaceVersion("mcplite")[[1]])

  # The start-up probe, repeated with R_LIBS entries while packages that this
  # session can load are missing there.
  reported <- character()
  probe <- NULL
  for (round in 1:5) {
    probe <- check_start(launch, c(client_env(), env), cwd, latest_legacy_version(), timeout, info)
    if (!is.null(probe$client)) break
    missing <- setdiff(missing_packages(probe$stderr), reported)
    if (!length(missing)) break
    libs <- vapply(missing, package_library, character(1))
    for (pkg in missing[is.na(libs)]) {
      add("package_not_installed",
          sprintf("The server needs the package %s, which is not installed here either.", pkg),
          sprintf("Install it: install.packages(\"%s\").", pkg))
    }
    reported <- c(reported, missing[is.na(libs)])
    have <- split_path_list(env["R_LIBS"])
    new_libs <- setdiff(unique(libs[!is.na(libs)]), have)
    if (!length(new_libs)) break
    r_libs <- paste(c(have, new_libs), collapse = .Platform$path.sep)
    for (pkg in missing[!is.na(libs)]) {
      add("package_not_found",
          sprintf("R cannot find the package %s in the environment clients give the server, although this session loads it from %s.", pkg, libs[[pkg]]),
          sprintf("Set R_LIBS in the client configuration, as mcp_config(env = c(R_LIBS = \"%s\")) shows; this check goes on with it.", r_libs))
    }
    reported <- c(reported, missing[!is.na(libs)])
    env["R_LIBS"] <- r_libs
  }
  out$env <- env
  out$stderr <- probe$stderr
  if (is.null(probe$client)) {
    # Explained only when this last start failed for packages already
    # reported; any other error (one that showed once R_LIBS was added) is
    # reported with what R wrote.
    still_missing <- missing_packages(probe$stderr)
    explained <- length(still_missing) > 0 && all(still_missing %in% reported) &&
      identical(probe$error$kind, "exited")
    report_start_failure(probe, paste(shell_quote(out$command), collapse = " "), add, explained,
                         what = if (is.null(script)) "the command" else "the script")
    return(check_result(out, findings))
  }
  client <- probe$client
  on.exit(client$close(1), add = TRUE, after = FALSE)
  if (!is.null(script)) {
    check_code_packages(out$script, launch$program, c(client_env(), env), env, cwd, timeout, info, add)
  }
  state <- client$.state()
  out$first_answer_seconds <- state$first_response_ms / 1000
  report_stray(state$stray, "at start-up", add, total = state$stray_total)
  if (isTRUE(out$first_answer_seconds > 10)) {
    add("slow_start",
        sprintf("The first answer came after %.1f seconds; clients give up after 60 seconds by default, and users wait meanwhile.", out$first_answer_seconds))
  }

  # Every version, in preference order: the probe serves the latest legacy
  # one; the others start together.
  order <- protocol_versions()$id
  clients <- list()
  clients[[latest_legacy_version()]] <- list(client = client, seen = state$stray_total)
  spawned <- lapply(setdiff(order, latest_legacy_version()), function(v) {
    list(version = v, res = rust_client_spawn(launch$program, launch$args, c(client_env(), env),
                                              TRUE, cwd, v, info))
  })
  on.exit(for (s in spawned) if (is.null(s$res$error)) rust_client_close_step(s$res$value, 0, TRUE), add = TRUE)
  for (s in spawned) {
    if (!is.null(s$res$error)) {
      clients[[s$version]] <- list(error = s$res$error$message)
      next
    }
    opened <- client_open(s$res$value, timeout)
    if (!is.null(opened$error)) {
      client_close(s$res$value, 1)
      clients[[s$version]] <- list(error = opened$error$message)
      next
    }
    x <- new_client(s$res$value, opened$value, launch, timeout)
    # Start-up lines were reported once, from the probe.
    clients[[s$version]] <- list(client = x, seen = x$.state()$stray_total)
  }
  on.exit(for (x in clients) if (!is.null(x$client)) x$client$close(1), add = TRUE, after = FALSE)
  # Stray lines since the last look (the client keeps the most recent only).
  stray_since <- function(v, when) {
    state <- clients[[v]]$client$.state()
    new <- state$stray_total - clients[[v]]$seen
    if (new > 0) {
      kept <- state$stray
      report_stray(kept[seq_len(min(new, length(kept))) + max(0, length(kept) - new)], when, add, total = new)
    }
    clients[[v]]$seen <<- state$stray_total
  }

  versions <- list()
  listings <- list()
  for (v in order) {
    x <- clients[[v]]
    if (is.null(x$client)) {
      versions[[v]] <- list(asked = v, served = NA_character_, tools = NA_integer_, error = x$error)
      if (is_modern_version(v)) {
        add("modern_unsupported",
            sprintf("The server does not serve %s (%s); clients of that version fall back to the initialize handshake.", v, x$error))
      } else {
        add("handshake_failed",
            sprintf("The initialize handshake for %s failed: %s.", v, x$error), version = v)
      }
      next
    }
    served <- x$client$protocol
    if (served != v) {
      add("version_negotiated",
          sprintf("Asked for %s, the server chose %s.", v, served), version = v)
    }
    tools <- tryCatch(x$client$tools(), mcplite_error = function(e) e)
    stray_since(v, sprintf("while listing tools (%s)", v))
    if (inherits(tools, "error")) {
      versions[[v]] <- list(asked = v, served = served, tools = NA_integer_, error = conditionMessage(tools))
      add("tools_list_failed",
          sprintf("tools/list failed for %s: %s", v, conditionMessage(tools)), version = v)
      next
    }
    versions[[v]] <- list(asked = v, served = served, tools = length(tools), error = NA_character_)
    if (!served %in% names(listings)) listings[[served]] <- tools
  }
  out$versions <- versions_frame(versions)
  if (length(listings)) {
    listings <- listings[intersect(order, names(listings))]
    out$tools <- listings[[1]]
    if (!length(out$tools)) {
      add("no_tools", "The server lists no tools.")
    }
    findings <- c(findings, rust_check_listings(listings)$value)
  }

  for (name in names(calls)) {
    # One finding per distinct failure of the call, naming the versions it
    # happened in: a tool that fails the same way everywhere is one problem.
    failures <- list()
    for (v in intersect(order, names(clients))) {
      x <- clients[[v]]
      if (is.null(x$client)) next
      # Asking for progress, as clients that show it do: the server then
      # says on stderr when a tool reports values that do not increase.
      res <- tryCatch(x$client$call(name, calls[[name]], timeout = timeout, progress = TRUE),
                      mcplite_error = function(e) e)
      stray_since(v, sprintf("while calling %s (%s)", name, v))
      out$calls[[name]][[v]] <- res
      failure <- call_failure(res, name, calls[[name]], timeout)
      if (is.null(failure)) next
      key <- paste(failure$rule, failure$text, sep = "\n")
      if (is.null(failures[[key]])) failures[[key]] <- failure
      failures[[key]]$versions <- c(failures[[key]]$versions, v)
    }
    for (f in failures) {
      add(f$rule, sprintf(f$message, name, paste(f$versions, collapse = ", "), f$text), f$fix,
          tool = name, version = if (length(f$versions) == 1) f$versions)
    }
  }
  # With workers the server answers while they evaluate the script; it says
  # on stderr when they have, or could not (report_startup_stderr()).
  if (!check_workers_settled(client, timeout)) {
    add("workers_not_ready",
        sprintf("The workers had not evaluated the script when the check ended (it waited %s more seconds for them at the end); tool calls wait for them until they have.",
                format(timeout)))
  }
  out$stderr <- client$stderr()
  report_startup_stderr(out$stderr, add)
  report_leftovers(clients, add)
  check_result(out, findings)
}

# Why one call in `mcp_check(calls = )` failed, or NULL when it did not:
# the rule, a message template (tool, versions, text), the text that tells
# causes apart, and the fix for that cause (NULL: the rule's own).
call_failure <- function(res, name, args, timeout) {
  failure <- function(rule, message, text, fix = NULL) {
    list(rule = rule, message = message, text = text, fix = fix, versions = character())
  }
  if (inherits(res, "mcplite_error_client_output")) {
    return(failure("output_schema_mismatch", "Calling %s (%s): %s", conditionMessage(res)))
  }
  if (inherits(res, "mcplite_error_client_timeout")) {
    return(failure("call_failed", "Calling %s failed (%s): %s", conditionMessage(res),
                   sprintf("Make the tool answer within %s seconds (the `timeout` of this check), for example by doing less per call, or give mcp_check() a larger `timeout` if it must take longer; clients give up after 60 seconds by default.",
                           format(timeout))))
  }
  if (inherits(res, "error")) {
    return(failure("call_failed", "Calling %s failed (%s): %s", conditionMessage(res)))
  }
  if (!isTRUE(res[[wire_name("IS_ERROR")]])) return(NULL)
  text <- result_text(res)
  message <- "Calling %s (%s) returned a tool error: %s"
  # The texts of the server's own tool errors: a value the core cannot send
  # (r::result::read_return) or a tool_result() member tool_result() cannot
  # write (R/result.R), content a version cannot carry
  # (projection::write_result), an argument the tool does not take
  # (r::args::check), and a bad argument to mcp_progress() (core progress.rs).
  unsendable <- regmatches(text, regexec(
    "^(Tool .+ returned (a value|a tool_result\\(\\)) that cannot be sent|`([a-z_]+)` cannot be written as JSON): (.*)$",
    text
  ))[[1]]
  if (length(unsendable)) {
    what <- if (nzchar(unsendable[[4]])) {
      sprintf("the `%s` of the tool's tool_result()", unsendable[[4]])
    } else if (unsendable[[3]] == "a value") {
      "the value the tool returns"
    } else {
      "the tool_result() the tool returns"
    }
    # The reason's advice, after the problem ("...; return a list ...").
    advice <- sub("[.]$", "", sub("^[^;]*; ", "", unsendable[[5]]))
    return(failure("call_tool_error", message, text,
                   sprintf("Change %s so that it can be sent: %s.", what, advice)))
  }
  uncarried <- regmatches(text, regexec("^Tool produced (.+), which protocol (.+) cannot carry\\.$", text))[[1]]
  if (length(uncarried)) {
    return(failure("call_tool_error", message, text,
                   sprintf("Clients of %s get this tool error instead of the result: if they matter to you, return content they can carry (text, images, embedded resources) instead of %s.",
                           uncarried[[3]], uncarried[[2]])))
  }
  if (grepl("^Tool .+ has no argument named ", text)) {
    return(failure("call_tool_error", message, text,
                   sprintf("Give in `calls$%s` only arguments the tool's function takes (the check gave %s).", name,
                           format_call_args(args))))
  }
  if (grepl("^`(progress|total|message)` must ", text)) {
    return(failure("call_tool_error", message, text,
                   "Call mcp_progress() with `progress` a single non-negative number larger than the one before, `total` NULL or a number not smaller than `progress`, and `message` NULL or a single string."))
  }
  failure("call_tool_error", message, text,
          sprintf("The tool's R function raised (or returned) this error: to see where, run do.call(<the function>, %s) in R, then traceback(); fix the function, or the arguments given in `calls`.",
                  format_call_args(args)))
}

# The arguments of a call in `calls`, as R code: list(x = 3).
format_call_args <- function(args) {
  paste(deparse(args, width.cutoff = 500L, control = c("keepNA", "niceNames")), collapse = " ")
}

# The script's own checks, before it is started: it exists, and a note when
# it was given by a relative path. Returns how to start it (with `script`,
# its absolute path), or NULL when there is nothing to start.
check_script <- function(script, out, add) {
  if (!file.exists(script) || dir.exists(script)) {
    add("script_missing",
        sprintf("There is no file at %s.", script))
    return(NULL)
  }
  abs <- normalizePath(script)
  if (!is_absolute_path(script)) {
    # Not a problem: the check and the configuration below use the absolute
    # path. A relative path fails only if it reaches a client's configuration.
    add("script_relative",
        sprintf("The script was given as the relative path %s; this check ran %s, and the configuration below uses that absolute path, as clients need (they start servers in a directory of their own).", script, abs))
  }
  list(program = rscript_path(), args = c("--vanilla", abs), script = abs)
}

check_command <- function(command, call) {
  if (!is.character(command) || !length(command) || anyNA(command) || !nzchar(command[[1]])) {
    abort_mcplite(
      sprintf("`command` must be a character vector without NA, the program first and then its arguments, as a client configuration gives them; not %s.",
              describe_value(command)),
      class = "argument", arg = "command", call = call
    )
  }
  invisible(command)
}

# What the server's standard error shows about its start: warnings R gave
# while the script defined its tools, and workers that could not evaluate
# the script (every call will fail there).
report_startup_stderr <- function(stderr, add) {
  for (w in startup_warnings(stderr)) {
    add("startup_warning",
        sprintf("R gave a warning while the script started:\n%s", w))
  }
  # The server's note when a result held a non-zero number sent as 0
  # (dispatch::Server::zeroed_note in the core).
  zeroed <- regmatches(stderr, regexec("^mcplite: tool (.+?): (a non-zero number was sent as 0 .*)$", stderr))
  for (m in zeroed[lengths(zeroed) == 3]) {
    add("number_sent_as_zero",
        sprintf("A result of %s held a non-zero number that was sent as 0: %s.", m[[2]], m[[3]]),
        tool = m[[2]])
  }
  # The server's note when a tool's mcp_progress() values did not increase
  # (the glue's host::report_progress, once per call).
  dropped <- regmatches(stderr, regexec("^mcplite: tool (.+?): (mcp_progress\\(.*\\) does not exceed .*)$", stderr))
  for (m in dropped[lengths(dropped) == 3]) {
    add("progress_not_increasing",
        sprintf("%s reported progress that did not increase, which the server dropped: %s", m[[2]], m[[3]]),
        tool = m[[2]])
  }
  failed <- stderr[startsWith(stderr, worker_failure_prefix)]
  if (length(failed)) {
    add("workers_failed",
        sprintf("The workers could not evaluate the script, so every call fails: %s",
                substring(failed[[1]], nchar(worker_failure_prefix) + 1L)))
  }
  invisible()
}

# Whether the server's workers, if it started any, have evaluated the script
# or failed to (its line after the starting line, workers_settled()), waiting
# up to `timeout` seconds for that line. The starting line is
# written before the server answers anything, so it is in by now: the check
# has since started three more servers and had them all answer.
check_workers_settled <- function(client, timeout) {
  deadline <- Sys.time() + timeout
  repeat {
    lines <- client$stderr()
    if (!any(grepl(workers_starting_pattern, lines))) return(TRUE)
    if (any(startsWith(lines, workers_ready_prefix) | startsWith(lines, worker_failure_prefix))) return(TRUE)
    if (Sys.time() > deadline || !client$is_alive()) return(FALSE)
    Sys.sleep(0.02)
  }
}

# The warnings in R's standard error output, one text each: the blocks R
# prints after a top-level call ("Warning message:", "Warning messages:"
# with numbered items) and single warnings as printed with
# options(warn = 1) ("Warning in f() :", "Warning:"). The server's own lines
# for warnings during calls ("Warning in tool <name>: ...") are not
# start-up warnings.
startup_warnings <- function(stderr) {
  out <- character()
  boundary <- "^(Warning|Error|Execution halted|In addition|mcplite:)"
  n <- length(stderr)
  i <- 1L
  while (i <= n) {
    line <- stderr[[i]]
    if (grepl("^Warning messages?:\\s*$", line)) {
      j <- i + 1L
      while (j <= n && !grepl(boundary, stderr[[j]])) j <- j + 1L
      block <- stderr[seq_len(j - i - 1L) + i]
      item <- cumsum(grepl("^[0-9]+: ", block))
      if (!any(item == 0L) || !length(block)) block <- sub("^[0-9]+: ", "", block)
      for (k in unique(item)) out <- c(out, paste(trimws(block[item == k]), collapse = "\n"))
      i <- j
    } else if (grepl("^Warning( in .* :|:)", line) && !grepl("^Warning in tool [^ ]+: ", line)) {
      j <- i + 1L
      while (j <= n && grepl("^  ", stderr[[j]])) j <- j + 1L
      text <- trimws(stderr[i:(j - 1L)])
      text[1] <- sub("^Warning in ", "In ", sub("^Warning: ", "", text[1]))
      out <- c(out, paste(text, collapse = "\n"))
      i <- j
    } else {
      i <- i + 1L
    }
  }
  out[nzchar(out)]
}

# Close every client and warn when processes of a server's process group
# were still running after the server had exited (they are ended then).
report_leftovers <- function(clients, add) {
  left <- character()
  for (v in names(clients)) {
    x <- clients[[v]]$client
    if (is.null(x)) next
    x$close(1)
    if (isTRUE(x$.state()$group_left_running)) left <- c(left, v)
  }
  if (!length(left)) return(invisible())
  add("background_processes",
      sprintf("Processes the server started were still running after it exited (%s); they hold its standard output open and outlive it, unless a client ends the server's whole process group.",
              paste(left, collapse = ", ")))
}

# The environment MCP clients give servers by default (see ?mcp_check).
client_env_names <- function(windows = .Platform$OS.type == "windows") {
  if (windows) {
    c("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
      "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES")
  } else {
    c("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
  }
}

client_env <- function() {
  vals <- Sys.getenv(client_env_names(), unset = NA_character_, names = TRUE)
  vals[!is.na(vals) & !startsWith(vals, "()")]
}

is_absolute_path <- function(path) {
  grepl("^(/|[A-Za-z]:[/\\\\]|\\\\\\\\)", path)
}

split_path_list <- function(x) {
  if (length(x) == 0 || is.na(x) || !nzchar(x)) return(character())
  strsplit(x, .Platform$path.sep, fixed = TRUE)[[1]]
}

# One start-up attempt: a client in the given (exact) environment.
check_start <- function(launch, env, cwd, protocol, timeout, info) {
  res <- rust_client_spawn(launch$program, launch$args, env, TRUE, cwd, protocol, info)
  if (!is.null(res$error)) {
    return(list(error = res$error, stderr = character(), stray = list()))
  }
  ptr <- res$value
  done <- FALSE
  on.exit(if (!done) rust_client_close_step(ptr, 0, TRUE))
  opened <- client_open(ptr, timeout)
  done <- TRUE
  state <- rust_client_state(ptr)$value
  stderr <- split_lines(rust_client_stderr(ptr)$value)
  if (!is.null(opened$error)) {
    client_close(ptr, 1)
    return(list(error = opened$error, stderr = stderr, stray = state$stray, stray_total = state$stray_total))
  }
  list(client = new_client(ptr, opened$value, launch, timeout), stderr = stderr, stray = state$stray,
       stray_total = state$stray_total)
}

# Packages the script's code names, tool bodies included (they run only
# when a client calls): `pkg::name`, `pkg:::name`, and library(),
# require(), requireNamespace(), loadNamespace() with a package named
# literally. Found by walking the parsed script with codetools (a recommended
# package, loaded only here). R's base packages are left out.
code_packages <- function(script) {
  exprs <- tryCatch(parse(script, keep.source = FALSE, encoding = "UTF-8"), error = function(e) NULL)
  if (is.null(exprs) || !requireNamespace("codetools", quietly = TRUE)) return(character())
  found <- character()
  loaders <- c("library", "require", "requireNamespace", "loadNamespace")
  walker <- codetools::makeCodeWalker(
    call = function(e, w) {
      fn <- e[[1]]
      if (is.name(fn) && as.character(fn) %in% c("::", ":::") && length(e) == 3) {
        if (is.name(e[[2]]) || is.character(e[[2]])) found <<- c(found, as.character(e[[2]]))
        return(invisible())
      }
      if (is.name(fn) && as.character(fn) %in% loaders && length(e) >= 2) {
        found <<- c(found, loader_package(e))
      }
      for (ee in as.list(e)) if (!missing(ee)) codetools::walkCode(ee, w)
    },
    leaf = function(e, w) invisible()
  )
  for (e in exprs) codetools::walkCode(e, walker)
  base <- rownames(utils::installed.packages(priority = "base"))
  setdiff(unique(found[nzchar(found)]), c(base, "mcplite"))
}

# The package a library()-like call names literally, or nothing.
loader_package <- function(e) {
  args <- as.list(e)[-1]
  nms <- names(args)
  if (is.null(nms)) nms <- rep("", length(args))
  if (isTRUE(args$character.only)) {
    arg <- args[[if ("package" %in% nms) "package" else which(nms == "")[1]]]
    return(if (is.character(arg) && length(arg) == 1) arg else character())
  }
  arg <- if ("package" %in% nms) args$package else if (any(nms == "")) args[[which(nms == "")[1]]] else NULL
  fn <- as.character(e[[1]])
  if (is.character(arg) && length(arg) == 1) return(arg)
  if (is.name(arg) && fn %in% c("library", "require")) return(as.character(arg))
  character()
}

# Whether each package the script's code names loads where the client starts
# the server (one R process with the client's environment): the start-up
# probe finds only those the script loads before serving. A package this
# session loads from a library the client's does not name is an error with
# the R_LIBS entry that fixes it; one installed nowhere is an error too.
check_code_packages <- function(script, rscript, run_env, env, cwd, timeout, info, add) {
  pkgs <- code_packages(script)
  if (!length(pkgs)) return(invisible())
  code <- sprintf(
    "for (p in %s) tryCatch(loadNamespace(p), error = function(e) message(conditionMessage(e)))",
    paste(deparse(pkgs, width.cutoff = 500L), collapse = "")
  )
  probe <- check_start(list(program = rscript, args = c("--vanilla", "-e", code)), run_env, cwd,
                       latest_legacy_version(), timeout, info)
  if (!is.null(probe$client)) probe$client$close(1)
  missing <- intersect(pkgs, missing_packages(probe$stderr))
  if (!length(missing)) return(invisible())
  libs <- vapply(missing, package_library, character(1))
  for (pkg in missing[is.na(libs)]) {
    add("package_not_installed",
        sprintf("The tools use the package %s, which is not installed here either; calls that need it will fail.", pkg),
        sprintf("Install it: install.packages(\"%s\").", pkg))
  }
  have <- split_path_list(env["R_LIBS"])
  new_libs <- setdiff(unique(libs[!is.na(libs)]), have)
  if (!length(new_libs)) return(invisible())
  r_libs <- paste(c(have, new_libs), collapse = .Platform$path.sep)
  for (pkg in missing[!is.na(libs)]) {
    add("package_not_found",
        sprintf("The tools use the package %s, which R cannot find in the environment clients give the server (this session loads it from %s); calls that need it will fail although the server starts.", pkg, libs[[pkg]]),
        sprintf("Set R_LIBS in the client configuration, as mcp_config(env = c(R_LIBS = \"%s\")) shows.", r_libs))
  }
  invisible()
}

missing_packages <- function(stderr) {
  pattern <- "there is no package called [\u2018'\"`]([^\u2019'\"`]+)[\u2019'\"`]"
  hits <- regmatches(stderr, regexec(pattern, stderr))
  unique(vapply(hits[lengths(hits) == 2], `[[`, character(1), 2))
}

# The library this session loads `pkg` from, or NA.
package_library <- function(pkg) {
  path <- find.package(pkg, quiet = TRUE)
  if (!length(path)) return(NA_character_)
  normalizePath(dirname(path[[1]]), winslash = "/")
}

report_start_failure <- function(probe, command_line, add, explained, what) {
  err <- probe$error
  stderr <- probe$stderr
  report_stray(probe$stray, "at start-up", add, total = max(length(probe$stray), probe$stray_total))
  shown <- stderr_tail(stderr, 15)
  if (identical(err$kind, "exited") && identical(err$status, 0L) &&
      !length(probe$stray) && !any(grepl("Error", stderr))) {
    add("no_server",
        paste0("The script ended without serving (exit status 0).", if (length(stderr)) shown else ""))
  } else if (identical(err$kind, "exited")) {
    if (!explained) {
      status <- if (is.null(err$status)) "" else sprintf(" (exit status %d)", err$status)
      add("start_error",
          paste0(sprintf("R stopped before serving%s.", status), shown),
          sprintf("Run %s as a client would, from another directory, to see the error: %s", what, command_line))
    }
    if (any(grepl("cannot open file|cannot open the connection|No such file or directory", stderr))) {
      add("relative_file",
          "The script opens a file by a path that does not exist in the directory clients start it from.")
    }
  } else if (identical(err$kind, "timeout")) {
    add("no_answer",
        paste0("The server did not answer initialize in time; a script that never calls mcp_server(), or does slow work first, looks like this.", shown))
  } else {
    add("start_error",
        paste0(sprintf("The server could not be started: %s.", err$message), shown))
  }
  invisible()
}

report_stray <- function(stray, when, add, total = length(stray)) {
  if (!length(stray)) return(invisible())
  text <- vapply(stray, function(s) s$text, character(1))
  shown <- text[seq_len(min(5, length(text)))]
  add("stdout_noise",
      sprintf("The server wrote %d line%s to standard output %s that %s; clients fail on such lines or drop the connection:\n%s",
              total, if (total == 1) "" else "s", when,
              if (total == 1) "is not a protocol message" else "are not protocol messages",
              paste0("  ", encodeString(shown), collapse = "\n")))
}

result_text <- function(res) {
  texts <- vapply(res$content, function(b) if (is.null(b$text)) "" else b$text, character(1))
  paste(texts[nzchar(texts)], collapse = " ")
}

versions_frame <- function(versions) {
  if (!length(versions)) {
    return(data.frame(asked = character(), served = character(), tools = integer(),
                      error = character(), stringsAsFactors = FALSE))
  }
  data.frame(
    asked = vapply(versions, function(v) v$asked, character(1)),
    served = vapply(versions, function(v) v$served, character(1)),
    tools = vapply(versions, function(v) as.integer(v$tools), integer(1)),
    error = vapply(versions, function(v) as.character(v$error), character(1)),
    stringsAsFactors = FALSE, row.names = NULL
  )
}

check_result <- function(out, findings) {
  # Errors first, then warnings, then notes.
  frame <- rust_check_frame(findings)
  if (!is.null(frame$error)) stop(frame$error$message) # a mistake in this file
  all <- frame$value
  problems <- all[all$severity != "info", , drop = FALSE]
  notes <- all[all$severity == "info", , drop = FALSE]
  rownames(problems) <- NULL
  rownames(notes) <- NULL
  out$ok <- !any(all$severity == "error")
  out$problems <- problems
  out$notes <- notes
  structure(out[c("ok", "problems", "notes", "script", "command", "env", "versions", "tools",
                  "first_answer_seconds", "calls", "stderr", "session")], class = "mcplite_check")
}

#' @export
print.mcplite_check <- function(x, ...) {
  cat("mcp_check(): ", if (is.na(x$script)) paste(shell_quote(x$command), collapse = " ") else x$script, "\n", sep = "")
  if (length(x$command)) {
    cat("Started as clients do: ", paste(shell_quote(x$command), collapse = " "), "\n", sep = "")
    cat("from a temporary directory, with only ", paste(client_env_names(), collapse = ", "),
        if (length(x$env)) paste0(" and ", paste(names(x$env), collapse = ", ")), " set.\n", sep = "")
  }
  cat("\n")
  p <- x$problems
  n_err <- sum(p$severity == "error")
  n_warn <- sum(p$severity == "warning")
  if (!nrow(p)) {
    cat("No problems found.\n")
  } else {
    cat(sprintf("%d error%s, %d warning%s:\n", n_err, if (n_err == 1) "" else "s",
                n_warn, if (n_warn == 1) "" else "s"))
    for (i in seq_len(nrow(p))) print_finding(p[i, ])
  }
  notes <- x$notes
  v <- x$versions
  if (nrow(v) || !is.na(x$first_answer_seconds) || nrow(notes)) {
    cat("\nNotes:\n")
    if (!is.na(x$first_answer_seconds)) {
      cat(sprintf("i First answer after %.2f seconds.\n", x$first_answer_seconds))
    }
    if (nrow(v)) {
      listed <- ifelse(is.na(v$tools), "failed",
                       paste0(v$tools, " tool", ifelse(v$tools == 1, "", "s"),
                              ifelse(v$served != v$asked & !is.na(v$served), paste0(" (as ", v$served, ")"), "")))
      cat("i tools/list: ", paste0(v$asked, " ", listed, collapse = "; "), ".\n", sep = "")
    }
    for (i in seq_len(nrow(notes))) print_finding(notes[i, ])
  }
  configured <- if (!isFALSE(x$session)) {
    function(env) mcp_config(session = x$session, client = "claude-desktop", env = env)
  } else if (!is.na(x$script) && file.exists(x$script)) {
    function(env) mcp_config(x$script, "claude-desktop", env = env)
  }
  if (!is.null(configured)) {
    cat("\n")
    configured(if (length(x$env)) x$env else NULL)
    cat("(mcp_config() shows the configuration for other clients.)\n")
  }
  invisible(x)
}

print_finding <- function(f) {
  mark <- switch(f$severity, error = "x", warning = "!", "i")
  who <- c(if (!is.na(f$tool)) sprintf("tool %s", f$tool), if (!is.na(f$version)) f$version)
  head <- if (length(who)) paste0("[", paste(who, collapse = ", "), "] ") else ""
  cat(mark, " ", head, gsub("\n", "\n  ", f$message, fixed = TRUE), "\n", sep = "")
  if (f$severity != "info" || !startsWith(f$fix, "Nothing to do")) cat("  fix: ", f$fix, "\n", sep = "")
  if (!is.na(f$source)) cat("  source: ", f$source, "\n", sep = "")
}

#' Expect a server script to pass `mcp_check()`
#'
#' A testthat expectation: it runs [mcp_check()] and fails when the check
#' finds an error, with every problem and its fix in the failure message
#' (`expect_true(mcp_check(...)$ok)` would only say that `FALSE` is not
#' `TRUE`). Warnings do not fail it.
#'
#' @inheritParams mcp_check
#' @return The `mcplite_check` object, invisibly.
#' @export
#' @examples
#' \donttest{
#' if (requireNamespace("testthat", quietly = TRUE)) {
#'   server <- system.file("examples", "minimal.R", package = "mcplite")
#'   libs <- paste(.libPaths(), collapse = .Platform$path.sep)
#'   expect_mcp_check(server, env = c(R_LIBS = libs))
#' }
#' }
expect_mcp_check <- function(script = NULL, env = NULL, calls = NULL, timeout = 30, command = NULL,
                             session = FALSE) {
  if (!requireNamespace("testthat", quietly = TRUE)) {
    abort_mcplite("`expect_mcp_check()` needs the testthat package.", class = "dependency",
                  call = sys.call())
  }
  res <- mcp_check(script, env = env, calls = calls, timeout = timeout, command = command, session = session)
  failed <- res$problems[res$problems$severity == "error", , drop = FALSE]
  message <- if (nrow(failed)) {
    shown <- utils::capture.output(for (i in seq_len(nrow(failed))) print_finding(failed[i, ]))
    paste0("mcp_check() found ", nrow(failed), " error", if (nrow(failed) == 1) "" else "s",
           " in ", if (is.na(res$script)) paste(shell_quote(res$command), collapse = " ") else res$script,
           ":\n", paste(shown, collapse = "\n"))
  } else {
    ""
  }
  testthat::expect(isTRUE(res$ok), message)
  invisible(res)
}
