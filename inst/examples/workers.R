# Slow tools on parallel workers (see vignette("workers", package = "mcplite")).
#
#   Rscript --vanilla /absolute/path/to/workers.R
#
# Each tools/call runs in one of two background R processes (mirai daemons)
# that mcplite starts, so a slow call does not hold up the others, and a call
# the client cancels is stopped. Needs the mirai package.
#
# Every worker runs this script once, up to mcp_server(): the data and the
# helper below exist there too, and the tools use them as they are.

cars <- datasets::mtcars

mpg_of <- function(cylinders) {
  mpg <- cars$mpg[cars$cyl == cylinders]
  if (length(mpg) == 0) stop("No cars with ", cylinders, " cylinders; try 4, 6 or 8.", call. = FALSE)
  mpg
}

bootstrap_mpg <- mcplite::tool(
  function(cylinders, reps = 20000) {
    mpg <- mpg_of(cylinders)
    means <- replicate(reps, mean(sample(mpg, replace = TRUE)))
    mcplite::tool_result(structured_content = list(
      cylinders = cylinders,
      mean = mean(mpg),
      lower = unname(stats::quantile(means, 0.025)),
      upper = unname(stats::quantile(means, 0.975))
    ))
  },
  name = "bootstrap_mpg",
  description = "Mean fuel economy (miles per gallon) of cars with a given number of cylinders, with a 95% bootstrap interval. Takes a few seconds.",
  arguments = list(
    cylinders = mcplite::type_integer("Number of cylinders: 4, 6 or 8."),
    reps = mcplite::type_integer("Bootstrap resamples (default 20000).", required = FALSE)
  )
)

count_cars <- mcplite::tool(
  function() as.list(table(cylinders = cars$cyl)),
  name = "count_cars",
  description = "How many cars of each number of cylinders the data holds."
)

mcplite::mcp_server(list(bootstrap_mpg, count_cars), workers = 2)
