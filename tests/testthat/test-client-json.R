# What mcp_client() gives R for the JSON a server sends: one mapping (the
# core's reader and r::args, as tool arguments get), whether the value came
# in an answer, a notification or a progress notification, with no JSON
# text written and read again on the way.

# JSON of many shapes, and the R value each becomes (objects are named
# lists, `{}` keeps empty names, arrays are unnamed lists, integers that fit
# R's integer type are integers, every other number the nearest double).
json_shapes <- paste0(
  '{"nested":{"a":{"b":{"c":[1,{"d":null}]}}},',
  '"mixed":[1,"two",true,false,null,2.5,{"k":"v"},[]],',
  '"nulls":[null,null],"null":null,',
  '"ints":[0,-0,2147483647,-2147483647,-2147483648,2147483648],',
  '"big":[9007199254740993,12345678901234567890,1e400,-1e400,1e-400,1.7976931348623157e308],',
  '"decimals":[0.1,1.5e3,-2.25,1E2],',
  '"unicode":"\\u00e9 \\u2603 \\ud83d\\ude00 ', "\u00e9\u2603\U0001F600", '",',
  '"lone":"\\ud800x","escapes":"tab\\tnl\\nq\\"b\\\\",',
  '"empty_object":{},"empty_array":[],"in_array":[{},[]],',
  '"dup":{"a":1,"a":2},"":{"":"empty name"}}'
)
json_shapes_r <- list(
  nested = list(a = list(b = list(c = list(1L, list(d = NULL))))),
  mixed = list(1L, "two", TRUE, FALSE, NULL, 2.5, list(k = "v"), list()),
  nulls = list(NULL, NULL), null = NULL,
  ints = list(0L, 0L, 2147483647L, -2147483647L, -2147483648, 2147483648),
  big = list(9007199254740992, 12345678901234567890, Inf, -Inf, 0, 1.7976931348623157e308),
  decimals = list(0.1, 1500, -2.25, 100),
  unicode = "\u00e9 \u2603 \U0001F600 \u00e9\u2603\U0001F600",
  lone = "\ufffdx", escapes = "tab\tnl\nq\"b\\",
  empty_object = structure(list(), names = character()), empty_array = list(),
  in_array = list(structure(list(), names = character()), list()),
  dup = list(a = 1L, a = 2L), list("empty name")
)
names(json_shapes_r)[[length(json_shapes_r)]] <- ""
names(json_shapes_r[[length(json_shapes_r)]]) <- ""

test_that("results, notifications and progress of any JSON shape become the same R values", {
  skip_on_cran()
  skip_on_os("windows")
  shapes_file <- tempfile("shapes-", fileext = ".json")
  writeBin(charToRaw(json_shapes), shapes_file)
  # Two progress notifications carrying the shapes (the token is the
  # request's id), then the answer carrying them in its structured content.
  progress <- '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"shape":%s}}'
  server <- scripted_server(
    prelude = sprintf('shapes <- rawToChar(readBin("%s", "raw", 1e6)); Encoding(shapes) <- "UTF-8"', shapes_file),
    answer = c(
      sprintf("send(sprintf('%s', id, 1L, shapes))", progress),
      sprintf("send(sprintf('%s', id, 2L, shapes))", progress),
      "send(sprintf('{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[],\"structuredContent\":%s}}', id, shapes))"
    )
  )
  client <- local_mcp_client(server, timeout = 60)
  seen <- list()
  res <- client$call("t", progress = function(progress, total, message) seen[[length(seen) + 1]] <<- progress)
  expect_identical(res$structuredContent, json_shapes_r)
  expect_identical(seen, list(1L, 2L))
  recorded <- client$progress()
  expect_length(recorded, 2)
  for (p in recorded) expect_identical(p$shape, json_shapes_r)
  notes <- client$notifications()
  expect_length(notes, 2)
  for (n in notes) expect_identical(n$params$shape, json_shapes_r)
  # The progress of a call in flight beside others: read the same way.
  h <- client$call_async("t", progress = TRUE)
  expect_identical(h$wait()$structuredContent, json_shapes_r)
  expect_length(h$progress(), 2)
  for (p in h$progress()) expect_identical(p$shape, json_shapes_r)
  client$close()
})

test_that("a tool's structured content comes back as the JSON its text copy holds, read by jsonlite", {
  skip_if_no_mcplite_child()
  skip_if_not_installed("jsonlite")
  server <- server_script(c(
    "library(mcplite)",
    "options(mcplite.json.digits = NA)",
    "value <- list(",
    "  frame = data.frame(id = 1:3, score = c(0.5, NA, 1e10), name = c('a', NA, '\\u00e9\\u2603'), ok = c(TRUE, FALSE, NA)),",
    "  nested = list(a = list(b = list(c = I(1:2))), empty_object = structure(list(), names = character()), empty_array = list()),",
    "  mixed = list(1L, 'two', TRUE, NULL, 2.5, list(k = 'v')), big = 2^60, huge = 1e300, tiny = -1e-300,",
    "  ints = c(.Machine$integer.max, -.Machine$integer.max), unicode = '\\u00e9 \\U0001F600 \\t\\n\"\\\\',",
    "  matrix = matrix(1:6, 2), date = as.Date('2025-01-31'), factor = factor(c('lo', 'hi'))",
    ")",
    "mcp_server(list(",
    "  tool(function() tool_result(structured_content = value), 'Shapes.', name = 'structured'),",
    "  tool(function() value, 'Shapes as text.', name = 'text')",
    "))"
  ))
  client <- local_mcp_client(server, env = child_env(), timeout = 60)
  res <- client$call("structured")
  sent <- jsonlite::parse_json(res$content[[1]]$text, simplifyVector = FALSE)
  expect_identical(res$structuredContent, sent)
  # The answer line as the server wrote it, read by jsonlite: the same.
  line <- jsonlite::parse_json(client$.state()$last_response, simplifyVector = FALSE)
  expect_identical(line$result$structuredContent, res$structuredContent)
  expect_identical(res$structuredContent$big, as.numeric(sprintf("%.15g", 2^60)))
  expect_identical(res$structuredContent$nested$empty_object, structure(list(), names = character()))
  expect_identical(res$structuredContent$nested$empty_array, list())
  # An ordinary value, sent as text only, is that same JSON.
  text <- client$call("text")
  expect_null(text$structuredContent)
  expect_identical(jsonlite::parse_json(text$content[[1]]$text, simplifyVector = FALSE), sent)
})
