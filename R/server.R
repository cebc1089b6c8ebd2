#' Serve tools to an MCP client over standard input and output
#'
#' @description
#' `mcp_server()` makes the given tools available to a Model Context Protocol
#' client that talks to this R process through its standard input and output.
#' It answers requests until standard input is closed, then returns.
#'
#' @details
#' ## Running a server
#' Write a script that defines (or sources) the tools and ends with a call to
#' `mcp_server()`, then tell the client to start it with
#' `Rscript --vanilla /absolute/path/to/server.R`. Use an absolute path: the
#' directory the client starts in is not predictable. The call never returns
#' while the client is connected, so it is meant for scripts, not an
#' interactive session.
#'
#' The tool list is checked before anything is read from the client. A
#' mistake (a plain function instead of a [tool()], two tools with the same
#' name, an ellmer type mcplite cannot convert, ...) stops the script straight
#' away with an error on standard error and a non-zero exit status, instead of
#' surfacing on the first request.
#'
#' ## Standard output belongs to the protocol
#' Every byte written to standard output must be an MCP message. Send logging
#' and other diagnostics to standard error (for example with [message()]).
#'
#' ## Payload options
#' The payload JSON options described in [mcplite-results] are read once, when
#' the server starts, and apply to every result it sends; set them before
#' calling `mcp_server()`.
#'
#' ## Scope
#' mcplite serves tools only, over standard input and output only. It
#' implements the protocol versions 2024-11-05, 2025-06-18, 2025-11-25 and
#' 2026-07-28 with the same tool definitions; features such as prompts,
#' resources, sampling, batching or HTTP transports are not provided.
#'
#' @param tools A tool made with [tool()] or [ellmer::tool()], or a list of
#'   them. Tool names must be unique.
#' @param instructions Optional guidance for the client about how to use the
#'   server as a whole, as a single string; `NULL` for none.
#'
#' @return `NULL`, invisibly, once standard input has been closed. It is called
#'   for its side effect of serving requests.
#' @seealso [tool()] to define tools.
#' @examples
#' add_numbers <- tool(
#'   function(x, y) x + y,
#'   name = "add_numbers",
#'   description = "Add two numbers.",
#'   arguments = list(x = type_number(), y = type_number())
#' )
#'
#' # In a server script; this blocks until the client disconnects, so it is
#' # only run when that is safe:
#' if (identical(Sys.getenv("MCPLITE_CAN_BLOCK_PROCESS"), "true")) {
#'   mcp_server(add_numbers, instructions = "Arithmetic helpers.")
#' }
#' @export
mcp_server <- function(tools, instructions = NULL) {
  call <- sys.call()
  if (missing(tools)) {
    abort_mcplite("`tools` is missing; give a tool or a list of tools.",
      class = "tools", arg = "tools", call = call
    )
  }
  specs <- server_specs(tools, call)
  check_string(instructions, "instructions", call = call, allow_null = TRUE)
  opts <- payload_options(call)
  serve_specs(specs, instructions, opts)
  invisible(NULL)
}

# Validates the tool list and returns the list of tool specs that
# rust_serve() reads (see src/rust/ARCHITECTURE.md). Kept apart from
# mcp_server() so it can be tested without serving.
server_specs <- function(tools, call = sys.call(-1)) {
  single <- is.function(tools)
  if (single) {
    tools <- list(tools)
  } else if (!is.list(tools) || is.object(tools)) {
    abort_mcplite(
      sprintf(
        "`tools` must be a tool made with `tool()` or a list of tools, not %s.",
        describe_value(tools)
      ),
      class = "tools", arg = "tools", call = call
    )
  }
  if (length(tools) == 0) {
    abort_mcplite("`tools` must contain at least one tool.",
      class = "tools", arg = "tools", call = call
    )
  }
  specs <- vector("list", length(tools))
  for (i in seq_along(tools)) {
    arg <- if (single) "tools" else sprintf("tools[[%d]]", i)
    specs[[i]] <- tool_spec(tools[[i]], arg, call)
  }
  names <- vapply(specs, function(s) s$name, character(1))
  dup <- unique(names[duplicated(names)])
  if (length(dup) > 0) {
    where <- vapply(dup, function(d) paste(which(names == d), collapse = ", "), character(1))
    abort_mcplite(
      sprintf(
        "Tool names must be unique; %s.",
        paste(sprintf("`%s` is used by tools %s", dup, where), collapse = "; ")
      ),
      class = "tools", arg = "tools", call = call
    )
  }
  specs
}

tool_spec <- function(x, arg, call) {
  if (inherits(x, "mcplite_tool")) {
    meta <- tool_meta(x)
    if (!is.list(meta) || !is_string(meta$name)) {
      abort_mcplite(
        sprintf("`%s` has class `mcplite_tool` but lost its metadata; create it with `tool()`.", arg),
        class = "tools", arg = arg, call = call
      )
    }
    fun <- x
    attr(fun, "mcplite") <- NULL
    class(fun) <- NULL
    return(c(meta[c("name", "description", "title", "input_schema",
                    "output_schema", "annotations", "meta")], list(fun = fun)))
  }
  if (is_ellmer_tool(x)) return(ellmer_tool_spec(x, arg, call))
  hint <- if (is.function(x)) " Wrap plain functions with `tool()` first." else ""
  abort_mcplite(
    sprintf(
      "`%s` must be a tool made with `tool()` or `ellmer::tool()`, not %s.%s",
      arg, describe_value(x), hint
    ),
    class = "tools", arg = arg, call = call
  )
}
