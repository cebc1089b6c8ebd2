test_that("errors carry the root class, a specific class, the argument and a short call", {
  cnd <- tryCatch(type_string(required = 1), error = identity)
  expect_s3_class(cnd, c("mcplite_error_schema", "mcplite_error", "error", "condition"), exact = TRUE)
  expect_equal(cnd$arg, "required")
  expect_equal(deparse(conditionCall(cnd)), "type_string()")

  cnd <- tryCatch(tool(function(x) x, "d", name = "bad name"), error = identity)
  expect_s3_class(cnd, "mcplite_error_argument")
  expect_equal(cnd$arg, "name")
  expect_equal(deparse(conditionCall(cnd)), "tool()")
})

test_that("each kind of error has its own class", {
  expect_error(tool(function() 1, 1, name = "x"), class = "mcplite_error_argument")
  expect_error(type_enum(list()), class = "mcplite_error_schema")
  expect_error(content_text(1), class = "mcplite_error_content")
  expect_error(tool_result(structured_content = new.env()), class = "mcplite_error_serialize")
  expect_error(server_specs(list()), class = "mcplite_error_tools")
  old <- options(mcplite.json.na = 1)
  on.exit(options(old))
  expect_error(payload_options(), class = "mcplite_error_option")
})

test_that("values are described in messages", {
  expect_equal(describe_value(NULL), "NULL")
  expect_equal(describe_value("a"), "the character value \"a\"")
  expect_equal(describe_value(NA), "a missing logical value (NA)")
  expect_equal(describe_value(1:3), "an integer vector of length 3")
  expect_equal(describe_value(list(1)), "a list of length 1")
  expect_equal(describe_value(mean), "a function")
  expect_equal(describe_value(factor("a")), "an object of class <factor>")
})

test_that("an author's mistake at the top of a script stops Rscript with the author's call, no internal call chain", {
  skip_if_no_mcplite_child()
  scripts <- list(
    c("library(mcplite)", "t <- tool(function(x) x, 'Echo.', name = 'bad name')"),
    c("library(mcplite)", "t <- tool(function(x) x, 'Echo.', name = 'echo', arguments = list(x = type_array('x')))"),
    c("ok <- mcplite::tool(function() 1, 'One.', name = 'one')", "mcplite::mcp_server(ok, workers = 'several')"),
    c("make <- function() mcplite::tool(1, 'One.', name = 'one')", "make()")
  )
  for (code in scripts) {
    path <- tempfile("top-error-", fileext = ".R")
    writeLines(code, path)
    res <- processx::run(mcp_rscript(), c("--vanilla", path), env = c("current", child_env()),
                         error_on_status = FALSE)
    expect_identical(res$status, 1L)
    expect_false(grepl("Calls:", res$stderr, fixed = TRUE), info = res$stderr)
    expect_false(grepl("abort_mcplite|check_|workers_config", res$stderr), info = res$stderr)
    expect_snapshot(cat(res$stderr))
  }
})

test_that("messages describe values with the core's words, and R prints a single value", {
  # describe_value() and quote_names() are the core's (r::describe_for_r,
  # r::spec::quote_names), which the server's own messages use too.
  expect_identical(describe_value("yes"), "the character value \"yes\"")
  expect_identical(describe_value(2.5), "the numeric value 2.5")
  expect_identical(describe_value(c(a = 1L)), "the integer value 1")
  expect_identical(describe_value(NA_complex_), "a missing complex value (NA)")
  expect_identical(describe_value(I(TRUE)), "the logical value TRUE")
  expect_identical(describe_value(structure(1L, class = "integer")), "the integer value 1")
  expect_identical(describe_value(factor("a")), "an object of class <factor>")
  expect_identical(describe_value(mtcars), "a data frame")
  expect_identical(describe_value(formals(function(a, b) NULL)), "a list of length 2")
  expect_identical(describe_value(quote(f(x))), "an object of type 'language'")
  expect_identical(describe_value(list()), "an empty list")
  expect_identical(describe_value(strrep("x", 50)), paste0("the character value \"", strrep("x", 37), "...\""))
  # A long lazy vector is described, not made.
  expect_identical(describe_value(seq_len(1e10)), "a numeric vector of length 10000000000")
  expect_identical(quote_names(c("a", NA, "c")), "`a`, `NA` and `c`")
  expect_identical(quote_names(1.5), "`1.5`")
})
