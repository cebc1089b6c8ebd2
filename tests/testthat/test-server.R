test_that("server_specs() builds one spec per tool, in the contract's shape", {
  add <- tool(
    function(x, y) x + y, name = "add", description = "Add.",
    arguments = list(x = type_number(), y = type_number()),
    annotations = list(title = "Adder", read_only_hint = TRUE),
    output_schema = type_object(sum = type_number())
  )
  hello <- tool(function() "hi", name = "hello", description = "Hi.")
  specs <- server_specs(list(add, hello))
  expect_length(specs, 2)
  expect_named(specs[[1]], c("name", "description", "title", "input_schema",
                             "output_schema", "annotations", "meta", "fun"))
  expect_equal(specs[[1]]$name, "add")
  # The title stays in the annotations, as CRAN mcplite sends it.
  expect_null(specs[[1]]$title)
  expect_equal(json_fixed(specs[[1]]$annotations), '{"title":"Adder","read_only_hint":true}')
  expect_equal(
    json_fixed(specs[[1]]$output_schema),
    '{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"],"additionalProperties":false}'
  )
  expect_null(specs[[2]]$title)
  expect_null(specs[[2]]$annotations)
  expect_null(specs[[2]]$output_schema)
  expect_equal(json_fixed(specs[[2]]$input_schema), '{"type":"object","properties":{},"additionalProperties":false}')
  # The spec holds a plain, callable function.
  expect_false(inherits(specs[[1]]$fun, "mcplite_tool"))
  expect_null(attr(specs[[1]]$fun, "mcplite"))
  expect_equal(specs[[1]]$fun(1, 2), 3)
})

test_that("a single tool is accepted on its own", {
  hello <- tool(function() "hi", name = "hello", description = "Hi.")
  expect_length(server_specs(hello), 1)
})

test_that("a broken tool list is rejected with a tools error", {
  hello <- tool(function() "hi", name = "hello", description = "Hi.")
  hello2 <- tool(function() "hi", name = "hello", description = "Hi again.")
  expect_snapshot(error = TRUE, server_specs(list()))
  expect_snapshot(error = TRUE, server_specs("hello"))
  expect_snapshot(error = TRUE, server_specs(function() 1))
  expect_snapshot(error = TRUE, server_specs(list(hello, function() 1)))
  expect_snapshot(error = TRUE, server_specs(list(hello, list(name = "x"))))
  expect_snapshot(error = TRUE, server_specs(list(hello, hello2, hello)))
  expect_error(server_specs(list(hello, NULL)), class = "mcplite_error_tools")
  fake <- structure(function() 1, class = c("mcplite_tool", "function"))
  expect_snapshot(error = TRUE, server_specs(list(hello, fake)))
})

test_that("mcp_server() validates before serving", {
  hello <- tool(function() "hi", name = "hello", description = "Hi.")
  expect_snapshot(error = TRUE, mcp_server())
  expect_snapshot(error = TRUE, mcp_server(list(hello, hello)))
  expect_snapshot(error = TRUE, mcp_server(hello, instructions = c("a", "b")))
  expect_snapshot(error = TRUE, mcp_server(hello, name = ""))
  expect_snapshot(error = TRUE, mcp_server(hello, name = NA_character_))
  expect_snapshot(error = TRUE, mcp_server(hello, version = 2))
  old <- options(mcplite.json.null = "none")
  on.exit(options(old))
  expect_error(mcp_server(hello), class = "mcplite_error_option")
})

test_that("a broken server script exits at once with the message on stderr", {
  skip_on_cran()
  script <- tempfile(fileext = ".R")
  input <- tempfile()
  on.exit(unlink(c(script, input)))
  writeLines(c(
    "library(mcplite)",
    "hello <- function() 'hi'",
    "mcp_server(list(hello))"
  ), script)
  # A valid request is waiting on stdin; it must never be answered.
  writeLines(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    input
  )
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- tempfile()
  err <- tempfile()
  on.exit(unlink(c(out, err)), add = TRUE)
  status <- with_envvars(
    list(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)),
    system2(rscript, c("--vanilla", script), stdin = input, stdout = out, stderr = err)
  )
  expect_false(identical(status, 0L))
  expect_equal(readLines(out), character())
  stderr <- paste(readLines(err), collapse = "\n")
  expect_match(stderr, "`tools[[1]]` must be a tool made with `tool()`", fixed = TRUE)
  expect_match(stderr, "Wrap plain functions with `tool()` first.", fixed = TRUE)
})

test_that("a server names itself with mcp_server(name =, version =), in every version", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    'hello <- mcplite::tool(function() "hi", name = "hello", description = "Hi.")',
    'mcplite::mcp_server(hello, name = "sales-tools", version = "1.2.3")'
  ))
  for (v in c("2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05")) {
    client <- checked_client(script, env = child_env(), protocol = v)
    expect_identical(client$server_info, list(name = "sales-tools", version = "1.2.3"))
    client$call("hello")
    if (v == "2026-07-28") {
      answer <- jsonlite::fromJSON(client$.state()$last_response, simplifyVector = FALSE)
      expect_identical(answer$result$`_meta`$`io.modelcontextprotocol/serverInfo`,
                       list(name = "sales-tools", version = "1.2.3"))
    }
  }
  # By default: mcplite and its version.
  client <- fixture_client("2025-11-25")
  expect_identical(client$server_info,
                   list(name = "mcplite", version = as.character(utils::packageVersion("mcplite"))))
})
