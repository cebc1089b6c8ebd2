# Server for bench/memory.mjs: the same three tools under either package (R_LIBS
# picks which): a number (`add`), a small data frame as structured content
# (`frame`) and a text result (`text`). BENCH_WORKERS > 0 (ours only: the CRAN
# release has no workers) runs the calls on that many mirai workers.
frame <- data.frame(
  id = 1:10,
  value = seq(0.5, 5, by = 0.5),
  group = rep(c("alpha", "beta"), 5),
  flag = rep(c(TRUE, FALSE), 5),
  stringsAsFactors = FALSE
)
tools <- list(
  mcplite::tool(
    function(x, y) x + y,
    name = "add",
    description = "Add two numbers.",
    arguments = list(
      x = mcplite::type_number("First number."),
      y = mcplite::type_number("Second number.")
    )
  ),
  mcplite::tool(
    function() mcplite::tool_result(structured_content = frame),
    name = "frame",
    description = "Return a 10-row data frame."
  ),
  mcplite::tool(
    function(n) paste(rep("word", n), collapse = " "),
    name = "text",
    description = "Return `n` words.",
    arguments = list(n = mcplite::type_integer("How many words."))
  )
)
workers <- as.integer(Sys.getenv("BENCH_WORKERS", "0"))
if (workers > 0) {
  mcplite::mcp_server(tools, workers = workers)
} else {
  mcplite::mcp_server(tools)
}
