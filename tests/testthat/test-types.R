test_that("basic types advertise their JSON type, description and nothing else", {
  expect_equal(wire(type_boolean()), '{"type":"boolean"}')
  expect_equal(wire(type_integer("A count.")), '{"type":"integer","description":"A count."}')
  expect_equal(wire(type_number("x")), '{"type":"number","description":"x"}')
  expect_equal(wire(type_string(description = "Name")), '{"type":"string","description":"Name"}')
  expect_true(type_string()$required)
  expect_false(type_string(required = FALSE)$required)
  expect_s3_class(type_number(), "mcplite_type_number")
  expect_s3_class(type_number(), "mcplite_type")
})

test_that("basic types reject bad description and required", {
  expect_snapshot(error = TRUE, type_string(description = 1))
  expect_snapshot(error = TRUE, type_string(description = c("a", "b")))
  expect_snapshot(error = TRUE, type_boolean(description = NA_character_))
  expect_snapshot(error = TRUE, type_integer(required = NA))
  expect_snapshot(error = TRUE, type_number(required = "yes"))
  expect_error(type_number(required = c(TRUE, FALSE)), class = "mcplite_error_schema")
})

test_that("type_enum() advertises a string with an enum array, even for one value", {
  expect_equal(
    wire(type_enum(c("celsius", "fahrenheit"), "Unit.")),
    '{"type":"string","description":"Unit.","enum":["celsius","fahrenheit"]}'
  )
  expect_equal(wire(type_enum("only")), '{"type":"string","enum":["only"]}')
  expect_equal(wire(type_enum(factor(c("b", "a")))), '{"type":"string","enum":["a","b"]}')
  expect_false(type_enum("a", required = FALSE)$required)
})

test_that("type_enum() takes numbers and logicals too, as CRAN mcplite does", {
  expect_equal(wire(type_enum(1:3)), '{"type":"integer","enum":[1,2,3]}')
  expect_equal(wire(type_enum(c(0.5, 2))), '{"type":"number","enum":[0.5,2]}')
  expect_equal(wire(type_enum(TRUE)), '{"type":"boolean","enum":[true]}')
  expect_equal(wire(type_enum(list("a", "b"))), '{"type":"string","enum":["a","b"]}')
})

test_that("type_enum() rejects bad values", {
  expect_snapshot(error = TRUE, type_enum(list("a", 1)))
  expect_snapshot(error = TRUE, type_enum(c(1, Inf)))
  expect_snapshot(error = TRUE, type_enum(character()))
  expect_snapshot(error = TRUE, type_enum(c("a", NA)))
  expect_snapshot(error = TRUE, type_enum(c("a", "b", "a")))
  expect_snapshot(error = TRUE, type_enum("a", description = TRUE))
  expect_error(type_enum(), class = "mcplite_error_schema")
})

test_that("type_array() nests its item schema", {
  expect_equal(
    wire(type_array(type_integer(), description = "Ids.")),
    '{"type":"array","description":"Ids.","items":{"type":"integer"}}'
  )
  expect_equal(
    wire(type_array(type_array(type_enum(c("x", "y"))))),
    '{"type":"array","items":{"type":"array","items":{"type":"string","enum":["x","y"]}}}'
  )
  # An item's own `required` flag has no meaning inside an array.
  expect_equal(wire(type_array(type_string(required = FALSE))), wire(type_array(type_string())))
})

test_that("type_array() rejects bad items", {
  expect_snapshot(error = TRUE, type_array())
  expect_snapshot(error = TRUE, type_array("string"))
  expect_snapshot(error = TRUE, type_array(type_ignore()))
  expect_snapshot(error = TRUE, type_array(type_string(), required = NULL))
})

test_that("type_object() keeps declaration order and lists required properties in order", {
  obj <- type_object(
    .description = "A labeled score.",
    label = type_string(),
    score = type_number(required = FALSE),
    weight = type_number()
  )
  expect_equal(
    wire(obj),
    paste0(
      '{"type":"object","description":"A labeled score.","properties":{',
      '"label":{"type":"string"},"score":{"type":"number"},"weight":{"type":"number"}},',
      '"required":["label","weight"],"additionalProperties":false}'
    )
  )
})

test_that("type_object() options: additional properties, no required, empty, ignored", {
  expect_equal(
    wire(type_object(a = type_string(required = FALSE), .additional_properties = TRUE)),
    '{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}'
  )
  expect_equal(wire(type_object()), '{"type":"object","properties":{},"additionalProperties":false}')
  expect_equal(
    wire(type_object(a = type_ignore(), b = type_boolean())),
    '{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"],"additionalProperties":false}'
  )
  expect_false(type_object(.required = FALSE)$required)
})

test_that("type_object() nests objects, arrays and complete schemas", {
  obj <- type_object(
    point = type_object(x = type_number(), y = type_number()),
    tags = type_array(type_string(), required = FALSE),
    extra = type_from_schema(list(type = "string", minLength = 1))
  )
  expect_equal(
    json_parse(wire(obj), "x"),
    list(
      type = "object",
      properties = list(
        point = list(
          type = "object",
          properties = list(x = list(type = "number"), y = list(type = "number")),
          required = list("x", "y"),
          additionalProperties = FALSE
        ),
        tags = list(type = "array", items = list(type = "string")),
        extra = list(type = "string", minLength = 1L)
      ),
      required = list("point", "extra"),
      additionalProperties = FALSE
    )
  )
})

test_that("type_object() rejects bad properties and options", {
  expect_snapshot(error = TRUE, type_object(type_string()))
  expect_snapshot(error = TRUE, type_object(a = type_string(), type_number()))
  expect_snapshot(error = TRUE, type_object(a = type_string(), a = type_number()))
  expect_snapshot(error = TRUE, type_object(a = "string"))
  expect_snapshot(error = TRUE, type_object(a = list(type = "string")))
  expect_snapshot(error = TRUE, type_object(.description = 2))
  expect_snapshot(error = TRUE, type_object(.required = "no"))
  expect_snapshot(error = TRUE, type_object(.additional_properties = NA))
})

test_that("type_from_schema() keeps every keyword and the key order of JSON text", {
  json <- paste0(
    '{"$schema":"https://json-schema.org/draft/2020-12/schema",',
    '"type":"object","$defs":{"pos":{"type":"integer","minimum":1}},',
    '"properties":{"n":{"$ref":"#/$defs/pos"},"m":{"anyOf":[{"type":"string"},{"type":"null"}]}},',
    '"if":{"required":["n"]},"then":{"required":["m"]},"else":{},',
    '"allOf":[],"required":["n"],"additionalProperties":false}'
  )
  expect_equal(wire(type_from_schema(json)), json)
  expect_equal(wire(type_from_schema(text = json)), json)
})

test_that("type_from_schema() reads files", {
  path <- tempfile(fileext = ".json")
  on.exit(unlink(path))
  writeLines('{"type": "integer", "minimum": 0, "examples": [1, 2]}', path)
  expect_equal(wire(type_from_schema(path = path)), '{"type":"integer","minimum":0,"examples":[1,2]}')
})

test_that("type_from_schema() keeps R list shape", {
  schema <- type_from_schema(list(
    type = "object",
    properties = structure(list(), names = character(0)),
    required = list(),
    enum_one = I("a"),
    defaults = list(a = 1L, b = c(1.5, 2))
  ))
  expect_equal(
    wire(schema),
    '{"type":"object","properties":{},"required":[],"enum_one":["a"],"defaults":{"a":1,"b":[1.5,2]}}'
  )
  expect_equal(wire(type_from_schema(structure(list(), names = character(0)))), "{}")
  expect_equal(wire(type_from_schema("{}")), "{}")
})

test_that("type_from_schema() rejects bad input", {
  expect_snapshot(error = TRUE, type_from_schema())
  expect_snapshot(error = TRUE, type_from_schema(text = "{}", path = "x.json"))
  expect_snapshot(error = TRUE, type_from_schema(text = 1))
  expect_snapshot(error = TRUE, type_from_schema(text = c("{", "}")))
  expect_snapshot(error = TRUE, type_from_schema(text = "[1, 2]"))
  expect_snapshot(error = TRUE, type_from_schema(text = "true"))
  expect_snapshot(error = TRUE, type_from_schema(list()))
  expect_snapshot(error = TRUE, type_from_schema(list(type = "string", f = mean)))
  expect_snapshot(error = TRUE, type_from_schema(list(type = "string", list(1))))
  expect_snapshot(error = TRUE, type_from_schema(path = "/nonexistent/schema.json"))
  expect_snapshot(error = TRUE, type_from_schema(path = NA_character_))
  expect_error(type_from_schema(text = "{not json"), class = "mcplite_error_schema")
})

test_that("type_ignore() is a type without a schema", {
  expect_s3_class(type_ignore(), "mcplite_type_ignore")
  expect_null(type_ignore()$schema)
})

test_that("types print their class and schema", {
  expect_snapshot(type_object(a = type_enum(c("x", "y")), .description = "Thing."))
  expect_snapshot(type_ignore())
})
