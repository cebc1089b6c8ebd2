# Server for bench/workers.mjs: the same tools with BENCH_WORKERS workers
# (0 = in-process, today's behaviour).
library(mcplite)

spin_loop <- function(n) {
  x <- 0
  for (i in seq_len(n)) x <- x + (i %% 7)
  x
}

tools <- list(
  tool(function(seconds) {
    Sys.sleep(seconds)
    "slept"
  }, name = "nap", description = "Sleep for `seconds`.",
  arguments = list(seconds = type_number())),
  tool(function(n) spin_loop(n), name = "spin", description = "Busy loop of `n` steps.",
       arguments = list(n = type_integer())),
  tool(function(pad) nchar(pad), name = "carry", description = "Count the characters of `pad`.",
       arguments = list(pad = type_string())),
  tool(function(x, y) x + y, name = "add", description = "Add.",
       arguments = list(x = type_number(), y = type_number()))
)

mcp_server(tools, workers = as.integer(Sys.getenv("BENCH_WORKERS", "0")))
