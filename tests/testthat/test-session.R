# Live sessions: an interactive R at a pseudo-terminal (tmux) serving tools
# with mcp_session(), and the session server a client starts. Barriers only.

session_tools_code <- paste0(
  "list(",
  "tool(function(name) nrow(get(name, envir = globalenv())), name = 'count_rows', ",
  "description = 'Rows of a data frame', arguments = list(name = type_string())), ",
  "tool(function(path, steps = 0) { for (i in seq_len(steps)) mcp_progress(i, steps); ",
  "while (!file.exists(path)) Sys.sleep(0.01); 'released' }, name = 'wait_for', ",
  "description = 'Waits for a file', arguments = list(path = type_string(), steps = type_integer()))",
  ")"
)

test_that("a call reads a data frame created at the prompt, in all four versions", {
  session_skip()
  dir <- session_dir_new()
  s <- session_r(dir)
  session_run(s, "df <- data.frame(x = 1:7)")
  session_serve(s, session_tools_code, name = "main")
  srv <- session_server(dir, cwd = s$cwd)
  for (v in legacy_versions) {
    init <- session_ask(srv, initialize_line(v, id = 0), 0)$answer
    expect_true(init$result$capabilities$tools$listChanged)
    mcp_validate(list(init), v, "InitializeResult")
    listed <- session_ask(srv, rpc(1, "tools/list"), 1)$answer
    mcp_validate(list(listed), v, "ListToolsResult")
    expect_setequal(vapply(listed$result$tools, `[[`, "", "name"), c("count_rows", "wait_for"))
    called <- session_ask(srv, legacy_call(2, "count_rows", '{"name":"df"}'), 2)$answer
    mcp_validate(list(called), v, "CallToolResult")
    expect_equal(first_text(called), "7")
  }
  listed <- session_ask(srv, modern(3, "tools/list"), 3)$answer
  mcp_validate(list(listed), "2026-07-28", "ListToolsResult")
  expect_equal(listed$result$ttlMs, 0)
  expect_equal(listed$result$cacheScope, "private")
  called <- session_ask(srv, modern_call(4, "count_rows", '{"name":"df"}'), 4)$answer
  mcp_validate(list(called), "2026-07-28", "CallToolResult")
  expect_equal(first_text(called), "7")
  # The console shows one line per call.
  expect_match(session_screen(s), "mcplite: count_rows for testthat")
})
