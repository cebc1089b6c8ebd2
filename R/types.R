#' Describe tool arguments with JSON Schema
#'
#' @description
#' Small helpers that build the JSON Schema a client sees for each tool
#' argument (and, with [tool()]'s `output_schema`, for structured output).
#'
#' * `type_boolean()`, `type_integer()`, `type_number()` and `type_string()`
#'   describe a single JSON value of that kind.
#' * `type_enum()` describes a value restricted to a fixed set: strings, or
#'   numbers or logicals (the JSON type follows the vector's type).
#' * `type_array()` describes a JSON array whose elements all follow `items`.
#' * `type_object()` describes a JSON object with named properties, each given
#'   as another type helper.
#' * `type_from_schema()` takes a schema you wrote yourself, as JSON text, as
#'   a JSON file or as an R list, and keeps every keyword in it (`$schema`,
#'   `$defs`, `$ref`, `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else`, ...). When
#'   its root is `type = "object"` it can be passed whole as `arguments` to
#'   [tool()].
#' * `type_ignore()` marks a function argument that should not be advertised
#'   at all; the R function then relies on its own default.
#'
#' @details
#' Schemas are written exactly as built: keys stay in the order shown, the
#' `required` array of an object lists its required properties in the order
#' they were declared, and an object nested inside arguments rejects unknown
#' keys (`additionalProperties: false`) unless `.additional_properties = TRUE`.
#'
#' When a schema is given to `type_from_schema()` as an R list, list shapes are
#' kept as they are: a named list becomes a JSON object, an unnamed list an
#' array, a length-one vector a scalar (wrap it in [I()] to force an array).
#' Hence `structure(list(), names = character(0))` is `{}` and `list()` is
#' `[]`. With no `$schema` keyword, MCP clients read schemas as JSON Schema
#' 2020-12.
#'
#' These helpers only advertise; they never check, coerce or fill in the
#' values a client sends. JSON arrays arrive in your function as R lists, and
#' an argument marked `required = FALSE` needs a default in the R function.
#' Checking values, permissions and side effects remains the tool's job.
#' `type_ignore()` only hides an argument from the schema: it does not stop a
#' client from sending it.
#'
#' @param description A single string explaining the value to the client, or
#'   `NULL` for none.
#' @param required `TRUE` if a client must supply this value when it is a
#'   property of an object (including a tool argument), `FALSE` if it may be
#'   left out.
#' @param values The allowed values: a character, numeric or logical vector
#'   (or a factor, or a list of single values), with at least one value and
#'   no duplicates or `NA`s.
#' @param items A type helper describing every element of the array.
#' @param .description Like `description`, for the object itself.
#' @param ... Named type helpers, one per property of the object.
#' @param .required Like `required`, for the object itself.
#' @param .additional_properties `FALSE` (the default) to advertise that
#'   properties not listed are not allowed, `TRUE` to allow them.
#' @param text A JSON Schema as a single string of JSON text, or as an R list
#'   (a named list for the root object).
#' @param path Path to a file containing a JSON Schema. Give either `text` or
#'   `path`, not both.
#'
#' @return An object of class `mcplite_type` for use in [tool()] `arguments`,
#'   in other type helpers, or as `output_schema`.
#' @seealso [tool()] to attach the schema to a function.
#' @examples
#' type_string("A city name.")
#'
#' type_enum(c("celsius", "fahrenheit"), "Temperature unit.")
#'
#' type_array(type_number(), description = "Measurements, in order.")
#'
#' type_object(
#'   .description = "A point on a map.",
#'   lat = type_number("Latitude in degrees."),
#'   lon = type_number("Longitude in degrees."),
#'   label = type_string(required = FALSE)
#' )
#'
#' # A hand-written schema, as an R list or as JSON text:
#' type_from_schema(list(type = "string", minLength = 1, maxLength = 20))
#' type_from_schema('{"type": "integer", "minimum": 0}')
#' @name tool-types
NULL

new_type <- function(kind, schema, required) {
  structure(
    list(schema = schema, required = required),
    class = c(paste0("mcplite_type_", kind), "mcplite_type")
  )
}

basic_type <- function(type, description, required, call) {
  check_string(description, "description", call = call, allow_null = TRUE, class = "schema")
  check_flag(required, "required", call = call, class = "schema")
  schema <- list(type = type)
  schema$description <- description
  new_type(type, schema, required)
}

#' @rdname tool-types
#' @export
type_boolean <- function(description = NULL, required = TRUE) {
  basic_type("boolean", description, required, sys.call())
}

#' @rdname tool-types
#' @export
type_integer <- function(description = NULL, required = TRUE) {
  basic_type("integer", description, required, sys.call())
}

#' @rdname tool-types
#' @export
type_number <- function(description = NULL, required = TRUE) {
  basic_type("number", description, required, sys.call())
}

#' @rdname tool-types
#' @export
type_string <- function(description = NULL, required = TRUE) {
  basic_type("string", description, required, sys.call())
}

#' @rdname tool-types
#' @export
type_enum <- function(values, description = NULL, required = TRUE) {
  if (missing(values)) {
    abort_mcplite(
      "`values` is missing; give the allowed strings as a character vector.",
      class = "schema", arg = "values"
    )
  }
  if (inherits(values, "factor")) values <- levels(values)
  # A list of single values, as CRAN mcplite accepts, is a vector.
  if (is.list(values) && !is.object(values) && length(values) > 0 &&
      all(vapply(values, function(v) is.atomic(v) && length(v) == 1 && !is.object(v), logical(1))) &&
      length(unique(vapply(values, typeof, ""))) == 1) {
    values <- unlist(values, use.names = FALSE)
  }
  kinds <- c(character = "string", integer = "integer", double = "number", logical = "boolean")
  if (!is.atomic(values) || is.object(values) || !typeof(values) %in% names(kinds) || length(values) == 0) {
    abort_mcplite(
      sprintf(
        "`values` must be a character, numeric or logical vector of at least one value, not %s.",
        describe_value(values)
      ),
      class = "schema", arg = "values"
    )
  }
  if (anyNA(values)) {
    abort_mcplite(
      sprintf("`values` must not contain `NA` (element %s).", paste(which(is.na(values)), collapse = ", ")),
      class = "schema", arg = "values"
    )
  }
  if (is.double(values) && any(!is.finite(values))) {
    abort_mcplite("`values` must be finite numbers.", class = "schema", arg = "values")
  }
  dup <- unique(values[duplicated(values)])
  if (length(dup) > 0) {
    abort_mcplite(
      sprintf("`values` must not repeat a value; %s appears more than once.", quote_names(dup)),
      class = "schema", arg = "values"
    )
  }
  check_string(description, "description", allow_null = TRUE, class = "schema")
  check_flag(required, "required", class = "schema")
  schema <- list(type = unname(kinds[typeof(values)]))
  schema$description <- description
  schema$enum <- as.list(unname(values))
  new_type("enum", schema, required)
}

#' @rdname tool-types
#' @export
type_array <- function(items, description = NULL, required = TRUE) {
  if (missing(items)) {
    abort_mcplite(
      "`items` is missing; give a type helper such as `type_string()` for the array elements.",
      class = "schema", arg = "items"
    )
  }
  items <- as_type(items, "items", sys.call())
  if (inherits(items, "mcplite_type_ignore")) {
    abort_mcplite(
      "`items` cannot be `type_ignore()`; array elements need a schema.",
      class = "schema", arg = "items"
    )
  }
  check_string(description, "description", allow_null = TRUE, class = "schema")
  check_flag(required, "required", class = "schema")
  schema <- list(type = "array")
  schema$description <- description
  schema$items <- items[["schema"]]
  new_type("array", schema, required)
}

#' @rdname tool-types
#' @export
type_object <- function(.description = NULL, ..., .required = TRUE,
                        .additional_properties = FALSE) {
  if (inherits(.description, "mcplite_type") || is_ellmer_type(.description)) {
    abort_mcplite(
      "Properties in `...` must be named; an unnamed type helper was taken as `.description`.",
      class = "schema", arg = "...", call = sys.call()
    )
  }
  check_string(.description, ".description", allow_null = TRUE, class = "schema")
  check_flag(.required, ".required", class = "schema")
  check_flag(.additional_properties, ".additional_properties", class = "schema")
  props <- check_properties(list(...), "...", sys.call())
  schema <- object_schema(props, .description, .additional_properties)
  new_type("object", schema, .required)
}

#' @rdname tool-types
#' @export
type_from_schema <- function(text = NULL, path = NULL) {
  call <- sys.call()
  if (is.null(text) == is.null(path)) {
    abort_mcplite(
      "Give exactly one of `text` (JSON text or an R list) and `path` (a JSON file).",
      class = "schema", arg = if (is.null(text)) "text" else "path", call = call
    )
  }
  if (!is.null(path)) {
    check_string(path, "path", call = call, allow_empty = FALSE, class = "schema")
    if (!file.exists(path) || dir.exists(path)) {
      abort_mcplite(
        sprintf("`path` must name an existing JSON file; %s was not found.", format_scalar(path)),
        class = "schema", arg = "path", call = call
      )
    }
    json <- paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
    schema <- json_parse(json, "path", call = call)
    arg <- "path"
  } else if (is.list(text) && !is.object(text)) {
    check_fixed(text, "text", call = call, class = "schema")
    schema <- text
    arg <- "text"
  } else {
    if (!is_string(text)) {
      abort_mcplite(
        sprintf(
          "`text` must be a single string of JSON or a list, not %s.",
          describe_value(text)
        ),
        class = "schema", arg = "text", call = call
      )
    }
    schema <- json_parse(text, "text", call = call)
    arg <- "text"
  }
  if (!is_json_object(schema)) {
    abort_mcplite(
      sprintf(
        "`%s` must describe a JSON object schema (a named list), not %s.",
        arg, describe_value(schema)
      ),
      class = "schema", arg = arg, call = call
    )
  }
  if (length(schema) == 0) schema <- empty_object()
  new_type("schema", schema, TRUE)
}

#' @rdname tool-types
#' @export
type_ignore <- function() {
  new_type("ignore", NULL, FALSE)
}

#' @export
print.mcplite_type <- function(x, ...) {
  kind <- sub("^mcplite_type_", "", class(x)[[1]])
  cat(sprintf("<mcplite type: %s>\n", kind))
  if (!is.null(x[["schema"]])) {
    cat(json_fixed(x[["schema"]], "schema"), "\n", sep = "")
  }
  invisible(x)
}

# A named list (possibly empty with names attribute) or the unnamed empty list
# is never an object; a named empty list is.
is_json_object <- function(x) {
  is.list(x) && !is.null(names(x))
}

# Accepts an mcplite type or an ellmer type (converted), anything else is an
# error naming `arg`.
as_type <- function(x, arg, call) {
  if (inherits(x, "mcplite_type")) return(x)
  if (is_ellmer_type(x)) return(ellmer_type_to_mcplite(x, arg, call))
  hint <- if (is.list(x) && !is.object(x) && !is.null(flattened_type_names(x))) {
    "\nIt looks like a type helper taken apart by `c()` or `unlist()`; combine type helpers with `list()`."
  } else if (is.list(x) && !is.object(x)) {
    "\nWrap a schema written as a list in `type_from_schema()`."
  } else {
    ""
  }
  abort_mcplite(
    sprintf(
      "`%s` must be a type helper such as `type_string()`, not %s.%s",
      arg, describe_value(x), hint
    ),
    class = "schema", arg = arg, call = call
  )
}

# Validates a list of properties (from `...` of type_object() or the
# `arguments` of tool()) and returns them as named mcplite types.
check_properties <- function(props, arg, call) {
  if (length(props) == 0) return(structure(list(), names = character(0)))
  nms <- names(props)
  if (is.null(nms) || anyNA(nms) || any(!nzchar(nms))) {
    pos <- if (is.null(nms)) seq_along(props) else which(is.na(nms) | !nzchar(nms))
    abort_mcplite(
      sprintf(
        "Every element of `%s` must be named with its property name; element %s is unnamed.",
        arg, paste(pos, collapse = ", ")
      ),
      class = "schema", arg = arg, call = call
    )
  }
  dup <- unique(nms[duplicated(nms)])
  if (length(dup) > 0) {
    abort_mcplite(
      sprintf("Property names in `%s` must be unique; %s is repeated.", arg, quote_names(dup)),
      class = "schema", arg = arg, call = call
    )
  }
  for (nm in nms) {
    # Properties of type_object() are named by themselves; tool() arguments
    # as elements of `arguments`.
    label <- if (arg == "...") nm else sprintf("%s$%s", arg, nm)
    props[[nm]] <- as_type(props[[nm]], label, call)
  }
  props
}

# The object schema for a set of properties. An empty `required` is never
# added, and other keys are refused unless `additional` is TRUE, at the root
# of a tool's input schema as in nested objects (as CRAN mcplite does), so a
# tool without arguments advertises exactly
# {"type":"object","properties":{},"additionalProperties":false}.
object_schema <- function(props, description = NULL, additional = FALSE) {
  keep <- !vapply(props, inherits, logical(1), what = "mcplite_type_ignore")
  props <- props[keep]
  properties <- lapply(props, function(p) p[["schema"]])
  if (length(properties) == 0) properties <- empty_object()
  required <- names(props)[vapply(props, function(p) isTRUE(p[["required"]]), logical(1))]
  schema <- list(type = "object")
  schema$description <- description
  schema$properties <- properties
  if (length(required) > 0) schema$required <- as.list(required)
  schema[[wire_name("ADDITIONAL_PROPERTIES")]] <- additional
  schema
}
