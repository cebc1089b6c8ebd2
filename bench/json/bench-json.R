# Benchmark: mcplite's rust_to_json() beside jsonlite::toJSON() (same options:
# auto_unbox = TRUE, null = "null", digits = 4) on data frames and nested lists.
#
# Each (case, size, implementation) runs in its own Rscript process so peak
# memory can be measured: the process resets its RSS high-water mark
# (/proc/self/clear_refs) after building the data, serializes, and reports
# VmHWM minus the RSS before serializing. Time is the median of the timed runs (3 from 1e5 rows, 7 below).
#
# usage: Rscript bench/json/bench-json.R [max_rows]   (library path via R_LIBS)

args <- commandArgs(trailingOnly = TRUE)
child <- identical(args[1], "--child")

make_data <- function(case, n) {
  set.seed(1)
  switch(case,
    numeric = data.frame(a = runif(n) * 1e4, b = rnorm(n), c = seq_len(n), d = round(runif(n), 2)),
    character = data.frame(
      s = sample(c("alpha", "beta \"quoted\"", "gamma\n", "d\u00e9j\u00e0 vu"), n, TRUE),
      id = sprintf("id-%08d", seq_len(n)), stringsAsFactors = FALSE
    ),
    factor = data.frame(f = factor(sample(letters, n, TRUE)), g = factor(sample(c("lo", "mid", "hi"), n, TRUE)), v = seq_len(n)),
    na_heavy = {
      x <- data.frame(a = runif(n), b = sample(c("x", "y"), n, TRUE), c = sample(c(TRUE, FALSE), n, TRUE), d = seq_len(n))
      for (k in seq_along(x)) x[[k]][runif(n) < 0.5] <- NA
      x
    },
    list_column = {
      x <- data.frame(id = seq_len(n))
      x$l <- lapply(seq_len(n), function(i) if (i %% 3 == 0) NULL else c(i, i / 2))
      x
    },
    nested_list = lapply(seq_len(n), function(i) list(id = i, name = paste0("n", i), tags = c("a", "b"), score = i / 7, meta = list(ok = TRUE, when = NULL)))
  )
}

rss_kb <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line))
}

if (child) {
  case <- args[2]; n <- as.numeric(args[3]); impl <- args[4]; reps <- as.integer(args[5])
  suppressPackageStartupMessages({ library(mcplite); library(jsonlite) })
  x <- make_data(case, n)
  opts <- list(null = "null", na = NA_character_, auto_unbox = TRUE, digits = 4L, signif = FALSE)
  run <- if (impl == "mcplite") {
    function() { r <- mcplite:::rust_to_json(x, opts); stopifnot(is.null(r$error)); r$value }
  } else {
    function() as.character(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null"))
  }
  invisible(gc())
  before <- rss_kb("VmRSS")
  writeLines("5", "/proc/self/clear_refs")
  t0 <- Sys.time()
  out <- run()
  first <- as.numeric(Sys.time() - t0, units = "secs")
  peak <- rss_kb("VmHWM") - before
  bytes <- nchar(out, type = "bytes")
  rm(out)
  times <- first
  for (i in seq_len(reps)) {
    invisible(gc())
    t0 <- Sys.time()
    run()
    times[i + 1] <- as.numeric(Sys.time() - t0, units = "secs")
  }
  cat(sprintf("%s\t%g\t%s\t%.4f\t%.1f\t%d\n", case, n, impl, median(times), peak / 1024, bytes))
  quit(save = "no")
}

max_rows <- if (length(args)) as.numeric(args[1]) else 1e6
sizes <- 10^(3:6)
sizes <- sizes[sizes <= max_rows]
cases <- c("numeric", "character", "factor", "na_heavy", "list_column", "nested_list")
script <- normalizePath(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
rows <- list()
# jsonlite needs minutes per run for 1e6 rows of list cells; cap those cases.
slow_cases <- c("list_column", "nested_list")
for (case in cases) for (n in sizes) {
  if (case %in% slow_cases && n > 1e5) next
  reps <- if (n >= 1e5) 2L else 6L
  res <- list()
  for (impl in c("mcplite", "jsonlite")) {
    line <- system2(file.path(R.home("bin"), "Rscript"), c(script, "--child", case, n, impl, reps), stdout = TRUE)
    f <- strsplit(line[length(line)], "\t")[[1]]
    res[[impl]] <- list(time = as.numeric(f[4]), mem = as.numeric(f[5]), bytes = as.numeric(f[6]))
  }
  row <- data.frame(
    case = case, rows = format(n, big.mark = ",", scientific = FALSE),
    mcplite_s = res$mcplite$time, jsonlite_s = res$jsonlite$time,
    speedup = round(res$jsonlite$time / res$mcplite$time, 1),
    mcplite_peak_mb = res$mcplite$mem, jsonlite_peak_mb = res$jsonlite$mem,
    json_mb = round(res$mcplite$bytes / 2^20, 1),
    same_length = res$mcplite$bytes == res$jsonlite$bytes
  )
  print(row, row.names = FALSE)
  rows[[length(rows) + 1]] <- row
}
tab <- do.call(rbind, rows)
cat("\n| case | rows | mcplite (s) | jsonlite (s) | speed-up | mcplite peak (MB) | jsonlite peak (MB) | JSON (MB) |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|\n")
for (i in seq_len(nrow(tab))) with(tab[i, ], cat(sprintf("| %s | %s | %.3f | %.3f | %.1fx | %.1f | %.1f | %.1f |\n",
  case, rows, mcplite_s, jsonlite_s, speedup, mcplite_peak_mb, jsonlite_peak_mb, json_mb)))
