# The wire JSON of a schema, written by the same fixed encoder the server uses.
wire <- function(x) {
  if (inherits(x, "mcplite_type")) x <- x$schema
  json_fixed(x)
}

input_json <- function(tool) json_fixed(tool_meta(tool)$input_schema)


# Evaluate `code` with environment variables set, then restore them.
with_envvars <- function(vars, code) {
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  do.call(Sys.setenv, vars)
  on.exit({
    for (nm in names(old)) {
      if (is.na(old[[nm]])) Sys.unsetenv(nm) else do.call(Sys.setenv, as.list(old[nm]))
    }
  })
  code
}

# Runs `code` (lines of R) as a server script under Rscript, feeds it the
# JSON-RPC `requests` (one string each) on stdin and returns the stdout lines.
# An initialize handshake for `version` is sent first.
serve_lines <- function(code, requests, version = "2025-06-18") {
  script <- tempfile(fileext = ".R")
  input <- tempfile()
  out <- tempfile()
  err <- tempfile()
  on.exit(unlink(c(script, input, out, err)))
  writeLines(c("library(mcplite)", code), script)
  init <- sprintf(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}',
    version
  )
  writeLines(c(init, '{"jsonrpc":"2.0","method":"notifications/initialized"}', requests), input)
  status <- with_envvars(
    list(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)),
    system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
            stdin = input, stdout = out, stderr = err)
  )
  lines <- readLines(out)
  attr(lines, "status") <- status
  attr(lines, "stderr") <- readLines(err)
  lines
}

# The response line with the given JSON-RPC id.
response <- function(lines, id) {
  hit <- grep(sprintf('"id":%d,', id), lines, fixed = TRUE, value = TRUE)
  if (length(hit) != 1) stop("no single response with id ", id, ":\n", paste(lines, collapse = "\n"))
  hit
}
