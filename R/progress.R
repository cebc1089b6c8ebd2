#' Report a tool's progress to the client
#'
#' Call `mcp_progress()` from inside a tool to tell the client how far a long
#' call has got. When the request carried a progress token (the client asked
#' for progress), the server sends a `notifications/progress` message for it
#' while the tool is still running; otherwise, and outside a server (a tool
#' called as a plain R function, in tests), it does nothing. Either way it
#' returns at once: it never waits for the client.
#'
#' Progress must increase: a value that does not exceed the previous one of
#' the same call is dropped (the server says so once on standard error).
#' The server sends at most 10 notifications a second per call; a value held
#' back by that limit is not lost: the latest one is sent when the limit
#' allows, by the server itself even while the tool computes on, and in any
#' case before the answer. Nothing is sent after the answer, nor for a call
#' the client cancelled. Clients that reset their timeout on progress (the
#' official TypeScript SDK's `resetTimeoutOnProgress`) keep a long call
#' alive as long as it reports. `message` is not sent to clients of protocol
#' version 2024-11-05, which has no such field.
#'
#' On workers (`mcp_server(workers = )`) the report goes to the server, which
#' sends it under the same rules; on daemons on other machines it does
#' nothing. See `vignette("long-running", package = "mcplite")` for where
#' progress is sent from and how to test it.
#'
#' @param progress How far the call has got: a single non-negative number,
#'   larger than the one reported before (items done, percent, seconds, ...).
#' @param total The value `progress` will reach when done, if known: `NULL`
#'   or a single number not smaller than `progress`.
#' @param message `NULL` or a single string saying what the tool is doing.
#' @return `NULL`, invisibly.
#' @examples
#' count_slowly <- tool(
#'   function(n = 3) {
#'     for (i in seq_len(n)) {
#'       Sys.sleep(0.01) # some work
#'       mcp_progress(i, total = n, message = sprintf("step %d of %d", i, n))
#'     }
#'     n
#'   },
#'   name = "count_slowly",
#'   description = "Counts slowly, reporting each step."
#' )
#' # Outside a server, mcp_progress() does nothing:
#' count_slowly(3)
#' @export
mcp_progress <- function(progress, total = NULL, message = NULL) {
  # .Call directly, not through rust_progress(): one closure call less in a
  # function tools may call in tight loops (bench/progress.R).
  problem <- .Call(wrap__rust_progress, progress, total, message)
  if (!is.null(problem)) {
    abort_mcplite(problem[["message"]], class = c("progress", "argument"),
                  arg = problem[["arg"]], call = quote(mcp_progress()))
  }
  invisible(NULL)
}
