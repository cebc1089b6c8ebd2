# A scripted MCP client, built on mcplite::mcp_client(), that shows every
# JSON-RPC message it sends (->) and receives (<-).
#
#   Rscript -e 'source(system.file("examples", "client-demo.R", package = "mcplite"))'
#
# runs it against the minimal example server. For a server script of your
# own, give its path, and optionally a tool name and its arguments as JSON
# (the JSON needs the jsonlite package):
#
#   Rscript --vanilla client-demo.R /absolute/path/to/server.R
#   Rscript --vanilla client-demo.R /absolute/path/to/server.R my_tool '{"x": 1}'
#
# Without a tool name it calls the first tool the server lists; without
# arguments it makes up a value for each required argument from the tool's
# input schema. It talks to the server twice: as a client of protocol
# 2025-11-25 (initialize handshake first) and as a client of 2026-07-28 (no
# handshake; the version travels in every request's _meta).

local({
  args <- commandArgs(trailingOnly = TRUE)
  server <- if (length(args) >= 1) args[[1]] else
    system.file("examples", "minimal.R", package = "mcplite")
  if (!nzchar(server) || !file.exists(server)) {
    stop("Cannot find the server script; pass its path as the first argument.")
  }
  server <- normalizePath(server)
  tool_name <- if (length(args) >= 2) args[[2]] else NULL
  arguments <- if (length(args) >= 3) {
    if (!requireNamespace("jsonlite", quietly = TRUE)) stop("Reading arguments as JSON needs the jsonlite package.")
    jsonlite::parse_json(args[[3]])
  } else {
    NULL
  }

  # A value of the right type for each required argument of a tool.
  example_arguments <- function(tool) {
    schema <- tool$inputSchema
    out <- list()
    for (name in unlist(schema$required)) {
      type <- unlist(schema$properties[[name]]$type)[1]
      out[[name]] <- switch(if (is.null(type)) "" else type,
        number = 1, integer = 2L, boolean = TRUE, array = list(),
        object = structure(list(), names = character()), string = "text",
        "text"
      )
    }
    if (!length(out)) out <- structure(list(), names = character())
    out
  }

  show <- function(client) writeLines(client$transcript())

  for (protocol in c("2025-11-25", "2026-07-28")) {
    cat(sprintf("# A client of protocol %s\n", protocol))
    client <- mcplite::mcp_client(server, protocol = protocol, transcript = TRUE)
    show(client)
    tools <- client$tools()
    show(client)
    if (!length(tools)) stop("The server lists no tools.")
    names <- vapply(tools, function(t) t$name, character(1))
    name <- if (is.null(tool_name)) names[[1]] else tool_name
    if (!name %in% names) stop(sprintf("The server has no tool %s; it has %s.", name, paste(names, collapse = ", ")))
    call_args <- if (is.null(arguments)) example_arguments(tools[[match(name, names)]]) else arguments
    result <- client$call(name, call_args)
    show(client)
    cat(sprintf("# %s%s\n\n", name, if (isTRUE(result$isError)) " returned a tool error" else " answered"))
    client$close()
  }
  invisible()
})
