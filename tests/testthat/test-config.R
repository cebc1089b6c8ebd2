scrub_config <- function(x, script) {
  x <- gsub(dirname(script), "<dir>", x, fixed = TRUE)
  gsub(normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE), "<Rscript>", x, fixed = TRUE)
}

test_that("mcp_config() prints each client's snippet with absolute paths", {
  script <- server_script("mcplite::mcp_server(list())")
  rscript <- normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE)
  for (client in c("claude-desktop", "cursor", "vscode", "gemini")) {
    out <- capture.output(text <- mcp_config(script, client, env = c(R_LIBS = "/opt/R/lib")))
    lines <- strsplit(text, "\n")[[1]]
    expect_equal(out[seq_along(lines) + 1], lines)
    cfg <- jsonlite::parse_json(text)
    key <- if (client == "vscode") "servers" else "mcpServers"
    entry <- cfg[[key]][["my-tools"]]
    expect_equal(entry$command, rscript)
    expect_equal(entry$args, list("--vanilla", normalizePath(script, winslash = "/")))
    expect_equal(entry$env, list(R_LIBS = "/opt/R/lib"))
    if (client == "vscode") expect_equal(entry$type, "stdio")
  }
  expect_snapshot(transform = function(x) scrub_config(x, script), {
    mcp_config(script)
    mcp_config(script, "cursor", name = "weather")
    mcp_config(script, "vscode", env = c(R_LIBS = "/opt/R/lib"))
    mcp_config(script, "gemini", name = "weather")
  })
})

test_that("the Claude Code command has the name before --env, which takes several values", {
  script <- server_script("mcplite::mcp_server(list())")
  expect_snapshot(transform = function(x) scrub_config(x, script), {
    mcp_config(script, "claude-code")
    mcp_config(script, "claude-code", env = c(R_LIBS = "/opt/R/lib"))
    mcp_config(script, "claude-code", env = c(R_LIBS = "/opt/R/lib", TOKEN = "a b", EMPTY = ""))
  })
  out <- capture.output(text <- mcp_config(script, "claude-code", env = c(A = "1", B = "2")))
  words <- strsplit(text, " ")[[1]]
  expect_equal(words[1:6], c("claude", "mcp", "add", "--transport", "stdio", "my-tools"))
  expect_equal(words[7:10], c("--env", "A=1", "--env", "B=2"))
  expect_equal(words[[11]], "--")
})

test_that("Codex gets a TOML table and the equivalent codex mcp add command", {
  script <- server_script("mcplite::mcp_server(list())")
  expect_snapshot(transform = function(x) scrub_config(x, script), {
    mcp_config(script, "codex")
    mcp_config(script, "codex", env = c(R_LIBS = "/opt/R/lib", TOKEN = "say \"hi\"\\"), name = "r.tools")
  })
  out <- capture.output(text <- mcp_config(script, "codex"))
  expect_match(text, "^\\[mcp_servers\\.my-tools\\]\ncommand = \"[^\"]+\"\nargs = \\[\"--vanilla\", \"[^\"]+server\\.R\"\\]$")
})

test_that("the default name comes from the script, or its directory for server.R", {
  dir <- tempfile("cfg-")
  dir.create(dir)
  file.create(file.path(dir, "Weather Tools.R"))
  out <- capture.output(text <- mcp_config(file.path(dir, "Weather Tools.R")))
  expect_match(text, "\"weather-tools\"", fixed = TRUE)
  expect_equal(server_name("/x/Weather Tools.R"), "weather-tools")
  expect_equal(server_name("/x/stats-helper/server.R"), "stats-helper")
  expect_equal(server_name("/x/___/server.R"), "___")
  expect_equal(server_name("/x/.../main.R"), "r-tools")
})

test_that("mcp_config() checks its arguments", {
  script <- server_script("mcplite::mcp_server(list())")
  expect_snapshot(error = TRUE, {
    mcp_config("/nonexistent/server.R")
    mcp_config(script, "chatgpt")
    mcp_config(script, env = list(R_LIBS = 1))
    mcp_config(script, name = "")
    mcp_config(script, "claude-code", name = "my tools")
    mcp_config(script, "codex", name = "my tools")
    mcp_config(script, write = NA)
    mcp_config(script, path = "/tmp/x.json")
    mcp_config(script, "claude-code", write = TRUE)
  })
  cnd <- expect_error(mcp_config(script, "claude-code", write = TRUE), class = "mcplite_error_argument")
  expect_equal(cnd$arg, "write")
  cnd <- expect_error(mcp_config(script, path = "/tmp/x.json"), class = "mcplite_error_argument")
  expect_equal(cnd$arg, "path")
  cnd <- expect_error(mcp_config(script, "codex", name = "my tools"), class = "mcplite_error_argument")
  expect_equal(cnd$arg, "name")
})

# ---- write = TRUE

test_that("write = TRUE writes each client's user-wide file under the home directory", {
  script <- server_script("mcplite::mcp_server(list())")
  with_config_home({
    sys <- Sys.info()[["sysname"]]
    appdata <- Sys.getenv("APPDATA")
    expected <- switch(sys,
      Windows = c("claude-desktop" = file.path(appdata, "Claude", "claude_desktop_config.json"),
                  vscode = file.path(appdata, "Code", "User", "mcp.json")),
      Darwin = c("claude-desktop" = file.path(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"),
                 vscode = file.path(home, "Library", "Application Support", "Code", "User", "mcp.json")),
      c("claude-desktop" = file.path(home, ".config", "Claude", "claude_desktop_config.json"),
        vscode = file.path(home, ".config", "Code", "User", "mcp.json"))
    )
    expected <- c(expected,
                  cursor = file.path(home, ".cursor", "mcp.json"),
                  gemini = file.path(home, ".gemini", "settings.json"),
                  codex = file.path(home, ".codex", "config.toml"))
    for (client in names(expected)) {
      out <- capture.output(written <- mcp_config(script, client, write = TRUE))
      expect_equal(normalizePath(written, winslash = "/"), normalizePath(expected[[client]], winslash = "/"))
      expect_true(file.exists(expected[[client]]))
      expect_false(file.exists(paste0(expected[[client]], ".bak")))
    }
    # XDG_CONFIG_HOME, CODEX_HOME and GEMINI_CLI_HOME move the files.
    Sys.setenv(CODEX_HOME = file.path(home, "codex-here"), GEMINI_CLI_HOME = file.path(home, "gemini-here"))
    out <- capture.output(written <- mcp_config(script, "codex", write = TRUE))
    expect_equal(written, file.path(home, "codex-here", "config.toml"))
    out <- capture.output(written <- mcp_config(script, "gemini", write = TRUE))
    expect_equal(written, file.path(home, "gemini-here", ".gemini", "settings.json"))
    if (sys == "Linux") {
      Sys.setenv(XDG_CONFIG_HOME = file.path(home, "xdg"))
      out <- capture.output(written <- mcp_config(script, "vscode", write = TRUE))
      expect_equal(written, file.path(home, "xdg", "Code", "User", "mcp.json"))
    }
    Sys.unsetenv(c("HOME", "USERPROFILE", "CODEX_HOME"))
    expect_snapshot(error = TRUE, mcp_config(script, "codex", write = TRUE))
    cnd <- expect_error(mcp_config(script, "codex", write = TRUE), class = "mcplite_error_argument")
    expect_equal(cnd$arg, "path")
  })
})

test_that("write = TRUE merges into a JSON file, keeping its servers, settings and indentation", {
  script <- server_script("mcplite::mcp_server(list())")
  with_config_home({
    path <- file.path(home, ".gemini", "settings.json")
    dir.create(dirname(path))
    old <- c(
      "{",
      "    \"theme\": \"GitHub\",",
      "    \"privacy\": {",
      "        \"usageStatisticsEnabled\": false",
      "    },",
      "    \"mcpServers\": {",
      "        \"other\": {",
      "            \"command\": \"node\",",
      "            \"args\": [\"server.js\"],",
      "            \"trust\": true",
      "        }",
      "    },",
      "    \"zoom\": 1.25",
      "}"
    )
    writeLines(old, path)
    out <- capture.output(written <- mcp_config(script, "gemini", env = c(R_LIBS = "/opt/R/lib"), write = TRUE))
    expect_equal(scrub_home(out, home),
                 "Gemini CLI: added the server \"my-tools\" in <home>/.gemini/settings.json. The previous file is kept as <home>/.gemini/settings.json.bak.")
    expect_equal(readLines(paste0(path, ".bak")), old)
    new <- readLines(path)
    cfg <- jsonlite::read_json(path)
    expect_equal(names(cfg), c("theme", "privacy", "mcpServers", "zoom"))
    expect_equal(cfg$privacy, list(usageStatisticsEnabled = FALSE))
    expect_equal(cfg$zoom, 1.25)
    expect_equal(names(cfg$mcpServers), c("other", "my-tools"))
    expect_equal(cfg$mcpServers$other, list(command = "node", args = list("server.js"), trust = TRUE))
    expect_equal(cfg$mcpServers[["my-tools"]]$env, list(R_LIBS = "/opt/R/lib"))
    expect_equal(new[2], "    \"theme\": \"GitHub\",")
    expect_true("        \"my-tools\": {" %in% new)

    # Again, with other settings in the entry: command, args and env are
    # updated, the rest is kept, in its place.
    cfg$mcpServers[["my-tools"]]$timeout <- 30000
    jsonlite::write_json(cfg, path, auto_unbox = TRUE, pretty = TRUE)
    before <- readLines(path)
    other_script <- server_script("mcplite::mcp_server(list())", dir = file.path(tempfile(), "my-tools"))
    out <- capture.output(mcp_config(other_script, "gemini", write = TRUE))
    expect_match(out, "updated the server \"my-tools\"", fixed = TRUE)
    expect_equal(readLines(paste0(path, ".bak")), before)
    cfg <- jsonlite::read_json(path)
    entry <- cfg$mcpServers[["my-tools"]]
    expect_equal(names(entry), c("command", "args", "timeout"))
    expect_equal(entry$args[[2]], normalizePath(other_script, winslash = "/"))
    expect_equal(entry$timeout, 30000)
    expect_equal(cfg$mcpServers$other$trust, TRUE)
  })
})

test_that("write = TRUE edits a TOML file in place: comments, order and layout stay", {
  script <- server_script("mcplite::mcp_server(list())")
  with_config_home({
    path <- file.path(home, ".codex", "config.toml")
    dir.create(dirname(path))
    old <- c(
      "# Codex settings, kept by hand",
      "model = \"o3\"  # the default model",
      "check_for_update_on_startup = false",
      "",
      "[mcp_servers.other]",
      "command = \"npx\"",
      "args = [ \"-y\", \"some-server\" ]   # odd spacing, kept",
      "",
      "# analytics off",
      "[analytics]",
      "enabled = false"
    )
    writeLines(old, path)
    out <- capture.output(mcp_config(script, "codex", env = c(R_LIBS = "/opt/R/lib"), write = TRUE))
    new <- readLines(path)
    expect_equal(new[seq_along(old)], old)
    rscript <- normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE)
    expect_equal(new[-seq_along(old)], c(
      "",
      "[mcp_servers.my-tools]",
      sprintf("command = \"%s\"", rscript),
      sprintf("args = [\"--vanilla\", \"%s\"]", normalizePath(script, winslash = "/")),
      "",
      "[mcp_servers.my-tools.env]",
      "R_LIBS = \"/opt/R/lib\""
    ))
    expect_equal(readLines(paste0(path, ".bak")), old)

    # Updating the entry edits its values where they are; a comment and a
    # setting added by hand stay, and the env table goes when there is none.
    lines <- readLines(path)
    at <- which(lines == "[mcp_servers.my-tools]")
    lines <- append(lines, c("startup_timeout_sec = 30  # R starts slowly", "required = true"), after = at + 2)
    writeLines(lines, path)
    out <- capture.output(mcp_config(script, "codex", write = TRUE))
    expect_equal(readLines(path), c(
      old, "",
      "[mcp_servers.my-tools]",
      sprintf("command = \"%s\"", rscript),
      sprintf("args = [\"--vanilla\", \"%s\"]", normalizePath(script, winslash = "/")),
      "startup_timeout_sec = 30  # R starts slowly",
      "required = true"
    ))
  })
})

test_that("files that cannot be merged are refused with a classed error, and nothing changes", {
  script <- server_script("mcplite::mcp_server(list())")
  with_config_home({
    vscode <- file.path(home, ".vscode", "mcp.json")
    dir.create(dirname(vscode))
    jsonc <- c("{", "  // VS Code allows comments here", "  \"servers\": {},", "}")
    writeLines(jsonc, vscode)
    bad_json <- file.path(home, "bad.json")
    writeLines(c("{", "  \"mcpServers\": {", "}"), bad_json)
    not_object <- file.path(home, "servers.json")
    writeLines("{\"mcpServers\": []}", not_object)
    bad_toml <- file.path(home, "config.toml")
    writeLines(c("model = \"o3\"", "[mcp_servers.x", "command = 1"), bad_toml)
    inline_toml <- file.path(home, "inline.toml")
    writeLines("mcp_servers = { other = { command = \"x\" } }", inline_toml)
    read_only <- file.path(home, "read-only.json")
    writeLines("{}", read_only)
    Sys.chmod(read_only, "0444")
    files <- c(vscode, bad_json, not_object, bad_toml, inline_toml, read_only)
    before <- lapply(files, readLines)

    expect_error(mcp_config(script, "vscode", write = TRUE, path = vscode), class = "mcplite_error_config_jsonc")
    expect_error(mcp_config(script, "cursor", write = TRUE, path = bad_json), class = "mcplite_error_config_invalid")
    expect_error(mcp_config(script, "codex", write = TRUE, path = bad_toml), class = "mcplite_error_config_invalid")
    expect_error(mcp_config(script, "codex", write = TRUE, path = inline_toml), class = "mcplite_error_config_layout")
    cnd <- expect_error(mcp_config(script, "claude-desktop", write = TRUE, path = read_only),
                        class = "mcplite_error_config_io")
    expect_s3_class(cnd, c("mcplite_error_config_io", "mcplite_error_config", "mcplite_error"))
    expect_equal(cnd$arg, "path")
    expect_equal(cnd$path, read_only)
    expect_snapshot(error = TRUE, transform = function(x) scrub_home(x, home), {
      mcp_config(script, "vscode", write = TRUE, path = vscode)
      mcp_config(script, "cursor", write = TRUE, path = bad_json)
      mcp_config(script, "gemini", write = TRUE, path = not_object)
      mcp_config(script, "codex", write = TRUE, path = bad_toml)
      mcp_config(script, "codex", write = TRUE, path = inline_toml)
      mcp_config(script, "claude-desktop", write = TRUE, path = read_only)
    })
    expect_equal(lapply(files, readLines), before)
    expect_false(any(file.exists(paste0(files, ".bak"))))
    # No temporary files were left behind either.
    expect_setequal(list.files(home, recursive = TRUE, all.files = TRUE, no.. = TRUE),
                    c(".vscode/mcp.json", "bad.json", "servers.json", "config.toml", "inline.toml", "read-only.json"))
    Sys.chmod(read_only, "0644")
  })
})

test_that("a project file is written where `path` says, created with its directory", {
  script <- server_script("mcplite::mcp_server(list())")
  with_config_home({
    path <- file.path(home, "project", ".vscode", "mcp.json")
    out <- capture.output(written <- mcp_config(script, "vscode", write = TRUE, path = path))
    expect_equal(scrub_home(out, home), "VS Code: added the server \"my-tools\" in <home>/project/.vscode/mcp.json.")
    cfg <- jsonlite::read_json(path)
    expect_equal(cfg$servers[["my-tools"]]$type, "stdio")
    # `~` is expanded.
    out <- capture.output(written <- mcp_config(script, "cursor", write = TRUE, path = "~/proj/.cursor/mcp.json"))
    expect_equal(normalizePath(written, winslash = "/"), file.path(home, "proj", ".cursor", "mcp.json"))
  })
})
