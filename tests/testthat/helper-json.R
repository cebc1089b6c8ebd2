# The wire JSON of a schema, written by the same fixed encoder the server uses.
wire <- function(x) {
  if (inherits(x, "mcplite_type")) x <- x$schema
  json_fixed(x)
}

input_json <- function(tool) json_fixed(tool_meta(tool)$input_schema)

# Parse JSON text with jsonlite, for comparing structure rather than bytes.
parse <- function(text) jsonlite::parse_json(text, simplifyVector = FALSE)

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
