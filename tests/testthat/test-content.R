test_that("content_text() builds a text block with snake_case fields", {
  b <- content_text("Hello")
  expect_s3_class(b, c("mcplite_content_text", "mcplite_content"), exact = TRUE)
  expect_equal(b$type, "text")
  expect_equal(b$text, "Hello")
  expect_equal(names(b), c("type", "text", "annotations", "meta"))
  expect_equal(json_fixed(b$annotations), "{}")
  expect_equal(json_fixed(b$meta), "{}")
  expect_equal(content_text("")$text, "")
})

test_that("image and audio blocks keep data and MIME type untouched", {
  img <- content_image("not-even-base64!", "image/png")
  expect_equal(unclass(img)[c("type", "data", "mime_type")],
               list(type = "image", data = "not-even-base64!", mime_type = "image/png"))
  aud <- content_audio("UklGRg==", "audio/wav")
  expect_s3_class(aud, "mcplite_content_audio")
  expect_equal(aud$data, "UklGRg==")
  expect_equal(aud$mime_type, "audio/wav")
})

test_that("resource links carry optional fields only when given", {
  l <- content_resource_link("file:///tmp/a.csv", "a.csv")
  expect_equal(names(l), c("type", "uri", "name", "annotations", "meta"))
  l <- content_resource_link(
    "file:///tmp/a.csv", "a.csv", title = "A", description = "Data.",
    mime_type = "text/csv", size = 10L
  )
  expect_equal(
    unclass(l)[c("type", "uri", "name", "title", "description", "mime_type", "size")],
    list(type = "resource_link", uri = "file:///tmp/a.csv", name = "a.csv", title = "A",
         description = "Data.", mime_type = "text/csv", size = 10)
  )
  expect_type(l$size, "double")
  expect_equal(content_resource_link("u:x", "x", size = 0)$size, 0)
  expect_equal(content_resource_link("u:x", "x", size = 3e9)$size, 3e9)
})

test_that("embedded resources take exactly one of text and blob", {
  r <- content_resource("memo://1", text = "note", mime_type = "text/plain")
  expect_equal(names(r), c("type", "uri", "text", "mime_type", "annotations", "meta"))
  r <- content_resource("memo://2", blob = "AAEC")
  expect_equal(names(r), c("type", "uri", "blob", "annotations", "meta"))
  expect_equal(r$blob, "AAEC")
})

test_that("block annotations are validated and normalised", {
  b <- content_text("x", annotations = list(audience = "user", priority = 1L, last_modified = "2025-01-01T00:00:00Z"))
  expect_equal(
    json_fixed(b$annotations),
    '{"audience":"user","priority":1,"last_modified":"2025-01-01T00:00:00Z"}'
  )
  expect_type(b$annotations$priority, "double")
  b <- content_text("x", annotations = list(audience = c("user", "assistant"), priority = 0))
  expect_equal(json_fixed(b$annotations), '{"audience":["user","assistant"],"priority":0}')
  t <- as.POSIXct("2025-03-04 05:06:07", tz = "UTC")
  expect_equal(content_text("x", annotations = list(last_modified = t))$annotations$last_modified,
               "2025-03-04T05:06:07Z")
  expect_equal(json_fixed(content_text("x", annotations = NULL)$annotations), "{}")
})

test_that("meta is a named list sent as is", {
  b <- content_image("AA==", "image/png", meta = list(`example.com/source` = "camera", n = 2L))
  expect_equal(json_fixed(b$meta), '{"example.com/source":"camera","n":2}')
})

test_that("constructors reject bad values", {
  expect_snapshot(error = TRUE, content_text())
  expect_snapshot(error = TRUE, content_text(c("a", "b")))
  expect_snapshot(error = TRUE, content_text(NA_character_))
  expect_snapshot(error = TRUE, content_text(1))
  expect_snapshot(error = TRUE, content_image(raw(3), "image/png"))
  expect_snapshot(error = TRUE, content_image(c("AA", "BB"), "image/png"))
  expect_snapshot(error = TRUE, content_image("AA=="))
  expect_snapshot(error = TRUE, content_audio("AA==", ""))
  expect_snapshot(error = TRUE, content_audio(mime_type = "audio/wav"))
  expect_snapshot(error = TRUE, content_resource_link("u:x"))
  expect_snapshot(error = TRUE, content_resource_link("", "x"))
  expect_snapshot(error = TRUE, content_resource_link("u:x", "x", title = 1))
  expect_snapshot(error = TRUE, content_resource_link("u:x", "x", description = NA))
  expect_snapshot(error = TRUE, content_resource_link("u:x", "x", size = -1))
  expect_snapshot(error = TRUE, content_resource_link("u:x", "x", size = 1.5))
  expect_snapshot(error = TRUE, content_resource_link("u:x", "x", size = "10"))
  expect_snapshot(error = TRUE, content_resource("memo://1"))
  expect_snapshot(error = TRUE, content_resource("memo://1", text = "a", blob = "AA=="))
  expect_snapshot(error = TRUE, content_resource("memo://1", blob = 1:3))
  expect_snapshot(error = TRUE, content_resource("memo://1", text = "a", mime_type = 2))
  expect_snapshot(error = TRUE, content_resource(text = "a"))
})

test_that("annotations MCP does not define are sent as given, with a warning, as CRAN mcplite does", {
  expect_snapshot(b <- content_text("x", annotations = list(custom = list(a = 1L))))
  expect_equal(json_fixed(b$annotations), '{"custom":{"a":1}}')
  # MCP's own spelling of last_modified is the same annotation.
  b <- content_text("x", annotations = list(lastModified = "2025-01-01T00:00:00Z"))
  expect_equal(json_fixed(b$annotations), '{"last_modified":"2025-01-01T00:00:00Z"}')
  expect_snapshot(error = TRUE, content_text("x", annotations = list(lastModified = "a", last_modified = "b")))
  expect_snapshot(error = TRUE, content_text("x", annotations = list(custom = identity)))
  # Repeated roles are allowed (the schema does not forbid them).
  b <- content_text("x", annotations = list(audience = c("user", "user")))
  expect_equal(b$annotations$audience, c("user", "user"))
})

test_that("bad annotations and meta are rejected", {
  expect_snapshot(error = TRUE, content_text("x", annotations = list(audience = "everyone")))
  expect_snapshot(error = TRUE, content_text("x", annotations = list(audience = character())))
  expect_snapshot(error = TRUE, content_text("x", annotations = list(priority = 2)))
  expect_snapshot(error = TRUE, content_text("x", annotations = list(priority = NA_real_)))
  expect_snapshot(error = TRUE, content_text("x", annotations = list(last_modified = 5)))
  expect_snapshot(error = TRUE, content_text("x", annotations = list("user")))
  expect_snapshot(error = TRUE, content_text("x", annotations = "user"))
  expect_snapshot(error = TRUE, content_text("x", meta = list(1)))
  expect_snapshot(error = TRUE, content_text("x", meta = "m"))
  expect_snapshot(error = TRUE, content_text("x", meta = list(a = 1, a = 2)))
  expect_snapshot(error = TRUE, content_text("x", meta = list(f = identity)))
})

test_that("content errors have the content class", {
  expect_error(content_text(1), class = "mcplite_error_content")
  expect_error(content_text(1), class = "mcplite_error")
})

test_that("blocks print their fields", {
  expect_snapshot(content_resource_link("file:///a", "a", size = 3, annotations = list(priority = 0.5)))
})
