# Tool calls on mirai workers: mcp_server(workers = n) or workers = "mirai".
#
# The server process keeps the protocol. Each tools/call becomes one mirai
# task that runs worker_run() on a daemon, which answers with what
# invoke_tool() returns there: list(ok = TRUE, value) or list(ok = FALSE,
# message). The Rust glue (src/rust/src/workers.rs) calls the workers_*()
# functions below through R's error protection; they never signal errors
# (failures come back as strings).
#
# Tools reach the workers by name, not as closures: each worker evaluates the
# server script once (worker_tools()), and mcp_server() called there records
# the tools and stops the script instead of serving. So everything the script
# sets up before mcp_server() (library() calls, data, helper functions,
# options) exists on the worker too.

# Per-process state of a worker (the daemon side).
worker_state <- new.env(parent = emptyenv())

# The compute profile of the daemons mcplite starts itself.
workers_profile <- "mcplite"

# ---- checks, in the server, before anything is read ------------------------

# NULL for in-process calls (workers = 0), else the settings workers_start()
# needs. `script` and `has_mirai` are arguments so that tests can reach every
# error.
workers_config <- function(workers, call = sys.call(-1), script = startup$script,
                           has_mirai = mirai_usable()) {
  own <- is.numeric(workers) && length(workers) == 1 && !is.na(workers) &&
    is.finite(workers) && workers >= 0 && workers == round(workers)
  if (!own && !identical(workers, "mirai")) {
    abort_mcplite(
      sprintf(
        "`workers` must be 0, a whole number of workers to start, or \"mirai\", not %s.",
        describe_value(workers)
      ),
      class = "workers", arg = "workers", call = call
    )
  }
  if (own && workers == 0) return(NULL)
  if (!has_mirai) {
    abort_mcplite(
      paste0(
        "`workers` needs the mirai package, version ", mirai_version, " or later.\n",
        "Install it with `install.packages(\"mirai\")`, or use `workers = 0`."
      ),
      class = "workers", arg = "workers", call = call
    )
  }
  if (is.na(script)) {
    abort_mcplite(
      paste0(
        "`workers` needs the server to run from a script file ",
        "(`Rscript /path/to/server.R`): each worker evaluates that file to define the tools."
      ),
      class = "workers", arg = "workers", call = call
    )
  }
  if (!own && !mirai::daemons_set()) {
    abort_mcplite(
      paste0(
        "`workers = \"mirai\"` uses the daemons the script set up, but none are set.\n",
        "Call `mirai::daemons()` before `mcp_server()`, or give a number of workers to start."
      ),
      class = "workers", arg = "workers", call = call
    )
  }
  list(
    n = if (own) as.integer(workers) else 0L,
    profile = if (own) workers_profile else NULL,
    script = script,
    wd = startup$wd,
    options = payload_option_values()
  )
}

# How the server says on stderr, at start, that workers could not evaluate
# the script (mcp_check() looks for it).
worker_failure_prefix <- "mcplite: a worker could not define the tools: "

# What the server says on stderr when it starts its workers, and once they
# have all evaluated the script (or the failure line above): mcp_check()
# waits for one of the two after the first.
workers_starting_line <- "mcplite: starting %d worker%s; tool calls wait until they have evaluated the script."
workers_starting_pattern <- "^mcplite: starting [0-9]+ workers?; "
workers_ready_prefix <- "mcplite: workers ready: "

# How long a cancelled call may go on ignoring the interrupt before the
# daemon running it (one mcplite started) is killed and replaced.
cancel_grace <- 2

# With `workers = "mirai"`, how many calls at once are handed to the
# script's daemons (their number can change while serving).
script_daemons_slots <- 256

# The oldest mirai that mcplite's workers are tested with.
mirai_version <- "2.7.3"

# Checked without loading mirai: loading it makes the otel package set up its
# tracer provider, which must wait until the server has chosen it.
mirai_usable <- function() {
  path <- system.file(package = "mirai")
  if (!nzchar(path)) return(FALSE)
  version <- tryCatch(read.dcf(file.path(path, "DESCRIPTION"), fields = "Version")[1, 1],
                      error = function(e) NA_character_)
  !is.na(version) && package_version(version) >= mirai_version
}

# Where R started and the script it runs, read when mcplite is loaded (see
# .onLoad()). The daemons mcplite starts begin in that folder, so the
# script's own setwd() calls have the same effect on them. A relative script
# path (`Rscript server.R`) is relative to the folder R started in, which a
# setwd() ahead of library(mcplite) has left: the script is then found
# through the file R has open (rust_running_script()), never through the
# path from the current folder, which may name another file. `why` says why
# the script could not be found (NA when it was, or when R runs none).
startup <- new.env(parent = emptyenv())
startup$wd <- NA_character_
startup$script <- NA_character_
startup$why <- NA_character_

startup_record <- function() {
  found <- running_script_found()
  startup$wd <- found$start
  startup$script <- found$script
  startup$why <- found$why
}

# The directory R started in, or NULL when it is not known or is gone.
startup_dir <- function() {
  wd <- startup$wd
  if (is.character(wd) && !is.na(wd) && dir.exists(wd)) wd else NULL
}

# The path of the script R is running (`Rscript file`, `R -f file`), or NA.
running_script <- function(args = commandArgs(FALSE)) running_script_found(args)$script

# The script R runs, the folder R started in, and why the script could not
# be found: list(script, start, why).
running_script_found <- function(args = commandArgs(FALSE)) {
  here <- tryCatch(getwd(), error = function(e) NA_character_)
  none <- list(script = NA_character_, start = here, why = NA_character_)
  file <- args[startsWith(args, "--file=")]
  if (length(file) == 0) return(none)
  # R writes spaces in the path as "~+~".
  path <- gsub("~+~", " ", substring(file[[1]], 8), fixed = TRUE)
  if (!nzchar(path) || path == "-") return(none)
  if (is_absolute_path(path)) {
    if (!file.exists(path)) return(none)
    return(list(script = normalizePath(path), start = here, why = NA_character_))
  }
  # Called while mcplite loads: nothing here may stop that.
  res <- tryCatch(rust_running_script(path), error = function(e) list(error = conditionMessage(e)))
  if (!is.null(res$error)) {
    return(list(script = NA_character_, start = here, why = res$error))
  }
  list(script = normalizePath(res$value$script), start = res$value$start, why = NA_character_)
}

# ---- the server side, called by the Rust glue -------------------------------

# Start the daemons (workers = n) and have every worker evaluate the script.
# Called after the server has taken over standard input and output, so the
# daemons it starts inherit a null standard input and standard error as
# their standard output. `dir` is a directory only this user can enter,
# made by the server (platform::PrivateDir) and removed after
# workers_stop(): the daemons' socket is in it, so only processes of this
# user can join the pool, and their temporary files, so that those of a
# daemon killed mid-call go too. Returns the state, or a message.
workers_start <- function(config, dir) {
  started <- FALSE
  tryCatch({
    state <- new.env(parent = emptyenv())
    state$config <- config
    state$tasks <- new.env(parent = emptyenv())
    state$run <- internal_call("worker_run", quote(script), quote(name), quote(args),
                               quote(options), quote(traceparent), quote(progress))
    own <- config$n > 0
    state$own <- own
    # How many calls the server hands to mirai at once; the rest wait in the
    # server (src/rust/src/workers.rs), so each message costs the same
    # however many calls are in flight. Two per daemon: mirai's dispatcher
    # then has the next call at hand when a daemon finishes one.
    state$slots <- if (own) 2 * config$n else script_daemons_slots
    # Progress is relayed only from daemons on this machine (see worker_run()).
    state$nodename <- machine_name()
    if (own) {
      state$tmp <- file.path(dir, "tmp")
      dir.create(state$tmp, mode = "0700")
      # The dispatcher (a thread of this process since mirai 2.7.0, reached
      # in-process) listens for the daemons on a socket in `dir`, not on a
      # public abstract socket or port (what daemons(n) would choose).
      # cleanup = FALSE: what the script set up stays between calls without
      # mirai's internals (a tool's own globals then stay too, as in-process).
      mirai::daemons(url = workers_url(dir), dispatcher = TRUE, output = TRUE,
                     cleanup = FALSE, .compute = config$profile)
      started <- TRUE
      workers_launch(state, config$n)
    }
    # mirai signals this condition variable whenever a task of the profile
    # resolves (what workers_wait() waits on).
    profile <- if (is.null(config$profile)) "default" else config$profile
    state$cv <- tryCatch(mirai::nextget("cv", .compute = profile), error = function(e) NULL)
    # Daemons of ours evaluate the script in their link task (worker_link(),
    # submitted by workers_link() once the server listens). Daemons of the
    # script may still be connecting: each loads the script before its first
    # call if this has not reached it.
    if (!own) state$preload <- workers_preload(config, min = 1L)
    state$grace <- cancel_grace
    if (own) {
      # Serving starts now; the workers evaluate the script meanwhile, and
      # the server says on stderr when they all have (workers_settled()). A
      # call that comes first waits in the server's queue for a worker.
      state$since <- Sys.time()
      message(sprintf(workers_starting_line, config$n, if (config$n == 1L) "" else "s"))
    }
    state
  }, error = function(e) {
    if (started) tryCatch(mirai::daemons(0, .compute = config$profile), error = function(e) NULL)
    conditionMessage(e)
  })
}

# The daemons' socket: a Unix socket in the private directory; on Windows a
# named pipe (nng's ipc://), which any local user may open (see "Who can
# reach the workers" in vignette("workers")).
workers_url <- function(dir) {
  if (.Platform$OS.type == "windows") {
    sprintf("ipc://%s", basename(dir))
  } else {
    sprintf("ipc://%s/w", dir)
  }
}

# Start `n` daemons of ours, in the directory R started in, with their R
# temporary directory under the private one (R reads TMPDIR when it starts).
workers_launch <- function(state, n) {
  old <- Sys.getenv("TMPDIR", unset = NA)
  Sys.setenv(TMPDIR = state$tmp)
  on.exit(if (is.na(old)) Sys.unsetenv("TMPDIR") else Sys.setenv(TMPDIR = old), add = TRUE)
  in_startup_dir(mirai::launch_local(n, .compute = state$config$profile))
  invisible()
}

# Evaluate `code` (starting daemons) in the directory R started in.
in_startup_dir <- function(code) {
  wd <- startup_dir()
  if (!is.null(wd)) {
    old <- setwd(wd)
    on.exit(setwd(old), add = TRUE)
  }
  code
}

# Daemons of ours take their calls over links (src/rust/src/workers.rs,
# worker_link.rs): `n` long mirai tasks running worker_link(), one per daemon
# (a daemon busy with one gets no other), each dialling the server's link
# socket `url` with `token`. TRUE, or a message.
workers_link <- function(state, url, token, n) {
  tryCatch({
    link <- internal_call("worker_link", quote(script), quote(url), quote(token), quote(options))
    args <- list(script = state$config$script, url = url, token = token,
                 options = state$config$options)
    # Tasks of links that ended (their daemon died or was killed) go.
    state$links <- Filter(mirai::unresolved, state$links)
    for (i in seq_len(n)) {
      state$links[[length(state$links) + 1L]] <-
        mirai::mirai(.expr = link, .args = args, .compute = state$config$profile)
    }
    TRUE
  }, error = function(e) conditionMessage(e))
}

# A link ended (its daemon died or was killed): a new daemon takes its place.
workers_relink <- function(state, url, token) {
  workers_replace(state)
  workers_link(state, url, token, 1L)
}

# Every daemon of ours said hello on its link (`failure` NULL), or one could
# not evaluate the script: say so on stderr (mcp_check() waits for it).
workers_settled <- function(state, failure = NULL) {
  if (!is.null(failure)) {
    message(worker_failure_prefix, failure)
    return(invisible())
  }
  n <- state$config$n
  message(sprintf("%s%d worker%s evaluated the script in %.1f s.", workers_ready_prefix, n,
                  if (n == 1L) "" else "s", as.numeric(Sys.time() - state$since, units = "secs")))
  invisible()
}

# Start one daemon in place of one that was killed or ended.
workers_replace <- function(state) {
  if (!isTRUE(state$own)) return(invisible())
  tryCatch(workers_launch(state, 1L), error = function(e) NULL)
  invisible()
}

# Submit one call. `progress` is NULL, or c(url, token, task) when the
# request carried a progress token: where the worker sends mcp_progress()'s
# reports (src/rust/src/relay.rs); this machine's name is added. Returns
# TRUE, or the message of a tool error.
workers_submit <- function(state, id, name, args, traceparent, progress = NULL) {
  # The workers could not evaluate the script: no call can run there.
  if (!is.null(state$failed)) return(state$failed)
  tryCatch({
    if (!is.null(progress)) progress <- c(progress, state$nodename)
    run <- state$run
    m <- mirai::mirai(
      .expr = run,
      .args = list(script = state$config$script, name = name, args = args,
                   options = state$config$options, traceparent = traceparent,
                   progress = progress),
      .compute = state$config$profile
    )
    state$tasks[[id]] <- list(mirai = m, name = name)
    TRUE
  }, error = function(e) {
    sprintf("Tool %s could not be sent to a worker: %s", name, conditionMessage(e))
  })
}

# A call on the script's daemons that has finished, as list(id, outcome,
# bell), waiting up to `ms` milliseconds for one: mirai signals the compute
# profile's condition variable whenever a task resolves, and the doorbell
# (workers_bell()) signals it when the server reads a line, so the wait ends
# at once for either. `bell` says whether the doorbell still works.
workers_wait <- function(state, ms) {
  done <- workers_poll(state)
  if (is.null(done) && ms > 0 && !is.null(state$cv)) {
    nanonext::until(state$cv, ms)
    workers_bell_rearm(state)
    done <- workers_poll(state)
  }
  c(done, list(bell = !is.null(state$bell_aio)))
}

# The doorbell: a byte stream from the server's input reader (Rust listens
# on `url`, a Unix socket in the private directory, loopback TCP on Windows,
# and rings with one byte per line read). A receive is
# kept pending on it that signals the same condition variable as mirai's
# tasks. `token` proves to the listener that this process dialled. Returns
# TRUE, or why not (the server then looks at its workers every few ms).
workers_bell <- function(state, url, token) {
  tryCatch({
    if (is.null(state$cv)) stop("no condition variable for the compute profile")
    bell <- nanonext::stream(dial = url)
    nanonext::send(bell, charToRaw(token), mode = "raw", block = 1000L)
    state$bell <- bell
    state$bell_aio <- nanonext::recv_aio(bell, mode = "raw", cv = state$cv)
    TRUE
  }, error = function(e) conditionMessage(e))
}

# After a wait: a receive that completed is replaced by a new one; one that
# failed (the server closed its end) ends the doorbell.
workers_bell_rearm <- function(state) {
  aio <- state$bell_aio
  if (is.null(aio) || nanonext::unresolved(aio)) return(invisible())
  if (nanonext::is_error_value(aio$data)) {
    state$bell_aio <- NULL
    tryCatch(close(state$bell), error = function(e) NULL)
    state$bell <- NULL
    return(invisible())
  }
  state$bell_aio <- nanonext::recv_aio(state$bell, mode = "raw", cv = state$cv)
  invisible()
}

# A call that has finished, as list(id, outcome), or NULL.
workers_poll <- function(state) {
  for (id in names(state$tasks)) {
    task <- state$tasks[[id]]
    if (!mirai::unresolved(task$mirai)) {
      rm(list = id, envir = state$tasks)
      return(list(id = id, outcome = worker_outcome(state, task)))
    }
  }
  NULL
}

# Stop a call (on the script's daemons): the daemon running it is
# interrupted. mirai resolves a stopped mirai at once, and the daemon is the
# script's: whether the call stops cannot be seen from here. (Daemons of
# ours: cancelled over their link, see src/rust/src/workers.rs.)
workers_cancel <- function(state, id) {
  task <- state$tasks[[id]]
  if (is.null(task)) return(invisible(FALSE))
  message(sprintf(
    "mcplite: tool %s was cancelled; its daemon belongs to the script, so if the call ignores the interrupt it goes on running there.",
    task$name
  ))
  rm(list = id, envir = state$tasks)
  tryCatch(mirai::stop_mirai(task$mirai), error = function(e) NULL)
  invisible(TRUE)
}

# At the end of serving: stop what still runs, and the daemons mcplite
# started (the server has ended their links, killing those still running a
# call, so mirai's reset has no daemon busy to wait for).
workers_stop <- function(state) {
  for (id in names(state$tasks)) workers_cancel(state, id)
  if (isTRUE(state$own)) {
    tryCatch(mirai::daemons(0, .compute = state$config$profile), error = function(e) NULL)
  }
  if (!is.null(state$bell)) tryCatch(close(state$bell), error = function(e) NULL)
  state$bell_aio <- NULL
  invisible(NULL)
}

# What a finished task gives the core: invoke_tool()'s list, or a failure.
worker_outcome <- function(state, task) {
  value <- task$mirai$data
  if (is.list(value) && !is.object(value) && is_flag(value$ok)) {
    if (isTRUE(value$fresh)) {
      # The script was evaluated by this call, on a daemon that connected
      # after the server's everywhere(): evaluate it everywhere again, which
      # mirai keeps through its cleanup between calls.
      value$fresh <- NULL
      if (!isTRUE(state$own)) workers_preload_again(state)
    }
    return(value)
  }
  name <- task$name
  failed <- function(text) list(ok = FALSE, message = text)
  if (mirai::is_mirai_interrupt(value)) {
    return(failed(sprintf("Tool %s was interrupted.", name)))
  }
  if (mirai::is_error_value(value) && identical(as.integer(value), 19L)) {
    # The daemon went away during the call (quit(), a crash, killed).
    return(failed(sprintf(
      "Tool %s stopped: the worker process running it ended (the tool may have called quit(), or the process crashed).",
      name
    )))
  }
  failed(sprintf("Tool %s failed on its worker: %s", name, worker_failure_text(value)))
}

worker_failure_text <- function(value) {
  if (is.character(value) && length(value) == 1) return(value)
  if (mirai::is_mirai_error(value)) return(sub("\n+$", "", as.character(value)))
  if (mirai::is_error_value(value)) {
    return(sprintf("mirai reported error %d.", as.integer(value)))
  }
  "the worker returned nothing usable."
}

# Have every daemon (at least `min` of them) evaluate the script.
workers_preload <- function(config, min = 1L) {
  # Built first: mirai sends a call given directly as `.expr` unevaluated.
  load <- internal_call("worker_preload", quote(script))
  mirai::everywhere(.expr = load, .args = list(script = config$script),
                    .min = min, .compute = config$profile)
}

workers_preload_again <- function(state) {
  tryCatch(workers_preload(state$config), error = function(e) NULL)
  invisible()
}

# `mcplite:::fun(...)`, built here so that it can be sent to a worker.
internal_call <- function(fun, ...) {
  as.call(c(list(call(":::", as.name("mcplite"), as.name(fun))), list(...)))
}

# ---- the worker side ---------------------------------------------------------

# Run one call on a worker. With `progress` (see workers_submit()),
# mcp_progress() sends to the server's relay, and the outcome says how many
# reports the call sent (`reports`): the server answers once it has them all.
worker_run <- function(script, name, args, options, traceparent = NULL, progress = NULL) {
  worker_state$fresh <- NULL
  tools <- worker_tools(script)
  fresh <- isTRUE(worker_state$fresh)
  if (is.character(tools)) return(list(ok = FALSE, message = tools))
  # The payload options the server started with, set after the script (which
  # may set others): a tool_result() built here serializes exactly as in the
  # server. (mirai's cleanup resets options after each task.)
  base::options(options)
  fun <- tools[[name]]
  if (!is.function(fun)) {
    return(list(ok = FALSE, message = sprintf(
      "Tool %s is not defined when the worker evaluates %s.", name, script
    )))
  }
  failed <- TRUE
  if (is.character(traceparent) && worker_trace_begin(traceparent, name)) {
    on.exit(rust_worker_span_end(failed), add = TRUE)
  }
  rust_json_take_zeroed()
  relayed <- worker_relays(progress) && isTRUE(rust_worker_progress_begin(progress[1:3]))
  # Interrupted (cancelled), the call still ends its reports here.
  if (relayed) on.exit(rust_worker_progress_end(), add = TRUE)
  out <- invoke_tool(fun, args, name)
  if (relayed) out$reports <- rust_worker_progress_end()
  if (isTRUE(out$ok)) out$value <- worker_structured_settled(out$value)
  failed <- !isTRUE(out$ok)
  if (fresh) out$fresh <- TRUE
  # A number the tool's tool_result() sent as 0 here: the server tells the
  # author, as for calls in its own process.
  if (isTRUE(rust_json_take_zeroed())) out$zeroed <- TRUE
  out
}

# A daemon's link task (workers = n): evaluate the script, then serve the
# calls the server sends on its link until the server closes it
# (rust_worker_link(), src/rust/src/worker_link.rs). mirai's cleanup never
# runs meanwhile: what the script and the tools set up stays, as in the
# server.
worker_link <- function(script, url, token, options) {
  tools <- worker_tools(script)
  error <- if (is.character(tools)) tools
  specs <- NULL
  opts <- NULL
  if (is.null(error)) {
    # The payload options the server started with, set after the script
    # (which may set others): results are written exactly as in the server.
    base::options(options)
    opts <- tryCatch(payload_options(), error = function(e) NULL)
    specs <- lapply(worker_state$specs, function(spec) {
      fun <- spec[["fun"]]
      spec["formals"] <- list(if (is.primitive(fun)) NULL else as.character(names(formals(fun))))
      spec
    })
  }
  out <- rust_worker_link(list(
    url = url, token = token, error = error, tmp = tempdir(), specs = specs, info = server_identity(),
    json_opts = opts, helpers = json_helpers(), serve = serve_tool, run = tool_run,
    traced = worker_traced_invoker
  ))
  if (!is.null(out[["error"]])) message("mcplite: worker link: ", out[["error"]])
  invisible(NULL)
}

# The invoker of a traced call on a link: the call's span on the worker
# joins the server's trace (see worker_trace_begin()).
worker_traced_invoker <- function(traceparent) {
  function(fun, args, name) {
    failed <- TRUE
    if (worker_trace_begin(traceparent, name)) on.exit(rust_worker_span_end(failed), add = TRUE)
    out <- invoke_tool(fun, args, name)
    failed <- !isTRUE(out$ok)
    out
  }
}

# A tool_result() whose `structured_content` the tool changed after its JSON
# was written, with that JSON (and the text block generated from it) written
# again, as the server does for calls in its own process: the result reaches
# the server as plain strings, which no longer tell the edit. A value with no
# JSON form leaves no JSON, so the server writes it and says why.
worker_structured_settled <- function(x) {
  generated <- rust_structured_edit(x)
  if (is.null(generated)) return(x)
  cls <- class(x)
  x <- unclass(x)
  value <- x[["structured_content"]]
  # tool_result()'s own writing (and rules) of the value.
  fresh <- if (!is.null(value)) tryCatch(tool_result(structured_content = value), mcplite_error = function(e) NULL)
  if (is.null(value)) {
    if (length(generated)) x$content <- x$content[-generated]
  } else if (!is.null(fresh)) {
    x$content[generated] <- fresh$content[1]
    x$structured_content <- fresh$structured_content
  }
  x$structured_json <- fresh$structured_json
  class(x) <- cls
  x
}

# The tools of `script` on this worker, by name: evaluated once per process
# (again if mirai's cleanup removed what it defined: a global variable or an
# attached package it had after the script ran). A message if the script
# fails here.
worker_tools <- function(script) {
  loaded <- worker_state$tools
  if (!is.null(loaded) && identical(worker_state$script, script) &&
      all(worker_state$globals %in% names(globalenv())) && all(worker_state$search %in% search())) {
    return(loaded)
  }
  worker_state$tools <- NULL
  if (!file.exists(script)) {
    return(sprintf(
      "The worker cannot read the server script %s: it must exist at that path where the workers run.",
      script
    ))
  }
  worker_detach_stdio()
  # Each evaluation starts where the daemon started (the server's folder for
  # daemons mcplite starts), so a relative setwd() in the script goes where
  # it went in the server, the second time too.
  wd <- startup_dir()
  if (!is.null(wd)) setwd(wd)
  worker_state$loading <- script
  on.exit(worker_state$loading <- NULL)
  # The last warning, for an error that does not say what it was about:
  # source("tools.R") fails with "cannot open the connection" and only
  # its warning names the file.
  warned <- NULL
  specs <- tryCatch(
    withCallingHandlers(
      {
        source(script, local = globalenv())
        sprintf("The server script %s did not call mcp_server() when a worker evaluated it.", script)
      },
      warning = function(w) warned <<- conditionMessage(w)
    ),
    mcplite_worker_tools = function(cnd) cnd$specs,
    error = function(e) {
      text <- sprintf("The worker could not evaluate the server script %s: %s%s",
                      script, condition_text(e, "?"), startup_replay_note(e))
      if (!is.null(warned)) text <- sprintf("%s (R warned: %s)", text, warned)
      text
    }
  )
  worker_state$fresh <- TRUE
  if (is.character(specs)) return(specs)
  worker_state$specs <- specs
  tools <- lapply(specs, function(s) s$fun)
  names(tools) <- vapply(specs, function(s) s$name, character(1))
  worker_state$tools <- tools
  worker_state$script <- script
  worker_state$globals <- names(globalenv())
  worker_state$search <- search()
  tools
}

# A daemon the script started before mcp_server() inherited the server's
# standard input and output (the protocol pipes). Before anything runs there,
# point its standard output at standard error and its standard input at the
# null device, as the server does for itself. (Daemons mcplite starts have
# these already.)
worker_detach_stdio <- function() {
  if (isTRUE(worker_state$detached)) return(invisible())
  if (!isTRUE(tryCatch(mirai::on_daemon(), error = function(e) FALSE))) return(invisible())
  out <- rust_worker_detach_stdio()
  worker_state$detached <- is.null(out$error)
  invisible()
}

# Evaluate the script on a worker ahead of its first call: TRUE, or why not.
worker_preload <- function(script) {
  tools <- worker_tools(script)
  worker_state$fresh <- NULL
  if (is.character(tools)) tools else TRUE
}

# Whether this worker sends the call's progress to the server: only on the
# server's machine (workers_submit() adds its name), as elsewhere the relay's
# address (a socket path, or a loopback port on Windows) names nothing of
# the server's.
worker_relays <- function(progress) {
  is.character(progress) && length(progress) == 4L && !anyNA(progress) &&
    identical(progress[[4]], machine_name())
}

# This machine's name, as the server and its workers compare it.
machine_name <- function() {
  if (is.null(worker_state$nodename)) worker_state$nodename <- Sys.info()[["nodename"]]
  worker_state$nodename
}

# Whether mcp_server() is being called by a worker evaluating the script.
worker_loading <- function() !is.null(worker_state$loading)

# mcp_server() on a worker: hand the tools to worker_tools() and stop the
# script there (what follows mcp_server() runs only in the server).
worker_register <- function(specs) {
  stop(structure(
    class = c("mcplite_worker_tools", "condition"),
    list(message = "mcp_server() on a worker", call = NULL, specs = specs)
  ))
}

# Tracing on a worker: the call's span joins the server's trace (its parent
# is the traceparent of the server span), and spans that tool code starts
# with the otel package become its children. Exported the way the server
# exports (the same OTEL_* variables, read by the worker).
worker_trace_begin <- function(traceparent, name) {
  if (is.null(worker_state$tracing)) {
    worker_state$tracing <- isTRUE(rust_worker_tracing_start())
    if (worker_state$tracing) otel_on_start(TRUE)
  }
  worker_state$tracing && isTRUE(rust_worker_span_begin(traceparent, name))
}
