# The real clients take what mcp_config() prints and writes: Claude Code,
# Gemini CLI and Codex CLI from npm (tests/clients/package.json), each run
# with a temporary home (helper-config.R) and a timeout. The commands print
# and check configurations; none needs an account or the network.

# A copy of the fixture server that records its environment, in `dir`.
env_server <- function(dir) {
  dir.create(dir, recursive = TRUE, showWarnings = FALSE)
  file.copy(mcp_fixture_server("env-server.R"), dir)
  normalizePath(file.path(dir, "env-server.R"), winslash = "/")
}

# The environments the copies of the server were started with, one named
# character vector per start; the records are removed.
recorded_envs <- function(server) {
  files <- Sys.glob(paste0(server, ".env-*"))
  on.exit(unlink(files))
  lapply(files, function(f) {
    lines <- readLines(f)
    stats::setNames(sub("^[^=]*=", "", lines), sub("=.*$", "", lines))
  })
}

config_rscript <- function() normalizePath(mcp_rscript(), winslash = "/", mustWork = FALSE)

test_that("Claude Code takes the printed command, with and without env, and connects", {
  claude <- client_program("claude")
  skip_on_os("windows") # the printed commands are run through sh
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    server <- env_server(file.path(home, "server"))
    libs <- child_env()
    out <- capture.output(printed <- c(
      mcp_config(server, "claude-code", name = "plain"),
      mcp_config(server, "claude-code", name = "one-env", env = libs),
      mcp_config(server, "claude-code", name = "several",
                 env = c(libs, GREETING = "hello world", QUOTE = "it's", EQUALS = "a=b"))
    ))
    for (cmd in printed) {
      expect_match(cmd, "^claude mcp add --transport stdio [a-z-]+ (--env|--) ")
      res <- run_client("sh", c("-c", sub("^claude", shQuote(claude), cmd)), home, project)
      expect_equal(res$status, 0, info = res$out)
      expect_match(res$out, "Added stdio MCP server", fixed = TRUE)
    }
    # The forms Claude Code's own `claude mcp add --help` shows: `-e` after
    # the name and no --transport, and add-json with the JSON entry.
    rscript <- config_rscript()
    res <- run_client(claude, c("mcp", "add", "help-form", "-e", paste0("R_LIBS=", libs[["R_LIBS"]]),
                                "--", rscript, "--vanilla", server), home, project)
    expect_equal(res$status, 0, info = res$out)
    entry <- list(type = "stdio", command = rscript, args = c("--vanilla", server), env = as.list(libs))
    res <- run_client(claude, c("mcp", "add-json", "from-json", jsonlite::toJSON(entry, auto_unbox = TRUE)),
                      home, project)
    expect_equal(res$status, 0, info = res$out)
    # What mcp_config() printed before: -e takes several values, so it takes
    # the name too, and Claude Code refuses the command.
    res <- run_client(claude, c("mcp", "add", "--transport", "stdio", "--env", "A=1", "old-form",
                                "--", rscript, "--vanilla", server), home, project)
    expect_false(res$status == 0)
    expect_match(res$out, "Invalid environment variable format: old-form", fixed = TRUE)

    res <- run_client(claude, c("mcp", "list"), home, project,
                      env = c(MCPLITE_FROM_CLIENT = "inherited", MY_API_TOKEN = "not-a-secret"))
    expect_equal(res$status, 0, info = res$out)
    for (name in c("plain", "one-env", "several", "help-form", "from-json")) {
      line <- grep(paste0("^", name, ": "), strsplit(res$out, "\n")[[1]], value = TRUE)
      expect_length(line, 1)
      expect_match(line, "\u2714 Connected", fixed = TRUE, info = res$out)
    }
    expect_no_match(res$out, "old-form")
    # Claude Code starts servers with its own environment, and the entry's on top.
    seen <- recorded_envs(server)
    expect_gte(length(seen), 5)
    for (env in seen) {
      expect_equal(env[["MCPLITE_FROM_CLIENT"]], "inherited")
      expect_equal(env[["MY_API_TOKEN"]], "not-a-secret")
      expect_equal(env[["CLAUDECODE"]], "1")
    }
    expect_true(any(vapply(seen, function(e) identical(e["GREETING"][[1]], "hello world"), logical(1))))
    res <- run_client(claude, c("mcp", "get", "several"), home, project)
    expect_match(res$out, "GREETING=hello world", fixed = TRUE)
    expect_match(res$out, "QUOTE=it's", fixed = TRUE)
    expect_match(res$out, "EQUALS=a=b", fixed = TRUE)
    # Everything went into the temporary home.
    expect_true(file.exists(file.path(home, ".claude", ".claude.json")))
  })
})

test_that("Gemini CLI connects to the server mcp_config(write = TRUE) wrote; its own mcp add keeps it", {
  gemini <- client_program("gemini")
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    server <- env_server(file.path(home, "server"))
    settings <- file.path(home, ".gemini", "settings.json")
    dir.create(dirname(settings))
    writeLines(c("{", "  \"privacy\": {", "    \"usageStatisticsEnabled\": false", "  }", "}"), settings)
    libs <- child_env()
    out <- capture.output(written <- mcp_config(server, "gemini", env = c(libs, FROM_CONFIG = "given"), write = TRUE))
    expect_equal(written, settings)
    # gemini mcp add (user scope) writes into the same file.
    res <- run_client(gemini, c("mcp", "add", "--scope", "user", "-e", paste0("R_LIBS=", libs[["R_LIBS"]]),
                                "by-gemini", config_rscript(), "--vanilla", server), home, project)
    expect_equal(res$status, 0, info = res$out)
    cfg <- jsonlite::read_json(settings)
    expect_equal(names(cfg$mcpServers), c("env-server", "by-gemini"))
    expect_equal(cfg$privacy, list(usageStatisticsEnabled = FALSE))
    expect_equal(cfg$mcpServers[["by-gemini"]]$args, list("--vanilla", server))

    res <- run_client(gemini, c("mcp", "list"), home, project,
                      env = c(MCPLITE_FROM_CLIENT = "inherited", MY_API_TOKEN = "not-a-secret"))
    expect_equal(res$status, 0, info = res$out)
    for (name in c("env-server", "by-gemini")) {
      line <- grep(paste0("\u2713 ", name, ": "), strsplit(res$out, "\n")[[1]], value = TRUE, fixed = TRUE)
      expect_length(line, 1)
      expect_match(line, "(stdio) - Connected", fixed = TRUE, info = res$out)
    }
    # Gemini CLI passes its environment on without the variables whose names
    # look secret (TOKEN, KEY, ...); the entry's own env arrives.
    seen <- recorded_envs(server)
    expect_gte(length(seen), 2)
    for (env in seen) {
      expect_equal(env[["MCPLITE_FROM_CLIENT"]], "inherited")
      expect_false("MY_API_TOKEN" %in% names(env))
    }
    expect_true(any(vapply(seen, function(e) identical(e["FROM_CONFIG"][[1]], "given"), logical(1))))
  })
})

test_that("Codex CLI lists the entry mcp_config(write = TRUE) wrote and the one its printed command added", {
  codex <- client_program("codex")
  skip_on_os("windows") # the printed command is run through sh
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    server <- env_server(file.path(home, "server"))
    config <- file.path(home, ".codex", "config.toml")
    dir.create(dirname(config))
    old <- c("# kept by hand", "check_for_update_on_startup = false", "", "[analytics]", "enabled = false")
    writeLines(old, config)
    out <- capture.output(written <- mcp_config(server, "codex", env = c(R_LIBS = "/opt/R/lib"), write = TRUE))
    expect_equal(written, config)
    out <- capture.output(mcp_config(server, "codex", name = "by-command",
                                     env = c(GREETING = "hello world", QUOTE = "it's", EQUALS = "a=b")))
    cmd <- out[[length(out)]]
    expect_match(cmd, "^codex mcp add by-command --env 'GREETING=hello world' --env ")
    res <- run_client("sh", c("-c", sub("^codex", shQuote(codex), cmd)), home, project)
    expect_equal(res$status, 0, info = res$out)
    expect_match(res$out, "Added global MCP server 'by-command'", fixed = TRUE)

    res <- run_client(codex, c("mcp", "list", "--json"), home, project)
    expect_equal(res$status, 0, info = res$out)
    listed <- jsonlite::parse_json(res$stdout)
    names(listed) <- vapply(listed, `[[`, "", "name")
    expect_setequal(names(listed), c("env-server", "by-command"))
    for (s in listed) {
      expect_true(s$enabled)
      expect_equal(s$transport$type, "stdio")
      expect_equal(s$transport$command, config_rscript())
      expect_equal(s$transport$args, list("--vanilla", server))
    }
    expect_equal(listed[["env-server"]]$transport$env, list(R_LIBS = "/opt/R/lib"))
    expect_equal(listed[["by-command"]]$transport$env[c("GREETING", "QUOTE", "EQUALS")],
                 list(GREETING = "hello world", QUOTE = "it's", EQUALS = "a=b"))
    res <- run_client(codex, c("mcp", "list"), home, project)
    expect_match(res$out, "env-server", fixed = TRUE)
    # Both edits kept the settings and the comment at the top.
    expect_equal(readLines(config)[seq_along(old)], old)
  })
})

test_that("an entry that was a remote server becomes the script's stdio server, as Gemini CLI and Codex CLI read it", {
  gemini <- client_program("gemini")
  codex <- client_program("codex")
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    server <- env_server(file.path(home, "server"))
    settings <- file.path(home, ".gemini", "settings.json")
    dir.create(dirname(settings))
    writeLines(c("{", "  \"mcpServers\": {", "    \"env-server\": {",
                 "      \"httpUrl\": \"http://127.0.0.1:9/mcp\",", "      \"timeout\": 30000", "    }", "  }", "}"),
               settings)
    out <- capture.output(mcp_config(server, "gemini", env = child_env(), write = TRUE))
    expect_match(out, "updated the server \"env-server\"", fixed = TRUE)
    res <- run_client(gemini, c("mcp", "list"), home, project)
    line <- grep("env-server: ", strsplit(res$out, "\n")[[1]], value = TRUE, fixed = TRUE)
    expect_length(line, 1)
    expect_match(line, "(stdio) - Connected", fixed = TRUE, info = res$out)

    config <- file.path(home, ".codex", "config.toml")
    dir.create(dirname(config))
    writeLines(c("[mcp_servers.env-server]", "url = \"http://127.0.0.1:9/mcp\"",
                 "bearer_token_env_var = \"TOKEN\"", "startup_timeout_sec = 20"), config)
    out <- capture.output(mcp_config(server, "codex", write = TRUE))
    res <- run_client(codex, c("mcp", "list", "--json"), home, project)
    expect_equal(res$status, 0, info = res$out)
    listed <- jsonlite::parse_json(res$stdout)
    expect_length(listed, 1)
    expect_equal(listed[[1]]$transport$type, "stdio")
    expect_equal(listed[[1]]$transport$args, list("--vanilla", server))
  })
})

test_that("Gemini CLI's client rejects a text block that parses as a JSON number or array", {
  probe <- client_script("gemini-call.mjs")
  skip_if_no_mcplite_child()
  server <- server_script(c(
    "library(mcplite)",
    "mcp_server(list(",
    "  tool(function() 5, 'A number.', name = 'number'),",
    "  tool(function() c(1, 2), 'Two numbers.', name = 'vector'),",
    "  tool(function() '42', 'A string of digits.', name = 'digits'),",
    "  tool(function() data.frame(x = 1:2), 'A data frame.', name = 'frame'),",
    "  tool(function() TRUE, 'A flag.', name = 'flag'),",
    "  tool(function() 'hello', 'A word.', name = 'word'),",
    "  tool(function() list(total = 5), 'A named list.', name = 'named_list'),",
    "  tool(function() tool_result(structured_content = list(total = 5)), 'Structured.', name = 'structured')",
    "))"
  ))
  res <- processx::run("node", c(probe, config_rscript(), "--vanilla", server),
                       env = c("current", child_env()), timeout = 90, error_on_status = FALSE)
  expect_equal(res$status, 0, info = res$stderr)
  out <- jsonlite::parse_json(res$stdout)
  for (name in c("number", "vector", "digits", "frame", "flag")) {
    expect_false(out[[name]]$ok)
    expect_match(out[[name]]$error, "expected record", fixed = TRUE)
    expect_match(out[[name]]$error, "structuredContent", fixed = TRUE)
  }
  expect_match(out$number$error, "received number", fixed = TRUE)
  expect_match(out$vector$error, "received array", fixed = TRUE)
  expect_match(out$flag$error, "received boolean", fixed = TRUE)
  expect_true(out$word$ok)
  expect_null(out$word$structuredContent)
  for (name in c("named_list", "structured")) {
    expect_true(out[[name]]$ok)
    expect_equal(out[[name]]$structuredContent, list(total = 5))
  }
})

test_that("Codex CLI asks the model before a slow server is ready, unless the entry says required = true", {
  mock <- client_script("mock-model.mjs")
  codex <- client_program("codex")
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    # The server is held before it serves until the test creates the file
    # RELEASE names (a barrier, not a delay). Each run's servers log to the
    # file the entry's env names: a server an earlier run started late logs
    # to that run's file.
    server <- server_script(c(
      "log <- Sys.getenv('SERVER_LOG')",
      "cat(Sys.getpid(), 'start\\n', file = log, append = TRUE)",
      sprintf("writeLines(Sys.getenv(c('MCPLITE_FROM_CLIENT', 'FROM_CONFIG'), 'unset'), %s)",
              deparse(file.path(home, "server-env.txt"))),
      "while (!file.exists(Sys.getenv('RELEASE'))) Sys.sleep(0.02)",
      "cat(Sys.getpid(), 'serving\\n', file = log, append = TRUE)",
      "mcplite::mcp_server(mcplite::tool(function() 'ok', 'Answer ok.', name = 'slow_ping'))"
    ), dir = file.path(home, "my-tools"))
    port_file <- file.path(home, "port")
    requests <- file.path(home, "requests.jsonl")
    model <- processx::process$new("node", c(mock, port_file, requests), cleanup = TRUE)
    on.exit(model$kill(), add = TRUE)
    expect_true(wait_until(function() file.exists(port_file) && length(readLines(port_file, warn = FALSE)) > 0, 30))
    port <- readLines(port_file, warn = FALSE)
    config <- file.path(home, ".codex", "config.toml")
    dir.create(dirname(config))
    writeLines(c(
      "model = \"mock-model\"", "model_provider = \"mock\"", "check_for_update_on_startup = false", "",
      "[analytics]", "enabled = false", "",
      "[model_providers.mock]", "name = \"mock\"", sprintf("base_url = \"http://127.0.0.1:%s/v1\"", port),
      "env_key = \"MOCK_MODEL_KEY\"", "wire_api = \"responses\"", "request_max_retries = 0", "stream_max_retries = 0"
    ), config)
    entry_env <- function(run) {
      c(child_env(), FROM_CONFIG = "given", SERVER_LOG = file.path(home, paste0(run, ".txt")),
        RELEASE = file.path(home, paste0(run, ".release")))
    }
    out <- capture.output(mcp_config(server, "codex", env = entry_env("optional"), write = TRUE))
    # `codex exec` started; `hold_until_asked`: the servers stay held until the
    # model has been asked (else they are let go as soon as one has started).
    # Returns the tools of the first model request, and whether the model was
    # asked while every server of the run was still held.
    first_request <- function(run, hold_until_asked) {
      log <- file.path(home, paste0(run, ".txt"))
      release <- file.path(home, paste0(run, ".release"))
      unlink(requests)
      client <- processx::process$new(
        codex, c("exec", "--skip-git-repo-check", "say hi"), wd = project, stdin = NULL,
        stdout = "|", stderr = "2>&1", cleanup = TRUE,
        env = c("current", config_home_env(home), NO_COLOR = "1",
                MOCK_MODEL_KEY = "not-a-key", MCPLITE_FROM_CLIENT = "inherited")
      )
      on.exit(client$kill(), add = TRUE)
      asked <- function() file.exists(requests) && length(readLines(requests, warn = FALSE)) > 0
      started <- function() file.exists(log) && any(grepl("start", readLines(log, warn = FALSE)))
      expect_true(wait_until(if (hold_until_asked) asked else started, 60), info = run)
      held_when_asked <- asked() && !any(grepl("serving", readLines(log, warn = FALSE)))
      file.create(release)
      expect_true(wait_until(asked, 60), info = run)
      client$wait(60000)
      req <- jsonlite::parse_json(readLines(requests, n = 1))
      list(tools = unlist(req$tools), held_when_asked = held_when_asked)
    }
    optional <- first_request("optional", hold_until_asked = TRUE)
    # Codex asked the model while the server was held, without its tools.
    expect_true(optional$held_when_asked)
    expect_false(any(grepl("my.tools|slow_ping", optional$tools)), info = paste(optional$tools, collapse = " "))
    # Codex passes on only a few variables of its own environment (this one
    # not), and the entry's env.
    expect_equal(readLines(file.path(home, "server-env.txt")), c("unset", "given"))

    # required = true, added by hand, is kept when mcp_config() writes the
    # entry again; then Codex waits for the server.
    lines <- readLines(config)
    at <- which(lines == "[mcp_servers.my-tools]")
    writeLines(append(lines, "required = true", after = at), config)
    out <- capture.output(mcp_config(server, "codex", env = entry_env("required"), write = TRUE))
    expect_true("required = true" %in% readLines(config))
    required <- first_request("required", hold_until_asked = FALSE)
    # The tools in the first request show Codex waited for tools/list.
    expect_true(any(grepl("my.tools|slow_ping", required$tools)), info = paste(required$tools, collapse = " "))
  })
})

test_that("Claude Code calls a tool of the server mcp_config() describes, through a scripted model", {
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    server <- server_script(c(
      "mcplite::mcp_server(mcplite::tool(function(a, b) a + b, 'Add two numbers.', name = 'add',",
      "  arguments = list(a = mcplite::type_number('First.'), b = mcplite::type_number('Second.'))))"
    ))
    file <- file.path(home, "mcp.json")
    out <- capture.output(mcp_config(server, "claude-desktop", name = "r", env = child_env(), write = TRUE, path = file))
    call <- claude_tool_call(home, project, file, "mcp__r__add", list(a = 2, b = 40))
    results <- claude_tool_results(call)
    expect_length(results, 1)
    expect_false(isTRUE(results[[1]]$is_error), info = call$out)
    expect_equal(results[[1]]$content[[1]]$text, "42", info = call$out)
    # The model saw the tool offered and got the result back.
    expect_true("mcp__r__add" %in% unlist(call$requests[[1]]$tools))
    expect_equal(call$requests[[length(call$requests)]]$results[[1]]$text, "42")
  })
})
