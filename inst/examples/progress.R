# A long-running tool that reports its progress
# (see vignette("long-running", package = "mcplite")).
#
#   Rscript --vanilla /absolute/path/to/progress.R
#
# A client that asks for progress (it sends a progress token with the call)
# gets a notifications/progress message per step while the tool runs; the
# official TypeScript SDK hands them to `onprogress`, and with
# `resetTimeoutOnProgress: true` a call that keeps reporting does not time
# out. Other clients get the answer only. Called as a plain R function,
# mcp_progress() does nothing, so the tool stays an ordinary function.

simulate_walks <- mcplite::tool(
  function(walks = 20, steps = 20000) {
    ends <- numeric(walks)
    for (i in seq_len(walks)) {
      ends[i] <- sum(sample(c(-1, 1), steps, replace = TRUE))
      mcplite::mcp_progress(i, total = walks, message = sprintf("walk %d of %d", i, walks))
    }
    mcplite::tool_result(structured_content = list(
      walks = walks,
      mean_end = mean(ends),
      mean_distance = mean(abs(ends))
    ))
  },
  name = "simulate_walks",
  description = "Simulate random walks of +1/-1 steps and summarise where they end, reporting each walk done.",
  arguments = list(
    walks = mcplite::type_integer("How many walks to simulate.", required = FALSE),
    steps = mcplite::type_integer("Steps per walk.", required = FALSE)
  )
)

mcplite::mcp_server(list(simulate_walks))
