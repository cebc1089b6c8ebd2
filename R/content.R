#' Build MCP content blocks
#'
#' @description
#' Constructors for the blocks a [tool_result()] can carry:
#'
#' * `content_text()`: plain text.
#' * `content_image()` and `content_audio()`: binary media given as base64.
#' * `content_resource_link()`: a pointer to a resource by URI.
#' * `content_resource()`: a resource embedded in the result, as text or as
#'   base64 data.
#'
#' Arguments use snake_case in R (`mime_type`, `last_modified`, `meta`);
#' mcplite writes MCP's names (`mimeType`, `lastModified`, `_meta`) only when
#' the result is sent.
#'
#' @details
#' Binary payloads (`data`, `blob`) must already be base64-encoded, as one
#' string. mcplite passes them through untouched: it does not read files,
#' fetch URLs, encode, decode or check base64, guess MIME types or make up
#' URIs. Sending correct, safe and reasonably sized payloads is up to the tool.
#'
#' A resource link only carries the URI you give it. mcplite serves tools
#' only, so clients cannot read that URI through it; an embedded resource
#' carries its content with it.
#'
#' `annotations` is a named list with any of:
#' * `audience`: who the block is meant for, a character vector of `"user"`
#'   and/or `"assistant"`;
#' * `priority`: a number from 0 (least important) to 1 (most important);
#' * `last_modified`: when the underlying data last changed, as an ISO 8601
#'   string (a `POSIXct` time is converted to one, in UTC).
#'
#' @param text For `content_text()`, the text as a single string. For
#'   `content_resource()`, the resource's text content; give `text` or `blob`,
#'   not both.
#' @param data The image or audio bytes, base64-encoded, as a single string.
#' @param mime_type The MIME type of the payload as a single string, such as
#'   `"image/png"`; optional (`NULL`) for resources and resource links.
#' @param uri The resource's URI, as a single string.
#' @param name The resource link's name, as a single string.
#' @param title An optional human-readable title, as a single string.
#' @param description An optional description of the linked resource.
#' @param size The optional size of the linked resource in bytes, a whole
#'   non-negative number.
#' @param blob The resource's bytes, base64-encoded, as a single string.
#' @param annotations A named list of block annotations; see Details.
#' @param meta A named list of metadata for the block, sent as `_meta`.
#'
#' @return A content block (class `mcplite_content`) for [tool_result()].
#' @seealso [tool_result()]
#' @examples
#' content_text("All done.")
#' content_text("Only for the model.", annotations = list(audience = "assistant"))
#'
#' # A 1x1 transparent PNG, already base64-encoded:
#' png <- paste0(
#'   "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNk",
#'   "YAAAAAYAAjCB0C8AAAAASUVORK5CYII="
#' )
#' content_image(png, "image/png")
#'
#' content_resource_link("file:///tmp/report.csv", "report.csv",
#'   mime_type = "text/csv", size = 2048
#' )
#' content_resource("memo://notes/1", text = "Remember the milk.",
#'   mime_type = "text/plain"
#' )
#' @name content-blocks
NULL

#' @rdname content-blocks
#' @export
content_text <- function(text, annotations = list(), meta = list()) {
  call <- sys.call()
  check_required(missing(text), "text", call)
  check_string(text, "text", call = call, class = "content")
  new_block("text", list(text = text), annotations, meta, call)
}

#' @rdname content-blocks
#' @export
content_image <- function(data, mime_type, annotations = list(), meta = list()) {
  media_block("image", data, mime_type, annotations, meta, missing(data), missing(mime_type), sys.call())
}

#' @rdname content-blocks
#' @export
content_audio <- function(data, mime_type, annotations = list(), meta = list()) {
  media_block("audio", data, mime_type, annotations, meta, missing(data), missing(mime_type), sys.call())
}

#' @rdname content-blocks
#' @export
content_resource_link <- function(uri, name, title = NULL, description = NULL,
                                  mime_type = NULL, size = NULL,
                                  annotations = list(), meta = list()) {
  call <- sys.call()
  check_required(missing(uri), "uri", call)
  check_required(missing(name), "name", call)
  check_string(uri, "uri", call = call, allow_empty = FALSE, class = "content")
  check_string(name, "name", call = call, allow_empty = FALSE, class = "content")
  check_string(title, "title", call = call, allow_null = TRUE, class = "content")
  check_string(description, "description", call = call, allow_null = TRUE, class = "content")
  check_string(mime_type, "mime_type", call = call, allow_null = TRUE, allow_empty = FALSE, class = "content")
  if (!is.null(size)) {
    ok <- is.numeric(size) && length(size) == 1 && !is.na(size) &&
      is.finite(size) && size >= 0 && size == round(size)
    if (!ok) {
      abort_mcplite(
        sprintf("`size` must be a whole number of bytes (0 or more) or NULL, not %s.", describe_value(size)),
        class = "content", arg = "size", call = call
      )
    }
    size <- as.double(size)
  }
  fields <- list(uri = uri, name = name)
  fields$title <- title
  fields$description <- description
  fields$mime_type <- mime_type
  fields$size <- size
  new_block("resource_link", fields, annotations, meta, call)
}

#' @rdname content-blocks
#' @export
content_resource <- function(uri, text = NULL, blob = NULL, mime_type = NULL,
                             annotations = list(), meta = list()) {
  call <- sys.call()
  check_required(missing(uri), "uri", call)
  check_string(uri, "uri", call = call, allow_empty = FALSE, class = "content")
  if (is.null(text) == is.null(blob)) {
    abort_mcplite(
      sprintf(
        "Give exactly one of `text` and `blob` for an embedded resource; %s.",
        if (is.null(text)) "neither was given" else "both were given"
      ),
      class = "content", arg = if (is.null(text)) "text" else "blob", call = call
    )
  }
  check_string(text, "text", call = call, allow_null = TRUE, class = "content")
  check_string(blob, "blob", call = call, allow_null = TRUE, class = "content")
  check_string(mime_type, "mime_type", call = call, allow_null = TRUE, allow_empty = FALSE, class = "content")
  fields <- list(uri = uri)
  fields$text <- text
  fields$blob <- blob
  fields$mime_type <- mime_type
  new_block("resource", fields, annotations, meta, call)
}

#' @export
print.mcplite_content <- function(x, ...) {
  cat(sprintf("<mcplite content: %s>\n", x[["type"]]))
  fields <- setdiff(names(x), c("type", "annotations", "meta"))
  for (f in fields) {
    value <- x[[f]]
    if (is.character(value) && nchar(value) > 60) value <- paste0(substr(value, 1, 57), "...")
    cat(sprintf("  %s: %s\n", f, format(value)))
  }
  if (length(x[["annotations"]]) > 0) {
    cat("  annotations: ", json_fixed(x[["annotations"]], "annotations"), "\n", sep = "")
  }
  if (length(x[["meta"]]) > 0) {
    cat("  meta: ", json_fixed(x[["meta"]], "meta"), "\n", sep = "")
  }
  invisible(x)
}

check_required <- function(is_missing, arg, call) {
  if (is_missing) {
    abort_mcplite(sprintf("`%s` is missing, with no default.", arg),
      class = "content", arg = arg, call = call
    )
  }
}

media_block <- function(type, data, mime_type, annotations, meta,
                        data_missing, mime_missing, call) {
  check_required(data_missing, "data", call)
  check_required(mime_missing, "mime_type", call)
  if (!is_string(data)) {
    abort_mcplite(
      sprintf(
        "`data` must be base64-encoded %s data as a single string, not %s.",
        type, describe_value(data)
      ),
      class = "content", arg = "data", call = call
    )
  }
  check_string(mime_type, "mime_type", call = call, allow_empty = FALSE, class = "content")
  new_block(type, list(data = data, mime_type = mime_type), annotations, meta, call)
}

new_block <- function(type, fields, annotations, meta, call) {
  block <- c(list(type = type), fields)
  block$annotations <- check_block_annotations(annotations, call)
  block$meta <- check_meta(meta, "meta", call)
  structure(block, class = c(paste0("mcplite_content_", type), "mcplite_content"))
}

check_meta <- function(meta, arg, call, class = "content") {
  if (is.null(meta)) return(empty_object())
  meta <- check_named_list(meta, arg, call = call, class = class)
  # The empty object (the default, per result and per block) needs no check.
  if (length(meta) > 0) check_fixed(meta, arg, call = call, class = class)
  meta
}

# The rule is the core's (`r::result::check_content_annotations`, which the
# server's reading of a block shares): `lastModified` is `last_modified`
# (once), MCP's annotations hold what they must, others are sent as given
# with a warning (CRAN mcplite sends them, and MCP's schema allows other
# members). R then makes the values what the core reads: a POSIXct time
# becomes its ISO 8601 text, the audience a plain character vector.
check_block_annotations <- function(annotations, call) {
  if (is.null(annotations)) return(empty_object())
  annotations <- check_named_list(annotations, "annotations", call = call, class = "content")
  if (length(annotations) == 0) return(annotations)
  res <- author_check("content_annotations", annotations, "annotations", call = call)
  names(annotations) <- res$names
  # An annotation given as NULL is not sent.
  annotations <- annotations[!vapply(annotations, is.null, logical(1))]
  if ("audience" %in% names(annotations)) {
    annotations[["audience"]] <- unclass(as.character(annotations[["audience"]]))
  }
  if ("priority" %in% names(annotations)) {
    annotations[["priority"]] <- as.double(annotations[["priority"]])
  }
  time <- annotations[["last_modified"]]
  if (inherits(time, "POSIXct")) {
    annotations[["last_modified"]] <- format(time, "%Y-%m-%dT%H:%M:%SZ", tz = "UTC")
  }
  if (length(annotations) == 0) empty_object() else annotations
}
