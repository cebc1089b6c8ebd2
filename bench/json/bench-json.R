# Benchmark: mcplite's rust_to_json() beside jsonlite::toJSON() (same options:
# auto_unbox = TRUE, null = "null", digits = 4) on data frames and nested lists.
# Optionally a second mcplite build (MCPLITE_OLD_LIB=<library>) runs in the same
# session, so old and new serializers are compared pairwise with jsonlite.
#
# Each (case, size, implementation) runs in its own Rscript process so peak
# memory can be measured: the process resets its RSS high-water mark
# (/proc/self/clear_refs) after building the data, serializes, and reports
# VmHWM minus the RSS before serializing. Time is CPU time (user + system),
# the median of the timed runs (5 from 1e5 rows, 9 below, 2 when one run takes
# over 2 s; after one untimed run; short calls timed in batches). Implementations run in a
# rotating order for each (case, size), so a busy moment does not always hit
# the same one.
#
# usage: Rscript bench/json/bench-json.R [max_rows] [min_rows]
#   library of the new mcplite: R_LIBS; of the old one: MCPLITE_OLD_LIB (optional)
#   BENCH_JSON_CASES=numeric,mixed limits the cases; BENCH_JSON_ROUNDS (default 3)
#   is how many fresh processes per implementation (1 for the list cases, where
#   jsonlite takes many seconds). Cells are medians over rounds; speed-ups are
#   paired within a round, then the median.

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
    # The frame of bench/ scenario 3: integer, double, character, logical.
    mixed = data.frame(
      id = seq_len(n), value = round(rnorm(n), 6),
      group = sample(c("alpha", "beta", "gamma", "delta"), n, TRUE), flag = rnorm(n) > 0,
      stringsAsFactors = FALSE
    ),
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
  # mcplite's defaults, in a form every build reads.
  opts <- list(null = "null", auto_unbox = TRUE, digits = 4L)
  # Builds from before the glue rewrite take no helpers argument.
  to_json <- mcplite:::rust_to_json
  helpers <- if (length(formals(to_json)) == 3) mcplite:::json_helpers()
  run <- if (impl == "jsonlite") {
    function() as.character(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null"))
  } else if (impl == "serializer") {
    # The serializer alone: the JSON is written (into a reused buffer) and
    # measured, but no R string is made of it.
    function() { r <- mcplite:::rust_json_size(x, opts, helpers); stopifnot(is.null(r$error)); strrep(" ", 0) }
  } else {
    function() {
      r <- if (is.null(helpers)) to_json(x, opts) else to_json(x, opts, helpers)
      stopifnot(is.null(r$error))
      r$value
    }
  }
  invisible(gc())
  before <- rss_kb("VmRSS")
  writeLines("5", "/proc/self/clear_refs")
  t0 <- Sys.time()
  out <- run()
  first <- as.numeric(Sys.time() - t0, units = "secs")
  peak <- rss_kb("VmHWM") - before
  bytes <- if (impl == "serializer") mcplite:::rust_json_size(x, opts, helpers)$value else nchar(out, type = "bytes")
  # The floor any serializer returning an R string pays: R making the string
  # itself (rawToChar: a NUL scan, then mkChar's scan, hash and copy).
  raw_out <- if (impl == "new") charToRaw(out) else NULL
  rm(out)
  times <- numeric(0)
  walls <- numeric(0)
  # Runs of several seconds (jsonlite on list cells) are stable: two are enough.
  if (first > 2) reps <- min(reps, 2L)
  # CPU time (user + system) of this process, which a busy machine inflates
  # far less than wall time. R reports it in ms, so short calls are timed in
  # batches of k calls (at least ~0.1 s per batch).
  k <- max(1L, min(200L, as.integer(ceiling(0.1 / max(first, 1e-4)))))
  for (i in seq_len(reps)) {
    invisible(gc())
    t0 <- proc.time()
    for (j in seq_len(k)) run()
    t <- proc.time() - t0
    times[i] <- (t[["user.self"]] + t[["sys.self"]]) / k
    walls[i] <- t[["elapsed"]] / k
  }
  floor <- NA_real_
  if (!is.null(raw_out)) {
    fl <- numeric(0)
    for (i in seq_len(reps)) {
      invisible(gc())
      t0 <- proc.time()
      for (j in seq_len(k)) rawToChar(raw_out)
      t <- proc.time() - t0
      fl[i] <- (t[["user.self"]] + t[["sys.self"]]) / k
    }
    floor <- median(fl)
  }
  cat(sprintf("%s\t%g\t%s\t%.6f\t%.1f\t%d\t%.6f\t%d\t%.6f\n", case, n, impl, median(times), peak / 1024, bytes, median(walls), k, floor))
  quit(save = "no")
}

max_rows <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
min_rows <- if (length(args) >= 2) as.numeric(args[2]) else 1e3
sizes <- 10^(3:6)
sizes <- sizes[sizes <= max_rows & sizes >= min_rows]
cases <- c("numeric", "character", "factor", "na_heavy", "mixed", "list_column", "nested_list")
if (nzchar(Sys.getenv("BENCH_JSON_CASES"))) cases <- strsplit(Sys.getenv("BENCH_JSON_CASES"), ",")[[1]]
script <- normalizePath(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
procs <- as.integer(Sys.getenv("BENCH_JSON_ROUNDS", "3"))
new_lib <- Sys.getenv("R_LIBS")
old_lib <- Sys.getenv("MCPLITE_OLD_LIB")
impls <- c("new", "serializer", if (nzchar(old_lib)) "old", "jsonlite")
lib_of <- c(new = new_lib, serializer = new_lib, old = old_lib, jsonlite = new_lib)
rows <- list()
# jsonlite needs minutes per run for 1e6 rows of list cells; cap those cases.
slow_cases <- c("list_column", "nested_list")
turn <- 0
for (case in cases) for (n in sizes) {
  if (case %in% slow_cases && n > 1e5) next
  reps <- if (n >= 1e5) 5L else 9L
  # Rounds: every implementation once per round, in a rotating order; ratios
  # are taken within a round (paired), then the median over rounds.
  rounds <- if (case %in% slow_cases) 1L else procs
  runs <- list()
  for (r in seq_len(rounds)) {
    turn <- turn + 1
    order <- impls[(seq_along(impls) + turn - 2) %% length(impls) + 1]
    for (impl in order) {
      line <- system2(file.path(R.home("bin"), "Rscript"), c(script, "--child", case, n, impl, reps),
                      stdout = TRUE, env = paste0("R_LIBS=", lib_of[[impl]]))
      f <- strsplit(line[length(line)], "\t")[[1]]
      runs[[impl]] <- rbind(runs[[impl]], data.frame(
        time = as.numeric(f[4]), mem = as.numeric(f[5]), bytes = as.numeric(f[6]), wall = as.numeric(f[7]),
        floor = if (f[9] == "NA") NA_real_ else as.numeric(f[9])
      ))
    }
  }
  get <- function(impl, what) if (is.null(runs[[impl]])) NA_real_ else median(runs[[impl]][[what]])
  paired <- function(impl) if (is.null(runs[[impl]])) NA_real_ else median(runs$jsonlite$time / runs[[impl]]$time)
  row <- data.frame(
    case = case, rows = format(n, big.mark = ",", scientific = FALSE),
    new_s = get("new", "time"), old_s = get("old", "time"), jsonlite_s = get("jsonlite", "time"),
    new_x = paired("new"), old_x = paired("old"), ser_s = get("serializer", "time"), ser_x = paired("serializer"),
    new_mbs = get("new", "bytes") / 1e6 / get("new", "time"),
    new_peak = get("new", "mem"), old_peak = get("old", "mem"), jsonlite_peak = get("jsonlite", "mem"),
    json_mb = get("new", "bytes") / 1e6,
    new_wall = get("new", "wall"), jsonlite_wall = get("jsonlite", "wall"), rstring = get("new", "floor"),
    same_length = get("new", "bytes") == get("jsonlite", "bytes")
  )
  print(row, row.names = FALSE, digits = 4)
  rows[[length(rows) + 1]] <- row
}
tab <- do.call(rbind, rows)
if (any(!tab$same_length)) cat("\nWARNING: some outputs differ in length from jsonlite's\n")
cat(sprintf("\nload average before/after: see uptime; R %s, jsonlite %s\n", getRversion(), packageVersion("jsonlite")))
cat("\nTimes are CPU ms per call (medians); wall ms in the last column. 'R string' is R making\n")
cat("a string of the same bytes (rawToChar), which is part of every time here.\n")
cat("'serializer alone' is the same serialization without making an R string of the result.\n")
cat("\n| case | rows | JSON (MB) | new (ms) | serializer alone (ms) | old (ms) | jsonlite (ms) | new vs jsonlite | serializer alone vs jsonlite | old vs jsonlite | serializer MB/s | R string (ms) | peak new / old / jsonlite (MB) | wall new / jsonlite (ms) |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
for (i in seq_len(nrow(tab))) with(tab[i, ], cat(sprintf(
  "| %s | %s | %.1f | %.1f | %.2f | %s | %.1f | %.1fx | %.1fx | %s | %.0f | %.1f | %.1f / %s / %.1f | %.1f / %.1f |\n",
  case, rows, json_mb, new_s * 1e3, ser_s * 1e3, if (is.na(old_s)) "-" else sprintf("%.1f", old_s * 1e3),
  jsonlite_s * 1e3, new_x, ser_x, if (is.na(old_x)) "-" else sprintf("%.1fx", old_x), json_mb / ser_s,
  rstring * 1e3, new_peak, if (is.na(old_peak)) "-" else sprintf("%.1f", old_peak), jsonlite_peak,
  new_wall * 1e3, jsonlite_wall * 1e3
)))
