#' Return an MCP tool result
#'
#' @description
#' By default whatever a tool returns is turned into a single text block. Return
#' `tool_result()` instead when you want to choose the content blocks yourself,
#' attach structured content, flag an error, or add result metadata.
#'
#' @details
#' ## Content and structured content
#' `content` holds blocks made by [content-blocks] constructors such as
#' [content_text()]; nothing else is accepted here (plain R values belong in an
#' ordinary return from the tool). A result needs something to say: at least
#' one block, or `structured_content`; `tool_result()` with neither is an
#' error, as in CRAN's mcplite 0.2.0. Blocks are checked as the server checks
#' them before sending, so a block edited by hand (a text block whose `text`
#' was removed) is refused here, with the field that is wrong.
#'
#' `structured_content` is any R value that can be written as JSON, following
#' the conversion rules and payload options in [mcplite-results]. If you supply
#' it without `content`, mcplite adds exactly one text block containing the
#' same JSON, so clients that ignore structured content still see the data. If
#' you supply `content` yourself it is sent exactly as given, with nothing
#' appended; make sure it stands on its own, because some clients and protocol
#' versions drop structured content.
#'
#' The JSON is produced when `tool_result()` is called, using the payload
#' options in force at that moment, so a value that cannot be written as JSON
#' fails here rather than while the server is answering a client. The result
#' keeps it as `structured_json` (and as the text of the generated block): an
#' ordinary character string in R, which R materializes only when your code
#' reads it, so a server that just sends the result never copies a large
#' JSON text into R.
#'
#' `structured_content` stays the data the result sends. If a tool changes it
#' after `tool_result()` (`res$structured_content$n <- 0L`, or a new value),
#' the server writes its JSON again when it sends the result, with the
#' server's payload options, and the text block `tool_result()` generated
#' follows it; setting it to `NULL` removes the structured content and that
#' block. (`res$structured_json` and that block still hold the JSON written
#' first until then.) Replacing `structured_json` itself sends that text
#' instead, once the server has checked it is one compact JSON value.
#'
#' ## Errors
#' `is_error = TRUE` tells the client the tool ran but failed (for example the
#' input was unusable). The result is still delivered normally, so the model
#' can read the explanation in `content` and try again.
#'
#' @param content A content block, or a list of content blocks.
#' @param structured_content Optional structured data for the result; `NULL`
#'   (the default) means none. An empty `list()` is sent as `{}`.
#' @param is_error `TRUE` to report a tool-level error, `FALSE` otherwise.
#' @param meta A named list of metadata for the result, sent as `_meta`.
#'
#' @return An object of class `mcplite_tool_result`, to be returned by a tool.
#' @seealso [content-blocks] for the block constructors, [mcplite-results] for
#'   JSON conversion rules and options.
#' @examples
#' tool_result(content_text("Saved."))
#'
#' tool_result(list(
#'   content_text("Here is the chart."),
#'   content_image("iVBORw0KGgo=", "image/png")
#' ))
#'
#' # Structured data; a text copy of the JSON is generated:
#' res <- tool_result(structured_content = list(mean = 2.5, n = 4L))
#' res$content[[1]]$text
#'
#' tool_result(content_text("The file does not exist."), is_error = TRUE)
#' @export
tool_result <- function(content = list(), structured_content = NULL,
                        is_error = FALSE, meta = list()) {
  call <- sys.call()
  generate <- missing(content)
  content <- check_content_list(content, call)
  check_flag(is_error, "is_error", call = call, class = "content")
  meta <- check_meta(meta, "meta", call)

  structured_json <- NULL
  if (!is.null(structured_content)) {
    # A bare empty list at the root stands for the empty object.
    if (identical(structured_content, list())) structured_content <- empty_object()
    opts <- payload_options(call)
    structured_json <- json_payload(structured_content, opts, "structured_content", call = call)
    # The text fallback is the same JSON text object. Built without
    # content_text()'s checks, which would make R read (and copy) the JSON.
    if (generate) content <- list(new_block("text", list(text = structured_json), list(), list(), call))
  }

  out <- structure(
    list(
      content = content,
      structured_content = structured_content,
      structured_json = structured_json,
      is_error = is_error,
      meta = meta
    ),
    class = "mcplite_tool_result"
  )
  # The server's own reading of a result, so what it would refuse to send
  # (no content at all, a block edited by hand) is refused here.
  problem <- rust_check_tool_result(out)$error
  if (!is.null(problem)) {
    abort_mcplite(sprintf("The result cannot be sent: %s.", problem),
                  class = "content", arg = "content", call = call)
  }
  out
}

#' @export
print.mcplite_tool_result <- function(x, ...) {
  cat(sprintf(
    "<mcplite tool result>%s %d content block%s\n",
    if (isTRUE(x[["is_error"]])) " error," else "",
    length(x[["content"]]), if (length(x[["content"]]) == 1) "" else "s"
  ))
  for (block in x[["content"]]) print(block)
  if (!is.null(x[["structured_json"]])) {
    cat("Structured content: ", x[["structured_json"]], "\n", sep = "")
  }
  if (length(x[["meta"]]) > 0) {
    cat("Meta: ", json_fixed(x[["meta"]], "meta"), "\n", sep = "")
  }
  invisible(x)
}

check_content_list <- function(content, call) {
  if (inherits(content, "mcplite_content")) return(list(content))
  if (!is.list(content) || is.object(content)) {
    abort_mcplite(
      sprintf(
        "`content` must be a content block or a list of them, not %s.\nBuild blocks with `content_text()` and friends.",
        describe_value(content)
      ),
      class = "content", arg = "content", call = call
    )
  }
  if (!is.null(names(content)) && "type" %in% names(content)) {
    abort_mcplite(
      "`content` must be built with `content_text()` and friends, not written as a plain list.",
      class = "content", arg = "content", call = call
    )
  }
  for (i in seq_along(content)) {
    if (!inherits(content[[i]], "mcplite_content")) {
      abort_mcplite(
        sprintf(
          "`content[[%d]]` must be a content block made by `content_text()` and friends, not %s.",
          i, describe_value(content[[i]])
        ),
        class = "content", arg = "content", call = call
      )
    }
  }
  unname(content)
}
