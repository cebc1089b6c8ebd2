# A minimal mcplite server with one tool that adds two numbers.
#
# Run it from an MCP client with an absolute path, for example:
#   Rscript --vanilla /absolute/path/to/minimal.R
# The script blocks until the client closes standard input.

add <- mcplite::tool(
  function(a, b) {
    a + b
  },
  name = "add",
  description = "Add two numbers and return their sum.",
  arguments = list(
    a = mcplite::type_number("The first number."),
    b = mcplite::type_number("The second number.")
  )
)

mcplite::mcp_server(add)
