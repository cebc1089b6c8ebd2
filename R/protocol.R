# The protocol facts R reads from the core instead of spelling them: the
# version table (src/rust/core/src/version.rs) and MCP's field names
# (src/rust/core/src/wire.rs), through one entry point, rust_protocol().
# tools/wire-names.mjs (run by tools/lint.sh) fails when R code spells a
# served version or a field name of its own.

protocol_facts <- local({
  facts <- NULL
  function() {
    if (is.null(facts)) facts <<- rust_protocol()
    facts
  }
})

# The served versions in preference order (the order discovery advertises),
# one row each: `id`, `era` ("legacy" or "modern") and what each carries.
protocol_versions <- function() {
  as.data.frame(protocol_facts()$versions, stringsAsFactors = FALSE)
}

# The version a legacy `initialize` falls back to, and the one clients and
# checks use when none is asked for: the newest with the handshake.
latest_legacy_version <- function() protocol_facts()$latest_legacy

# Whether `id` (a served version) is chosen per request, without a handshake.
is_modern_version <- function(id) {
  versions <- protocol_versions()
  identical(versions$era[match(id, versions$id)], "modern")
}

# An MCP field name, by its constant in src/rust/core/src/wire.rs
# (`wire_name("IS_ERROR")` is "isError"). An unknown constant is an error.
wire_name <- function(id) protocol_facts()$names[[id]]

# Markdown for the reference pages, evaluated by roxygen (`r ...` in the
# docs) when man/ is generated, so the pages follow the table.

# The served versions (of one era, if given) as prose, oldest first:
# "a, b or c"; with `quote`, each as the R string to pass, as code.
protocol_versions_text <- function(era = NULL, quote = FALSE, final = "or") {
  v <- protocol_versions()
  ids <- rev(if (is.null(era)) v$id else v$id[v$era == era])
  if (quote) ids <- sprintf('`"%s"`', ids)
  if (length(ids) < 2) return(ids)
  paste(paste(ids[-length(ids)], collapse = ", "), final, ids[[length(ids)]])
}

# What a client of each version receives, one column per version (oldest
# first), as a Markdown table.
protocol_versions_table <- function() {
  v <- protocol_versions()
  v <- v[rev(seq_len(nrow(v))), , drop = FALSE]
  modern <- v$era == "modern"
  yes_no <- function(x, no = "no") ifelse(x, "yes", no)
  shapes <- function(x, object, any) {
    c(none = "dropped", object = object, any = any)[x]
  }
  rows <- list(
    "`ping`" = ifelse(modern, "no (method not found)", "yes"),
    "`server/discover`, cache hints, `resultType`" = yes_no(v$modern_result),
    "tool `title`, `annotations`, `_meta`" = yes_no(v$tool_title_annotations_meta, "dropped"),
    "tool `outputSchema`" = shapes(v$output_schema, "object root only", "any"),
    "`structuredContent`" = ifelse(v$structured_content == "none", "dropped (text stays)",
                                   shapes(v$structured_content, "objects only", "any JSON")),
    "text, image, embedded resource blocks" = rep("yes", nrow(v)),
    "audio and resource-link blocks" = yes_no(v$audio_and_links, "the call becomes a tool error"),
    "`lastModified`" = yes_no(v$last_modified, "dropped"),
    "block `_meta`" = yes_no(v$content_meta, "dropped")
  )
  line <- function(cells) paste0("| ", paste(cells, collapse = " | "), " |")
  paste(c(
    line(c("", v$id)),
    line(rep("---", nrow(v) + 1)),
    vapply(names(rows), function(r) line(c(r, unname(rows[[r]]))), character(1))
  ), collapse = "\n")
}
