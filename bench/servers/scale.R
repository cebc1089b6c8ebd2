# Goal 6 of issue 41 (bench/scale.mjs): a data frame of BENCH_SCALE_ROWS rows
# (built once at start, so the timed part is the answer, not the data),
# answered plain (`frame`) or as structured content (`frame_sc`, `frame_obj`), and a tool
# taking a JSON array (`take`) that answers with its length, or also the R
# object's own size when `size` is true (object.size() walks the whole list,
# so the timed calls leave it out).
rows <- as.integer(Sys.getenv("BENCH_SCALE_ROWS", "1000"))
set.seed(1)
df <- data.frame(
  id = seq_len(rows),
  value = round(rnorm(rows), 6),
  group = sample(c("alpha", "beta", "gamma", "delta"), rows, replace = TRUE),
  flag = rnorm(rows) > 0,
  stringsAsFactors = FALSE
)
frame <- mcplite::tool(function() df, name = "frame", description = "A data frame.")
# As bench/servers/pkg-df.R: an array, which MCP carries as text only.
frame_sc <- mcplite::tool(function() mcplite::tool_result(structured_content = df),
  name = "frame_sc", description = "A data frame as structured content.")
# An object: the answer carries it twice (structuredContent and its text).
frame_obj <- mcplite::tool(function() mcplite::tool_result(structured_content = list(rows = df)),
  name = "frame_obj", description = "A data frame inside structured content.")
take <- mcplite::tool(function(x, size = FALSE) {
  if (isTRUE(size)) list(n = length(x), bytes = as.numeric(utils::object.size(x))) else list(n = length(x))
}, name = "take", description = "Takes an array.",
arguments = list(x = mcplite::type_array(mcplite::type_number()), size = mcplite::type_boolean(required = FALSE)))
# R's own cost of the list `take` receives for an array of n numbers: n
# double(1) vectors in a list, made by as.list() from a vector made first;
# answers the seconds as.list() took (its allocations and garbage
# collections): the floor of any conversion.
r_floor <- mcplite::tool(function(n) {
  v <- stats::runif(n)
  t0 <- proc.time()[["elapsed"]]
  x <- as.list(v)
  proc.time()[["elapsed"]] - t0
}, name = "r_floor", description = "Times as.list() of n numbers.",
arguments = list(n = mcplite::type_integer()))
mcplite::mcp_server(list(frame, frame_sc, frame_obj, take, r_floor))
