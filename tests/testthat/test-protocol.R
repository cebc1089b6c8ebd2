# The protocol over real pipes: a real `Rscript --vanilla` server per test,
# every answer checked for stdout purity (by the harness) and validated
# against the official schema of its protocol version.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# The protocol for well-formed traffic is driven with mcp_client(), whose
# every exchanged line is validated (checked_client()); hand-written lines
# remain where the bytes themselves are the point.

test_that("each legacy version: handshake, listing, calls and ping validate against its schema", {
  skip_if_no_mcplite_child()
  for (v in legacy_versions) {
    client <- checked_client(protocol_server(), env = child_env(), protocol = v)
    expect_identical(client$protocol, v)
    expect_identical(client$capabilities, list(tools = list(listChanged = FALSE)))
    expect_identical(client$server_info$name, "mcplite")
    # 2024-11-05's schema allows instructions; CRAN mcplite leaves them out there.
    expect_identical(client$instructions, if (v == "2024-11-05") NULL else "Protocol fixture.")
    tools <- client$tools()
    expect_identical(client$call("add", list(a = 1, b = 2.5))$content[[1]]$text, "3.5")
    expect_false(isTRUE(client$call("stats")$isError))
    expect_false(isTRUE(client$call("annotated")$isError))
    expect_identical(client$request("ping"), setNames(list(), character()))
    expect_identical(client$close(), 0L)
    expect_identical(vapply(tools, `[[`, "", "name")[1:3], c("add", "speak", "link"))
    add <- tools[[1]]
    expect_identical(add$inputSchema$required, list("a", "b"))
    if (v == "2024-11-05") {
      expect_null(add$annotations)
      expect_true(all(vapply(tools, function(t) is.null(t$outputSchema), TRUE)))
    } else {
      expect_identical(add$annotations$title, "Adder")
      expect_identical(add$annotations$readOnlyHint, TRUE)
    }
  }
})

test_that("initialize negotiates: requested legacy version, else 2025-11-25, never 2026-07-28", {
  skip_if_no_mcplite_child()
  asked <- c("2025-03-26", "2026-07-28", "1999-01-01", "2024-11-05")
  out <- mcp_exchange(
    vapply(seq_along(asked), function(i) initialize_line(asked[i], id = i), ""),
    server = protocol_server()
  )
  got <- vapply(out$responses, function(r) r$result$protocolVersion, "")
  expect_identical(got, c("2025-11-25", "2025-11-25", "2025-11-25", "2024-11-05"))
  mcp_validate(out$responses, "2025-11-25", "InitializeResult")
})

test_that("R's version facts are the ones the server serves and negotiates", {
  skip_if_no_mcplite_child()
  versions <- mcplite:::protocol_versions()
  # What discovery advertises, in its order, with the era of each.
  out <- mcp_exchange(c(modern("d", "server/discover"), initialize_line("1999-01-01", id = 1)),
                      server = protocol_server())
  expect_identical(versions$id, unlist(mcp_by_id(out$responses, "d")$result$supportedVersions))
  expect_identical(versions$era, ifelse(versions$id == "2026-07-28", "modern", "legacy"))
  # What an unknown version negotiates, and what clients open with by default.
  fallback <- mcp_by_id(out$responses, 1)$result$protocolVersion
  expect_identical(mcplite:::latest_legacy_version(), fallback)
  client <- checked_client(protocol_server(), env = child_env())
  expect_identical(client$protocol, fallback)
  client$close()
  # The flags R reads, against what each version's listing carries.
  expect_identical(versions$tool_title_annotations_meta, versions$id != "2024-11-05")
  expect_identical(versions$output_schema,
                   c("any", "object", "object", "none")[match(versions$id, all_versions)])
  # MCP's field names come from the core's vocabulary.
  expect_identical(mcplite:::wire_name("IS_ERROR"), "isError")
  expect_identical(mcplite:::wire_name("META_SERVER_INFO"), "io.modelcontextprotocol/serverInfo")
  expect_error(mcplite:::wire_name("NO_SUCH_NAME"))
})

test_that("the reference's version table is the core's table, row for row", {
  # The installed page's table (its Rd source), cell by cell, markup removed.
  rd <- paste(as.character(tools::Rd_db("mcplite")[["mcp_server.Rd"]]), collapse = "")
  table <- regmatches(rd, regexpr("\\\\tabular\\{l+\\}\\{.*?\\}\\s*\\}", rd))
  expect_length(table, 1)
  plain <- function(x) trimws(gsub("\\\\(code|verb)\\{([^}]*)\\}", "\\2", x))
  body <- sub("^\\\\tabular\\{l+\\}\\{", "", table)
  rows <- Filter(nzchar, trimws(strsplit(body, "\\\\cr", fixed = FALSE)[[1]]))
  page <- lapply(rows, function(r) plain(strsplit(r, "\\\\tab")[[1]]))
  page <- Filter(function(r) length(r) > 1, page)
  # The generated Markdown, cell by cell (its separator row left out).
  md <- strsplit(mcplite:::protocol_versions_table(), "\n")[[1]][-2]
  generated <- lapply(md, function(l) trimws(gsub("`", "", strsplit(sub("^\\| ?(.*?) ?\\|$", "\\1", l), " \\| ")[[1]])))
  expect_identical(page, generated)
  expect_identical(generated[[1]][-1], rev(mcplite:::protocol_versions()$id))
  expect_true(any(vapply(generated, function(r) identical(r[[1]], "audio and resource-link blocks"), TRUE)))
})

test_that("modern requests are stateless and carry resultType, serverInfo and cache hints", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    modern("d", "server/discover"),
    modern("l", "tools/list"),
    modern_call("c", "add", '{"a":2,"b":3}'),
    modern_call("r", "rows"),
    modern("p", "ping")
  ), server = protocol_server())
  r <- out$responses
  mcp_validate(r[1:4], "2026-07-28", c("DiscoverResult", "ListToolsResult", "CallToolResult", "CallToolResult"))
  disc <- mcp_by_id(r, "d")$result
  expect_identical(unlist(disc$supportedVersions), all_versions)
  expect_identical(disc$ttlMs, 300000L)
  expect_identical(disc$cacheScope, "public")
  expect_identical(disc$resultType, "complete")
  expect_identical(disc$instructions, "Protocol fixture.")
  expect_identical(disc$`_meta`$`io.modelcontextprotocol/serverInfo`$name, "mcplite")
  lst <- mcp_by_id(r, "l")$result
  expect_identical(lst$ttlMs, 300000L)
  expect_identical(lst$resultType, "complete")
  rows_tool <- Filter(function(t) t$name == "rows", lst$tools)[[1]]
  expect_identical(rows_tool$outputSchema$type, "array")
  call <- mcp_by_id(r, "c")$result
  expect_identical(call$resultType, "complete")
  expect_null(call$ttlMs)
  expect_identical(first_text(mcp_by_id(r, "c")), "5")
  expect_identical(mcp_by_id(r, "r")$result$structuredContent, list(list(a = 1L), list(a = 2L)))
  expect_rpc_error(mcp_by_id(r, "p"), -32601)
  # The exact line of a listing: key order and the 300000 literal are fixed.
  expect_match(attr(mcp_by_id(r, "l"), "json"), '"ttlMs":300000,"cacheScope":"public"', fixed = TRUE)
})

test_that("modern metadata errors: -32602 for missing fields, -32022 for unsupported versions", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    rpc(1, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}'),
    rpc(2, "server/discover", '{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}'),
    modern(3, "server/discover", version = "2025-03-26"),
    modern(4, "tools/call", call_params("add", '{"a":1,"b":1}'), version = "2099-01-01"),
    rpc(5, "server/discover"),
    rpc(6, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}')
  ), server = protocol_server())
  r <- out$responses
  expect_rpc_error(mcp_by_id(r, 1), -32602)
  expect_rpc_error(mcp_by_id(r, 2), -32602)
  expect_rpc_error(mcp_by_id(r, 3), -32022)
  expect_identical(unlist(mcp_by_id(r, 3)$error$data$supported), all_versions)
  expect_identical(mcp_by_id(r, 3)$error$data$requested, "2025-03-26")
  expect_rpc_error(mcp_by_id(r, 4), -32022)
  expect_rpc_error(mcp_by_id(r, 5), -32602)
  expect_rpc_error(mcp_by_id(r, 6), -32602)
  mcp_validate(mcp_by_id(r, 3), "2026-07-28", "UnsupportedProtocolVersionError")
  mcp_validate(r, "2026-07-28")
})

test_that("a request with neither initialize nor modern _meta gets -32600 (server not initialized), as with CRAN mcplite", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(rpc(1, "tools/list"), legacy_call(2, "add", '{"a":1,"b":1}'), rpc(3, "ping")),
                      server = protocol_server())
  expect_rpc_error(mcp_by_id(out$responses, 1), -32600)
  expect_rpc_error(mcp_by_id(out$responses, 2), -32600)
  expect_match(mcp_by_id(out$responses, 1)$error$message, "not initialized")
  expect_identical(mcp_by_id(out$responses, 3)$result, setNames(list(), character()))
})

test_that("legacy traffic never changes how modern requests are answered", {
  skip_if_no_mcplite_child()
  lines <- c(modern_call("m", "speak"), modern("l", "tools/list"))
  alone <- mcp_exchange(lines, server = protocol_server())
  after <- mcp_exchange(c(initialize_line("2024-11-05"), initialized_line(), lines, legacy_call(9, "speak")),
                        server = protocol_server())
  for (id in c("m", "l")) {
    expect_identical(attr(mcp_by_id(after$responses, id), "json"), attr(mcp_by_id(alone$responses, id), "json"))
  }
  expect_identical(mcp_by_id(after$responses, "m")$result$content[[1]]$type, "audio")
  expect_true(mcp_by_id(after$responses, 9)$result$isError)
})

test_that("identical tools/list requests give byte-identical answers", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(modern(1, "tools/list"), modern(1, "tools/list"), initialize_line("2025-06-18", 7),
                        rpc(1, "tools/list"), rpc(1, "tools/list")), server = protocol_server())
  expect_identical(out$lines[[1]], out$lines[[2]])
  expect_identical(out$lines[[4]], out$lines[[5]])
})

test_that("envelope errors follow the decision table and ids are echoed exactly", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(list(
    '{"jsonrpc":"2.0","id":1,"method":"ping"',            # truncated: parse error
    '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',          # batch
    '"just a string"',                                     # scalar
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',         # null id
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',          # fractional id
    '{"jsonrpc":"1.0","id":"v","method":"ping"}',          # wrong jsonrpc, id echoed
    '{"id":"nv","method":"ping"}',                         # missing jsonrpc
    '{"jsonrpc":"2.0","id":"m"}',                          # missing method
    '{"jsonrpc":"2.0","id":"s","method":"ping","params":3}',
    '{"jsonrpc":"2.0","id":"a","method":"ping","params":[1]}',
    '{"jsonrpc":"2.0","id":"u","method":"resources/list"}',
    '{"jsonrpc":"2.0","id":"1","method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}',
    '{"jsonrpc":"2.0","id":"\\u00e9t\\u00e9","method":"ping"}',
    '{"jsonrpc":"2.0","id":99,"result":{}}',               # a response: ignored
    '{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}'
  ), server = protocol_server())
  lines <- out$lines
  expect_length(lines, 15)
  codes <- vapply(out$responses[1:11], function(r) as.integer(r$error$code), 1L)
  expect_identical(codes, c(-32700L, -32600L, -32600L, -32600L, -32600L, -32600L, -32600L, -32600L,
                            -32600L, -32602L, -32601L))
  for (i in 1:5) expect_false(grepl('"id"', lines[[i]], fixed = TRUE))
  expect_match(lines[[6]], '^\\{"jsonrpc":"2.0","id":"v",')
  expect_match(lines[[12]], '"id":"1",', fixed = TRUE)
  expect_match(lines[[13]], '"id":1,', fixed = TRUE)
  expect_match(lines[[14]], '"id":12345678901234567890,', fixed = TRUE)
  expect_match(lines[[15]], '"id":"\\u00e9t\\u00e9"', fixed = TRUE)
  for (v in all_versions) mcp_validate(out$responses[1:11], v)
  for (v in legacy_versions) mcp_validate(out$responses[12:15], v, "EmptyResult")
})

test_that("tools/call params errors are -32602 and a tools/call notification runs nothing", {
  skip_if_no_mcplite_child()
  marker <- tempfile()
  out <- mcp_exchange(c(
    initialize_line("2025-11-25"),
    rpc(1, "tools/call", "{}"),
    rpc(2, "tools/call", '{"name":7}'),
    rpc(3, "tools/call", '{"name":"add","arguments":[1,2]}'),
    rpc(4, "tools/call", '{"name":"no_such_tool"}'),
    rpc(NULL, "tools/call", sprintf('{"name":"touch","arguments":{"path":"%s"}}', marker)),
    legacy_call(5, "add", '{"a":1,"b":1}')
  ), server = protocol_server())
  for (id in 1:4) expect_rpc_error(mcp_by_id(out$responses, id), -32602)
  expect_identical(first_text(mcp_by_id(out$responses, 5)), "2")
  expect_false(file.exists(marker))
  expect_length(out$responses, 6)
  mcp_validate(out$responses, "2025-11-25")
})

test_that("arguments: objects are named lists, arrays lists, null NULL, names exact", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    initialize_line("2025-11-25"),
    legacy_call(1, "shape", '{"x":1,"items":[1,2,3],"obj":{"p":1,"q":[]}}'),
    legacy_call(2, "shape", '{"x":null}'),
    legacy_call(3, "shape", '{"it":[1]}'),
    legacy_call(4, "add", '{"a":1,"b":2,"c":3}'),
    rpc(5, "tools/call", sprintf('{"name":"add","arguments":{"a":1,"b":2},%s}',
                                 '"_meta":{"progressToken":"t","secret":"meta never reaches the tool"}'))
  ), server = protocol_server())
  r <- out$responses
  expect_identical(first_text(mcp_by_id(r, 1)), "integer|list|p,q|3")
  expect_identical(first_text(mcp_by_id(r, 2)), "NULL|NULL|NULL|0")
  expect_true(mcp_by_id(r, 3)$result$isError)
  expect_match(first_text(mcp_by_id(r, 3)), "it")
  expect_true(mcp_by_id(r, 4)$result$isError)
  expect_identical(first_text(mcp_by_id(r, 5)), "3")
})

test_that("2024-11-05 contains audio and resource links as tool errors; later versions carry them", {
  skip_if_no_mcplite_child()
  for (v in legacy_versions) {
    client <- checked_client(protocol_server(), env = child_env(), protocol = v)
    speak <- client$call("speak")
    link <- client$call("link")
    if (v == "2024-11-05") {
      expect_true(speak$isError)
      expect_identical(speak$content[[1]]$type, "text")
      expect_match(speak$content[[1]]$text, "audio.*2024-11-05")
      expect_true(link$isError)
    } else {
      expect_identical(speak$content[[1]]$type, "audio")
      expect_identical(speak$content[[1]]$mimeType, "audio/wav")
      expect_identical(link$content[[1]]$type, "resource_link")
      expect_false(speak$isError)
    }
  }
})

test_that("structured content and output schemas are projected per version; text stays", {
  skip_if_no_mcplite_child()
  for (v in all_versions) {
    client <- checked_client(protocol_server(), env = child_env(), protocol = v)
    tools <- client$tools()
    by_name <- setNames(tools, vapply(tools, `[[`, "", "name"))
    expect_true("rows" %in% names(by_name))
    rows <- client$call("rows")
    stats <- client$call("stats")
    expect_identical(rows$content[[1]]$text, '[{"a":1},{"a":2}]')
    expect_identical(stats$content[[1]]$text, '{"n":3,"mean":2.5}')
    if (v == "2026-07-28") {
      expect_false(is.null(by_name$rows$outputSchema))
      expect_false(is.null(rows$structuredContent))
    } else {
      expect_null(by_name$rows$outputSchema)
      expect_null(rows$structuredContent)
    }
    if (v == "2024-11-05") {
      expect_null(by_name$stats$outputSchema)
      expect_null(stats$structuredContent)
    } else {
      expect_identical(by_name$stats$outputSchema$type, "object")
      expect_identical(stats$structuredContent, list(n = 3L, mean = 2.5))
    }
  }
})

test_that("annotations and metadata: lastModified and block _meta only where the version has them", {
  skip_if_no_mcplite_child()
  for (v in legacy_versions) {
    client <- checked_client(protocol_server(), env = child_env(), protocol = v)
    res <- client$call("annotated")
    block <- res$content[[1]]
    expect_identical(block$annotations$audience, list("user"))
    expect_identical(block$annotations$priority, 0.5)
    expect_identical(res$`_meta`$trace, "abc")
    expect_identical(res$content[[2]]$resource$text, "hello")
    expect_identical(res$content[[2]]$resource$mimeType, "text/plain")
    tools <- client$tools()
    annotated <- Filter(function(t) t$name == "annotated", tools)[[1]]
    if (v == "2024-11-05") {
      expect_null(block$annotations$lastModified)
      expect_null(block$`_meta`)
      expect_null(res$content[[2]]$`_meta`)
      expect_null(annotated$annotations)
    } else {
      expect_identical(block$annotations$lastModified, "2025-01-01T00:00:00Z")
      expect_identical(block$`_meta`$source, "fixture")
      expect_identical(res$content[[2]]$`_meta`$kind, "note")
      expect_identical(annotated$annotations$title, "Annotated")
    }
  }
})

test_that("transport: blank lines, CRLF, invalid UTF-8, a long line and a final line without newline", {
  skip_if_no_mcplite_child()
  long <- strrep("x", 5e6)
  proc <- mcp_start(protocol_server())
  on.exit(mcp_kill(proc), add = TRUE)
  mcp_send(proc, "")
  mcp_send(proc, "   \t  ")
  mcp_send(proc, paste0(initialize_line("2025-11-25"), "\r"))
  mcp_send(proc, c(as.raw(c(0x7b, 0xff, 0xfe, 0x7d))))
  mcp_send(proc, legacy_call(1, "size", sprintf('{"text":"%s"}', long)))
  mcp_send(proc, legacy_call(2, "echo", '{"text":"d\\u00e9j\\u00e0 vu \\ud83d\\ude00"}'))
  mcp_send(proc, legacy_call(3, "add", '{"a":1,"b":1}'), newline = FALSE)
  out <- mcp_close(proc)
  r <- out$responses
  expect_identical(out$status, 0L)
  expect_length(r, 5)
  expect_identical(r[[1]]$result$protocolVersion, "2025-11-25")
  expect_rpc_error(r[[2]], -32700)
  expect_identical(first_text(mcp_by_id(r, 1)), "5000000")
  expect_identical(first_text(mcp_by_id(r, 2)), "d\u00e9j\u00e0 vu \U0001F600")
  expect_identical(first_text(mcp_by_id(r, 3)), "2")
})

test_that("tool errors, warnings and messages: contained results, diagnostics on stderr only", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    initialize_line("2025-06-18"),
    legacy_call(1, "noisy"),
    legacy_call(2, "weird_error"),
    legacy_call(3, "unsendable"),
    legacy_call(4, "add", '{"a":"one","b":2}')
  ), server = protocol_server())
  r <- out$responses
  mcp_validate(r, "2025-06-18")
  expect_identical(first_text(mcp_by_id(r, 1)), "quiet")
  expect_true(mcp_by_id(r, 2)$result$isError)
  expect_identical(first_text(mcp_by_id(r, 2)), "first line\nsecond line")
  expect_true(mcp_by_id(r, 3)$result$isError)
  expect_match(first_text(mcp_by_id(r, 3)), "environment")
  expect_true(mcp_by_id(r, 4)$result$isError)
  expect_match(first_text(mcp_by_id(r, 4)), "non-numeric")
  expect_match(out$stderr, "mcplite: tool weird_error failed: first line ...", fixed = TRUE)
  expect_match(out$stderr, "mcplite: tool unsendable failed: Tool unsendable returned a value", fixed = TRUE)
  for (s in c("cat to stdout", "[1] 1 2 3", "a message", "a warning", "writeLines to stdout", "child stdout", "child stderr")) {
    expect_true(grepl(s, out$stderr, fixed = TRUE), info = s)
  }
})

test_that("a failing tool is answered with its own message whatever restarts and handlers it sets up", {
  skip_if_no_mcplite_child()
  # The server ends a failed call through R's top-level restart (serve_tool()
  # in R/invoke.R): a tool's own "abort" restart, its calling handlers and
  # its exiting handlers never change what the call answers.
  server <- paste(
    "tools <- list(",
    "  mcplite::tool(function() withRestarts(stop('inner failure'), abort = function() 'recovered by the tool'),",
    "                name = 'own_abort', description = 'Fails under its own abort restart.'),",
    "  mcplite::tool(function() withCallingHandlers(stop('handled failure'), error = function(e) NULL),",
    "                name = 'own_handler', description = 'Fails under its own calling handler.'),",
    "  mcplite::tool(function() tryCatch(stop('caught'), error = function(e) 'caught by the tool'),",
    "                name = 'own_catch', description = 'Catches its own error.'),",
    "  mcplite::tool(function() stop(structure(class = c('my_error', 'error', 'condition'),",
    "                                          list(message = 'classed failure', call = NULL))),",
    "                name = 'classed', description = 'Fails with a classed condition.'),",
    "  mcplite::tool(function() { warning('first a warning'); stop('then an error') },",
    "                name = 'warn_then_fail', description = 'Warns, then fails.'),",
    "  mcplite::tool(function(x) x + 1, name = 'inc', description = 'Adds one.',",
    "                arguments = list(x = mcplite::type_number('A number.')))",
    ")",
    "mcplite::mcp_server(tools)",
    sep = "\n"
  )
  names <- c("own_abort", "inc", "own_handler", "own_catch", "inc", "classed", "warn_then_fail", "inc")
  lines <- c(initialize_line("2025-06-18"), vapply(seq_along(names), function(i) {
    legacy_call(i, names[[i]], if (names[[i]] == "inc") sprintf('{"x":%d}', i) else "{}")
  }, ""))
  out <- mcp_exchange(lines, server = server)
  r <- out$responses
  mcp_validate(r, "2025-06-18")
  expect_identical(out$status, 0L)
  expect_length(r, length(names) + 1L)
  failed <- c(own_abort = "inner failure", own_handler = "handled failure",
              classed = "classed failure", warn_then_fail = "then an error")
  for (i in seq_along(names)) {
    answer <- mcp_by_id(r, i)
    if (names[[i]] == "inc") {
      expect_identical(first_text(answer), as.character(i + 1L), info = names[[i]])
    } else if (names[[i]] == "own_catch") {
      expect_identical(first_text(answer), "caught by the tool")
      expect_false(isTRUE(answer$result$isError))
    } else {
      expect_true(isTRUE(answer$result$isError), info = names[[i]])
      expect_identical(first_text(answer), failed[[names[[i]]]], info = names[[i]])
      expect_match(out$stderr, sprintf("mcplite: tool %s failed: %s", names[[i]], failed[[names[[i]]]]), fixed = TRUE)
    }
  }
  expect_match(out$stderr, "Warning in tool warn_then_fail: first a warning", fixed = TRUE)
  # R prints no error of its own (R_tryEval would, for an error no handler took).
  expect_false(grepl("Error", out$stderr, fixed = TRUE))
})

# ---- issue 15: initialize and _meta checks, isError and listChanged -----------

init_with <- function(id, params) rpc(id, "initialize", params)

expect_invalid_params_naming <- function(response, pattern, info = NULL) {
  err <- response$error
  if (!is.list(err)) {
    testthat::fail(sprintf("%s: expected error -32602 naming /%s/, got %s",
                           info, pattern, substr(mcp_message_json(response), 1, 200)))
    return(invisible())
  }
  testthat::expect_identical(as.integer(err$code), -32602L, info = info)
  testthat::expect_match(as.character(err$message), pattern, info = info)
}

test_that("initialize params are checked against the negotiated version's schema: -32602 names the field", {
  skip_if_no_mcplite_child()
  # 2025-03-26 is not served: it negotiates 2025-11-25, whose schema applies.
  for (v in c(legacy_versions, "2025-03-26")) {
    negotiated <- if (v == "2025-03-26") "2025-11-25" else v
    bad <- list(
      version_only = list(sprintf('{"protocolVersion":"%s"}', v), "capabilities|clientInfo"),
      no_capabilities = list(sprintf('{"protocolVersion":"%s","clientInfo":{"name":"c","version":"1"}}', v), "capabilities"),
      capabilities_array = list(sprintf('{"protocolVersion":"%s","capabilities":[],"clientInfo":{"name":"c","version":"1"}}', v), "capabilities"),
      no_client_info = list(sprintf('{"protocolVersion":"%s","capabilities":{}}', v), "clientInfo"),
      no_client_version = list(sprintf('{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"c"}}', v), "clientInfo.*version|version.*clientInfo"),
      name_number = list(sprintf('{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":1,"version":"1"}}', v), "clientInfo.*name|name.*clientInfo"),
      version_number = list('{"protocolVersion":20251125,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}', "protocolVersion")
    )
    lines <- vapply(names(bad), function(k) init_with(k, bad[[k]][[1]]), "")
    out <- mcp_exchange(c(
      lines,
      rpc("list-before", "tools/list"),
      # Optional members and open capability objects are valid.
      init_with("good", sprintf(paste0(
        '{"protocolVersion":"%s","capabilities":{"experimental":{},"roots":{"listChanged":true},"x-custom":{}},',
        '"clientInfo":{"name":"c","version":"1","title":"C"},"_meta":{"k":"v"}}'), v)),
      rpc("list-after", "tools/list")
    ), server = protocol_server())
    r <- out$responses
    for (k in names(bad)) expect_invalid_params_naming(mcp_by_id(r, k), bad[[k]][[2]], info = paste(v, k))
    # A refused initialize negotiates nothing.
    expect_false(is.null(mcp_by_id(r, "list-before")$error), info = v)
    expect_identical(mcp_by_id(r, "good")$result$protocolVersion, negotiated)
    expect_false(is.null(mcp_by_id(r, "list-after")$result$tools), info = v)
    mcp_validate(r[seq_along(bad)], negotiated)
    mcp_validate(mcp_by_id(r, "good"), negotiated, "InitializeResult")
  }
})

test_that("modern _meta is checked against the 2026-07-28 schema: -32602 names the field", {
  skip_if_no_mcplite_child()
  meta <- function(extra = "", caps = "{}", version = '"2026-07-28"') {
    sprintf('{"_meta":{"io.modelcontextprotocol/protocolVersion":%s,"io.modelcontextprotocol/clientCapabilities":%s%s}}',
            version, caps, extra)
  }
  bad <- list(
    loglevel_loud = list(meta(',"io.modelcontextprotocol/logLevel":"loud"'), "logLevel"),
    loglevel_number = list(meta(',"io.modelcontextprotocol/logLevel":3'), "logLevel"),
    clientinfo_no_version = list(meta(',"io.modelcontextprotocol/clientInfo":{"name":"c"}'), "clientInfo"),
    clientinfo_name_number = list(meta(',"io.modelcontextprotocol/clientInfo":{"name":1,"version":"1"}'), "clientInfo"),
    capabilities_array = list(meta(caps = "[]"), "clientCapabilities"),
    capabilities_string = list(meta(caps = '"x"'), "clientCapabilities"),
    # Modern-only keys without a version are not served as a legacy request.
    only_loglevel = list('{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}', "protocolVersion"),
    only_clientinfo = list('{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}', "protocolVersion"),
    only_capabilities = list('{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}', "protocolVersion")
  )
  good <- list(
    loglevel_debug = meta(',"io.modelcontextprotocol/logLevel":"debug"'),
    loglevel_emergency = meta(',"io.modelcontextprotocol/logLevel":"emergency"'),
    clientinfo_full = meta(',"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"C"}'),
    capabilities_open = meta(caps = '{"experimental":{},"extensions":{"com.example/x":{}}}')
  )
  for (method in c("server/discover", "tools/list")) {
    lines <- c(
      vapply(names(bad), function(k) rpc(k, method, bad[[k]][[1]]), ""),
      vapply(names(good), function(k) rpc(k, method, good[[k]]), "")
    )
    out <- mcp_exchange(lines, server = protocol_server())
    r <- out$responses
    for (k in names(bad)) expect_invalid_params_naming(mcp_by_id(r, k), bad[[k]][[2]], info = paste(method, k))
    def <- if (method == "server/discover") "DiscoverResult" else "ListToolsResult"
    for (k in names(good)) {
      expect_identical(mcp_by_id(r, k)$result$resultType, "complete", info = paste(method, k))
      mcp_validate(mcp_by_id(r, k), "2026-07-28", def)
    }
    mcp_validate(r, "2026-07-28")
  }
  # The same checks guard tools/call: the tool does not run.
  marker <- tempfile()
  call_params <- sprintf('"name":"touch","arguments":{"path":"%s"}', marker)
  out <- mcp_exchange(c(
    rpc("call_loud", "tools/call", sub("^\\{", paste0("{", call_params, ","), meta(',"io.modelcontextprotocol/logLevel":"loud"'))),
    rpc("call_only_loglevel", "tools/call", sprintf('{%s,"_meta":{"io.modelcontextprotocol/logLevel":"info"}}', call_params))
  ), server = protocol_server())
  expect_invalid_params_naming(mcp_by_id(out$responses, "call_loud"), "logLevel")
  expect_invalid_params_naming(mcp_by_id(out$responses, "call_only_loglevel"), "protocolVersion")
  expect_false(file.exists(marker))
  mcp_validate(out$responses, "2026-07-28")
})

test_that("a successful call says isError: false in every version", {
  skip_if_no_mcplite_child()
  for (v in all_versions) {
    lines <- if (v == "2026-07-28") {
      c(modern_call(1, "add", '{"a":1,"b":2}'), modern_call(2, "stats"), modern_call(3, "annotated"))
    } else {
      c(initialize_line(v), legacy_call(1, "add", '{"a":1,"b":2}'), legacy_call(2, "stats"), legacy_call(3, "annotated"))
    }
    out <- mcp_exchange(lines, server = protocol_server())
    r <- out$responses
    for (id in 1:3) {
      res <- mcp_by_id(r, id)
      expect_identical(res$result$isError, FALSE, info = paste(v, id))
      expect_match(attr(res, "json"), '"isError":false', fixed = TRUE)
      mcp_validate(res, v, "CallToolResult")
    }
  }
})

test_that("the tools capability says listChanged: false, in initialize and in discovery", {
  skip_if_no_mcplite_child()
  out <- mcp_exchange(c(
    vapply(legacy_versions, function(v) initialize_line(v, id = v), ""),
    modern("d", "server/discover")
  ), server = protocol_server())
  r <- out$responses
  for (v in legacy_versions) {
    res <- mcp_by_id(r, v)
    expect_identical(res$result$capabilities, list(tools = list(listChanged = FALSE)), info = v)
    expect_match(attr(res, "json"), '"capabilities":{"tools":{"listChanged":false}}', fixed = TRUE)
    mcp_validate(res, v, "InitializeResult")
  }
  disc <- mcp_by_id(r, "d")
  expect_identical(disc$result$capabilities, list(tools = list(listChanged = FALSE)))
  mcp_validate(disc, "2026-07-28", "DiscoverResult")
})

test_that("tools/list refuses a cursor it never issued, or one that is not a string, with -32602, in every version", {
  skip_if_no_mcplite_child()
  cursors <- c('"abc"', '""', "5", "null", "{}", "[\"a\"]", "true")
  for (v in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    lines <- c(initialize_line(v), vapply(seq_along(cursors), function(i) {
      rpc(i, "tools/list", sprintf('{"cursor":%s}', cursors[[i]]))
    }, ""), rpc(99, "tools/list", '{"page":2}'))
    out <- mcp_exchange(lines, server = protocol_server())
    r <- out$responses
    expect_length(r, length(lines))
    for (i in seq_along(cursors)) {
      e <- mcp_by_id(r, i)$error
      expect_identical(e$code, -32602L, info = paste(v, cursors[[i]]))
    }
    expect_match(mcp_by_id(r, 1)$error$message, "unknown cursor", fixed = TRUE)
    expect_match(mcp_by_id(r, 3)$error$message, "cursor must be a string", fixed = TRUE)
    # Members of params other than cursor are open in the schemas: served
    # (a difference from CRAN mcplite listed in ?mcplite-cran).
    expect_true(length(mcp_by_id(r, 99)$result$tools) > 0)
    mcp_validate(r[-1][seq_along(cursors)], v)
  }
  out <- mcp_exchange(modern("m", "tools/list", '"cursor":"abc"'), server = protocol_server())
  expect_identical(out$responses[[1]]$error$code, -32602L)
})
