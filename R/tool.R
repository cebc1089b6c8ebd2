#' Turn an R function into an MCP tool
#'
#' @description
#' `tool()` attaches what an MCP client needs to know about a function: its
#' name, what it does, and a JSON Schema for its arguments. The result is the
#' same function, still callable from R as before, and can be handed to
#' [mcp_server()] on its own or in a list with other tools.
#'
#' @details
#' ## Names
#' Clients identify a tool by its name, which must be 1 to 128 characters
#' drawn from ASCII letters, digits, `_`, `-` and `.`. When `name` is `NULL`
#' the name of the variable passed as `fun` is used, so
#' `tool(add_numbers, "...")` is called `add_numbers`; a function written in
#' place has no such name and needs `name`.
#'
#' ## Arguments
#' Each element of `arguments` is named after an argument of `fun` and
#' describes it with a type helper (see [tool-types]); naming an argument
#' `fun` does not have is an error, unless `fun` takes `...`. Arguments are
#' listed as `required` in the order given, and the schema tells clients
#' that no other keys are expected (`additionalProperties: false`).
#' Alternatively `arguments` can be one complete schema from
#' [type_from_schema()] whose root has `type` exactly `"object"` (matched by
#' its full name); it is advertised unchanged (a missing `properties` is
#' added as `{}`). Schemas only advertise: values arrive as the client sends
#' them (JSON arrays as R lists), so check them in `fun`, and give `fun`
#' defaults for anything that is not required.
#'
#' `tool()` warns (class `mcplite_warning_unsuppliable_argument`) about an
#' argument of `fun` that has no default and is not described in
#' `arguments` (or is hidden with [type_ignore()]), since clients cannot
#' supply it, unless `fun` takes `...`; and (class
#' `mcplite_warning_missing_default`) about an argument described with
#' `required = FALSE` for which `fun` has no default. An argument that `fun`
#' checks with [missing()] counts as handled. Both share the class
#' `mcplite_warning`.
#'
#' ## Annotations
#' `annotations` holds MCP's optional hints about the tool: `title`,
#' `readOnlyHint`, `destructiveHint`, `idempotentHint` and `openWorldHint`.
#' They may also be spelled in snake case (`read_only_hint`, ...); clients
#' always receive the camel-case names. Other names are sent as given, with
#' a warning (class `mcplite_warning_unknown_annotation`) in case one is a
#' misspelling; their values must be JSON-serializable. Hints describe the
#' tool to the client; they are not enforced.
#'
#' ## Results
#' Whatever `fun` returns is sent back as one text block (see
#' [mcplite-results] for the exact conversion). Return [tool_result()] instead
#' for images, several blocks, structured content or an error flag. If you
#' return structured content, `output_schema` can advertise its shape; mcplite
#' checks only that it is a JSON object that can be written out, not that it
#' is a valid schema or that results match it.
#'
#' @param fun The R function to expose.
#' @param description A single string telling the client (and the model behind
#'   it) what the tool does and when to use it.
#' @param ... Not used; must be empty. It forces the remaining arguments to be
#'   named, which catches misspelled argument names.
#' @param arguments A named list of type helpers, one per advertised argument
#'   of `fun`, or a single object schema from [type_from_schema()]. Use
#'   [type_ignore()] (or leave the argument out) to keep an argument private.
#' @param name The tool name, or `NULL` to use the name of the variable given
#'   as `fun`.
#' @param annotations A named list of MCP tool annotations: `title` (a string)
#'   and the logical hints described in Details.
#' @param output_schema `NULL`, or the schema of the structured content the
#'   tool returns: a type helper such as [type_object()] or
#'   [type_from_schema()], or a named list.
#'
#' @return `fun`, with class `mcplite_tool` added and the MCP metadata attached.
#' @seealso [mcp_server()] to serve tools; [tool-types] for argument schemas;
#'   [tool_result()] for rich results.
#' @examples
#' add_numbers <- tool(
#'   function(x, y) x + y,
#'   name = "add_numbers",
#'   description = "Add two numbers.",
#'   arguments = list(
#'     x = type_number("The first number."),
#'     y = type_number("The second number.")
#'   ),
#'   annotations = list(read_only_hint = TRUE)
#' )
#' add_numbers
#' add_numbers(2, 3)
#'
#' # The name can come from the variable holding the function:
#' greet <- function(who = "world") paste0("Hello, ", who, "!")
#' greet <- tool(greet, "Say hello.", arguments = list(
#'   who = type_string("Who to greet.", required = FALSE)
#' ))
#' greet()
#' @export
tool <- function(fun, description, ..., arguments = list(), name = NULL,
                 annotations = list(), output_schema = NULL) {
  call <- sys.call()
  check_dots_empty(..., call = call)
  if (missing(fun) || !is.function(fun)) {
    abort_mcplite(
      sprintf("`fun` must be a function, not %s.",
              if (missing(fun)) "missing" else describe_value(fun)),
      arg = "fun", call = call
    )
  }
  if (is_ellmer_tool(fun)) {
    abort_mcplite(
      "`fun` is already an ellmer tool; pass it to `mcp_server()` as it is.",
      arg = "fun", call = call
    )
  }
  if (is.null(name)) {
    sym <- substitute(fun)
    if (!is.name(sym)) {
      abort_mcplite(
        "`name` must be supplied when `fun` is not a variable (for example an anonymous function).",
        arg = "name", call = call
      )
    }
    name <- as.character(sym)
  }
  check_tool_name(name, "name", call)
  if (missing(description)) {
    abort_mcplite("`description` is missing; say what the tool does.", arg = "description", call = call)
  }
  check_string(description, "description", call = call)

  input_schema <- build_input_schema(arguments, fun, call)
  annotations <- normalize_annotations(annotations, "annotations", call)
  output_schema <- check_output_schema(output_schema, call)
  # Warn only once everything else is known to be valid.
  if (!inherits(arguments, "mcplite_type_schema") && !is_ellmer_type(arguments)) {
    warn_unsuppliable_arguments(arguments, fun, call)
  }

  new_tool(fun, tool_metadata(name, description, input_schema, output_schema, annotations))
}

# The metadata every tool carries: the spec fields of src/rust/ARCHITECTURE.md
# without the function. Shared by tool() and the ellmer conversion.
tool_metadata <- function(name, description, input_schema, output_schema, annotations) {
  list(
    name = name,
    description = description,
    # The display title travels in `annotations$title` only, as with CRAN
    # mcplite; the spec's top-level `title` stays unset.
    title = NULL,
    input_schema = input_schema,
    output_schema = output_schema,
    annotations = if (length(annotations) > 0) annotations,
    meta = NULL
  )
}

new_tool <- function(fun, meta) {
  if (is.primitive(fun)) {
    # Primitives are never copied, so attributes set on one would change it
    # for the whole session; wrap it in a closure instead.
    prim <- fun
    fun <- function(...) prim(...)
  }
  # A tool wrapped twice keeps only the newest metadata.
  attr(fun, "mcplite") <- meta
  class(fun) <- c("mcplite_tool", "function")
  fun
}

tool_meta <- function(x) attr(x, "mcplite", exact = TRUE)

#' @export
print.mcplite_tool <- function(x, ...) {
  meta <- tool_meta(x)
  cat(sprintf("<mcplite tool> %s\n", meta[["name"]]))
  # What clients see (camelCase names, the protocol's fields), from the core
  # that serves it, rather than the R-side metadata.
  listing <- rust_tool_listing(server_specs(x, sys.call())[[1]])
  if (!is.null(listing$error)) {
    cat(sprintf("Description: %s\n(cannot show what clients receive: %s)\n", meta[["description"]], listing$error))
    return(invisible(x))
  }
  cat(sprintf("What a %s client receives in tools/list:\n", listing$value$version))
  cat(listing$value$json, "\n", sep = "")
  invisible(x)
}

check_dots_empty <- function(..., call) {
  if (...length() == 0) return(invisible())
  nms <- names(list(...))
  shown <- if (is.null(nms)) {
    sprintf("%d unnamed value(s)", ...length())
  } else {
    nms[!nzchar(nms)] <- "<unnamed>"
    quote_names(nms)
  }
  abort_mcplite(
    sprintf(
      paste0(
        "`...` must be empty, but got %s.\n",
        "After `description`, give arguments by their exact names: ",
        "`arguments`, `name`, `annotations` or `output_schema`."
      ),
      shown
    ),
    arg = "...", call = call
  )
}

# The tool-name rule is the core's (`r::author::tool_name`).
check_tool_name <- function(name, arg, call, class = NULL) {
  author_check("tool_name", name, arg, call = call, class = class)
  invisible(name)
}

build_input_schema <- function(arguments, fun, call) {
  if (inherits(arguments, "mcplite_type_schema") || is_ellmer_type(arguments, "TypeJsonSchema")) {
    arguments <- as_type(arguments, "arguments", call)
    schema <- arguments[["schema"]]
    # Read by exact name: `$type` would also match a key like `typeExtension`.
    root_type <- schema[["type"]]
    if (!identical(root_type, "object")) {
      found <- if ("type" %in% names(schema)) {
        sprintf("its `type` is %s", describe_value(root_type))
      } else {
        near <- grep("^type", names(schema), value = TRUE)
        paste0(
          "it has no `type`",
          if (length(near)) sprintf(" (%s is not `type`)", quote_names(near)) else ""
        )
      }
      abort_mcplite(
        sprintf(
          "A complete schema given as `arguments` must have `type = \"object\"` at its root; %s.",
          found
        ),
        class = "schema", arg = "arguments", call = call
      )
    }
    if (!"properties" %in% names(schema)) schema$properties <- empty_object()
    return(schema)
  }
  if (inherits(arguments, "mcplite_type") || is_ellmer_type(arguments)) {
    abort_mcplite(
      paste0(
        "`arguments` must be a named list of type helpers, one per argument, ",
        "or a complete schema from `type_from_schema()`, not a single ",
        if (inherits(arguments, "mcplite_type_object")) "`type_object()`." else "type helper."
      ),
      class = "schema", arg = "arguments", call = call
    )
  }
  if (!is.list(arguments) || is.object(arguments)) {
    abort_mcplite(
      sprintf(
        "`arguments` must be a named list of type helpers, not %s.",
        describe_value(arguments)
      ),
      class = "schema", arg = "arguments", call = call
    )
  }
  check_not_flattened(arguments, call)
  props <- check_properties(arguments, "arguments", call)
  check_formals(names(props), fun, call)
  object_schema(props)
}

# Advertising an argument the function cannot accept would only fail later,
# on a client's call; catch it now.
check_formals <- function(names, fun, call) {
  sig <- args(fun)
  if (is.null(sig)) return(invisible())
  fmls <- names(formals(sig))
  if ("..." %in% fmls) return(invisible())
  extra <- setdiff(names, fmls)
  if (length(extra) > 0) {
    abort_mcplite(
      sprintf(
        "`arguments` describes %s, which `fun` does not accept.\n`fun` has the argument%s %s.",
        quote_names(extra),
        if (length(fmls) == 1) "" else "s",
        if (length(fmls) == 0) "(none)" else quote_names(fmls)
      ),
      class = "schema", arg = "arguments", call = call
    )
  }
  invisible()
}

# `c(x = type_string())` does not make a list of types: c() strips the class
# and splices each helper's parts into the result (`x.schema`, `x.required`).
# Recognise that shape and point to list(), the actual fix.
check_not_flattened <- function(arguments, call) {
  args <- flattened_type_names(arguments)
  if (is.null(args)) return(invisible())
  named <- args[nzchar(args)]
  example <- if (length(named) > 0 && length(named) == length(args)) {
    sprintf("list(%s)", paste0(named, " = ...", collapse = ", "))
  } else {
    "list(x = type_string(), ...)"
  }
  abort_mcplite(
    sprintf(
      paste0(
        "`arguments` looks like type helpers combined with `c()`, which takes them apart ",
        "(it has the elements %s).\nCombine type helpers with `list()` instead: `arguments = %s`."
      ),
      quote_names(names(arguments)[seq_len(min(4L, length(arguments)))]), example
    ),
    class = "schema", arg = "arguments", call = call
  )
}

# The argument names of a list that c() made out of type helpers, or NULL
# when `x` does not have that shape. Every element is named `schema` or
# `required`, optionally after `<argument>.`, and every `required` is a flag.
flattened_type_names <- function(x) {
  nms <- names(x)
  if (!is.list(x) || is.object(x) || length(x) == 0 || is.null(nms)) return(NULL)
  pattern <- "^(.*[.])?(schema|required)$"
  if (anyNA(nms) || !all(grepl(pattern, nms))) return(NULL)
  part <- sub(pattern, "\\2", nms)
  if (!any(part == "required") || !all(vapply(x[part == "required"], is_flag, logical(1)))) {
    return(NULL)
  }
  unique(sub("[.]$", "", sub(pattern, "\\1", nms)))
}

# Definition-time warnings about arguments a call cannot fill in: a formal of
# `fun` with no default that clients are never told about, and an argument
# advertised as optional although `fun` has no default for it. Arguments that
# `fun` tests with missing() are taken to be handled.
warn_unsuppliable_arguments <- function(arguments, fun, call) {
  sig <- args(fun)
  if (is.null(sig)) return(invisible())
  fmls <- formals(sig)
  no_default <- names(fmls)[vapply(fmls, is_missing_arg, logical(1))]
  no_default <- setdiff(no_default, c("...", missing_tested(fun)))
  if (length(no_default) == 0) return(invisible())

  ignored <- names(arguments)[vapply(arguments, is_ignored_type, logical(1))]
  described <- setdiff(names(arguments), ignored)
  if (!"..." %in% names(fmls)) {
    hidden <- setdiff(no_default, described)
    if (length(hidden) > 0) {
      one <- length(hidden) == 1
      warn_mcplite(
        sprintf(
          paste0(
            "`fun` %s %s %s no default and %s not in the schema clients see, so they cannot ",
            "supply %s: a call fails when the function uses %s.\n",
            "Describe %s in `arguments`, or give %s %s in `fun`.%s"
          ),
          if (one) "argument" else "arguments", quote_names(hidden),
          if (one) "has" else "have", if (one) "is" else "are",
          if (one) "it" else "them", if (one) "it" else "one of them",
          if (one) "it" else "them", if (one) "it" else "them",
          if (one) "a default" else "defaults",
          if (any(hidden %in% ignored)) "\n`type_ignore()` hides an argument from clients, so it needs a default." else ""
        ),
        class = "unsuppliable_argument", arg = "fun", call = call
      )
    }
  }

  optional <- names(arguments)[vapply(arguments, function(a) {
    (inherits(a, "mcplite_type") || is_ellmer_type(a)) && !is_ignored_type(a) &&
      identical(type_required(a), FALSE)
  }, logical(1))]
  undefaulted <- intersect(optional, no_default)
  if (length(undefaulted) > 0) {
    one <- length(undefaulted) == 1
    warn_mcplite(
      sprintf(
        paste0(
          "`arguments` marks %s as `required = FALSE`, but `fun` has no default for %s: ",
          "a call that leaves %s out fails when the function uses it.\n",
          "Give %s in `fun`, for example `%s = NULL`."
        ),
        quote_names(undefaulted), if (one) "it" else "them",
        if (one) "it" else "one",
        if (one) "it a default" else "each a default", undefaulted[[1]]
      ),
      class = "missing_default", arg = "arguments", call = call
    )
  }
  invisible()
}

is_missing_arg <- function(x) is.name(x) && !nzchar(as.character(x))

is_ignored_type <- function(x) {
  inherits(x, "mcplite_type_ignore") || is_ellmer_type(x, "TypeIgnore")
}

type_required <- function(x) {
  if (inherits(x, "mcplite_type")) x[["required"]] else s7_prop(x, "required")
}

# Names of the arguments that the body of `fun` passes to missing().
missing_tested <- function(fun) {
  if (!is.function(fun) || is.primitive(fun)) return(character())
  found <- character()
  walk <- function(e) {
    if (is.call(e)) {
      if (identical(e[[1]], as.name("missing")) && length(e) == 2 && is.name(e[[2]])) {
        found <<- c(found, as.character(e[[2]]))
      }
      for (i in seq_along(e)) walk(e[[i]])
    }
  }
  walk(body(fun))
  unique(found)
}


# Returns the annotations keyed by their snake_case names (other names as
# given), in the order given. The rule is the core's
# (`r::spec::check_annotations`, which the server applies again when it
# starts): both spellings of MCP's hints, each once, with their types. Names
# MCP does not define are dropped (`unknown = "drop"`, for ellmer's own
# extras) or kept as given with a warning (`"keep"`: CRAN mcplite sends any
# annotation, and other names are allowed by the schema).
normalize_annotations <- function(annotations, arg, call, unknown = "keep") {
  if (is.null(annotations)) return(empty_object())
  annotations <- check_named_list(annotations, arg, call = call)
  kind <- if (identical(unknown, "drop")) "tool_annotations_known" else "tool_annotations"
  res <- author_check(kind, annotations, arg, call = call)
  keep <- nzchar(res$names)
  annotations <- annotations[keep]
  names(annotations) <- res$names[keep]
  if (length(annotations) == 0) empty_object() else annotations
}

check_output_schema <- function(output_schema, call) {
  if (is.null(output_schema)) return(NULL)
  if (inherits(output_schema, "mcplite_type") || is_ellmer_type(output_schema)) {
    output_schema <- as_type(output_schema, "output_schema", call)
    if (inherits(output_schema, "mcplite_type_ignore")) {
      abort_mcplite(
        "`output_schema` cannot be `type_ignore()`; use `NULL` for no output schema.",
        class = "schema", arg = "output_schema", call = call
      )
    }
    return(output_schema[["schema"]])
  }
  if (!is.list(output_schema) || is.object(output_schema) || !is_json_object(output_schema)) {
    abort_mcplite(
      sprintf(
        "`output_schema` must be `NULL`, a type helper or a named list (a JSON object), not %s.",
        describe_value(output_schema)
      ),
      class = "schema", arg = "output_schema", call = call
    )
  }
  check_fixed(output_schema, "output_schema", call = call)
  output_schema
}
