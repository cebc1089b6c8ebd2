# Helpers for the mcp_client() and mcp_check() tests.

# The environment a child server needs to find the mcplite under test.
child_env <- function() c(R_LIBS = mcp_child_libs())

# A client on the fixture server (tests/testthat/fixtures/server.R), closed
# when the calling test ends.
fixture_client <- function(protocol = "2025-11-25", server = "server.R", ...) {
  local_mcp_client(mcp_fixture_server(server), env = child_env(), protocol = protocol, ...,
                   .local_envir = parent.frame())
}

# Write R code to a temporary server script, `<tempdir>/my-tools/server.R`
# (so the server name derived from it is stable); returns its path.
server_script <- function(code, dir = file.path(tempfile("mcp-script-"), "my-tools")) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  path <- file.path(dir, "server.R")
  writeLines(code, path)
  normalizePath(path)
}

# Validate the exact wire line of the client's last answer against the
# official schema of the version in force.
validate_last <- function(client, def, strict = TRUE) {
  line <- client$.state()$last_response
  testthat::expect_true(is.character(line) && length(line) == 1)
  mcp_validate(list(structure(list(), json = line)), client$protocol, def, strict = strict)
}

# Does a process with this id exist (a zombie counts)? Linux only.
process_exists <- function(pid) file.exists(file.path("/proc", pid))

skip_if_no_proc <- function() {
  testthat::skip_if_not(dir.exists("/proc/self"), "process checks read /proc (Linux)")
}

# The official example server from npm, installed by `npm ci` in tests/node.
# tools/test.sh sets MCPLITE_REQUIRE_NODE_TESTS=true: there a missing server
# fails instead of skipping.
everything_server <- function() {
  bin <- tryCatch(
    testthat::test_path("..", "node", "node_modules", ".bin",
                        if (.Platform$OS.type == "windows") "mcp-server-everything.cmd" else "mcp-server-everything"),
    error = function(e) ""
  )
  have <- nzchar(bin) && file.exists(bin) && nzchar(Sys.which("node"))
  if (!have) {
    why <- "@modelcontextprotocol/server-everything is not installed (run `npm ci` in tests/node; the R CMD check tarball has no tests/node)"
    if (identical(Sys.getenv("MCPLITE_REQUIRE_NODE_TESTS"), "true")) testthat::fail(why)
    testthat::skip(why)
  }
  normalizePath(bin)
}

# Scrub what changes between runs from printed reports.
scrub_report <- function(lines, script_dir = NULL) {
  if (!is.null(script_dir)) lines <- gsub(script_dir, "<dir>", lines, fixed = TRUE)
  lines <- gsub(file.path(R.home("bin"), "Rscript"), "<Rscript>", lines, fixed = TRUE)
  lines <- gsub(normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE), "<Rscript>", lines, fixed = TRUE)
  lines <- gsub("[0-9]+\\.[0-9]+ seconds", "<n> seconds", lines)
  lines <- gsub("\"R_LIBS\": \"[^\"]*\"", "\"R_LIBS\": \"<libs>\"", lines)
  lines <- gsub("R_LIBS = \\\\?\"[^\"]*\\\\?\"", "R_LIBS = \"<libs>\"", lines)
  lines <- gsub("loads it from [^ ]+\\.$", "loads it from <lib>.", lines)
  lines
}
