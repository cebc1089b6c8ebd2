test_that("tool() returns the function itself, still callable, with metadata", {
  add <- tool(
    function(x, y) x + y,
    name = "add_numbers",
    description = "Add two numbers.",
    arguments = list(x = type_number("First."), y = type_number("Second."))
  )
  expect_s3_class(add, "mcplite_tool")
  expect_true(is.function(add))
  expect_equal(add(2, 3), 5)
  meta <- tool_meta(add)
  expect_equal(meta$name, "add_numbers")
  expect_equal(meta$description, "Add two numbers.")
  expect_equal(
    input_json(add),
    paste0(
      '{"type":"object","properties":{"x":{"type":"number","description":"First."},',
      '"y":{"type":"number","description":"Second."}},"required":["x","y"],',
      '"additionalProperties":false}'
    )
  )
})

test_that("the name comes from the variable when `name` is NULL", {
  summarise_values <- function(values) length(values)
  t <- tool(summarise_values, "Count values.", arguments = list(values = type_array(type_number())))
  expect_equal(tool_meta(t)$name, "summarise_values")
  dotted.name <- function() 1
  expect_equal(tool_meta(tool(dotted.name, "d"))$name, "dotted.name")
  # An explicit name wins.
  expect_equal(tool_meta(tool(summarise_values, "d", name = "other",
    arguments = list(values = type_array(type_number()))))$name, "other")
})

test_that("a tool without arguments advertises an empty properties object", {
  t <- tool(function() "hi", "Greet.", name = "hello")
  expect_equal(input_json(t), '{"type":"object","properties":{},"additionalProperties":false}')
  t2 <- tool(function(secret = 1) secret, "d", name = "n", arguments = list(secret = type_ignore()))
  expect_equal(input_json(t2), '{"type":"object","properties":{},"additionalProperties":false}')
})

test_that("optional and ignored arguments", {
  t <- tool(
    function(a, b = 2, c = "hidden") paste(a, b, c),
    name = "opt", description = "d",
    arguments = list(a = type_string(), b = type_integer(required = FALSE), c = type_ignore())
  )
  expect_equal(
    input_json(t),
    '{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"],"additionalProperties":false}'
  )
  expect_equal(t("x"), "x 2 hidden")
})

test_that("the root input schema nests every type helper", {
  t <- tool(
    function(flag, n, x, s, unit, ids = NULL, opts, raw) NULL,
    name = "all_types", description = "Every helper.",
    arguments = list(
      flag = type_boolean(),
      n = type_integer(),
      x = type_number(),
      s = type_string("S."),
      unit = type_enum(c("a", "b")),
      ids = type_array(type_integer(), required = FALSE),
      opts = type_object(
        depth = type_integer(),
        inner = type_object(on = type_boolean(), .additional_properties = TRUE)
      ),
      raw = type_from_schema('{"oneOf":[{"type":"string"},{"type":"integer"}]}')
    )
  )
  expect_equal(
    input_json(t),
    paste0(
      '{"type":"object","properties":{',
      '"flag":{"type":"boolean"},"n":{"type":"integer"},"x":{"type":"number"},',
      '"s":{"type":"string","description":"S."},',
      '"unit":{"type":"string","enum":["a","b"]},',
      '"ids":{"type":"array","items":{"type":"integer"}},',
      '"opts":{"type":"object","properties":{"depth":{"type":"integer"},',
      '"inner":{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],',
      '"additionalProperties":true}},"required":["depth","inner"],"additionalProperties":false},',
      '"raw":{"oneOf":[{"type":"string"},{"type":"integer"}]}},',
      '"required":["flag","n","x","s","unit","opts","raw"],"additionalProperties":false}'
    )
  )
})

test_that("a complete object schema can be the whole input schema", {
  json <- paste0(
    '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",',
    '"properties":{"q":{"$ref":"#/$defs/q"}},"$defs":{"q":{"type":"string"}},"required":["q"]}'
  )
  t <- tool(function(q) q, "Echo.", name = "echo", arguments = type_from_schema(json))
  expect_equal(input_json(t), json)
  expect_equal(t("x"), "x")
  # `properties` is added when the schema has none, as clients require it.
  t2 <- tool(function(...) 1, "d", name = "n", arguments = type_from_schema('{"type":"object"}'))
  expect_equal(input_json(t2), '{"type":"object","properties":{}}')
})

test_that("tool() rejects a bad function or name", {
  expect_snapshot(error = TRUE, tool(1, "d", name = "x"))
  expect_snapshot(error = TRUE, tool(description = "d", name = "x"))
  expect_snapshot(error = TRUE, tool(function(x) x, "d"))
  expect_snapshot(error = TRUE, tool(function(x) x, "d", name = ""))
  expect_snapshot(error = TRUE, tool(function(x) x, "d", name = "has space"))
  expect_snapshot(error = TRUE, tool(function(x) x, "d", name = strrep("a", 129)))
  expect_snapshot(error = TRUE, tool(function(x) x, "d", name = c("a", "b")))
  expect_snapshot(error = TRUE, tool(function(x) x, "d", name = "caf\u00e9"))
  expect_equal(tool_meta(tool(function() 1, "d", name = strrep("a", 128)))$name, strrep("a", 128))
  expect_equal(tool_meta(tool(function() 1, "d", name = "A-z_0.9"))$name, "A-z_0.9")
})

test_that("tool() rejects a bad description", {
  f <- function() 1
  expect_snapshot(error = TRUE, tool(f))
  expect_snapshot(error = TRUE, tool(f, 42))
  expect_snapshot(error = TRUE, tool(f, NA_character_))
  expect_snapshot(error = TRUE, tool(f, c("one", "two")))
})

test_that("`...` is reserved", {
  f <- function(x) x
  expect_snapshot(error = TRUE, tool(f, "d", argument = list(x = type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", list(x = type_string())))
  expect_error(tool(f, "d", outputSchema = list()), class = "mcplite_error_argument")
})

test_that("tool() rejects bad arguments", {
  f <- function(x, y) x
  expect_snapshot(error = TRUE, tool(f, "d", arguments = type_string()))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = type_object(x = type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = "x"))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = list(type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = list(x = type_string(), x = type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = list(x = "string")))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = list(z = type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = type_from_schema('{"type":"string"}')))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = type_from_schema('{"anyOf":[{"type":"object"}]}')))
  # A function with `...` accepts any argument name.
  expect_s3_class(tool(function(...) 1, "d", name = "dots", arguments = list(z = type_string())), "mcplite_tool")
})

test_that("annotations accept camelCase and snake_case and are stored snake_case", {
  f <- function() 1
  a <- tool_meta(tool(f, "d", annotations = list(
    title = "F", read_only_hint = TRUE, destructiveHint = FALSE,
    idempotent_hint = TRUE, openWorldHint = FALSE
  )))
  expect_equal(
    json_fixed(a$annotations),
    '{"title":"F","read_only_hint":true,"destructive_hint":false,"idempotent_hint":true,"open_world_hint":false}'
  )
  # The title is sent in the annotations only (as CRAN mcplite does).
  expect_null(a$title)
  b <- tool_meta(tool(f, "d", annotations = list(open_world_hint = TRUE, destructive_hint = TRUE)))
  expect_equal(names(b$annotations), c("open_world_hint", "destructive_hint"))
  expect_null(b$title)
  expect_null(tool_meta(tool(f, "d"))$annotations)
})

test_that("bad annotations are rejected", {
  f <- function() 1
  expect_snapshot(error = TRUE, tool(f, "d", annotations = "read only"))
  expect_snapshot(error = TRUE, tool(f, "d", annotations = list(TRUE)))
  expect_snapshot(error = TRUE, tool(f, "d", annotations = list(custom = new.env())))
  expect_snapshot(error = TRUE, tool(f, "d", annotations = list(readOnlyHint = TRUE, read_only_hint = TRUE)))
  expect_snapshot(error = TRUE, tool(f, "d", annotations = list(readOnlyHint = "yes")))
  expect_snapshot(error = TRUE, tool(f, "d", annotations = list(title = 1)))
  expect_snapshot(error = TRUE, tool(f, "d", annotations = list(idempotent_hint = NA)))
})

test_that("output_schema accepts type helpers and named lists", {
  f <- function() 1
  out <- tool_meta(tool(f, "d", output_schema = type_object(total = type_number())))
  expect_equal(
    json_fixed(out$output_schema),
    '{"type":"object","properties":{"total":{"type":"number"}},"required":["total"],"additionalProperties":false}'
  )
  out <- tool_meta(tool(f, "d", output_schema = type_from_schema('{"type":"object","properties":{}}')))
  expect_equal(json_fixed(out$output_schema), '{"type":"object","properties":{}}')
  out <- tool_meta(tool(f, "d", output_schema = list(type = "object", required = list("a"))))
  expect_equal(json_fixed(out$output_schema), '{"type":"object","required":["a"]}')
  # Only shape and serializability are checked, not schema validity.
  out <- tool_meta(tool(f, "d", output_schema = list(type = "array")))
  expect_equal(json_fixed(out$output_schema), '{"type":"array"}')
  expect_null(tool_meta(tool(f, "d"))$output_schema)
})

test_that("bad output schemas are rejected", {
  f <- function() 1
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = "object"))
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = list("object")))
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = list()))
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = list(type = "object", x = new.env())))
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = list(type = "object", max = Inf)))
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = list(type = "object", d = Sys.Date())))
  expect_snapshot(error = TRUE, tool(f, "d", output_schema = type_ignore()))
})

test_that("primitives become tools without being modified", {
  t <- tool(sum, "Add up numbers.", name = "total", arguments = list(na.rm = type_boolean(required = FALSE)))
  expect_equal(t(1, 2, NA, na.rm = TRUE), 3)
  expect_null(attributes(sum))
  expect_identical(class(sum), "function")
})

test_that("re-wrapping a tool replaces its metadata", {
  t <- tool(function(x = "") x, "first", name = "a", arguments = list(x = type_string()))
  t2 <- tool(t, "second", name = "b")
  expect_equal(tool_meta(t2)$description, "second")
  expect_equal(input_json(t2), '{"type":"object","properties":{},"additionalProperties":false}')
  expect_equal(t2("z"), "z")
})

test_that("tools print what a client receives in tools/list", {
  t <- tool(
    function(city) city,
    name = "weather", description = "Look up the weather.",
    arguments = list(city = type_string("City name.")),
    annotations = list(read_only_hint = TRUE)
  )
  expect_snapshot(print(t))
  # The protocol's names, not the R-side ones.
  shown <- paste(capture.output(print(t)), collapse = "\n")
  expect_match(shown, '"readOnlyHint": true', fixed = TRUE)
  expect_match(shown, '"inputSchema"', fixed = TRUE)
  expect_false(grepl("read_only_hint|input_schema", shown))
  expect_snapshot(tool(function() 1, "Nothing.", name = "noop", output_schema = type_object()))
})

test_that("type helpers combined with c() get a pointer to list()", {
  f <- function(x, y = 1) x
  # c() strips the helpers' class and splices their parts (x.schema, x.required).
  expect_snapshot(error = TRUE, tool(f, "d", arguments = c(x = type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = c(x = type_string(), y = type_number(required = FALSE))))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = c(type_string())))
  expect_snapshot(error = TRUE, tool(f, "d", arguments = list(x = type_string(), y = c(type_number()))))
  expect_snapshot(error = TRUE, type_object(x = c(type_string())))
  expect_error(tool(f, "d", arguments = c(x = type_object(a = type_string()))), class = "mcplite_error_schema")
  # A schema written as a plain list still gets the type_from_schema() hint.
  expect_snapshot(error = TRUE, tool(f, "d", arguments = list(x = list(type = "string"))))
})

test_that("a complete input schema needs `type` \"object\" at its root, by exact name", {
  f <- function(q = NULL) q
  empty <- structure(list(), names = character(0))
  # `$type` would partially match `typeExtension`; the root has no `type` at all.
  expect_snapshot(error = TRUE, tool(f, "d", name = "t",
    arguments = type_from_schema(list(typeExtension = "object", properties = empty))))
  expect_error(tool(f, "d", name = "t",
    arguments = type_from_schema('{"typeExtension":"object","properties":{}}')), class = "mcplite_error_schema")
  expect_error(tool(f, "d", name = "t",
    arguments = type_from_schema('{"typ":"object","properties":{}}')), class = "mcplite_error_schema")
  expect_snapshot(error = TRUE, tool(f, "d", name = "t", arguments = type_from_schema('{"type":["object"]}')))
  # With the exact key next to a longer one, the exact key is the one read.
  t <- tool(f, "d", name = "t", arguments = type_from_schema(list(typeExtension = "array", type = "object")))
  expect_equal(input_json(t), '{"typeExtension":"array","type":"object","properties":{}}')
})

test_that("tool() warns about an argument that clients can never supply", {
  expect_snapshot(t <- tool(function(x, y) x, "d", name = "a", arguments = list(x = type_string())))
  expect_s3_class(t, "mcplite_tool")
  expect_warning(tool(function(x, y) x, "d", name = "a", arguments = list(x = type_string())),
                 class = "mcplite_warning_unsuppliable_argument")
  expect_warning(tool(function(x, y) x, "d", name = "a", arguments = list(x = type_string())),
                 class = "mcplite_warning")
  # Several at once, and an argument hidden with type_ignore() but without a default.
  expect_snapshot(tool(function(a, b, c) a, "d", name = "a", arguments = list(a = type_string(), c = type_ignore())))
  # Nothing to say: every argument is described or has a default; `...` takes anything.
  expect_no_warning(tool(function(x, y = 2) x, "d", name = "a", arguments = list(x = type_string())))
  expect_no_warning(tool(function(x, hidden = 1) x, "d", name = "a",
                         arguments = list(x = type_string(), hidden = type_ignore())))
  expect_no_warning(tool(function(x, y, ...) x, "d", name = "a", arguments = list(x = type_string())))
  expect_no_warning(tool(function(q) q, "d", name = "a",
                         arguments = type_from_schema('{"type":"object","properties":{"q":{}}}')))
  expect_no_warning(tool(sqrt, "Root.", name = "root", arguments = list(x = type_number())))
  # An argument the function checks with missing() is handled by the function.
  expect_no_warning(tool(function(x, y) if (missing(y)) x else y, "d", name = "a",
                         arguments = list(x = type_string())))
})

test_that("tool() warns about an optional argument without an R default", {
  expect_snapshot(t <- tool(function(x, y) x, "d", name = "a",
                            arguments = list(x = type_string(), y = type_number(required = FALSE))))
  expect_s3_class(t, "mcplite_tool")
  expect_warning(tool(function(x, y) x, "d", name = "a",
                      arguments = list(x = type_string(), y = type_number(required = FALSE))),
                 class = "mcplite_warning_missing_default")
  expect_snapshot(tool(function(a, b) a, "d", name = "a", arguments = list(
    a = type_string(required = FALSE), b = type_object(.required = FALSE)
  )))
  expect_no_warning(tool(function(x, y = NULL) x, "d", name = "a",
                         arguments = list(x = type_string(), y = type_number(required = FALSE))))
  expect_no_warning(tool(function(x, y) if (missing(y)) x else y, "d", name = "a",
                         arguments = list(x = type_string(), y = type_number(required = FALSE))))
  # With `...`, a described argument that is not a formal has no default to check.
  expect_no_warning(tool(function(...) 1, "d", name = "a", arguments = list(y = type_number(required = FALSE))))
  # The warning can be silenced on its own by class.
  expect_no_warning(withCallingHandlers(
    tool(function(x, y) x, "d", name = "a", arguments = list(x = type_string(), y = type_number(required = FALSE))),
    mcplite_warning_missing_default = function(w) invokeRestart("muffleWarning")
  ))
})

test_that("tool metadata is read by exact names", {
  t <- tool(function() 1, "d", name = "a", annotations = list(title = "T"))
  expect_identical(server_specs(t)[[1]]$annotations$title, "T")
  # A tool whose metadata was replaced by a list without `name` is refused,
  # even when another key starts with "name".
  broken <- t
  attr(broken, "mcplite") <- list(names = "a", description = "d")
  expect_snapshot(error = TRUE, server_specs(broken))
})

test_that("annotations MCP does not define are sent as given, with a warning", {
  f <- function() 1
  expect_snapshot(t <- tool(f, "d", name = "a", annotations = list(readonly = TRUE, read_only_hint = FALSE)))
  expect_equal(json_fixed(tool_meta(t)$annotations), '{"readonly":true,"read_only_hint":false}')
  expect_warning(tool(f, "d", name = "a", annotations = list(`com.example/tier` = list(level = 2))),
                 class = "mcplite_warning_unknown_annotation")
  # ellmer's own extras are not MCP annotations and are left out.
  skip_if_not_installed("ellmer")
  et <- ellmer::tool(function() 1, name = "e", description = "E.",
                     annotations = ellmer::tool_annotations(icon = "star", read_only_hint = TRUE))
  expect_no_warning(spec <- server_specs(et)[[1]])
  expect_equal(json_fixed(spec$annotations), '{"read_only_hint":true}')
})
