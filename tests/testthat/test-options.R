test_that("payload options have jsonlite-like defaults", {
  withr_opts <- options(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  )
  on.exit(options(withr_opts))
  expect_identical(
    payload_options(),
    list(null = "null", na = NA_character_, auto_unbox = TRUE, digits = 4L, signif = FALSE)
  )
})

test_that("each payload option is read", {
  old <- options(
    mcplite.json.null = "list", mcplite.json.na = "string",
    mcplite.json.auto_unbox = FALSE, mcplite.json.digits = I(6)
  )
  on.exit(options(old))
  expect_identical(
    payload_options(),
    list(null = "list", na = "string", auto_unbox = FALSE, digits = 6L, signif = TRUE)
  )
  options(mcplite.json.na = "null", mcplite.json.digits = NA)
  opts <- payload_options()
  expect_identical(opts$na, "null")
  expect_identical(opts$digits, NA_integer_)
  expect_false(opts$signif)
  options(mcplite.json.digits = 0L)
  expect_identical(payload_options()$digits, 0L)
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
