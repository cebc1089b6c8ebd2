# Bare limit for scenario 3: the same data frame and the same jsonlite call the
# pure-R package makes (toJSON with auto_unbox, null = "null"), once for
# structuredContent and once more to escape the text fallback, written with cat.
rows <- as.integer(Sys.getenv("BENCH_DF_ROWS", "100000"))
set.seed(1)
df <- data.frame(
  id = seq_len(rows),
  value = round(rnorm(rows), 6),
  group = sample(c("alpha", "beta", "gamma", "delta"), rows, replace = TRUE),
  flag = rnorm(rows) > 0,
  stringsAsFactors = FALSE
)
info <- '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bare","version":"0"}}'
out <- stdout()
con <- file("stdin", open = "r")
repeat {
  line <- readLines(con, n = 1L)
  if (length(line) == 0L) break
  p <- strsplit(line, ",", fixed = TRUE)[[1L]] # {"jsonrpc":"2.0" | "id":N | "method":"..." | ...
  if (startsWith(p[2L], '"method"')) next # a notification: never answered
  id <- substring(p[2L], 6L)
  method <- p[3L]
  if (method == '"method":"tools/call"') {
    json <- jsonlite::toJSON(df, auto_unbox = TRUE, null = "null")
    text <- jsonlite::toJSON(as.character(json), auto_unbox = TRUE)
    cat('{"jsonrpc":"2.0","id":', id, ',"result":{"resultType":"complete","content":[{"type":"text","text":',
        text, '}],"isError":false,"structuredContent":', json, ",", info, "}}\n", sep = "", file = out)
  } else {
    cat('{"jsonrpc":"2.0","id":', id, ',"error":{"code":-32601,"message":"Method not found"}}\n', sep = "", file = out)
  }
  flush(out)
}
