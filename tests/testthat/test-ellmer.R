spec_of <- function(x) server_specs(x)[[1]]

# Real ellmer content (skipped without ellmer); `fake_content()` forges one
# with ellmer's classes and attributes but no S7 class behind it.
ellmer_content <- function(cls, ...) {
  skip_if_not_installed("ellmer")
  do.call(getExportedValue("ellmer", cls), list(...))
}

fake_content <- function(cls, ...) {
  parents <- switch(cls,
    ContentImageInline = , ContentImageRemote = c("ellmer::ContentImage", "ellmer::Content"),
    "ellmer::Content"
  )
  structure(list(), class = c(paste0("ellmer::", cls), parents, "S7_object"), ...)
}


test_that("each ellmer type converts to the schema of the equivalent mcplite type", {
  skip_if_not_installed("ellmer")
  pairs <- list(
    list(ellmer::type_boolean("B."), type_boolean("B.")),
    list(ellmer::type_integer(), type_integer()),
    list(ellmer::type_number("N.", required = FALSE), type_number("N.", required = FALSE)),
    list(ellmer::type_string("S."), type_string("S.")),
    list(ellmer::type_enum(c("a", "b"), "E."), type_enum(c("a", "b"), "E.")),
    list(ellmer::type_array(ellmer::type_string(), "A."), type_array(type_string(), "A.")),
    list(
      ellmer::type_object("O.", x = ellmer::type_number(), y = ellmer::type_string(required = FALSE)),
      type_object("O.", x = type_number(), y = type_string(required = FALSE))
    ),
    list(
      suppressWarnings(ellmer::type_object(x = ellmer::type_number(), .additional_properties = TRUE, .required = FALSE)),
      type_object(x = type_number(), .additional_properties = TRUE, .required = FALSE)
    ),
    list(
      ellmer::type_from_schema('{"type":"string","pattern":"^a","enum":["ab"],"x":{},"y":[]}'),
      type_from_schema('{"type":"string","pattern":"^a","enum":["ab"],"x":{},"y":[]}')
    )
  )
  for (p in pairs) {
    converted <- as_type(p[[1]], "x", NULL)
    expect_identical(wire(converted), wire(p[[2]]))
    expect_identical(converted$required, p[[2]]$required)
  }
  expect_s3_class(as_type(ellmer::type_ignore(), "x", NULL), "mcplite_type_ignore")
})

test_that("an ellmer tool converts to the same spec as the equivalent mcplite tool", {
  skip_if_not_installed("ellmer")
  fun <- function(x, n = 1L, unit = "a", tags = list(), opts = NULL, raw = NULL, hidden = 0) x
  et <- ellmer::tool(
    fun,
    name = "convert_me",
    description = "Every ellmer type.",
    arguments = list(
      x = ellmer::type_number("X."),
      n = ellmer::type_integer(required = FALSE),
      unit = ellmer::type_enum(c("a", "b")),
      tags = ellmer::type_array(ellmer::type_string()),
      opts = ellmer::type_object(
        depth = ellmer::type_integer(),
        rows = ellmer::type_array(ellmer::type_object(id = ellmer::type_integer()))
      ),
      raw = ellmer::type_from_schema('{"anyOf":[{"type":"string"},{"type":"null"}]}'),
      hidden = ellmer::type_ignore()
    ),
    annotations = ellmer::tool_annotations(title = "Convert", read_only_hint = TRUE, open_world_hint = FALSE)
  )
  mt <- tool(
    fun,
    name = "convert_me",
    description = "Every ellmer type.",
    arguments = list(
      x = type_number("X."),
      n = type_integer(required = FALSE),
      unit = type_enum(c("a", "b")),
      tags = type_array(type_string()),
      opts = type_object(
        depth = type_integer(),
        rows = type_array(type_object(id = type_integer()))
      ),
      raw = type_from_schema('{"anyOf":[{"type":"string"},{"type":"null"}]}'),
      hidden = type_ignore()
    ),
    annotations = list(title = "Convert", readOnlyHint = TRUE, openWorldHint = FALSE)
  )
  es <- spec_of(et)
  ms <- spec_of(mt)
  for (field in c("name", "description", "title", "output_schema", "meta")) {
    expect_identical(es[[field]], ms[[field]])
  }
  expect_identical(json_fixed(es$input_schema), json_fixed(ms$input_schema))
  expect_identical(json_fixed(es$annotations), json_fixed(ms$annotations))
  expect_null(es$title)
  expect_true(is.function(es$fun))
  expect_null(attributes(es$fun)$class)
})

test_that("converted ellmer tools run, with ellmer's argument conversion", {
  skip_if_not_installed("ellmer")
  et <- ellmer::tool(
    function(values, unit = "m", rows = NULL) {
      list(total = sum(values), unit = unit, rows = rows)
    },
    name = "sum_values",
    description = "Sum values.",
    arguments = list(
      values = ellmer::type_array(ellmer::type_number()),
      unit = ellmer::type_enum(c("m", "km"), required = FALSE),
      rows = ellmer::type_array(ellmer::type_object(id = ellmer::type_integer(), name = ellmer::type_string()), required = FALSE)
    )
  )
  spec <- spec_of(list(et))
  # Arguments arrive as parsed JSON: arrays are lists.
  out <- do.call(spec$fun, list(values = list(1, 2L, 3.5)))
  expect_equal(out$total, 6.5)
  expect_equal(out$unit, "m")
  out <- do.call(spec$fun, list(
    values = list(), unit = "km",
    rows = list(list(id = 1L, name = "a"), list(id = 2L, name = "b"))
  ))
  expect_equal(out$total, 0)
  expect_equal(out$unit, "km")
  expect_equal(out$rows, data.frame(id = 1:2, name = c("a", "b")))

  # With convert = FALSE the function gets the lists unchanged.
  raw <- ellmer::tool(function(values) values, name = "raw", description = "Raw.",
    arguments = list(values = ellmer::type_array(ellmer::type_number())), convert = FALSE)
  expect_equal(do.call(spec_of(raw)$fun, list(values = list(1, 2))), list(1, 2))
})

test_that("ellmer tools mix with mcplite tools and need unique names", {
  skip_if_not_installed("ellmer")
  et <- ellmer::tool(function() 1, name = "one", description = "One.")
  mt <- tool(function() 2, name = "two", description = "Two.")
  specs <- server_specs(list(et, mt))
  expect_equal(vapply(specs, function(s) s$name, ""), c("one", "two"))
  expect_equal(json_fixed(specs[[1]]$input_schema), '{"type":"object","properties":{},"additionalProperties":false}')
  expect_null(specs[[1]]$annotations)
  clash <- tool(function() 2, name = "one", description = "Also one.")
  expect_snapshot(error = TRUE, server_specs(list(et, clash)))
})

test_that("ellmer annotations beyond MCP's are not sent", {
  skip_if_not_installed("ellmer")
  et <- ellmer::tool(function() 1, name = "a", description = "A.",
    annotations = ellmer::tool_annotations(idempotent_hint = TRUE, icon = "star"))
  expect_equal(json_fixed(spec_of(et)$annotations), '{"idempotent_hint":true}')
})

test_that("unsupported ellmer types are reported before serving", {
  skip_if_not_installed("ellmer")
  # An S7 type class mcplite does not know, under ellmer's names.
  base <- S7::new_class("Type", package = "ellmer",
                        properties = list(description = S7::class_any, required = S7::class_logical))
  fancy <- S7::new_class("TypeFancy", package = "ellmer", parent = base)
  odd <- fancy(required = TRUE)
  et <- ellmer::tool(function(x) x, name = "odd", description = "Odd.",
    arguments = list(x = ellmer::type_string()))
  props <- attr(attr(et, "arguments"), "properties")
  props$x <- odd
  args <- attr(et, "arguments")
  attr(args, "properties") <- props
  attr(et, "arguments") <- args
  expect_snapshot(error = TRUE, server_specs(list(et)))
  expect_error(server_specs(et), class = "mcplite_error_schema")
})

test_that("ellmer types work inside mcplite definitions", {
  skip_if_not_installed("ellmer")
  t <- tool(function(x) x, "d", name = "mixed", arguments = list(x = ellmer::type_array(ellmer::type_integer())))
  expect_equal(input_json(t), '{"type":"object","properties":{"x":{"type":"array","items":{"type":"integer"}}},"required":["x"],"additionalProperties":false}')
  expect_snapshot(error = TRUE, tool(ellmer::tool(function() 1, name = "e", description = "E."), "d", name = "x"))
})

test_that("objects that only carry ellmer's class, not made by S7, have no properties", {
  skip_if_not_installed("S7")
  # Hand-forged: ellmer's classes, properties as attributes, but no S7 class
  # behind them. mcplite reads properties only through S7, so none are found.
  forged_type <- structure(list(), class = c("ellmer::TypeBasic", "ellmer::Type", "S7_object"),
                           type = "integer", required = TRUE)
  forged_tool <- structure(function(n) n, class = c("ellmer::ToolDef", "function", "S7_object"),
                           name = "double_it", description = "Double.")
  expect_snapshot(error = TRUE, server_specs(forged_tool))
  expect_error(as_type(forged_type, "n", NULL), class = "mcplite_error_schema")
  expect_error(as_tool_value(fake_content("ContentText", text = "hi")), class = "mcplite_error_content")
})

test_that("an ellmer tool's properties are what S7 reports, even edited by hand", {
  skip_if_not_installed("ellmer")
  et <- ellmer::tool(
    function(n, ks = NULL) n * 2L, name = "double_it", description = "Double.",
    arguments = list(n = ellmer::type_integer("N."),
                     ks = ellmer::type_array(ellmer::type_enum(c("a", "b")), required = FALSE)),
    annotations = ellmer::tool_annotations(read_only_hint = TRUE)
  )
  attr(et, "description") <- "Double it."
  spec <- server_specs(et)[[1]]
  expect_equal(spec$name, "double_it")
  expect_equal(spec$description, "Double it.")
  expect_equal(
    json_fixed(spec$input_schema),
    paste0(
      '{"type":"object","properties":{"n":{"type":"integer","description":"N."},',
      '"ks":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["n"],',
      '"additionalProperties":false}'
    )
  )
  expect_equal(json_fixed(spec$annotations), '{"read_only_hint":true}')
  expect_equal(do.call(spec$fun, list(n = 4L, ks = list("a"))), 8L)
})

test_that("broken ellmer tool metadata is reported", {
  skip_if_not_installed("ellmer")
  # ellmer checks what its constructor is given; these are edited afterwards.
  bad <- ellmer::tool(function() 1, name = "ok", description = "D.")
  attr(bad, "name") <- "bad name"
  expect_snapshot(error = TRUE, server_specs(list(bad)))
  bad <- ellmer::tool(function() 1, name = "ok", description = "D.")
  attr(bad, "description") <- NULL
  expect_snapshot(error = TRUE, server_specs(list(bad)))
})

# ---- ellmer content returned by tools ----------------------------------------

test_that("ellmer text and inline images become text and image blocks", {
  text <- as_tool_value(ellmer_content("ContentText", text = "Hello."))
  expect_s3_class(text, "mcplite_tool_result")
  expect_identical(text$content, list(content_text("Hello.")))
  expect_false(text$is_error)
  image <- as_tool_value(ellmer_content("ContentImageInline", type = "image/png", data = "iVBORw0KGgo="))
  expect_identical(image$content, list(content_image("iVBORw0KGgo=", "image/png")))
  # A list of them, possibly mixed with mcplite blocks, keeps its order.
  both <- as_tool_value(list(
    ellmer_content("ContentText", text = "A plot:"),
    ellmer_content("ContentImageInline", type = "image/png", data = "AA=="),
    content_text("mcplite block")
  ))
  expect_identical(both$content, list(content_text("A plot:"), content_image("AA==", "image/png"),
                                      content_text("mcplite block")))
})

test_that("ellmer tool results unwrap to their value, or to a tool error", {
  value <- as_tool_value(ellmer_content("ContentToolResult", value = list(a = 1), extra = list()))
  expect_identical(value, list(a = 1))
  inner <- as_tool_value(ellmer_content("ContentToolResult", value = ellmer_content("ContentText", text = "in")))
  expect_identical(inner$content, list(content_text("in")))
  failed <- as_tool_value(ellmer_content("ContentToolResult", error = simpleError("disk full")))
  expect_true(failed$is_error)
  expect_identical(failed$content, list(content_text("disk full")))
  failed <- as_tool_value(ellmer_content("ContentToolResult", value = NULL, error = "bad input"))
  expect_true(failed$is_error)
  expect_identical(failed$content[[1]]$text, "bad input")
})

test_that("other values pass through unchanged", {
  for (x in list(1, "a", NULL, list(1, "a"), list(), data.frame(a = 1), content_text("x"),
                 tool_result(content_text("y")), factor("f"))) {
    expect_identical(as_tool_value(x), x)
  }
})

test_that("ellmer content without a faithful MCP block is an error naming the class and the way out", {
  expect_snapshot(error = TRUE, as_tool_value(ellmer_content("ContentImageRemote", url = "https://example.com/a.png", detail = "auto")))
  expect_snapshot(error = TRUE, as_tool_value(ellmer_content("ContentPDF", type = "application/pdf", data = "JVBERi0=", filename = "a.pdf")))
  expect_snapshot(error = TRUE, as_tool_value(ellmer_content("ContentThinking", thinking = "hmm")))
  expect_snapshot(error = TRUE, as_tool_value(list(ellmer_content("ContentText", text = "a"), 42)))
  expect_snapshot(error = TRUE, as_tool_value(list(ellmer_content("ContentText", text = "a"),
                                                   ellmer_content("ContentToolResult", value = 1))))
  na_text <- ellmer_content("ContentText", text = "a")
  attr(na_text, "text") <- NA_character_ # ellmer refuses NA: edited by hand
  expect_snapshot(error = TRUE, as_tool_value(na_text))
  expect_error(as_tool_value(ellmer_content("ContentDocument", mime_type = "text/csv", data = "YQ==", filename = "a.csv")),
               class = "mcplite_error_content")
})

test_that("real ellmer content objects convert the same way", {
  skip_if_not_installed("ellmer")
  res <- as_tool_value(list(ellmer::ContentText("t"), ellmer::ContentImageInline("image/png", "AA==")))
  expect_identical(res$content, list(content_text("t"), content_image("AA==", "image/png")))
  res <- as_tool_value(ellmer::ContentToolResult(value = ellmer::ContentText("v")))
  expect_identical(res$content, list(content_text("v")))
  res <- as_tool_value(ellmer::ContentToolResult(error = simpleError("nope")))
  expect_true(res$is_error)
  expect_error(as_tool_value(ellmer::ContentImageRemote("https://example.com/a.png")),
               "ellmer::ContentImageRemote", class = "mcplite_error_content")
})

test_that("ellmer content reaches clients of every version as MCP blocks or a tool error", {
  skip_on_cran()
  skip_if_not_installed("ellmer")
  skip_if_no_mcplite_child()
  code <- c(
    "library(mcplite)",
    "plot_like <- ellmer::tool(function() list(ellmer::ContentText('A square:'),",
    "  ellmer::ContentImageInline('image/png', 'iVBORw0KGgo=')), name = 'plot_like', description = 'Text and image.')",
    "wrapped <- ellmer::tool(function(x) ellmer::ContentToolResult(value = x * 2), name = 'wrapped',",
    "  description = 'Doubles.', arguments = list(x = ellmer::type_number()))",
    "failing <- ellmer::tool(function() ellmer::ContentToolResult(error = simpleError('no data for that day')),",
    "  name = 'failing', description = 'Fails politely.')",
    "remote <- ellmer::tool(function() ellmer::ContentImageRemote('https://example.com/a.png'),",
    "  name = 'remote', description = 'A remote image.')",
    "plain <- tool(function() ellmer::ContentText('from an mcplite tool'), 'Text.', name = 'plain')",
    "mcp_server(list(plot_like, wrapped, failing, remote, plain))"
  )
  script <- server_script(code)
  for (v in all_versions) {
    client <- checked_client(script, env = child_env(), protocol = v)
    plot <- client$call("plot_like")
    expect_identical(plot$content, list(
      list(type = "text", text = "A square:"),
      list(type = "image", data = "iVBORw0KGgo=", mimeType = "image/png")
    ))
    expect_false(isTRUE(plot$isError))
    expect_identical(client$call("wrapped", list(x = 21))$content[[1]]$text, "42")
    failing <- client$call("failing")
    expect_true(failing$isError)
    expect_identical(failing$content[[1]]$text, "no data for that day")
    remote <- client$call("remote")
    expect_true(remote$isError)
    expect_match(remote$content[[1]]$text, "<ellmer::ContentImageRemote>", fixed = TRUE)
    expect_match(remote$content[[1]]$text, "content_image(", fixed = TRUE)
    expect_identical(client$call("plain")$content[[1]]$text, "from an mcplite tool")
  }
})

test_that("an ellmer schema given as the whole input schema needs `type` \"object\" by exact name", {
  skip_if_not_installed("ellmer")
  f <- function(q = NULL) q
  expect_error(
    tool(f, "d", name = "t", arguments = ellmer::type_from_schema('{"typeExtension":"object","properties":{}}')),
    "it has no `type`", class = "mcplite_error_schema"
  )
  t <- tool(f, "d", name = "t", arguments = ellmer::type_from_schema('{"type":"object","properties":{"q":{}}}'))
  expect_equal(input_json(t), '{"type":"object","properties":{"q":{}}}')
})
