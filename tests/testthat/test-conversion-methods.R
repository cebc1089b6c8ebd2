# R methods the serializer calls while it converts a result (as.character()
# for "hms"; date-times go through base R's own format methods, whatever
# subclass they carry) may be the author's own and misbehave:
# fail, warn, give the wrong type or the wrong number of strings. The call
# gets a tool error that says which method did what (never values padded
# with nulls or dropped), a warning changes nothing, and the server goes on.
# (A method that calls quit() there: test-hostile-shutdown.R; all of them at
# random: tests/fuzz/fuzz-r.mjs.)

test_that("a conversion method that misbehaves is a tool error naming it, and the server goes on", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    "as.character.hms <- function(x, ...) switch(attr(x, 'mode'), short = character(), wrong = list(1, 'a'),",
    "  number = 42, fail = stop('the method failed'), warn = { warning('a warning'); format(unclass(x)) })",
    "format.oddtime <- function(x, ...) stop('not called')",
    "hms <- function(mode) structure(c(61, NA, 3600), units = 'secs', class = c('hms', 'difftime'), mode = mode)",
    "oddtime <- function(mode) structure(1.7e9 + 0:2, class = c('oddtime', 'POSIXct', 'POSIXt'), tzone = 'UTC', mode = mode)",
    "mcplite::mcp_server(list(",
    "  mcplite::tool(function(mode) hms(mode), 'hms', name = 'hms', arguments = list(mode = mcplite::type_string())),",
    "  mcplite::tool(function(mode) data.frame(id = 1:3, took = I(hms(mode))), 'hms column', name = 'hms_column',",
    "                arguments = list(mode = mcplite::type_string())),",
    "  mcplite::tool(function(mode) oddtime(mode), 'time', name = 'time', arguments = list(mode = mcplite::type_string()))",
    "))"
  ))
  client <- checked_client(script, env = child_env())
  text <- function(r) paste(vapply(r$content, function(b) b$text, ""), collapse = "\n")
  cases <- list(
    list("hms", "short", "as.character\\(\\) gave 0 strings for 3 values"),
    list("hms", "number", "as.character\\(\\) gave 1 strings for 3 values"),
    list("hms", "wrong", "as.character\\(\\) gave 2 strings for 3 values"),
    list("hms", "fail", "the method failed"),
    list("hms_column", "short", "0 strings for 3 values|has 0 values for 3 rows"),
    list("hms_column", "number", "1 strings for 3 values|has 1 values for 3 rows"),
    list("hms_column", "fail", "the method failed")
  )
  for (case in cases) {
    r <- client$call(case[[1]], list(mode = case[[2]]))
    label <- paste(case[[1]], case[[2]], text(r))
    expect_true(isTRUE(r$isError), label = label)
    expect_match(text(r), case[[3]], label = label)
    validate_last(client, "CallToolResult")
  }
  # A date-time subclass is formatted as a date-time: its own format()
  # method is not called (as jsonlite does).
  r <- client$call("time", list(mode = "fail"))
  expect_false(isTRUE(r$isError))
  expect_match(text(r), "2023-11-14 22:13:20", fixed = TRUE)
  # A warning is not a failure: the value goes out.
  r <- client$call("hms", list(mode = "warn"))
  expect_false(isTRUE(r$isError))
  expect_match(text(r), "3600")
  expect_length(client$request("ping"), 0)
})
