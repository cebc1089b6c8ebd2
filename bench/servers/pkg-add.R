# Scenario 1/2/5 server for both package columns (ours and the CRAN release):
# one trivial tool. The same file runs under either package; R_LIBS picks which.
add <- mcplite::tool(
  function(x, y) x + y,
  name = "add",
  description = "Add two numbers.",
  arguments = list(
    x = mcplite::type_number("First number."),
    y = mcplite::type_number("Second number.")
  )
)
mcplite::mcp_server(list(add))
