#' Files next to the server script
#'
#' `script_file()` gives the path of a file in the folder of the server
#' script, such as the `tools.R` that a `server.R` sources or the data its
#' tools read. Use it instead of `commandArgs()` or relative paths: it gives
#' the same path wherever the script runs, which a relative path does not
#' (MCP clients start the server from a folder of their choosing).
#'
#' The script is found, in this order:
#' * on a worker of `mcp_server(workers = )`, the script the worker evaluates
#'   (the server's, at the same path);
#' * the file R runs, as in `Rscript /path/to/server.R` (how clients and
#'   [mcp_check()] start servers). A relative path there names the file R
#'   opened, even after the script calls [setwd()], before or after mcplite
#'   was loaded (R keeps the script open, and the operating system names it;
#'   where it cannot, a `setwd()` before mcplite is loaded leaves the script
#'   unknown);
#' * the file being read by [source()], when the script is sourced in an R
#'   session;
#' * otherwise (code typed at the console) the working directory.
#'
#' @param ... Path components below the script's folder, joined with
#'   [file.path()]. None gives the script itself.
#' @return A single string: the normalized path (whether or not that file
#'   exists). With no `...`, the script's own path, or `NA` when there is no
#'   script.
#' @seealso [mcp_server()] for what runs on workers.
#' @export
#' @examples
#' # In server.R, next to tools.R and data/sales.csv:
#' # source(script_file("tools.R"))
#' # sales <- read.csv(script_file("data", "sales.csv"))
#'
#' # At the console there is no script: the working directory is used.
#' old <- setwd(tempdir())
#' script_file("tools.R")
#' setwd(old)
script_file <- function(...) {
  parts <- c(...)
  if (!is.null(parts) && !is.character(parts)) {
    abort_mcplite(
      sprintf("`...` must be character strings, not %s.", describe_value(parts)),
      class = "argument", arg = "...", call = sys.call()
    )
  }
  if (anyNA(parts)) {
    abort_mcplite("`...` must not contain missing values (NA).",
                  class = "argument", arg = "...", call = sys.call())
  }
  script <- current_script()
  if (!length(parts)) return(script)
  dir <- if (is.na(script)) getwd() else dirname(script)
  normalizePath(do.call(file.path, as.list(c(dir, parts))), winslash = "/", mustWork = FALSE)
}

# The script this code runs in (see script_file()), or NA.
current_script <- function() {
  on_worker <- worker_state$loading
  if (is.null(on_worker)) on_worker <- worker_state$script
  if (is.character(on_worker) && !is.na(on_worker)) return(on_worker)
  if (!is.na(startup$script)) return(startup$script)
  for (i in rev(seq_len(sys.nframe()))) {
    if (identical(sys.function(i), base::source)) {
      # source() keeps the path in `filename` once `file` is a connection.
      file <- get0("filename", envir = sys.frame(i), inherits = FALSE)
      if (is.character(file) && length(file) == 1 && !is.na(file) && file.exists(file)) {
        return(normalizePath(file, winslash = "/"))
      }
    }
  }
  NA_character_
}

# Workers evaluate the script R runs (see running_script_found()): when it
# could not be found, refuse them and say why, rather than let a worker
# evaluate another file.
startup_check_workers <- function(workers, call) {
  wanted <- identical(workers, "mirai") ||
    (is.numeric(workers) && length(workers) == 1 && !is.na(workers) && workers >= 1)
  if (!wanted || is.na(startup$why)) return(invisible())
  abort_mcplite(
    paste0(
      "`workers` needs the script R runs, and it cannot be found: ", startup$why, ".\n",
      "Load mcplite before the script's first setwd() (`library(mcplite)` at its top), ",
      "or run the script by its absolute path."
    ),
    class = c("workers_script", "workers"), arg = "workers", call = call
  )
}

# Why the server script failed on a worker, when a setwd() in it did: the
# worker replays the script's setwd() calls from the folder recorded as the
# one R started in (startup_dir()), which is the folder R was in when
# mcplite was loaded if the script was run by its absolute path. "" for any
# other error.
startup_replay_note <- function(e) {
  call <- conditionCall(e)
  if (!is.call(call) || !identical(call[[1]], quote(setwd))) return("")
  from <- startup_dir()
  sprintf(paste0(
    " (the worker replays the script's setwd() calls from %s, the folder R was in when mcplite ",
    "was loaded: a setwd() ahead of library(mcplite) cannot be replayed from there. ",
    "Load mcplite at the top of the script, or give setwd() an absolute path such as ",
    "script_file(\"data\"))"
  ), if (is.null(from)) "the daemon's folder" else from)
}

.onLoad <- function(libname, pkgname) {
  startup_record()
}
