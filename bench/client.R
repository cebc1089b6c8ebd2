# What mcp_client() costs on the client's side for large answers (issue 37
# item 5): R values are built from the answer as the core's reader read it,
# with no JSON text written and read again. Two scenarios, each timed as the
# median of BENCH_CLIENT_REPS calls after one warm-up call:
#
# 1. `$call()` of a tool returning tool_result(structured_content = list(rows = df)) for a
#    BENCH_CLIENT_ROWS-row data frame (integer, double, character and logical
#    columns; built once at server start), from sending the request to
#    holding the R list; beside it, what building that list from the same
#    answer line takes in R alone (mcplite's JSON reader, no server); and
#    the same tool declaring an output schema, which the client checks the
#    result against (as SDK clients do) before building the list.
# 2. `$call(progress = TRUE)` of a scripted server (base R, no mcplite) that
#    writes BENCH_CLIENT_NOTES progress notifications before its answer, and
#    `$progress()` reading them all as R lists; then `$progress()` alone.
#
# Run from a clone after installing the package:
#
#   R_LIBS=/path/to/lib Rscript bench/client.R   # R_LIBS picks the mcplite to measure

library(mcplite)
rows <- as.integer(Sys.getenv("BENCH_CLIENT_ROWS", "100000"))
notes <- as.integer(Sys.getenv("BENCH_CLIENT_NOTES", "20000"))
reps <- as.integer(Sys.getenv("BENCH_CLIENT_REPS", "5"))
libs <- Sys.getenv("R_LIBS", paste(.libPaths(), collapse = .Platform$path.sep))

timed <- function(f) {
  f() # warm-up
  times <- vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0)
  stats::median(times)
}
script <- function(lines) {
  path <- tempfile("bench-client-", fileext = ".R")
  writeLines(lines, path)
  path
}

# 1. A large structured result.
frame_server <- script(c(
  "library(mcplite)",
  sprintf("n <- %dL", rows),
  "df <- data.frame(id = seq_len(n), score = seq_len(n) / 7, name = paste0('item ', seq_len(n)),",
  "                 ok = seq_len(n) %% 2L == 0L)",
  "res <- tool_result(structured_content = list(rows = df))",
  "row <- type_object(id = type_integer(), score = type_number(), name = type_string(), ok = type_boolean())",
  "mcp_server(list(tool(function() res, 'A large frame.', name = 'frame'),",
  "  tool(function() res, 'The frame, with its schema.', name = 'frame_schema',",
  "       output_schema = type_object(rows = type_array(row)))))"
))
client <- mcp_client(command = file.path(R.home("bin"), "Rscript"), args = c("--vanilla", frame_server),
                     env = c(R_LIBS = libs), timeout = 600)
invisible(client$tools()) # the output schemas the client checks results against
got <- client$call("frame")
stopifnot(length(got$structuredContent$rows) == rows)
line <- client$.state()$last_response
call_s <- timed(function() client$call("frame"))
schema_s <- timed(function() client$call("frame_schema"))
parse_s <- timed(function() mcplite:::rust_json_parse(line))
client$close()

# 2. Many progress notifications.
note <- '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d,"message":"step %d of the work"}}'
notes_server <- script(c(
  'out <- file("/dev/stdout", open = "wb")',
  'send <- function(text) { writeBin(charToRaw(paste0(text, "\\n")), out); flush(out) }',
  'con <- file("stdin", open = "r")',
  'repeat {',
  '  line <- readLines(con, n = 1)',
  '  if (!length(line)) break',
  '  m <- regmatches(line, regexpr(\'"id":[0-9]+\', line))',
  '  if (!length(m)) next',
  '  id <- sub(\'"id":\', "", m)',
  '  if (grepl(\'"method":"initialize"\', line)) {',
  '    send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"notes","version":"1"}}}\', id))',
  '  } else if (grepl(\'"method":"tools/call"\', line)) {',
  sprintf("    n <- %dL", notes),
  sprintf("    send(paste(sprintf('%s', id, seq_len(n), n, seq_len(n)), collapse = '\\n'))", note),
  '    send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}\', id))',
  '  }',
  '}'
))
client <- mcp_client(command = file.path(R.home("bin"), "Rscript"), args = c("--vanilla", notes_server),
                     protocol = "2025-11-25", timeout = 600)
progress_s <- timed(function() {
  client$call("t", progress = TRUE)
  stopifnot(length(client$progress()) == notes)
})
take_s <- timed(function() client$progress())
client$close()

cat(sprintf("mcp_client(), median of %d calls (seconds):\n", reps))
cat(sprintf("  1. $call() of a %d-row structured frame:        %.3f\n", rows, call_s))
cat(sprintf("     building its R list from the answer line:     %.3f\n", parse_s))
cat(sprintf("     the same tool declaring its output schema:    %.3f\n", schema_s))
cat(sprintf("  2. $call(progress = TRUE) + $progress(), %d notes: %.3f\n", notes, progress_s))
cat(sprintf("     $progress() alone (all %d as R lists):       %.3f\n", notes, take_s))
