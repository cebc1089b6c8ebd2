# Paired benchmark of the one path that still validates JSON text: a
# tool_result() whose `structured_json` was edited by R code (a plain R
# string, no longer the core's JSON text), checked as the server checks a
# returned result (rust_check_tool_result(): the reading before sending).
# Two mcplite builds in fresh processes that alternate (A, B, A, B, ...).
# Prints ms per check (best of 20 in each process) and the median of the
# per-round ratios B / A.
#
# usage: Rscript bench/json/edited-pair.R <library A> <library B> [rounds]
#   BENCH_EDITED_ROWS (default 200000) sets the frame's rows.

args <- commandArgs(trailingOnly = TRUE)
if (identical(args[1], "--child")) {
  suppressPackageStartupMessages(library(mcplite))
  set.seed(1)
  n <- as.integer(Sys.getenv("BENCH_EDITED_ROWS", "200000"))
  frame <- data.frame(
    id = seq_len(n), value = runif(n), group = sample(c("a", "b \"q\"", "c\n"), n, TRUE),
    flag = sample(c(TRUE, FALSE, NA), n, TRUE)
  )
  built <- tool_result(structured_content = frame)
  edited <- built
  # paste0() makes a plain R string with the same bytes.
  edited$structured_json <- paste0(built$structured_json, "")
  # JSON text inside a string: escapes all the way through.
  in_string <- built
  in_string$structured_json <- paste0(
    '{"text":', mcplite:::json_payload(built$structured_json, list(auto_unbox = TRUE)), "}"
  )
  check <- mcplite:::rust_check_tool_result
  best <- function(x) {
    stopifnot(is.null(check(x)$error))
    b <- Inf
    for (i in 1:20) {
      t <- proc.time()[["elapsed"]]
      check(x)
      b <- min(b, proc.time()[["elapsed"]] - t)
    }
    b * 1000
  }
  cat(best(edited), best(in_string), nchar(edited$structured_json, "bytes"),
      nchar(in_string$structured_json, "bytes"), "\n")
  quit(save = "no")
}

libs <- normalizePath(args[1:2])
rounds <- if (length(args) >= 3) as.integer(args[3]) else 7L
here <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
rscript <- file.path(R.home("bin"), "Rscript")
cases <- c("frame JSON", "JSON in a string")
ms <- array(NA_real_, c(2, 2, rounds), list(cases, c("A", "B"), NULL))
size <- c(NA, NA)
for (r in seq_len(rounds)) {
  for (k in if (r %% 2) 1:2 else 2:1) {
    out <- system2(rscript, c("--vanilla", shQuote(here), "--child"), stdout = TRUE,
                   env = paste0("R_LIBS=", libs[k]))
    v <- as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
    ms[, k, r] <- v[1:2]
    size <- v[3:4]
  }
}
cat(sprintf("A: %s\nB: %s\n%d rounds, alternating\n\n", libs[1], libs[2], rounds))
cat(sprintf("%-18s %8s %10s %10s %8s\n", "case", "MB", "A ms", "B ms", "B / A"))
for (i in seq_along(cases)) {
  a <- median(ms[i, "A", ])
  b <- median(ms[i, "B", ])
  cat(sprintf("%-18s %8.1f %10.2f %10.2f %8.2f\n", cases[i], size[i] / 1e6, a, b,
              median(ms[i, "B", ] / ms[i, "A", ])))
}
