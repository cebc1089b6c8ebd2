# A scripted MCP client talking to the minimal example server.
#
#   Rscript -e 'source(system.file("examples", "client-demo.R", package = "mcplite"))'
#
# or, with a server script of your own as the first argument:
#
#   Rscript --vanilla client-demo.R /absolute/path/to/server.R
#
# It starts `Rscript --vanilla` on the server, writes one JSON-RPC message per
# line to its standard input and prints every line it sends (->) and receives
# (<-). The first exchange is a legacy client (initialize handshake, protocol
# 2025-11-25); the second a modern client (protocol 2026-07-28, no handshake,
# version and capabilities sent with every request in `_meta`).
# Only base R is required; processx is used when installed so that each reply
# is printed right after its request.

local({
  args <- commandArgs(trailingOnly = TRUE)
  server <- if (length(args) >= 1) args[[1]] else
    system.file("examples", "minimal.R", package = "mcplite")
  if (!nzchar(server) || !file.exists(server)) {
    stop("Cannot find the server script; pass its path as the first argument.")
  }
  server <- normalizePath(server)
  rscript <- file.path(R.home("bin"), if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript")

  modern_meta <- paste0(
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
    '"io.modelcontextprotocol/clientCapabilities":{},',
    '"io.modelcontextprotocol/clientInfo":{"name":"client-demo","version":"1.0"}}'
  )
  legacy <- c(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"client-demo","version":"1.0"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
  )
  modern <- c(
    paste0('{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{', modern_meta, '}}'),
    paste0('{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2},', modern_meta, '}}')
  )

  # Notifications carry no "id" and get no reply.
  expects_reply <- function(line) grepl('"id":', line, fixed = TRUE)

  converse_processx <- function(lines) {
    p <- processx::process$new(rscript, c("--vanilla", server),
                               stdin = "|", stdout = "|", stderr = NULL)
    on.exit(if (p$is_alive()) p$kill(), add = TRUE)
    for (line in lines) {
      cat("-> ", line, "\n", sep = "")
      p$write_input(paste0(line, "\n"))
      if (!expects_reply(line)) next
      deadline <- Sys.time() + 30
      repeat {
        p$poll_io(1000)
        got <- p$read_output_lines()
        for (reply in got) cat("<- ", reply, "\n", sep = "")
        if (length(got) > 0) break
        if (!p$is_alive()) stop("The server exited early.")
        if (Sys.time() > deadline) stop("No reply within 30 seconds.")
      }
    }
    close(p$get_input_connection())
    p$wait(10000)
  }

  converse_base <- function(lines) {
    # Without processx, send everything at once; the server exits at the end
    # of its input and we print the replies afterwards.
    for (line in lines) cat("-> ", line, "\n", sep = "")
    replies <- system2(rscript, c("--vanilla", shQuote(server)),
                       input = lines, stdout = TRUE, stderr = FALSE, timeout = 60)
    for (reply in replies) cat("<- ", reply, "\n", sep = "")
  }

  converse <- if (requireNamespace("processx", quietly = TRUE)) converse_processx else converse_base

  cat("# Legacy client (protocol 2025-11-25)\n")
  converse(legacy)
  cat("\n# Modern client (protocol 2026-07-28)\n")
  converse(modern)
  invisible()
})
