# Bare limit for scenarios 1/2: the cheapest stdio loop doing the same R call
# (x + y). Minimal string handling on fixed-shape input, precomputed response
# templates, cat + flush. It is not a general MCP server: it only answers what
# the benchmark driver sends, but every answer is valid JSON-RPC/MCP.
info <- '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bare","version":"0"}}'
modern_key <- "io.modelcontextprotocol/protocolVersion"
tools <- paste0(
  '"tools":[{"name":"add","description":"Add two numbers.","inputSchema":',
  '{"type":"object","properties":{"x":{"type":"number","description":"First number."},',
  '"y":{"type":"number","description":"Second number."}},"required":["x","y"]}}]'
)
out <- stdout()
con <- file("stdin", open = "r")
repeat {
  line <- readLines(con, n = 1L)
  if (length(line) == 0L) break
  # The driver's lines have a fixed member order, so splitting on commas puts
  # each member at a known position: {"jsonrpc":"2.0" | "id":N | "method":"..." | ...
  p <- strsplit(line, ",", fixed = TRUE)[[1L]]
  if (startsWith(p[2L], '"method"')) next # a notification: never answered
  id <- substring(p[2L], 6L)
  method <- p[3L]
  modern <- grepl(modern_key, line, fixed = TRUE)
  body <- if (method == '"method":"tools/call"') {
    # "params":{"name":"add" | "arguments":{"x":N | "y":N}
    x <- as.numeric(substring(p[5L], 18L))
    y <- as.numeric(gsub("}", "", substring(p[6L], 5L), fixed = TRUE))
    r <- paste0('"content":[{"type":"text","text":"', x + y, '"}],"isError":false')
    if (modern) paste0('{"resultType":"complete",', r, ",", info, "}") else paste0("{", r, "}")
  } else if (method == '"method":"tools/list"' || method == '"method":"tools/list"}') {
    if (modern) paste0('{"resultType":"complete",', tools, ',"ttlMs":300000,"cacheScope":"public",', info, "}")
    else paste0("{", tools, "}")
  } else if (method == '"method":"server/discover"') {
    paste0('{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],',
           '"capabilities":{"tools":{}},"ttlMs":300000,"cacheScope":"public",', info, "}")
  } else if (method == '"method":"initialize"') {
    '{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bare","version":"0"}}'
  } else {
    NULL
  }
  if (is.null(body)) {
    cat('{"jsonrpc":"2.0","id":', id, ',"error":{"code":-32601,"message":"Method not found"}}\n', sep = "", file = out)
  } else {
    cat('{"jsonrpc":"2.0","id":', id, ',"result":', body, "}\n", sep = "", file = out)
  }
  flush(out)
}
