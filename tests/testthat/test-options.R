# The options reach the core as set (NULL when unset), and the core reads
# them as jsonlite reads the same arguments.
payload_json <- function(x) json_payload(x, payload_options())

test_that("payload options have jsonlite-like defaults", {
  skip_if_not_installed("jsonlite")
  withr_opts <- options(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  )
  on.exit(options(withr_opts))
  expect_identical(
    payload_options(),
    list(null = NULL, na = NULL, auto_unbox = NULL, digits = NULL)
  )
  x <- list(third = 1 / 3, none = NULL, missing = c(NA, 1.5), label = NA_character_, one = 2L)
  expect_identical(
    payload_json(x),
    as.character(jsonlite::toJSON(x, null = "null", auto_unbox = TRUE, digits = 4))
  )
})

test_that("each payload option is read", {
  skip_if_not_installed("jsonlite")
  old <- options(
    mcplite.json.null = "list", mcplite.json.na = "string",
    mcplite.json.auto_unbox = FALSE, mcplite.json.digits = I(6)
  )
  on.exit(options(old))
  x <- list(third = 1 / 3, big = 123456.789, none = NULL, missing = c(NA, 1.5), label = NA_character_)
  expect_identical(
    payload_json(x),
    as.character(jsonlite::toJSON(x, null = "list", na = "string", auto_unbox = FALSE, digits = I(6)))
  )
  options(mcplite.json.na = "null", mcplite.json.digits = NA)
  expect_identical(
    payload_json(x),
    as.character(jsonlite::toJSON(x, null = "list", na = "null", auto_unbox = FALSE, digits = NA))
  )
  options(mcplite.json.digits = 0L)
  expect_identical(
    payload_json(x),
    as.character(jsonlite::toJSON(x, null = "list", na = "null", auto_unbox = FALSE, digits = 0))
  )
})

test_that("invalid payload options are classed errors", {
  on.exit(options(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  ))
  options(mcplite.json.null = "NULL")
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.null = NULL, mcplite.json.na = NA)
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.na = "NA")
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.na = NULL, mcplite.json.auto_unbox = "true")
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.auto_unbox = NULL, mcplite.json.digits = 2.5)
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.digits = 16)
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.digits = I(0))
  expect_snapshot(error = TRUE, payload_options())
  options(mcplite.json.digits = "4")
  expect_error(payload_options(), class = "mcplite_error_option")
})

test_that("tool_result() applies the payload options when it is built", {
  on.exit(options(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  ))
  value <- list(count = 1L, values = c(NA_real_, NaN, Inf, -Inf), missing = NULL, pi = pi)
  expect_equal(
    tool_result(structured_content = value)$structured_json,
    '{"count":1,"values":["NA","NaN","Inf","-Inf"],"missing":null,"pi":3.1416}'
  )
  options(mcplite.json.na = "null", mcplite.json.auto_unbox = FALSE,
          mcplite.json.null = "list", mcplite.json.digits = I(3))
  r <- tool_result(structured_content = value)
  expect_equal(r$structured_json, '{"count":[1],"values":[null,null,null,null],"missing":{},"pi":[3.14]}')
  expect_equal(r$content[[1]]$text, r$structured_json)
  options(mcplite.json.digits = NA)
  expect_equal(tool_result(structured_content = list(pi = pi))$structured_json, '{"pi":[3.14159265358979]}')
  # The structured result is computed once: later option changes do not alter it.
  options(mcplite.json.auto_unbox = NULL)
  expect_equal(r$structured_json, '{"count":[1],"values":[null,null,null,null],"missing":{},"pi":[3.14]}')
})

test_that("tool_result() reports an invalid option as an option error", {
  old <- options(mcplite.json.auto_unbox = "no")
  on.exit(options(old))
  expect_snapshot(error = TRUE, tool_result(structured_content = list(a = 1)))
  # Options only matter for structured content.
  expect_s3_class(tool_result(content_text("a")), "mcplite_tool_result")
})
