test_that("the client lists and calls tools in every protocol version", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  for (v in c("2025-11-25", "2025-06-18", "2024-11-05", "2026-07-28")) {
    client <- fixture_client(v)
    expect_s3_class(client, "mcplite_client")
    expect_equal(client$protocol, v)
    expect_equal(client$server_info$name, "mcplite")
    # 2024-11-05 answers carry no instructions (as CRAN mcplite's).
    expect_equal(client$instructions, if (v == "2024-11-05") NULL else "Fixture server for mcplite interop tests.")

    tools <- client$tools()
    validate_last(client, "ListToolsResult")
    expect_equal(vapply(tools, function(t) t$name, ""), c("add", "echo", "summarise", "fail", "noisy"))
    # Arrays arrive as lists, as tool arguments do.
    expect_equal(tools[[1]]$inputSchema$required, list("a", "b"))
    expect_identical(!is.null(tools[[3]]$outputSchema), v != "2024-11-05")

    res <- client$call("add", list(a = 2, b = 40))
    validate_last(client, "CallToolResult")
    expect_equal(res$content[[1]], list(type = "text", text = "42"))
    expect_false(isTRUE(res$isError))

    res <- client$call("summarise", list(values = list(1, 2, 6)))
    validate_last(client, "CallToolResult")
    if (v == "2024-11-05") {
      expect_null(res$structuredContent)
    } else {
      expect_equal(res$structuredContent, list(n = 3L, total = 9L, mean = 3L))
    }

    # A tool error is a result, not an R error.
    res <- client$call("fail", list(reason = "asked"))
    validate_last(client, "CallToolResult")
    expect_true(res$isError)
    expect_match(res$content[[1]]$text, "fixture failure: asked")

    # A JSON-RPC error is a classed R error carrying the code.
    err <- expect_error(client$call("nope"), class = "mcplite_error_client_rpc")
    expect_s3_class(err, "mcplite_error")
    expect_equal(err$code, -32602)
    if (v == "2025-11-25") expect_snapshot(error = TRUE, client$call("nope"))

    expect_equal(client$close(), 0L)
    expect_false(client$is_alive())
  }
})

test_that("legacy versions shake hands and 2026-07-28 sends _meta with every request", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  raw <- mcp_fixture_server("raw-server.R")
  client <- checked_client(raw, env = child_env(), protocol = "2025-06-18")
  client$request("ping")
  received <- client$stderr()
  expect_match(received[[1]], '"method":"initialize"', fixed = TRUE)
  expect_match(received[[1]], '"protocolVersion":"2025-06-18"', fixed = TRUE)
  expect_match(received[[1]], '"capabilities":{}', fixed = TRUE)
  expect_match(received[[2]], '"method":"notifications/initialized"', fixed = TRUE)
  expect_false(any(grepl("_meta", received)))

  # The raw server only knows the handshake: asking it for 2026-07-28 fails
  # clearly, and what it received shows the per-request _meta.
  err <- expect_error(
    mcp_client(raw, env = child_env(), protocol = "2026-07-28"),
    class = "mcplite_error_client_rpc"
  )
  expect_equal(err$code, -32601)
  sent <- grep("server/discover", err$stderr, value = TRUE, fixed = TRUE)
  expect_length(sent, 1)
  msg <- jsonlite::parse_json(sub("^<- ", "", sent))
  expect_equal(msg$params$`_meta`$`io.modelcontextprotocol/protocolVersion`, "2026-07-28")
  expect_equal(msg$params$`_meta`$`io.modelcontextprotocol/clientCapabilities`, structure(list(), names = character()))
  expect_equal(msg$params$`_meta`$`io.modelcontextprotocol/clientInfo`$name, "mcplite")
})

test_that("server requests get -32601 and notifications are kept", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- checked_client(mcp_fixture_server("raw-server.R"), env = child_env())
  res <- client$call("chatty")
  # The server returns the line it got in answer to its sampling request.
  answer <- jsonlite::parse_json(res$content[[1]]$text)
  expect_equal(answer$id, "srv-1")
  expect_equal(answer$error$code, -32601L)
  expect_null(answer$result)
  notes <- client$notifications()
  expect_length(notes, 1)
  expect_equal(notes[[1]]$method, "notifications/message")
  expect_equal(notes[[1]]$params$data, "working on it")
  expect_length(client$notifications(clear = TRUE), 1)
  expect_length(client$notifications(), 0)
})

test_that("a server that dies is a classed error with its stderr, and R survives writing to it", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  broken <- server_script(c('message("loading")', 'stop("cannot reach the database")'))
  err <- expect_error(mcp_client(broken, env = child_env()), class = "mcplite_error_client_exited")
  expect_equal(err$status, 1L)
  expect_true(any(grepl("cannot reach the database", err$stderr)))
  expect_snapshot(error = TRUE, mcp_client(broken, env = child_env()))

  dying <- server_script(c(
    'die <- mcplite::tool(function() quit(save = "no", status = 3), name = "die", description = "Exit.")',
    'mcplite::mcp_server(die)'
  ))
  client <- local_mcp_client(dying, env = child_env())
  # The call that ended R still got its answer; the next one finds the server gone.
  ended <- client$call("die")
  expect_true(ended$isError)
  expect_match(ended$content[[1]]$text, "ended the R process")
  err <- expect_error(client$call("die"), class = "mcplite_error_client_exited")
  expect_equal(err$status, 3L)
  # Writes to the dead server fail cleanly (no SIGPIPE reaches R).
  big <- strrep("x", 2e6)
  for (i in 1:3) expect_error(client$call("die", list(x = big)), class = "mcplite_error_client")
  expect_false(client$is_alive())
})

test_that("timeouts are classed errors, cancel the request, and the client goes on", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  # A nap lasts `s` seconds or until the test creates the release file.
  slow <- server_script(c(
    'nap <- mcplite::tool(function(s) {',
    '  end <- Sys.time() + s',
    '  while (Sys.time() < end && !file.exists(Sys.getenv("NAP_RELEASE"))) Sys.sleep(0.01)',
    '  "awake"',
    '}, name = "nap", description = "Sleep.", arguments = list(s = mcplite::type_number("Seconds.")))',
    'mcplite::mcp_server(nap)'
  ))
  release <- tempfile("nap-release-")
  client <- checked_client(slow, env = c(child_env(), NAP_RELEASE = release))
  # The naps wait on a release the test gives only later (60 s bounds a
  # hung test): a timeout that did not work would end them with "awake".
  expect_error(client$call("nap", list(s = 60), timeout = 0.3), class = "mcplite_error_client_timeout")
  expect_snapshot(error = TRUE, client$call("nap", list(s = 60), timeout = 0.25))
  file.create(release)
  res <- client$call("nap", list(s = 0))
  expect_equal(res$content[[1]]$text, "awake")
})

test_that("close() and local_mcp_client() stop and reap the server", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  skip_if_no_proc()
  f <- function() {
    client <- checked_client(mcp_fixture_server(), env = child_env())
    expect_true(process_exists(client$pid))
    client$pid
  }
  pid <- f()
  expect_false(process_exists(pid))

  # A server that ignores the end of its input is killed after `grace`: it
  # never reaches the line that would mark its own exit.
  exited <- tempfile("stubborn-exited-")
  stubborn <- server_script(c(
    'x <- mcplite::tool(function() "x", name = "x", description = "X.")',
    'mcplite::mcp_server(x)',
    'Sys.sleep(60)',
    sprintf('file.create(%s)', deparse(exited))
  ))
  client <- mcp_client(stubborn, env = child_env())
  client$close(grace = 0.5)
  expect_false(process_exists(client$pid))
  expect_false(file.exists(exited))
  expect_error(client$tools(), class = "mcplite_error_client_closed")
  expect_silent(client$close())

  # Garbage collection reaps a client nobody closed.
  client <- mcp_client(mcp_fixture_server(), env = child_env())
  pid <- client$pid
  rm(client)
  for (i in 1:3) gc()
  expect_false(process_exists(pid))
})

test_that("the child gets the environment and directory asked for", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    'info <- mcplite::tool(function() paste(Sys.getenv("MCP_TEST_VAR"), getwd(), sep = "|"),',
    '  name = "info", description = "Environment and directory.")',
    'mcplite::mcp_server(info)'
  ))
  dir <- normalizePath(tempdir())
  client <- checked_client(script, env = c(child_env(), MCP_TEST_VAR = "set by the test"), cwd = dir)
  res <- client$call("info")$content[[1]]$text
  expect_equal(res, paste("set by the test", dir, sep = "|"))
})

test_that("the transcript shows every line sent and received, in order", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- local_mcp_client(mcp_fixture_server("raw-server.R"), env = c(child_env(), RAW_BANNER = "1"),
                             transcript = TRUE)
  client$call("echo", list(x = 1))
  lines <- client$transcript()
  expect_equal(substr(lines, 1, 3), c("-> ", "<- ", "<- ", "-> ", "-> ", "<- "))
  expect_match(lines[[1]], '"method":"initialize"', fixed = TRUE)
  expect_equal(lines[[2]], "<- Welcome to R! (a banner that is not JSON-RPC)")
  expect_match(lines[[5]], '"arguments":{"x":1}', fixed = TRUE)
  expect_equal(client$transcript(), character())
  # Off by default.
  client <- local_mcp_client(mcp_fixture_server(), env = child_env())
  client$tools()
  expect_equal(client$transcript(), character())
})

test_that("stdout lines that are not protocol messages are kept apart", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- checked_client(mcp_fixture_server("raw-server.R"), env = c(child_env(), RAW_BANNER = "1"), pure = FALSE)
  expect_equal(client$call("junk")$content[[1]]$text, "ok")
  stray <- vapply(client$.state()$stray, function(s) s$text, "")
  expect_equal(stray, c("Welcome to R! (a banner that is not JSON-RPC)", "[1] \"printed by a tool\""))
})

test_that("the client drives the official example server from npm in every version it speaks", {
  skip_on_cran()
  bin <- everything_server()
  # The server is built on the TypeScript SDK 1.x: it negotiates the three
  # handshake versions and has no server/discover (2026-07-28).
  for (v in c("2025-11-25", "2025-06-18", "2024-11-05")) {
    client <- checked_client(command = bin, args = "stdio", protocol = v, strict = FALSE)
    expect_equal(client$protocol, v)
    expect_equal(client$server_info$name, "mcp-servers/everything")
    tools <- client$tools()
    # Its listing is validated loosely: it may carry fields of newer versions.
    validate_last(client, "ListToolsResult", strict = FALSE)
    names <- vapply(tools, function(t) t$name, "")
    expect_true(all(c("echo", "get-sum", "get-tiny-image") %in% names))
    res <- client$call("echo", list(message = "hello from R"))
    validate_last(client, "CallToolResult", strict = FALSE)
    expect_equal(res$content[[1]]$text, "Echo: hello from R")
    res <- client$call("get-sum", list(a = 2, b = 3))
    expect_match(res$content[[1]]$text, "5")
    img <- client$call("get-tiny-image")
    blocks <- vapply(img$content, function(b) b$type, "")
    expect_true("image" %in% blocks)
    # Invalid arguments: a tool error or a JSON-RPC error, never a crash.
    bad <- tryCatch(client$call("get-sum", list(a = "x")), mcplite_error_client_rpc = function(e) e)
    expect_true(inherits(bad, "mcplite_error_client_rpc") || isTRUE(bad$isError))
    expect_equal(client$close(), 0L)
  }
  # It sends log notifications once asked to; the client keeps them.
  client <- checked_client(command = bin, args = "stdio", strict = FALSE)
  client$call("toggle-simulated-logging")
  deadline <- Sys.time() + 20
  repeat {
    methods <- vapply(client$notifications(), function(n) n$method, "")
    if ("notifications/message" %in% methods || Sys.time() > deadline) break
    Sys.sleep(0.2)
  }
  expect_true("notifications/message" %in% methods)
  # The modern era fails clearly: it has no server/discover.
  err <- expect_error(mcp_client(command = bin, args = "stdio", protocol = "2026-07-28"),
                      class = "mcplite_error_client_rpc")
  expect_equal(err$code, -32601)
})

test_that("mcp_client() checks its arguments", {
  expect_snapshot(error = TRUE, {
    mcp_client()
    mcp_client("server.R", command = "node")
    mcp_client("/nonexistent/server.R")
    mcp_client(command = "x", protocol = "2025-03-26")
    mcp_client(command = "x", env = c("A=1"))
    mcp_client(command = "x", timeout = 0)
    mcp_client(command = "x", cwd = "/nonexistent/dir")
  })
  expect_error(mcp_client(command = "/nonexistent/mcp-server"), class = "mcplite_error_client_start")
})

test_that("client methods check their arguments", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  client <- fixture_client()
  expect_snapshot(error = TRUE, {
    client$call(1)
    client$call("add", list(1, 2))
    client$request("tools/list", params = "x")
    client$tools(timeout = -1)
  })
  expect_snapshot(print(client), transform = function(x) {
    x <- gsub("[0-9]+ \\(running\\)", "<pid> (running)", x)
    x <- gsub("mcplite [0-9.]+,", "mcplite <version>,", x)
    gsub("command: .*", "command: <Rscript> --vanilla <server.R>", x)
  })
})

test_that("results whose structured content breaks the output schema are refused as SDK clients refuse them", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- conformance_script()
  for (v in c("2025-11-25", "2025-06-18", "2026-07-28")) {
    client <- checked_client(script, env = child_env(), protocol = v)
    # Before a listing nothing is known of the schemas, as in the SDK.
    expect_equal(client$call("wrong_type")$structuredContent$total, "two")
    client$tools()
    expect_equal(client$call("right")$structuredContent, list(total = 2L))
    expect_true(client$call("tool_error")$isError)
    bad <- list(
      wrong_type = "at /total: ", missing_required = "at /: ", extra = "colour",
      no_structured = "has no structuredContent", several = "at /label: "
    )
    for (name in names(bad)) {
      err <- expect_error(client$call(name), class = "mcplite_error_client_output")
      expect_s3_class(err, "mcplite_error_client")
      expect_match(conditionMessage(err), bad[[name]], fixed = TRUE)
      # The exchange itself was fine: the client goes on.
      validate_last(client, "CallToolResult")
    }
    if (v == "2025-11-25") {
      expect_snapshot(error = TRUE, client$call("wrong_type"))
      expect_snapshot(error = TRUE, client$call("no_structured"))
    }
    client$close()
    # Turned off, results come as they are.
    unchecked <- checked_client(script, env = child_env(), protocol = v, check_output = FALSE)
    unchecked$tools()
    expect_equal(unchecked$call("wrong_type")$structuredContent$total, "two")
    unchecked$close()
  }
  # 2024-11-05 has no output schemas: nothing to check against.
  old <- checked_client(script, env = child_env(), protocol = "2024-11-05")
  old$tools()
  expect_equal(old$call("no_structured")$content[[1]]$text, "2")
})
