# Scenario 4: a server with many tools (200 by default), each with a few typed
# arguments and a description, to measure tools/list.
n <- as.integer(Sys.getenv("BENCH_N_TOOLS", "200"))
make_tool <- function(i) {
  mcplite::tool(
    function(a, b, label = "x") a + b,
    name = sprintf("tool_%03d", i),
    description = sprintf("Benchmark tool number %d: adds a and b, labels the result.", i),
    arguments = list(
      a = mcplite::type_number("First operand."),
      b = mcplite::type_integer("Second operand."),
      label = mcplite::type_string("Optional label.", required = FALSE)
    )
  )
}
mcplite::mcp_server(lapply(seq_len(n), make_tool))
