# Scenario 3: a tool returning a data frame as structured content. The frame is
# built once at start so the timed part is result construction + serialization
# + the pipe, not random number generation.
rows <- as.integer(Sys.getenv("BENCH_DF_ROWS", "100000"))
set.seed(1)
df <- data.frame(
  id = seq_len(rows),
  value = round(rnorm(rows), 6),
  group = sample(c("alpha", "beta", "gamma", "delta"), rows, replace = TRUE),
  flag = rnorm(rows) > 0,
  stringsAsFactors = FALSE
)
big <- mcplite::tool(
  function() mcplite::tool_result(structured_content = df),
  name = "big_frame",
  description = "Return a large data frame."
)
mcplite::mcp_server(list(big))
