test_that("tool_result() keeps explicit content as given", {
  r <- tool_result(content_text("Done."))
  expect_s3_class(r, "mcplite_tool_result")
  expect_equal(names(r), c("content", "structured_content", "structured_json", "is_error", "meta"))
  expect_length(r$content, 1)
  expect_equal(r$content[[1]]$text, "Done.")
  expect_null(r$structured_content)
  expect_null(r$structured_json)
  expect_false(r$is_error)
  expect_equal(json_fixed(r$meta), "{}")

  blocks <- list(content_text("a"), content_image("AA==", "image/png"), content_audio("BB==", "audio/wav"))
  r <- tool_result(blocks)
  expect_equal(vapply(r$content, function(b) b$type, ""), c("text", "image", "audio"))
  # Structured content alone, with the text block left out on purpose.
  expect_equal(tool_result(list(), structured_content = list(n = 1))$content, list())
})

test_that("tool_result() refuses a result with nothing in it, and blocks edited by hand, as CRAN's does", {
  expect_snapshot(error = TRUE, tool_result())
  expect_snapshot(error = TRUE, tool_result(content = list()))
  expect_error(tool_result(list(), is_error = TRUE), class = "mcplite_error_content")
  # Blocks of each type missing a field its type needs, or with a field of
  # the wrong kind: each is named.
  forge <- function(block, field, value = NULL) {
    block[field] <- list(value)
    if (is.null(value)) block[[field]] <- NULL
    block
  }
  broken <- list(
    forge(content_text("a"), "text"),
    forge(content_text("a"), "text", 1),
    forge(content_text("a"), "text", c("a", "b")),
    forge(content_text("a"), "text", NA_character_),
    forge(content_image("AA==", "image/png"), "data"),
    forge(content_image("AA==", "image/png"), "mime_type", 42),
    forge(content_audio("AA==", "audio/wav"), "mime_type"),
    forge(content_resource_link("file:///a", "a"), "uri"),
    forge(content_resource_link("file:///a", "a"), "size", -1),
    forge(content_text("a"), "type", "video"),
    forge(content_text("a"), "type")
  )
  for (i in seq_along(broken)) {
    err <- expect_error(tool_result(list(content_text("fine"), broken[[i]])), class = "mcplite_error_content")
    expect_match(conditionMessage(err), "`content[[2]]", fixed = TRUE)
  }
  expect_snapshot(error = TRUE, tool_result(broken[[1]]))
  expect_snapshot(error = TRUE, tool_result(list(content_text("fine"), broken[[10]])))
})

test_that("structured content without content generates exactly one JSON text block", {
  r <- tool_result(structured_content = list(count = 2L, mean = 1.5, tags = c("a", "b")))
  expect_equal(r$structured_json, '{"count":2,"mean":1.5,"tags":["a","b"]}')
  expect_length(r$content, 1)
  expect_s3_class(r$content[[1]], "mcplite_content_text")
  expect_equal(r$content[[1]]$text, r$structured_json)
  expect_equal(r$structured_content$count, 2L)
})

test_that("explicit content next to structured content gets no fallback", {
  r <- tool_result(content_text("Summary."), structured_content = list(n = 1L))
  expect_length(r$content, 1)
  expect_equal(r$content[[1]]$text, "Summary.")
  expect_equal(r$structured_json, '{"n":1}')
  r <- tool_result(list(), structured_content = list(n = 1L))
  expect_length(r$content, 0)
})

test_that("a bare empty list at the structured root is an empty object", {
  r <- tool_result(structured_content = list())
  expect_equal(r$structured_json, "{}")
  expect_equal(r$content[[1]]$text, "{}")
  # Nested empty lists keep jsonlite's [] mapping.
  r <- tool_result(structured_content = list(items = list()))
  expect_equal(r$structured_json, '{"items":[]}')
})

test_that("structured values follow jsonlite conventions", {
  r <- tool_result(structured_content = data.frame(id = 1:2, name = c("a", "b")))
  expect_equal(r$structured_json, '[{"id":1,"name":"a"},{"id":2,"name":"b"}]')
  r <- tool_result(structured_content = list(x = pi, s = '{"not":"parsed"}'))
  expect_equal(r$structured_json, '{"x":3.1416,"s":"{\\"not\\":\\"parsed\\"}"}')
  r <- tool_result(structured_content = list(one = I(1L)))
  expect_equal(r$structured_json, '{"one":[1]}')
})

test_that("unserializable structured content fails when the result is built", {
  expect_error(tool_result(structured_content = list(e = new.env())),
               class = "mcplite_error_serialize")
  expect_error(tool_result(structured_content = new.env()), class = "mcplite_error")
})

test_that("values with no JSON mapping say what to return instead", {
  fit <- summary(lm(mpg ~ wt, data = mtcars))
  expect_snapshot(error = TRUE, tool_result(structured_content = fit))
  expect_snapshot(error = TRUE, tool_result(structured_content = list(env = new.env())))
  expect_snapshot(error = TRUE, tool_result(structured_content = list(call = quote(f(x)))))
  expect_snapshot(error = TRUE, tool_result(structured_content = list(f = mean)))
})

test_that("is_error and meta", {
  r <- tool_result(content_text("No such file."), is_error = TRUE, meta = list(`example.com/trace` = "abc"))
  expect_true(r$is_error)
  expect_equal(json_fixed(r$meta), '{"example.com/trace":"abc"}')
})

test_that("tool_result() rejects bad arguments", {
  expect_snapshot(error = TRUE, tool_result("Done."))
  expect_snapshot(error = TRUE, tool_result(list(content_text("a"), "b")))
  expect_snapshot(error = TRUE, tool_result(list(type = "text", text = "a")))
  expect_snapshot(error = TRUE, tool_result(content_text("a"), is_error = "yes"))
  expect_snapshot(error = TRUE, tool_result(content_text("a"), is_error = NA))
  expect_snapshot(error = TRUE, tool_result(content_text("a"), meta = list(1, 2)))
  expect_snapshot(error = TRUE, tool_result(content_text("a"), meta = TRUE))
})

test_that("results print their blocks", {
  expect_snapshot(tool_result(structured_content = list(ok = TRUE), is_error = TRUE))
})

test_that("results and blocks print the fields they have, read by exact names", {
  # Hand-edited objects whose only keys are longer names: `$` would have
  # matched them partially and printed them as the real fields.
  r <- tool_result(content_text("a"))
  r$is_error <- NULL
  r$is_errorish <- TRUE
  r$meta <- NULL
  r$metadata <- list(k = "v")
  out <- capture.output(print(r))
  expect_identical(out[[1]], "<mcplite tool result> 1 content block")
  expect_false(any(grepl("Meta", out)))
  b <- content_text("b")
  b$meta <- NULL
  b$metadata <- list(k = "v")
  b$annotations <- NULL
  b$annotations_extra <- list(priority = 1)
  out <- capture.output(print(b))
  expect_false(any(grepl("meta:|annotations:", out)))
})

test_that("the structured JSON behaves as an ordinary string in R", {
  # tool_result() holds the JSON as a string R makes only when R code reads
  # it; every base operation must see the same string as before.
  df <- data.frame(id = 1:3, name = c("a", "caf\u00e9", NA), v = c(1.5, NA, -2))
  want <- as.character(jsonlite::toJSON(df, auto_unbox = TRUE, null = "null"))
  r <- tool_result(structured_content = df)
  json <- r$structured_json
  expect_identical(json, want)
  expect_identical(r$content[[1]]$text, json)
  expect_identical(Encoding(json), "UTF-8")
  expect_identical(nchar(json), nchar(want))
  expect_false(is.na(json))
  expect_true(json == want)
  expect_true(json %in% c("x", want))
  expect_identical(unique(c(json, want)), want)
  expect_identical(sort(c(json, "a")), sort(c(want, "a")))
  expect_identical(paste0(json, "!"), paste0(want, "!"))
  expect_identical(substr(json, 1, 8), '[{"id":1')
  expect_identical(enc2native(enc2utf8(json)), enc2native(want))
  expect_identical(jsonlite::fromJSON(json)$name, c("a", "caf\u00e9", NA))
  expect_identical(unserialize(serialize(r, NULL)), r)
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(r, path)
  expect_identical(readRDS(path)$structured_json, want)
})

test_that("changing a copy of the structured JSON leaves the result alone", {
  r <- tool_result(structured_content = list(a = 1))
  x <- r$structured_json
  x[1] <- "changed"
  expect_identical(x, "changed")
  y <- r$content[[1]]$text
  Encoding(y) <- "latin1"
  r2 <- r
  r2$structured_json[1] <- "{\"b\":2}"
  expect_identical(r2$structured_json, "{\"b\":2}")
  expect_identical(r$structured_json, "{\"a\":1}")
  expect_identical(r$content[[1]]$text, "{\"a\":1}")
  expect_identical(r2$content[[1]]$text, "{\"a\":1}")
})

test_that("an edit of structured_content is sent, with the text block generated from it", {
  skip_on_cran()
  # structured_content is the one source: its JSON (structured_json, and the
  # generated text block) is sent as written while the value is the one it
  # was written from, and written again by the server once the tool changed
  # the value, whichever way. Before, the edit was silently ignored.
  code <- c(
    "base <- function(...) tool_result(..., structured_content = list(total = 5, items = list('a')))",
    "t <- function(name, f) tool(f, paste0(name, '.'), name = name)",
    "tools <- list(",
    "  t('nested', function() { r <- base(); r$structured_content$total <- 7; r }),",
    "  t('swapped', function() { r <- base(content_text('Rows.')); r[['structured_content']] <- list(rows = data.frame(a = 1:2)); r }),",
    "  t('listed', function() { r <- base(); r['structured_content'] <- list(list(n = 1L)); r }),",
    "  t('modified', function() utils::modifyList(base(), list(structured_content = list(total = 6)))),",
    "  t('bypass', function() {",
    "    r <- unclass(base()); r$structured_content$total <- 9; structure(r, class = 'mcplite_tool_result') }),",
    "  t('removed', function() { r <- base(content_text('Said.')); r$structured_content <- NULL; r }),",
    "  t('emptied', function() { r <- base(); r$structured_content <- NULL; r }),",
    "  t('unwritable', function() { r <- base(); r$structured_content$e <- new.env(); r }),",
    # Written with one decimal: unchanged (even in a copy), it is sent as
    # written; changed, it is written again with the server's options.
    "  t('as_built', function() {",
    "    old <- options(mcplite.json.digits = 1); on.exit(options(old))",
    "    r <- tool_result(structured_content = list(x = pi)); r2 <- r; r2$is_error <- FALSE; r2 }),",
    "  t('edited_later', function() {",
    "    old <- options(mcplite.json.digits = 1); r <- tool_result(structured_content = list(x = pi))",
    "    options(old); r$structured_content$y <- 1L; r })",
    ")",
    "mcp_server(tools)"
  )
  names <- c("nested", "swapped", "listed", "modified", "bypass", "removed", "emptied", "unwritable",
             "as_built", "edited_later")
  call <- function(id, name) {
    sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{}}}', id, name)
  }
  lines <- serve_lines(code, vapply(seq_along(names), function(i) call(i, names[[i]]), ""))
  answers <- lapply(lines, jsonlite::fromJSON, simplifyVector = FALSE)
  by_name <- setNames(lapply(seq_along(names), function(i) {
    answers[[which(vapply(answers, function(a) identical(a$id, i), TRUE))]]$result
  }), names)
  sent <- function(name, text) {
    r <- by_name[[name]]
    expect_false(isTRUE(r$isError), label = name)
    expect_identical(r$content[[1]]$text, text, label = name)
    expect_identical(r$structuredContent, jsonlite::parse_json(text), label = name)
  }
  sent("nested", '{"total":7,"items":["a"]}')
  sent("modified", '{"total":6,"items":["a"]}')
  sent("bypass", '{"total":9,"items":["a"]}')
  sent("listed", '{"n":1}')
  sent("as_built", '{"x":3.1}')
  sent("edited_later", '{"x":3.1416,"y":1}')
  # The author's own block stays as given.
  r <- by_name$swapped
  expect_identical(r$content[[1]]$text, "Rows.")
  expect_identical(r$structuredContent, list(rows = list(list(a = 1L), list(a = 2L))))
  r <- by_name$removed
  expect_identical(r$content, list(list(type = "text", text = "Said.")))
  expect_null(r$structuredContent)
  # Nothing left to say, or nothing JSON can hold: refused, saying why.
  r <- by_name$emptied
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "it has no content", fixed = TRUE)
  r <- by_name$unwritable
  expect_true(r$isError)
  expect_snapshot(cat(r$content[[1]]$text))
})
