# Support for tools defined with ellmer::tool(). An ellmer object exists only
# where ellmer (and so S7) is installed; its properties are read with S7's
# exported prop(), never by reaching into how S7 stores them.

is_ellmer_tool <- function(x) inherits(x, "ellmer::ToolDef")

is_ellmer_type <- function(x, kind = NULL) {
  if (is.null(kind)) inherits(x, "ellmer::Type") else inherits(x, paste0("ellmer::", kind))
}

# The properties S7 knows for `x`: none for anything S7 did not make.
s7_names <- function(x) {
  if (requireNamespace("S7", quietly = TRUE) && S7::S7_inherits(x)) S7::prop_names(x) else character()
}

s7_prop <- function(x, name) {
  if (name %in% s7_names(x)) S7::prop(x, name) else NULL
}

ellmer_class <- function(x) class(x)[[1]]

# An object with ellmer's class names that S7 cannot read (it has no S7 class
# behind it, so it was put together by hand): say so, rather than report
# each property as missing.
check_s7_built <- function(x, arg, call, class) {
  if (!length(s7_names(x))) {
    abort_mcplite(
      sprintf("`%s` has ellmer's class <%s> but is not an S7 object ellmer made; build it with ellmer's own functions.",
              arg, ellmer_class(x)),
      class = class, arg = arg, call = call
    )
  }
  invisible(x)
}

# Converts one ellmer type object into the equivalent mcplite type.
ellmer_type_to_mcplite <- function(x, arg, call) {
  check_s7_built(x, arg, call, "schema")
  description <- s7_prop(x, "description")
  required <- s7_prop(x, "required")
  if (is.null(required)) required <- TRUE
  if (is_ellmer_type(x, "TypeBasic")) {
    type <- s7_prop(x, "type")
    if (!is_string(type) || !type %in% c("boolean", "integer", "number", "string")) {
      unsupported_ellmer_type(x, arg, call, sprintf(" with type %s", describe_value(type)))
    }
    return(basic_type(type, description, required, call))
  }
  if (is_ellmer_type(x, "TypeEnum")) {
    values <- s7_prop(x, "values")
    schema <- list(type = "string")
    schema$description <- description
    schema$enum <- as.list(unname(as.character(values)))
    return(new_type("enum", schema, required))
  }
  if (is_ellmer_type(x, "TypeArray")) {
    items <- ellmer_type_to_mcplite(s7_prop(x, "items"), paste0(arg, "@items"), call)
    schema <- list(type = "array")
    schema$description <- description
    schema$items <- items[["schema"]]
    return(new_type("array", schema, required))
  }
  if (is_ellmer_type(x, "TypeObject")) {
    props <- ellmer_properties(x, arg, call)
    additional <- isTRUE(s7_prop(x, "additional_properties"))
    schema <- object_schema(props, description, additional)
    return(new_type("object", schema, required))
  }
  if (is_ellmer_type(x, "TypeJsonSchema")) {
    json <- s7_prop(x, "json")
    check_fixed(json, arg, call = call, class = "schema")
    if (!is_json_object(json)) {
      abort_mcplite(
        sprintf("`%s` must hold a JSON object schema, not %s.", arg, describe_value(json)),
        class = "schema", arg = arg, call = call
      )
    }
    if (length(json) == 0) json <- empty_object()
    return(new_type("schema", json, required))
  }
  if (is_ellmer_type(x, "TypeIgnore")) {
    return(type_ignore())
  }
  unsupported_ellmer_type(x, arg, call)
}

unsupported_ellmer_type <- function(x, arg, call, detail = "") {
  abort_mcplite(
    sprintf(
      "`%s` is an ellmer type mcplite cannot convert: <%s>%s.\nSupported: type_boolean/integer/number/string/enum/array/object/from_schema/ignore.",
      arg, ellmer_class(x), detail
    ),
    class = "schema", arg = arg, call = call
  )
}

ellmer_properties <- function(x, arg, call) {
  props <- s7_prop(x, "properties")
  if (length(props) == 0) return(structure(list(), names = character(0)))
  out <- props
  for (nm in names(props)) {
    out[[nm]] <- ellmer_type_to_mcplite(props[[nm]], sprintf("%s$%s", arg, nm), call)
  }
  out
}

# The tool spec (see ARCHITECTURE.md) for an ellmer ToolDef.
ellmer_tool_spec <- function(x, arg, call) {
  check_s7_built(x, arg, call, "tools")
  name <- s7_prop(x, "name")
  check_tool_name(name, sprintf("%s@name", arg), call, class = "tools")
  description <- s7_prop(x, "description")
  check_string(description, sprintf("%s@description", arg), call = call, class = "tools")
  arguments <- s7_prop(x, "arguments")
  props <- if (is.null(arguments)) list() else ellmer_properties(arguments, sprintf("%s@arguments", arg), call)
  input_schema <- object_schema(
    props, additional = !is.null(arguments) && isTRUE(s7_prop(arguments, "additional_properties"))
  )
  # ellmer allows extra annotations for its own use; only MCP's are sent.
  annotations <- normalize_annotations(
    s7_prop(x, "annotations"), sprintf("%s@annotations", arg), call, unknown = "drop"
  )
  fun <- x
  attributes(fun) <- NULL
  if (isTRUE(s7_prop(x, "convert")) && !is.null(arguments)) {
    fun <- ellmer_converting_fun(fun, arguments)
  }
  c(tool_metadata(name, description, input_schema, NULL, annotations), list(fun = fun))
}

# ellmer tools created with convert = TRUE expect JSON arrays of scalars as R
# vectors (and arrays of objects as data frames), as ellmer itself would pass
# them; this wrapper does the same conversion before calling the function.
ellmer_converting_fun <- function(fun, arguments) {
  props <- s7_prop(arguments, "properties")
  force(fun)
  function(...) {
    args <- list(...)
    for (nm in intersect(names(args), names(props))) {
      value <- ellmer_convert(args[[nm]], props[[nm]])
      if (is.null(value)) args[nm] <- list(NULL) else args[[nm]] <- value
    }
    args <- args[!vapply(args, is.null, logical(1))]
    do.call(fun, args)
  }
}

ellmer_convert <- function(x, type) {
  if (is.null(x) && !isTRUE(s7_prop(type, "required"))) return(x)
  if (is_ellmer_type(type, "TypeArray")) {
    items <- s7_prop(type, "items")
    if (is_ellmer_type(items, "TypeBasic")) return(list_to_atomic(x, s7_prop(items, "type")))
    if (is_ellmer_type(items, "TypeEnum")) {
      return(factor(as.character(unlist(x)), levels = s7_prop(items, "values")))
    }
    if (is_ellmer_type(items, "TypeArray")) return(lapply(x, ellmer_convert, type = items))
    if (is_ellmer_type(items, "TypeObject") && !isTRUE(s7_prop(items, "additional_properties"))) {
      item_props <- s7_prop(items, "properties")
      cols <- lapply(names(item_props), function(nm) {
        p <- item_props[[nm]]
        vals <- lapply(x, function(row) ellmer_convert(row[[nm]], p))
        if (is_ellmer_type(p, "TypeBasic")) list_to_atomic(vals, s7_prop(p, "type")) else I(vals)
      })
      names(cols) <- names(item_props)
      return(as.data.frame(cols, stringsAsFactors = FALSE, optional = TRUE))
    }
    return(x)
  }
  if (is_ellmer_type(type, "TypeObject")) {
    props <- s7_prop(type, "properties")
    out <- lapply(names(props), function(nm) ellmer_convert(x[[nm]], props[[nm]]))
    names(out) <- names(props)
    if (isTRUE(s7_prop(type, "additional_properties"))) {
      out <- c(out, x[setdiff(names(x), names(props))])
    }
    return(out)
  }
  if (is_ellmer_type(type, "TypeBasic")) {
    if (is.null(x)) return(na_of(s7_prop(type, "type")))
    if (is.list(x) && length(x) == 1) return(x[[1]])
    return(x)
  }
  if (is_ellmer_type(type, "TypeEnum")) {
    if (is.null(x)) return(NA_character_)
    return(as.character(x))
  }
  x
}

na_of <- function(type) {
  switch(type, boolean = NA, integer = NA_integer_, number = NA_real_, NA_character_)
}

list_to_atomic <- function(x, type) {
  mode <- switch(type, boolean = "logical", integer = "integer", number = "double", "character")
  if (length(x) == 0) return(vector(mode, 0))
  vals <- lapply(x, function(v) {
    if (length(v) != 1 || !is.atomic(v)) return(methods_na(mode))
    if (mode == "integer" && is.double(v)) return(as.integer(v))
    if (mode == "double" && is.integer(v)) return(as.double(v))
    if (typeof(v) != mode) return(methods_na(mode))
    v
  })
  unlist(vals, use.names = FALSE)
}

methods_na <- function(mode) {
  switch(mode, logical = NA, integer = NA_integer_, double = NA_real_, NA_character_)
}

# ---- ellmer content returned by a tool ---------------------------------------
#
# An ellmer tool may return ellmer content objects (ContentText,
# ContentImageInline, ContentToolResult, or a list of them), as it would for
# ellmer's own chats. invoke_tool() passes every value a tool returns through
# as_tool_value(): anything that is not ellmer content comes back unchanged;
# ellmer content becomes the equivalent tool_result(); content that has no
# faithful MCP block is an error (a tool error for the client) naming the
# constructor to use instead. Properties are read from the S7 attributes, so
# ellmer is never loaded here.

as_tool_value <- function(x) {
  # Fast path: plain atomic values and other unclassed non-lists.
  if (!is.object(x) && !is.list(x)) return(x)
  if (inherits(x, "ellmer::Content")) return(ellmer_content_value(x))
  if (is.list(x) && !is.object(x) && length(x) > 0 && has_ellmer_content(x)) {
    return(tool_result(ellmer_content_blocks(x)))
  }
  x
}

# A plain loop: far cheaper than vapply() on the long lists tools may return.
has_ellmer_content <- function(x) {
  for (el in x) if (is.object(el) && inherits(el, "ellmer::Content")) return(TRUE)
  FALSE
}

# One ellmer content object returned by a tool, as a tool value.
ellmer_content_value <- function(x) {
  if (inherits(x, "ellmer::ContentToolResult")) {
    error <- s7_prop(x, "error")
    if (!is.null(error)) {
      return(tool_result(content_text(ellmer_error_text(error)), is_error = TRUE))
    }
    # The value is what the tool computed: ellmer content, or any R value.
    return(as_tool_value(s7_prop(x, "value")))
  }
  tool_result(ellmer_block(x))
}

ellmer_error_text <- function(error) {
  msg <- if (inherits(error, "condition")) {
    tryCatch(conditionMessage(error), error = function(e) NULL)
  } else {
    tryCatch(as.character(error), error = function(e) NULL)
  }
  msg <- paste(msg, collapse = "\n")
  if (is.na(msg) || !nzchar(msg)) "The tool reported an error." else msg
}

# The list of mcplite blocks for a list that holds ellmer content; mcplite
# blocks may be mixed in.
ellmer_content_blocks <- function(x) {
  blocks <- vector("list", length(x))
  for (i in seq_along(x)) {
    el <- x[[i]]
    blocks[[i]] <- if (inherits(el, "mcplite_content")) {
      el
    } else if (inherits(el, "ellmer::ContentToolResult")) {
      abort_mcplite(
        sprintf(
          paste0(
            "Tool returned a list whose element %d is an <ellmer::ContentToolResult>; ",
            "return a ContentToolResult on its own, not inside a list."
          ),
          i
        ),
        class = "content", call = NULL
      )
    } else if (inherits(el, "ellmer::Content")) {
      ellmer_block(el, sprintf(" (element %d of the list it returned)", i))
    } else {
      abort_mcplite(
        sprintf(
          paste0(
            "Tool returned a list that mixes ellmer content with other values: element %d is %s.\n",
            "Make every element ellmer content or a block from `content_text()` and friends."
          ),
          i, describe_value(el)
        ),
        class = "content", call = NULL
      )
    }
  }
  blocks
}

# The mcplite block for one ellmer content object that has a faithful MCP
# block: ContentText is a text block, ContentImageInline an image block. Any
# other class is an error that names the mcplite constructor to use.
ellmer_block <- function(x, where = "") {
  cls <- ellmer_class(x)
  if (inherits(x, "ellmer::ContentText")) {
    text <- s7_prop(x, "text")
    if (!is_string(text)) bad_ellmer_content(cls, where, "@text", text)
    return(content_text(text))
  }
  if (inherits(x, "ellmer::ContentImageInline")) {
    data <- s7_prop(x, "data")
    type <- s7_prop(x, "type")
    if (!is_string(data)) bad_ellmer_content(cls, where, "@data", data)
    if (!is_string(type) || !nzchar(type)) bad_ellmer_content(cls, where, "@type", type)
    return(content_image(data, type))
  }
  abort_mcplite(
    sprintf(
      "Tool returned an <%s>%s, which has no MCP content block mcplite can send.\n%s",
      cls, where, ellmer_alternative(x)
    ),
    class = "content", call = NULL
  )
}

bad_ellmer_content <- function(cls, where, prop, value) {
  abort_mcplite(
    sprintf(
      "Tool returned an <%s>%s whose %s is %s, not a single string.",
      cls, where, prop, describe_value(value)
    ),
    class = "content", call = NULL
  )
}

# What to return instead of ellmer content that has no faithful MCP block.
ellmer_alternative <- function(x) {
  if (inherits(x, "ellmer::ContentImageRemote")) {
    return(paste0(
      "Return the image itself, base64-encoded, with `tool_result(content_image(data, mime_type))`, ",
      "or point at it with `tool_result(content_resource_link(uri, name))`."
    ))
  }
  instead <- if (inherits(x, "ellmer::ContentPDF")) {
    "`tool_result(content_resource(uri, blob = <base64 data>, mime_type = \"application/pdf\"))`"
  } else if (inherits(x, "ellmer::ContentDocument")) {
    "`tool_result(content_resource(uri, blob = <base64 data>, mime_type = <its type>))`"
  } else if (inherits(x, "ellmer::ContentUploaded")) {
    "`tool_result(content_resource_link(uri, name))`"
  } else if (inherits(x, "ellmer::ContentJson")) {
    "`tool_result(structured_content = <the data>)`"
  } else {
    "`tool_result(content_text(<text>))`"
  }
  sprintf("Return %s instead.", instead)
}
