scrub_config <- function(x, script) {
  x <- gsub(dirname(script), "<dir>", x, fixed = TRUE)
  gsub(normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE), "<Rscript>", x, fixed = TRUE)
}

test_that("mcp_config() prints each client's snippet with absolute paths", {
  script <- server_script("mcplite::mcp_server(list())")
  rscript <- normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE)
  for (client in c("claude-desktop", "cursor", "vscode")) {
    out <- capture.output(text <- mcp_config(script, client, env = c(R_LIBS = "/opt/R/lib")))
    expect_equal(out[-1], strsplit(text, "\n")[[1]])
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
    mcp_config(script, "claude-code", env = c(R_LIBS = "/opt/R/lib", TOKEN = "a b"))
  })
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
  })
})
