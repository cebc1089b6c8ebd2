# Bare limit for scenario 4: the tools/list body is built once at start (the
# listing never changes), so each request only splices in the id.
n <- as.integer(Sys.getenv("BENCH_N_TOOLS", "200"))
one <- paste0(
  '{"name":"tool_%03d","description":"Benchmark tool number %d: adds a and b, labels the result.",',
  '"inputSchema":{"type":"object","properties":{"a":{"type":"number","description":"First operand."},',
  '"b":{"type":"integer","description":"Second operand."},"label":{"type":"string","description":"Optional label."}},',
  '"required":["a","b"]}}'
)
i <- seq_len(n)
tools <- paste0('"tools":[', paste(sprintf(one, i, i), collapse = ","), "]")
modern_tail <- paste0(',"ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bare","version":"0"}}}}\n')
out <- stdout()
con <- file("stdin", open = "r")
repeat {
  line <- readLines(con, n = 1L)
  if (length(line) == 0L) break
  p <- strsplit(line, ",", fixed = TRUE)[[1L]] # {"jsonrpc":"2.0" | "id":N | "method":"..." | ...
  if (startsWith(p[2L], '"method"')) next # a notification: never answered
  id <- substring(p[2L], 6L)
  method <- p[3L]
  if (startsWith(method, '"method":"tools/list"')) {
    cat('{"jsonrpc":"2.0","id":', id, ',"result":{"resultType":"complete",', tools, modern_tail, sep = "", file = out)
  } else {
    cat('{"jsonrpc":"2.0","id":', id, ',"error":{"code":-32601,"message":"Method not found"}}\n', sep = "", file = out)
  }
  flush(out)
}
