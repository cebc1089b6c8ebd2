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
#'   [mcp_check()] start servers). A relative path there is resolved against
#'   the folder R started in, even after the script calls [setwd()], as long
#'   as mcplite was loaded (`library(mcplite)`, or any `mcplite::` call)
#'   before that `setwd()`;
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

.onLoad <- function(libname, pkgname) {
  startup_record()
}
