# Paired benchmark of the serializer alone: two mcplite builds on the same
# 10,000-row frames of bench-json.R, in fresh processes that alternate
# (A, B, A, B, ...) so a busy moment hits both. Prints CPU ms per call of
# rust_json_size() (the JSON written into a reused buffer and measured, no R
# string made) and the median of the per-round ratios B / A.
#
# usage: Rscript bench/json/serializer-pair.R <library A> <library B> [rounds]
#   BENCH_JSON_CASES=numeric,character limits the cases.

args <- commandArgs(trailingOnly = TRUE)
if (identical(args[1], "--child")) {
  case <- args[2]
  suppressPackageStartupMessages(library(mcplite))
  # The frames of bench-json.R: only its make_data() definition is evaluated.
  for (e in parse(file.path(args[3], "bench-json.R"))) {
    if (is.call(e) && identical(e[[1]], as.name("<-")) && identical(e[[2]], as.name("make_data"))) eval(e)
  }
  x <- make_data(case, 1e4)
  # mcplite's defaults, in a form every build reads.
  opts <- list(null = "null", auto_unbox = TRUE, digits = 4L)
  helpers <- mcplite:::json_helpers()
  size <- mcplite:::rust_json_size
  for (i in 1:50) size(x, opts, helpers)
  reps <- 2000
  t <- system.time(for (i in seq_len(reps)) size(x, opts, helpers))
  cat((t[["user.self"]] + t[["sys.self"]]) / reps * 1000, "\n")
  quit(save = "no")
}

libs <- normalizePath(args[1:2])
rounds <- if (length(args) >= 3) as.integer(args[3]) else 7L
cases <- strsplit(Sys.getenv("BENCH_JSON_CASES", "numeric,character,na_heavy,mixed"), ",")[[1]]
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
rscript <- file.path(R.home("bin"), "Rscript")
ms <- array(NA_real_, c(length(cases), 2, rounds), list(cases, c("A", "B"), NULL))
for (r in seq_len(rounds)) {
  for (case in cases) {
    for (k in if (r %% 2) 1:2 else 2:1) {
      out <- system2(rscript, c("--vanilla", shQuote(file.path(here, "serializer-pair.R")), "--child", case, shQuote(here)),
                     stdout = TRUE, env = paste0("R_LIBS=", libs[k]))
      ms[case, k, r] <- as.numeric(out[length(out)])
    }
  }
}
res <- data.frame(
  case = cases,
  A_ms = apply(ms[, "A", , drop = FALSE], 1, median),
  B_ms = apply(ms[, "B", , drop = FALSE], 1, median),
  B_over_A = apply(ms[, "B", , drop = FALSE] / ms[, "A", , drop = FALSE], 1, median)
)
cat(sprintf("A: %s\nB: %s\n%d rounds, %s\n", libs[1], libs[2], rounds, format(Sys.time(), tz = "UTC", usetz = TRUE)))
print(res, digits = 3, row.names = FALSE)
