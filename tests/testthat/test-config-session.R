# mcp_config(session = ): the entry that starts the session server,
# Rscript --vanilla -e "mcplite::mcp_session_server()", in every client's
# format, printed and written; and the clients' own commands taking what is
# printed (Claude Code, Gemini CLI and Codex CLI from npm, helper-config.R).
# The server itself is the session link's to test.

session_args <- c("--vanilla", "-e", "mcplite::mcp_session_server()")
session_rscript <- function() normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE)
scrub_rscript <- function(x) gsub(session_rscript(), "<Rscript>", x, fixed = TRUE)
json_clients <- c("claude-desktop", "vscode", "cursor", "gemini")

test_that("mcp_config(session =) prints every client's entry for the session server", {
  for (client in json_clients) {
    for (session in list(TRUE, "my analysis")) {
      out <- capture.output(text <- mcp_config(session = session, client = client, env = c(R_LIBS = "/opt/R/lib")))
      lines <- strsplit(text, "\n")[[1]]
      expect_equal(out[seq_along(lines) + 1], lines)
      cfg <- jsonlite::parse_json(text)
      servers <- cfg[[if (client == "vscode") "servers" else "mcpServers"]]
      name <- if (isTRUE(session)) "r-session" else "r-session-my-analysis"
      expect_named(servers, name)
      entry <- servers[[name]]
      expect_equal(entry$command, session_rscript())
      expect_equal(entry$args, as.list(session_args))
      expect_equal(entry$env, c(list(R_LIBS = "/opt/R/lib"), if (!isTRUE(session)) list(MCPLITE_SESSION = "my analysis")))
      if (client == "vscode") expect_equal(entry$type, "stdio")
    }
  }
  expect_snapshot(transform = scrub_rscript, {
    mcp_config(session = TRUE)
    mcp_config(session = TRUE, client = "claude-code")
    mcp_config(session = TRUE, client = "vscode")
    mcp_config(session = TRUE, client = "cursor")
    mcp_config(session = TRUE, client = "gemini")
    mcp_config(session = TRUE, client = "codex")
    mcp_config(session = "my analysis", client = "claude-code", env = c(R_LIBS = "/opt/R/lib"))
    mcp_config(session = "it's \"mine\"", client = "gemini", name = "mine")
    mcp_config(session = "analysis", client = "codex", env = c(R_LIBS = "/opt/R/lib"))
  })
})

test_that("the session commands quote the expression for the shell, and every word comes back", {
  skip_on_os("windows") # run through sh
  for (client in c("claude-code", "codex", "gemini")) {
    out <- capture.output(mcp_config(session = "it's mine", client = client, env = c(R_LIBS = "/a b")))
    cmd <- grep(paste0("^", sub("-code", "", client), " mcp add "), out, value = TRUE)
    expect_length(cmd, 1)
    # The words a shell passes on, printed one a line by the shell itself.
    words <- system2("sh", c("-c", shQuote(paste("printf '%s\\n'", sub("^[a-z]+ ", "", cmd)))), stdout = TRUE)
    program <- which(words == session_rscript())
    expect_length(program, 1)
    expect_equal(tail(words, 3), session_args)
    expect_true("MCPLITE_SESSION=it's mine" %in% words)
    expect_true("R_LIBS=/a b" %in% words)
  }
})

test_that("write = TRUE adds the session server to every client's file, keeping what is there", {
  with_config_home({
    files <- c(
      "claude-desktop" = file.path(home, ".config", "Claude", "claude_desktop_config.json"),
      vscode = file.path(home, ".config", "Code", "User", "mcp.json"),
      cursor = file.path(home, ".cursor", "mcp.json"),
      gemini = file.path(home, ".gemini", "settings.json")
    )
    if (Sys.info()[["sysname"]] != "Linux") skip("the user-wide paths of this test are Linux's")
    for (client in names(files)) {
      key <- if (client == "vscode") "servers" else "mcpServers"
      dir.create(dirname(files[[client]]), recursive = TRUE)
      writeLines(c("{", "  \"theme\": \"dark\",", sprintf("  \"%s\": {", key),
                   "    \"other\": {\"command\": \"node\", \"args\": [\"server.js\"]}", "  }", "}"),
                 files[[client]])
      out <- capture.output(written <- mcp_config(session = TRUE, client = client, write = TRUE))
      expect_equal(written, files[[client]])
      out <- capture.output(mcp_config(session = "analysis", client = client, write = TRUE,
                                       env = c(R_LIBS = "/opt/R/lib")))
      expect_match(out[[2]], "mcp_session(tools, name = \"analysis\")", fixed = TRUE)
      cfg <- jsonlite::read_json(files[[client]])
      expect_equal(names(cfg), c("theme", key))
      expect_equal(names(cfg[[key]]), c("other", "r-session", "r-session-analysis"))
      expect_equal(cfg[[key]]$other, list(command = "node", args = list("server.js")))
      for (name in c("r-session", "r-session-analysis")) {
        entry <- cfg[[key]][[name]]
        expect_equal(entry$command, session_rscript())
        expect_equal(entry$args, as.list(session_args))
        if (client == "vscode") expect_equal(entry$type, "stdio")
      }
      expect_null(cfg[[key]][["r-session"]]$env)
      expect_equal(cfg[[key]][["r-session-analysis"]]$env, list(R_LIBS = "/opt/R/lib", MCPLITE_SESSION = "analysis"))
      expect_true(file.exists(paste0(files[[client]], ".bak")))
    }

    # Codex: TOML, edited in place.
    config <- file.path(home, ".codex", "config.toml")
    dir.create(dirname(config))
    old <- c("# kept", "model = \"o3\"", "", "[mcp_servers.other]", "command = \"npx\"")
    writeLines(old, config)
    out <- capture.output(mcp_config(session = TRUE, client = "codex", write = TRUE))
    expect_equal(scrub_home(out, home), c(
      "Codex CLI: added the server \"r-session\" in <home>/.codex/config.toml. The previous file is kept as <home>/.codex/config.toml.bak.",
      "Then, in the R session to work in, run mcplite::mcp_session(tools) with the tools to serve; see vignette(\"live-session\", package = \"mcplite\")."
    ))
    out <- capture.output(mcp_config(session = "say \"hi\"", client = "codex", write = TRUE))
    expect_equal(readLines(config), c(
      old, "",
      "[mcp_servers.r-session]",
      sprintf("command = \"%s\"", session_rscript()),
      "args = [\"--vanilla\", \"-e\", \"mcplite::mcp_session_server()\"]",
      "",
      "[mcp_servers.r-session-say-hi]",
      sprintf("command = \"%s\"", session_rscript()),
      "args = [\"--vanilla\", \"-e\", \"mcplite::mcp_session_server()\"]",
      "",
      "[mcp_servers.r-session-say-hi.env]",
      "MCPLITE_SESSION = \"say \\\"hi\\\"\""
    ))

    # A script's entry of the same name becomes the session server's: its
    # command and args change, its other settings stay.
    script <- server_script("mcplite::mcp_server(list())", dir = file.path(home, "r-session"))
    out <- capture.output(mcp_config(script, "cursor", write = TRUE, env = c(R_LIBS = "/opt/R/lib")))
    cfg <- jsonlite::read_json(files[["cursor"]])
    expect_equal(cfg$mcpServers[["r-session"]]$args, list("--vanilla", normalizePath(script, winslash = "/")))
    out <- capture.output(mcp_config(session = TRUE, client = "cursor", write = TRUE))
    expect_match(out[[1]], "updated the server \"r-session\"", fixed = TRUE)
    cfg <- jsonlite::read_json(files[["cursor"]])
    expect_equal(cfg$mcpServers[["r-session"]], list(command = session_rscript(), args = as.list(session_args)))
  })
})

test_that("mcp_config() wants a script or `session`, not both or neither", {
  script <- server_script("mcplite::mcp_server(list())")
  expect_snapshot(error = TRUE, {
    mcp_config()
    mcp_config(session = FALSE)
    mcp_config(script, session = TRUE)
    mcp_config(script, session = "analysis")
    mcp_config(session = NA)
    mcp_config(session = "")
    mcp_config(session = c("a", "b"))
    mcp_config(session = "a", env = c(MCPLITE_SESSION = "b"))
    mcp_config(session = TRUE, client = "claude-code", write = TRUE)
    mcp_config(session = TRUE, client = "claude-code", name = "r session")
  })
  for (bad in list(list(), list(session = TRUE, script = script), list(session = NA))) {
    cnd <- expect_error(do.call(mcp_config, bad), class = "mcplite_error_argument")
    expect_s3_class(cnd, "mcplite_error")
    expect_equal(cnd$arg, "session")
  }
  # The same name in `env` and `session` is one fact said twice: accepted.
  out <- capture.output(text <- mcp_config(session = "a", env = c(MCPLITE_SESSION = "a")))
  expect_equal(jsonlite::parse_json(text)$mcpServers[["r-session-a"]]$env, list(MCPLITE_SESSION = "a"))
})

test_that("Claude Code, Gemini CLI and Codex CLI take the printed session commands as printed", {
  claude <- client_program("claude")
  gemini <- client_program("gemini")
  codex <- client_program("codex")
  skip_on_os("windows") # the printed commands are run through sh
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    dir.create(file.path(home, ".codex"))
    programs <- c(claude = claude, gemini = gemini, codex = codex)
    for (client in c("claude-code", "gemini", "codex")) {
      for (session in list(TRUE, "it's mine")) {
        out <- capture.output(mcp_config(session = session, client = client, env = c(GREETING = "hello world")))
        word <- sub("-code", "", client)
        cmd <- grep(paste0("^", word, " mcp add "), out, value = TRUE)
        res <- run_client("sh", c("-c", sub(paste0("^", word), shQuote(programs[[word]]), cmd)), home, project)
        expect_equal(res$status, 0, info = res$out)
      }
    }
    entries <- list(
      claude = jsonlite::read_json(file.path(home, ".claude", ".claude.json"))$projects[[project]]$mcpServers,
      gemini = jsonlite::read_json(file.path(project, ".gemini", "settings.json"))$mcpServers
    )
    res <- run_client(codex, c("mcp", "list", "--json"), home, project)
    expect_equal(res$status, 0, info = res$out)
    listed <- jsonlite::parse_json(res$stdout)
    entries$codex <- stats::setNames(lapply(listed, `[[`, "transport"), vapply(listed, `[[`, "", "name"))
    for (client in names(entries)) {
      servers <- entries[[client]]
      expect_setequal(names(servers), c("r-session", "r-session-it-s-mine"))
      for (name in names(servers)) {
        expect_equal(servers[[name]]$command, session_rscript(), info = client)
        expect_equal(servers[[name]]$args, as.list(session_args), info = client)
        expect_equal(servers[[name]]$env$GREETING, "hello world", info = client)
      }
      expect_null(servers[["r-session"]]$env$MCPLITE_SESSION)
      expect_equal(servers[["r-session-it-s-mine"]]$env$MCPLITE_SESSION, "it's mine", info = client)
    }
    # What the printed Gemini CLI command avoids: without `--` after the
    # program, Gemini CLI takes Rscript's -e for its own and drops the
    # expression.
    res <- run_client(gemini, c("mcp", "add", "naive", session_rscript(), session_args), home, project)
    naive <- jsonlite::read_json(file.path(project, ".gemini", "settings.json"))$mcpServers$naive
    expect_false(identical(naive$args, as.list(session_args)))
    # And why it is not printed for a value with `=`: Gemini CLI's -e cuts it.
    res <- run_client(gemini, c("mcp", "add", "-e", "URL=http://x/?a=1", "cut", session_rscript(), "--", session_args),
                      home, project)
    cut <- jsonlite::read_json(file.path(project, ".gemini", "settings.json"))$mcpServers$cut
    expect_false(identical(cut$env$URL, "http://x/?a=1"))
    out <- capture.output(mcp_config(session = TRUE, client = "gemini", env = c(URL = "http://x/?a=1", A = "1")))
    expect_false(any(grepl("^gemini mcp add", out)))
    expect_true("(Not with gemini mcp add, which would cut the value of URL at its `=`: use `write = TRUE`.)" %in% out)
  })
})

test_that("the printed gemini mcp add command of a script starts the script", {
  gemini <- client_program("gemini")
  skip_on_os("windows") # the printed command is run through sh
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    script <- server_script(c(
      "mcplite::mcp_server(mcplite::tool(function() 'ok', 'Answer ok.', name = 'ping'))"
    ), dir = file.path(home, "my tools"))
    out <- capture.output(mcp_config(script, "gemini", env = c(child_env(), GREETING = "hello world")))
    cmd <- out[[length(out)]]
    expect_match(cmd, "^gemini mcp add -e R_LIBS=[^ ]+ -e 'GREETING=hello world' my-tools /[^ ]*Rscript -- --vanilla '/")
    res <- run_client("sh", c("-c", sub("^gemini", shQuote(gemini), cmd)), home, project)
    expect_equal(res$status, 0, info = res$out)
    res <- run_client(gemini, c("mcp", "list"), home, project)
    line <- grep("my-tools: ", strsplit(res$out, "\n")[[1]], value = TRUE, fixed = TRUE)
    expect_length(line, 1)
    expect_match(line, "(stdio) - Connected", fixed = TRUE, info = res$out)
  })
})

test_that("Claude Code and Gemini CLI start a user-wide server in the folder they run in", {
  # What the session server's choice by working directory relies on.
  claude <- client_program("claude")
  gemini <- client_program("gemini")
  skip_on_os("windows")
  skip_if_no_mcplite_child()
  with_config_home({
    project <- file.path(home, "project")
    dir.create(project)
    record <- file.path(home, "cwd.txt")
    script <- server_script(c(
      sprintf("cat(getwd(), '\\n', sep = '', file = %s, append = TRUE)", deparse(record)),
      "mcplite::mcp_server(mcplite::tool(function() 'ok', 'Answer ok.', name = 'ping'))"
    ), dir = file.path(home, "server"))
    libs <- child_env()
    res <- run_client(claude, c("mcp", "add", "--scope", "user", "--transport", "stdio", "where",
                                "--env", paste0("R_LIBS=", libs[["R_LIBS"]]), "--",
                                session_rscript(), "--vanilla", script), home, project)
    expect_equal(res$status, 0, info = res$out)
    res <- run_client(claude, c("mcp", "list"), home, project)
    expect_match(res$out, "where: .* Connected", info = res$out)
    expect_equal(readLines(record), normalizePath(project))
    unlink(record)
    out <- capture.output(mcp_config(script, "gemini", name = "where", env = libs, write = TRUE))
    res <- run_client(gemini, c("mcp", "list"), home, project)
    expect_match(res$out, "where: .* Connected", info = res$out)
    expect_equal(unique(readLines(record)), normalizePath(project))
  })
})
