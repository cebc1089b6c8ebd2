# Differential test: rust_to_json() against the installed jsonlite::toJSON(),
# byte for byte, for generated and hand-picked R values under every
# combination of the payload options.

# Where mcplite deliberately differs from jsonlite (documented in the manual).
intentional_json_differences <- c(
  function_values = "jsonlite deparses functions to their source lines; mcplite refuses to serialize functions",
  complex_digits_na = "jsonlite fails on complex numbers with digits = NA; mcplite formats them with 15 significant digits",
  pairlists = "jsonlite converts pairlists to lists; mcplite refuses them like other language objects"
)

json_option_grid <- function() {
  grid <- expand.grid(
    null = c("null", "list"),
    na = c("unset", "null", "string"),
    auto_unbox = c(TRUE, FALSE),
    digits = c("4", "NA", "I(3)", "I(15)", "0"),
    stringsAsFactors = FALSE
  )
  lapply(seq_len(nrow(grid)), function(i) as.list(grid[i, ]))
}

jsonlite_text <- function(x, combo) {
  args <- list(x, null = combo$null, auto_unbox = combo$auto_unbox)
  if (combo$na != "unset") args$na <- combo$na
  args$digits <- switch(combo$digits, "4" = 4, "0" = 0, "NA" = NA, "I(3)" = I(3), "I(15)" = I(15))
  tryCatch(as.character(do.call(jsonlite::toJSON, args)), error = function(e) NA_character_)
}

mcplite_text <- function(x, combo) {
  # The payload options as a user sets them (see payload_options()).
  opts <- list(
    null = combo$null,
    na = if (combo$na == "unset") NULL else combo$na,
    auto_unbox = combo$auto_unbox,
    digits = switch(combo$digits, "4" = 4L, "0" = 0L, "NA" = NA, "I(3)" = I(3L), "I(15)" = I(15L))
  )
  res <- rust_to_json(x, opts, json_helpers())
  if (is.null(res$error)) res$value else NA_character_
}

edge_doubles <- c(
  1e-300, 2^53, -0, 0.1 + 0.2, 1e5, 123456.7891, 1.7976931348623157e308, 5e-324,
  2.2250738585072014e-308, 1e-5, 1.00001e-5, 9.99999e-6, 2147483647, 2147483646.99999,
  -2147483647.5, 0.5, 1.5, 2.5, 0.125, 0.375, 1e15, 1e16, 123456789012, pi, exp(1),
  -1 / 3, 1e21, 1e-7, 99999.99995, 0.00015, 1 / 7, 1e22, 4.35, 0.1, 100, 1234.5678
)
edge_strings <- c(
  "", "plain", "with \"quotes\"", "back\\slash", "new\nline", "tab\there", "\r\f\b",
  "ctrl\001\002\037", "del\177", "</script>", "a/b", "h\u00e9llo w\u00f6rld",
  "\u65e5\u672c\u8a9e", "emoji \U0001F600", strrep("long ", 200), "NA", "null", "{\"a\":1}"
)

gen_atomic <- function(n) {
  kind <- sample(c("dbl", "dbl", "int", "lgl", "chr", "chr", "fac", "ord", "date", "time", "ptime", "json", "raw", "cplx"), 1)
  x <- switch(kind,
    dbl = sample(c(edge_doubles, -edge_doubles, runif(20, -1e6, 1e6), rnorm(10) * 10^sample(-8:12, 10, TRUE)), n, TRUE),
    int = sample(c(-5:5, .Machine$integer.max, -.Machine$integer.max, 123456L), n, TRUE),
    lgl = sample(c(TRUE, FALSE), n, TRUE),
    chr = sample(edge_strings, n, TRUE),
    fac = factor(sample(c("a", "b", "c d", "\u00e9"), n, TRUE), levels = c("a", "b", "c d", "\u00e9", "unused")),
    date = as.Date("2020-02-29") + sample(-1000:1000, n, TRUE),
    time = as.POSIXct("2021-06-01 12:34:56", tz = "UTC") + sample(c(0, 0.5, 59, 3600, 86400 * 30), n, TRUE),
    ptime = as.POSIXct("2021-03-28 00:00:00", tz = "Europe/Paris") + sample(c(0, 3600, 7200, 86400 * 200), n, TRUE),
    ord = factor(sample(c("lo", "hi"), n, TRUE), levels = c("lo", "hi"), ordered = TRUE),
    json = structure(sample(c("{\"a\":1}", "[1,2]", "null", "x"), n, TRUE), class = "json"),
    raw = as.raw(sample(0:255, n, TRUE)),
    cplx = complex(real = sample(edge_doubles, n, TRUE), imaginary = rnorm(n))
  )
  if (n > 0 && kind != "raw" && runif(1) < 0.5) {
    x[sample(n, sample(n, 1))] <- NA
  }
  if (kind == "dbl" && n > 0 && runif(1) < 0.3) {
    x[sample(n, 1)] <- sample(c(NaN, Inf, -Inf), 1)
  }
  x
}

gen_names <- function(n) {
  nm <- sample(c("a", "b", "a", "x.y", "", NA, "1", "\u00e9t\u00e9", "q\"uote"), n, TRUE)
  nm
}

gen_df <- function(depth) {
  n <- sample(c(0:4, 10), 1)
  ncol <- sample(1:4, 1)
  cols <- lapply(seq_len(ncol), function(i) gen_atomic(n))
  names(cols) <- make.unique(sample(c("a", "b", "c", "_row", "x y"), ncol, TRUE))
  df <- structure(cols, class = "data.frame", row.names = c(NA, -n))
  if (ncol(df) == ncol && n > 0 && runif(1) < 0.3) {
    df$l <- lapply(seq_len(n), function(i) if (runif(1) < 0.2) NULL else gen_value(depth + 1))
  }
  if (n > 0 && runif(1) < 0.2 && depth < 3) {
    df$nested <- gen_df_fixed(n)
  }
  if (n > 0 && runif(1) < 0.15) {
    df$m <- matrix(gen_atomic_kind(2 * n, "dbl"), n, 2)
  }
  if (n > 0 && runif(1) < 0.15) {
    df$asis <- I(lapply(seq_len(n), function(i) gen_atomic(sample(0:2, 1))))
  }
  if (n > 0 && runif(1) < 0.2) {
    rownames(df) <- paste0("row", seq_len(n))
  }
  df
}

gen_df_fixed <- function(n) {
  data.frame(p = gen_atomic_kind(n, "dbl"), q = gen_atomic_kind(n, "chr"), stringsAsFactors = FALSE)
}

gen_atomic_kind <- function(n, kind) {
  repeat {
    x <- gen_atomic(n)
    if ((kind == "dbl" && is.double(x) && !inherits(x, c("Date", "POSIXct"))) ||
        (kind == "chr" && is.character(x) && is.null(oldClass(x)))) return(x)
  }
}

gen_value <- function(depth = 0) {
  choice <- if (depth >= 4) sample(c("atomic", "null"), 1) else
    sample(c("atomic", "atomic", "atomic1", "list", "named", "df", "matrix", "null", "asis", "unbox", "listmatrix"), 1)
  switch(choice,
    atomic = gen_atomic(sample(0:6, 1)),
    atomic1 = gen_atomic(1),
    null = NULL,
    list = lapply(seq_len(sample(0:4, 1)), function(i) gen_value(depth + 1)),
    named = {
      n <- sample(0:4, 1)
      x <- lapply(seq_len(n), function(i) gen_value(depth + 1))
      names(x) <- gen_names(n)
      x
    },
    df = gen_df(depth),
    matrix = {
      d <- sample(list(c(2L, 3L), c(1L, 1L), c(3L, 1L), c(2L, 2L, 2L), c(0L, 2L)), 1)[[1]]
      x <- gen_atomic(prod(d))
      if (is.factor(x) || inherits(x, c("Date", "POSIXct")) || is.raw(x)) x <- as.vector(unclass(x))
      array(x, dim = d)
    },
    asis = I(gen_atomic(sample(1:3, 1))),
    listmatrix = matrix(lapply(1:4, function(i) gen_value(depth + 2)), 2),
    unbox = jsonlite::unbox(gen_atomic(1))
  )
}

hand_picked_values <- function() {
  list(
    NULL, list(), structure(list(), names = character(0)), NA, NA_integer_, NA_real_, NA_character_,
    NaN, Inf, -Inf, c(1, NA, NaN, Inf, -Inf), edge_doubles, edge_strings, 1:10,
    list(a = NULL, b = list()), list(NULL, NA), setNames(list(1, 2, 3, 4), c("a", "", "a.1", "a")),
    setNames(list(1, 2), c(NA, NA)), list(list(list(list(1)))),
    data.frame(a = c(1, NA), b = c("x", NA), c = c(NaN, Inf), stringsAsFactors = FALSE),
    data.frame(x = 1:3)[, 0, drop = FALSE], data.frame(x = numeric(0)), mtcars[1:3, 1:4], iris[c(1, 51, 101), ],
    data.frame(r = as.raw(c(0, 15, 16, 255))), data.frame(z = c(1 + 1i, NA)),
    structure(list(a = 1:2, m = matrix(1:4, 2)), class = "data.frame", row.names = c(NA, -2L)),
    jsonlite::unbox(data.frame(a = 1, b = "x")), list(jsonlite::unbox(data.frame(a = 1))),
    factor(c("a", NA, "b")), factor(character(0)), ordered(c("lo", "hi")), as.Date(c("2020-01-01", NA)),
    as.POSIXct(c("2020-01-01 00:00:00", "2020-06-01 12:30:00", NA), tz = "UTC"),
    as.POSIXct("2020-01-01 12:00:01.5", tz = "UTC"), as.POSIXlt("2020-03-04 05:06:07", tz = "UTC"),
    data.frame(t = as.POSIXct(c("2020-01-01 10:00:00", NA), tz = "UTC")),
    matrix(1:6, 2), matrix(c(TRUE, NA, FALSE, TRUE), 2), matrix(c("a", NA), 1), array(1:24, c(2, 3, 4)),
    matrix(numeric(0), 0, 3), matrix(numeric(0), 3, 0), array(numeric(0), c(2, 0, 3)), array(1:3),
    array(list(1, "a"), dimnames = list(c("p", "q"))), matrix(list(1, "a", NULL, list(b = 2)), 2),
    I(1), I("a"), I(list(1)), I(c(a = 1)), jsonlite::unbox(1), jsonlite::unbox("x"), jsonlite::unbox(NA),
    structure("{\"raw\": true}", class = "json"), list(j = structure(c("[1]", "2"), class = "json")),
    as.raw(1:10), raw(0), list(r = as.raw(255)), 1 + 2i, complex(real = NaN, imaginary = 1), c(1i, NA),
    c(a = 1, b = 2), list(a = c(x = 1)), structure(1:3, class = c("foo", "integer")),
    structure(list(1), class = c("foo", "list")), ts(1:5), list(list(), structure(list(), names = character(0))),
    ts(matrix(1:6, 3)), structure(matrix(1:6, 3), class = "ts"), as.difftime(1, units = "secs"),
    as.POSIXlt(c("2020-01-01 10:00:00", "2021-01-01"), tz = "UTC"),
    as.POSIXct("2020-06-01 12:00:00", tz = "America/New_York"),
    structure(data.frame(a = 1:2), class = c("tbl_df", "tbl", "data.frame")),
    data.frame(a = 1:2, a = 3:4, check.names = FALSE), data.frame(x = 1:2, row.names = c("1", "b")),
    local({ d <- data.frame(a = 1:2); d$b <- I(list(1, "x")); d }),
    local({ d <- data.frame(a = 1:2); d$p <- as.POSIXlt(c("2020-01-01", "2020-01-02"), tz = "UTC"); d }),
    structure(list(x = 1:2, y = list(list(a = 1), NULL)), class = "data.frame", row.names = 1:2),
    structure(list(a = 1), foo = "bar"), `Encoding<-`("caf\xe9", "latin1"),
    setNames(list(1), `Encoding<-`("caf\xe9", "latin1")),
    factor(c("a", "b"), levels = c("a", NA, "b"), exclude = NULL), factor(c(NA, "b"), exclude = NULL),
    matrix(c(1 + 1i, NA), 1), array(c("a", "b"), c(1, 1, 2)), matrix(factor(c("a", "b")), 1),
    list(1, jsonlite::unbox(NULL)), I(matrix(1:4, 2)), I(data.frame(a = 1)),
    structure(1, class = c("scalar", "AsIs")), list(a = I(1:2), b = I("x")), NA_complex_,
    complex(real = 1e-20, imaginary = 123456789), -0.00004, c(1e-5, -1e-5, 1.5e-5), 1e308 * 10,
    list(a = list(b = list(c = data.frame(d = c(NA, 1.5), e = I(list(NULL, list(f = NA))))))),
    quote(x), new.env(), list(sum)
  )
}

has_complex <- function(x) {
  is.complex(x) || (is.list(x) && any(vapply(x, has_complex, logical(1))))
}

has_function <- function(x) {
  is.function(x) || (is.list(x) && any(vapply(x, has_function, logical(1))))
}

test_that("rust_to_json matches jsonlite::toJSON byte for byte", {
  skip_if_not_installed("jsonlite")
  skip_on_cran()
  set.seed(20261130)
  generated <- lapply(seq_len(520), function(i) gen_value())
  values <- c(hand_picked_values(), generated)
  expect_gte(length(values), 500)
  combos <- json_option_grid()
  compared <- 0L
  both_failed <- 0L
  differences <- character()
  for (i in seq_along(values)) {
    x <- values[[i]]
    for (combo in combos) {
      expected <- jsonlite_text(x, combo)
      actual <- mcplite_text(x, combo)
      compared <- compared + 1L
      if (is.na(expected) && is.na(actual)) {
        both_failed <- both_failed + 1L
        next
      }
      if (!identical(expected, actual)) {
        is_complex_na <- combo$digits == "NA" && is.na(expected) && has_complex(x)
        is_function <- is.na(actual) && has_function(x)
        if (is_complex_na || is_function) next
        differences <- c(differences, sprintf(
          "value %d (%s) options %s:\n  jsonlite: %s\n  mcplite:  %s",
          i, paste(deparse(x, nlines = 2), collapse = " "), paste(unlist(combo), collapse = "/"),
          expected, actual
        ))
      }
    }
  }
  expect_gt(compared, 500 * length(combos) - 1)
  if (interactive() || nzchar(Sys.getenv("MCPLITE_JSON_DIFF_VERBOSE"))) {
    message(length(values), " values x ", length(combos), " option sets = ", compared,
            " comparisons; both failed: ", both_failed)
  }
  expect_lt(both_failed, compared / 10)
  if (length(differences)) {
    message(length(differences), " differences; first values: ",
            paste(head(unique(sub(" options.*", "", differences)), 15), collapse = "\n"))
  }
  expect_identical(head(differences, 10), character())
})

test_that("unserializable values are errors that name the type", {
  opts <- list(null = "null", auto_unbox = TRUE, digits = 4L)
  expect_match(rust_to_json(new.env(), opts, json_helpers())$error, "environment")
  expect_match(rust_to_json(list(f = function(x) x), opts, json_helpers())$error, "function")
  expect_match(rust_to_json(quote(x + y), opts, json_helpers())$error, "language")
  expect_match(rust_to_json(structure(list(), class = "foo"), opts, json_helpers())$error, "'foo'")
  expect_null(rust_to_json(new.env(), opts, json_helpers())$value)
  deep <- 1
  for (i in 1:2000) deep <- list(deep)
  expect_match(rust_to_json(deep, opts, json_helpers())$error, "nested too deeply")
  expect_true(names(intentional_json_differences)[1] == "function_values")
})

test_that("number formatting matches jsonlite for every digits setting and at rounding boundaries", {
  skip_if_not_installed("jsonlite")
  skip_on_cran()
  set.seed(7)
  n <- 20000
  x <- c(
    runif(n / 4, -1e6, 1e6), rnorm(n / 4) * 10^sample(-320:308, n / 4, TRUE),
    round(runif(n / 4, -1e5, 1e5), sample(0:6, n / 4, TRUE)),
    sample(-1e4:1e4, n / 4, TRUE) / 2^sample(0:12, n / 4, TRUE)
  )
  # Values where formatting is delicate: ties at the digits kept (decimal and
  # binary), powers of ten and their neighbours, subnormals, integers past
  # 2^53 and 2^64, the modp_dtoa2 / %g switch points, negative zero.
  pow10 <- 10^(-323:308)
  boundary <- c(
    pow10, pow10 * (1 + .Machine$double.eps), pow10 * (1 - .Machine$double.eps / 2), 9.5 * 10^(-20:20),
    (0:2000) * 5e-5, (0:2000) / 8, 0.5 + 0:200, 1e-5 * c(1 - 1e-15, 1, 1 + 1e-15), 2147483647 + c(-1.5, -0.5, 0, 0.5, 1),
    5e-324, 2.2250738585072014e-308, 2^-1074 * 1:50, .Machine$double.xmax, 2^53 + (-5:5), 2^63, 2^64, 2^64 + 2^12,
    1e19, 1e20, 1e21, 123456789012345.5, 0.1 + 0.2, 1 / 3, 2 / 3, 100 * (1:9) + 0.05, -0
  )
  x <- c(x, boundary, -boundary)
  # Every setting the options allow (0 to 15 places, NA, I(1) to I(15)).
  settings <- c(as.list(0:15), list(NA), lapply(1:15, I))
  for (d in settings) {
    expected <- as.character(jsonlite::toJSON(x, digits = d))
    opts <- list(digits = d, auto_unbox = FALSE)
    expect_identical(rust_to_json(x, opts, json_helpers())$value, expected, label = paste("digits =", format(d)))
    # Data-frame fields are written by the row cursor's own number path.
    frame <- data.frame(v = x, w = rev(x))
    expected <- as.character(jsonlite::toJSON(frame, digits = d))
    expect_identical(rust_to_json(frame, opts, json_helpers())$value, expected, label = paste("frame, digits =", format(d)))
  }
})

test_that("long frames and vectors (strings written from a cache, rows through a cursor) match jsonlite", {
  skip_if_not_installed("jsonlite")
  skip_on_cran()
  set.seed(20261201)
  latin <- `Encoding<-`("caf\xe9", "latin1")
  labels <- c("alpha", "b \"q\"", "new\nline", "d\u00e9j\u00e0", latin, "caf\u00e9", "", strrep("long ", 20))
  frame <- function(n, na_share, distinct) {
    x <- data.frame(
      num = sample(c(runif(20) * 1e4, edge_doubles, NaN, Inf), n, TRUE),
      int = sample(c(seq_len(50), 99999999L, 100000000L, -.Machine$integer.max), n, TRUE),
      lgl = sample(c(TRUE, FALSE), n, TRUE),
      chr = sample(c(labels, sprintf("id-%d", seq_len(distinct))), n, TRUE),
      # A deferred (ALTREP) string column: read element by element.
      def = as.character(sample(1e6, n, TRUE)),
      fac = factor(sample(labels[1:4], n, TRUE)),
      stringsAsFactors = FALSE
    )
    for (k in seq_along(x)) x[[k]][runif(n) < na_share] <- NA
    x
  }
  values <- list()
  for (n in c(63, 64, 65, 300, 2000)) {
    for (na_share in c(0, 0.5)) {
      for (distinct in c(0, 3, 1000)) {
        x <- frame(n, na_share, distinct)
        values <- c(values, list(x, x$chr, x[c("num", "chr")], unname(as.list(x$chr))))
      }
    }
  }
  differences <- 0L
  for (x in values) {
    for (combo in json_option_grid()) {
      expected <- jsonlite_text(x, combo)
      actual <- mcplite_text(x, combo)
      if (!identical(expected, actual)) differences <- differences + 1L
    }
  }
  expect_identical(differences, 0L)
})
