# End-to-end: the schemas and results built in R, as a client sees them.

test_that("tools/list shows every type helper's schema exactly as built", {
  skip_on_cran()
  code <- c(
    "all_types <- tool(",
    "  function(flag, n, x, s, unit, ids, opts, raw, hidden = 1) NULL,",
    "  name = 'all_types', description = 'Every helper.',",
    "  arguments = list(",
    "    flag = type_boolean('F.'), n = type_integer(required = FALSE), x = type_number(),",
    "    s = type_string(), unit = type_enum('only'),",
    "    ids = type_array(type_integer(), description = 'Ids.'),",
    "    opts = type_object(depth = type_integer(), inner = type_object(on = type_boolean(),",
    "      .additional_properties = TRUE), .description = 'Options.'),",
    "    raw = type_from_schema(list(oneOf = list(list(type = 'string'), list(type = 'null')),",
    "      default = structure(list(), names = character(0)), examples = list())),",
    "    hidden = type_ignore()",
    "  )",
    ")",
    "complete <- tool(function(q) q, 'Complete schema.', name = 'complete',",
    "  arguments = type_from_schema(paste0('{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",',",
    "    '\"type\":\"object\",\"$defs\":{\"q\":{\"type\":\"string\",\"minLength\":300000}},',",
    "    '\"properties\":{\"q\":{\"$ref\":\"#/$defs/q\"}},\"required\":[\"q\"]}')),",
    "  output_schema = type_object(total = type_number()))",
    "empty <- tool(function() 1, 'No arguments.', name = 'empty')",
    "mcp_server(list(all_types, complete, empty))"
  )
  lines <- serve_lines(code, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
  listed <- response(lines, 1)
  expect_match(listed, paste0(
    '"inputSchema":{"type":"object","properties":{',
    '"flag":{"type":"boolean","description":"F."},"n":{"type":"integer"},"x":{"type":"number"},',
    '"s":{"type":"string"},"unit":{"type":"string","enum":["only"]},',
    '"ids":{"type":"array","description":"Ids.","items":{"type":"integer"}},',
    '"opts":{"type":"object","description":"Options.","properties":{"depth":{"type":"integer"},',
    '"inner":{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],',
    '"additionalProperties":true}},"required":["depth","inner"],"additionalProperties":false},',
    '"raw":{"oneOf":[{"type":"string"},{"type":"null"}],"default":{},"examples":[]}},',
    '"required":["flag","x","s","unit","ids","opts","raw"],"additionalProperties":false}'
  ), fixed = TRUE)
  expect_match(listed, paste0(
    '"inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",',
    '"$defs":{"q":{"type":"string","minLength":300000}},"properties":{"q":{"$ref":"#/$defs/q"}},',
    '"required":["q"]}'
  ), fixed = TRUE)
  expect_match(listed, paste0(
    '"outputSchema":{"type":"object","properties":{"total":{"type":"number"}},',
    '"required":["total"],"additionalProperties":false}'
  ), fixed = TRUE)
  expect_match(listed, '"name":"empty","description":"No arguments.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}', fixed = TRUE)
  expect_false(grepl("hidden", listed, fixed = TRUE))
})

test_that("annotations reach the wire in camelCase", {
  skip_on_cran()
  code <- c(
    "t <- tool(function() 1, 'A.', name = 'a', annotations = list(",
    "  title = 'Tool A', read_only_hint = TRUE, destructive_hint = FALSE,",
    "  idempotentHint = TRUE, open_world_hint = FALSE))",
    "mcp_server(t)"
  )
  listed <- response(serve_lines(code, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), 1)
  expect_match(listed, paste0(
    '"annotations":{"title":"Tool A","readOnlyHint":true,"destructiveHint":false,',
    '"idempotentHint":true,"openWorldHint":false}'
  ), fixed = TRUE)
  expect_false(grepl("_hint", listed, fixed = TRUE))
})

test_that("content blocks reach the wire with MCP names", {
  skip_on_cran()
  code <- c(
    "t <- tool(function() tool_result(list(",
    "  content_text('Hi.', annotations = list(audience = 'user', priority = 0.5,",
    "    last_modified = '2025-01-02T03:04:05Z'), meta = list(`example.com/k` = 'v')),",
    "  content_image('AA==', 'image/png'),",
    "  content_resource('memo://1', text = 'note', mime_type = 'text/plain')",
    "), is_error = TRUE), 'Blocks.', name = 'blocks')",
    "mcp_server(t)"
  )
  called <- response(serve_lines(code, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blocks","arguments":{}}}'), 1)
  expect_match(called, paste0(
    '{"type":"text","text":"Hi.","annotations":{"audience":["user"],"priority":0.5,',
    '"lastModified":"2025-01-02T03:04:05Z"},"_meta":{"example.com/k":"v"}}'
  ), fixed = TRUE)
  expect_match(called, '{"type":"image","data":"AA==","mimeType":"image/png"}', fixed = TRUE)
  expect_match(called, '"resource":{"uri":"memo://1"', fixed = TRUE)
  expect_match(called, '"isError":true', fixed = TRUE)
})

test_that("resource links and audio reach the wire with MCP names", {
  skip_on_cran()
  code <- c(
    "t <- tool(function() tool_result(list(",
    "  content_resource_link('file:///tmp/r.csv', 'r.csv', title = 'R', description = 'Rows.',",
    "    mime_type = 'text/csv', size = 2048),",
    "  content_audio('UklGRg==', 'audio/wav', annotations = list(audience = c('user', 'assistant')))",
    ")), 'Links.', name = 'links')",
    "mcp_server(t)"
  )
  called <- response(serve_lines(code, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"links","arguments":{}}}'), 1)
  expect_match(called, paste0(
    '{"type":"resource_link","uri":"file:///tmp/r.csv","name":"r.csv","title":"R",',
    '"description":"Rows.","mimeType":"text/csv","size":2048}'
  ), fixed = TRUE)
  expect_match(called, paste0(
    '{"type":"audio","data":"UklGRg==","mimeType":"audio/wav",',
    '"annotations":{"audience":["user","assistant"]}}'
  ), fixed = TRUE)
})

test_that("ellmer tools are listed and called like mcplite tools", {
  skip_on_cran()
  skip_if_not_installed("ellmer")
  code <- c(
    "total <- ellmer::tool(function(values) sum(values), name = 'total',",
    "  description = 'Sum.', arguments = list(values = ellmer::type_array(ellmer::type_number())))",
    "mcp_server(list(total))"
  )
  lines <- serve_lines(code, c(
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"total","arguments":{"values":[1,2,3.5]}}}'
  ))
  expect_match(response(lines, 1), paste0(
    '"inputSchema":{"type":"object","properties":{"values":{"type":"array",',
    '"items":{"type":"number"}}},"required":["values"],"additionalProperties":false}'
  ), fixed = TRUE)
  # sum() needs an atomic vector: ellmer's conversion of the JSON array ran.
  expect_match(response(lines, 2), '"text":"6.5"', fixed = TRUE)
})

test_that("structured content and its generated text reach the wire", {
  skip_on_cran()
  skip_if_not(exists("rust_to_json", envir = asNamespace("mcplite"), inherits = FALSE), "rust_to_json() not merged yet")
  code <- c(
    "options(mcplite.json.auto_unbox = FALSE)",
    "stats <- tool(function() tool_result(structured_content = list(total = 6.5, items = list())),",
    "  'Stats.', name = 'stats', output_schema = type_object(total = type_number()))",
    "empty <- tool(function() tool_result(structured_content = list()), 'Empty.', name = 'empty')",
    "mcp_server(list(stats, empty))"
  )
  lines <- serve_lines(code, c(
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stats","arguments":{}}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"empty","arguments":{}}}'
  ))
  stats <- response(lines, 1)
  expect_match(stats, '"content":[{"type":"text","text":"{\\"total\\":[6.5],\\"items\\":[]}"}]', fixed = TRUE)
  expect_match(stats, '"structuredContent":{"total":[6.5],"items":[]}', fixed = TRUE)
  empty <- response(lines, 2)
  expect_match(empty, '"content":[{"type":"text","text":"{}"}]', fixed = TRUE)
  expect_match(empty, '"structuredContent":{}', fixed = TRUE)
})

test_that("schemas neither coerce nor validate what clients send", {
  skip_on_cran()
  code <- c(
    "kind <- tool(function(x, y = 'default') paste(class(x), y), 'Kind.', name = 'kind',",
    "  arguments = list(x = type_array(type_integer()), y = type_string(required = FALSE)))",
    "mcp_server(kind)"
  )
  lines <- serve_lines(code, c(
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kind","arguments":{"x":[1,2]}}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"kind","arguments":{"x":"oops","y":"given"}}}'
  ))
  # JSON arrays arrive as R lists; the R default fills an omitted argument.
  expect_match(response(lines, 1), '"text":"list default"', fixed = TRUE)
  # A value that does not match the schema still reaches the function.
  expect_match(response(lines, 2), '"text":"character given"', fixed = TRUE)
})

test_that("structured JSON is sent as built, and checked once R code has changed it", {
  skip_on_cran()
  # tool_result() keeps its JSON where R code cannot change it, and the
  # server sends those bytes as they are. Once a tool has changed the text
  # (here in a copy it returns), the server checks it like any R string.
  code <- c(
    "df <- data.frame(id = 1:3, s = c('a\"b', 'line\\nbreak', '</x>'), v = c(0.5, NA, 2))",
    "plain <- tool(function() tool_result(structured_content = list(rows = df)), 'Plain.', name = 'plain')",
    "read <- tool(function() { r <- tool_result(structured_content = list(rows = df)); nchar(r$structured_json); r },",
    "  'Read first.', name = 'read')",
    "edited <- tool(function() { r <- tool_result(structured_content = df);",
    "  r$structured_json[1] <- '{\"edited\":true}'; r$content[[1]]$text[1] <- 'edited'; r },",
    "  'Edited.', name = 'edited')",
    "broken <- tool(function() { r <- tool_result(structured_content = list(a = 1));",
    "  r$structured_json[1] <- '{\"a\":1}\\n{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}'; r },",
    "  'Broken.', name = 'broken')",
    "bare <- tool(function() tool_result(structured_content = list(rows = df))$structured_json, 'Bare.', name = 'bare')",
    "mcp_server(list(plain, read, edited, broken, bare))"
  )
  call <- function(id, name) {
    sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{}}}', id, name)
  }
  lines <- serve_lines(code, c(call(1, "plain"), call(2, "read"), call(3, "edited"), call(4, "broken"), call(5, "bare")))
  expect_length(lines, 6)
  # By id (the data itself holds "id":1, so no text search).
  answers <- lapply(lines, jsonlite::fromJSON, simplifyVector = FALSE)
  ids <- vapply(answers, function(a) a$id, numeric(1))
  line_of <- function(id) lines[[which(ids == id)]]
  result_of <- function(id) answers[[which(ids == id)]]$result
  want <- '{"rows":[{"id":1,"s":"a\\"b","v":0.5},{"id":2,"s":"line\\nbreak"},{"id":3,"s":"<\\/x>","v":2}]}'
  for (id in 1:2) {
    r <- result_of(id)
    expect_identical(r$content[[1]]$text, want)
    expect_identical(r$structuredContent, jsonlite::fromJSON(want, simplifyVector = FALSE))
    expect_false(r$isError)
  }
  expect_match(line_of(1), paste0(',"structuredContent":', want, ','), fixed = TRUE)
  expect_identical(line_of(1), sub('"id":2,', '"id":1,', line_of(2), fixed = TRUE))
  r <- result_of(3)
  expect_identical(r$content[[1]]$text, "edited")
  expect_identical(r$structuredContent, list(edited = TRUE))
  r <- result_of(4)
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "`structured_json` is not the compact JSON", fixed = TRUE)
  expect_false(any(grepl('"id":99', lines, fixed = TRUE)))
  r <- result_of(5)
  expect_identical(r$content[[1]]$text, want)
})
