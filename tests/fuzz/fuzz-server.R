# Server for the R-level fuzz driver (tests/fuzz/fuzz-r.mjs). Tools of every
# arity, with defaults and `...`, return what they were given (so client
# values go through R and back out through the serializer); `ret(seed)`
# returns a random R object made from its seed: ordinary values of every type
# (factors, dates, NaN/Inf, S4, environments, functions, latin1 and "bytes"
# strings, data frames, classes set by hand) and tool_result()s and content
# blocks edited at random after they were built, and values whose R methods
# fail or misbehave while the serializer converts them; `ret_quit(seed)`
# returns one whose conversion calls quit().
library(mcplite)

pick <- function(x) x[[sample.int(length(x), 1L)]]

latin1 <- local({ s <- "caf\xe9"; Encoding(s) <- "latin1"; s })
bytes <- local({ s <- rawToChar(as.raw(c(0x61, 0xff, 0x62))); Encoding(s) <- "bytes"; s })
invalid_native <- rawToChar(as.raw(c(0x61, 0xc3, 0x28)))

gen_string <- function() {
  switch(sample.int(14L, 1L),
    "", "plain", strrep("x", sample.int(3000L, 1L)), "caf\u00e9 \u65e5\u672c \U0001F600 \u202e",
    "line\nbreak\r\ttab", "\u0001\u001f\u007f\u2028", latin1, bytes, invalid_native,
    "{\"a\":1}", "1}\n{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}", NA_character_, "\ufeff\uffff",
    paste(sample(c(letters, "\"", "\\", "/", " "), 20L, TRUE), collapse = ""))
}

bad_factor <- function() {
  x <- pick(list(5L, 0L, -2L, c(1L, 9L), NA_integer_))
  attr(x, "levels") <- pick(list("a", c("a", "b"), 3, NULL, list("a"), c(NA, "b")))
  class(x) <- pick(list("factor", c("ordered", "factor")))
  x
}

setClass("FuzzThing", representation(x = "numeric"))

# An R method the serializer calls while it converts a result (as.character()
# for "hms"; date-times are formatted by base R's own methods), written as a
# careless author might: it fails, warns, returns the wrong type or length,
# or ends R.
as.character.hms <- function(x, ...) {
  switch(attr(x, "fuzz") %||% "ok",
    fail = stop("as.character.hms() failed on purpose"),
    warn = { warning("as.character.hms() warns on purpose"); format(unclass(x)) },
    wrong = list(1, "a"),
    short = character(),
    number = 42,
    quit = quit(save = "no", status = 0),
    format(unclass(x))
  )
}
`%||%` <- function(a, b) if (is.null(a)) b else a
odd_method_value <- function(mode = pick(list("ok", "fail", "warn", "wrong", "short", "number"))) {
  switch(sample.int(2L, 1L),
    structure(c(61, NA, 3600)[seq_len(sample(1:3, 1L))], units = "secs", class = c("hms", "difftime"), fuzz = mode),
    data.frame(id = 1:2, took = I(structure(c(5, 6), units = "secs", class = c("hms", "difftime"), fuzz = mode)))
  )
}

gen_atomic <- function() {
  n <- pick(list(0L, 1L, 1L, 1L, 2L, 3L, 7L))
  switch(sample.int(17L, 1L),
    sample(c(TRUE, FALSE, NA), n, TRUE),
    sample(c(0L, 1L, -1L, .Machine$integer.max, -.Machine$integer.max, NA_integer_), n, TRUE),
    sample(c(0, -0, 1.5, NaN, Inf, -Inf, NA, 1e308, 5e-324, pi, 1 / 3, 1e15, 123456789.123, -1e-300), n, TRUE),
    vapply(seq_len(n), function(i) gen_string(), ""),
    complex(real = rnorm(n), imaginary = rnorm(n)),
    as.raw(sample(0:255, n, TRUE)),
    factor(sample(c("a", "b", NA), n, TRUE)),
    bad_factor(),
    as.Date("2024-01-01") + sample(-100000:100000, n, TRUE),
    as.POSIXct("2024-01-01 12:00:00", tz = "UTC") + sample(c(-1e9, 0, 1.5, 1e9, NA), n, TRUE),
    as.difftime(sample(1:100, n, TRUE), units = "mins"),
    structure(sample(1:10, n, TRUE), names = if (n) vapply(seq_len(n), function(i) gen_name(), "") else NULL),
    I(sample(1:10, n, TRUE)),
    structure(gen_string(), class = "json"),
    # Lazy (ALTREP) vectors: compact sequences and deferred strings.
    seq_len(n),
    as.double(seq_len(n)),
    as.character(seq_len(n) * 7L)
  )
}

gen_name <- function() {
  v <- pick(list("a", "b", "", "x y", "\u00e9", "\U0001F600", "a\"b", "dup", "dup", "_meta", "type", latin1, NA_character_))
  if (is.na(v)) "NA" else v
}

gen_special <- function() {
  switch(sample.int(13L, 1L),
    NULL, new.env(), function(x) x, y ~ x, quote(a + b), as.name("sym"), expression(1 + 2),
    new("FuzzThing", x = 1), as.POSIXlt("2024-05-05 05:05:05", tz = "UTC"), NA,
    structure(list(), class = "mystery"), matrix(list(1, "a", NULL, TRUE), 2L), odd_method_value())
}

gen_value <- function(depth = 0L) {
  if (depth >= 4L || runif(1L) < 0.35) return(if (runif(1L) < 0.8) gen_atomic() else gen_special())
  switch(sample.int(10L, 1L),
    lapply(seq_len(sample(0:4, 1L)), function(i) gen_value(depth + 1L)),
    { n <- sample(0:4, 1L); v <- lapply(seq_len(n), function(i) gen_value(depth + 1L)); names(v) <- vapply(seq_len(n), function(i) gen_name(), ""); v },
    data.frame(a = 1:2, b = c("x", NA), f = factor(c("u", "v")), d = as.Date(c("2024-01-01", NA)), stringsAsFactors = FALSE),
    matrix(sample(c(1, NA, Inf), 6L, TRUE), 2L),
    tryCatch(structure(gen_value(depth + 1L), class = pick(list("foo", c("a", "b"), "data.frame", "factor", "Date", "mcplite_content"))),
             error = function(e) list("unclassable")),
    gen_result(depth + 1L),
    tamper(gen_result(depth + 1L), depth + 1L),
    gen_block(),
    tamper_block(gen_block(), depth + 1L),
    # Long enough for cached strings and rows with missing fields.
    { m <- sample(64:200, 1L); data.frame(s = sample(c("a", "b \"q\"", latin1, NA), m, TRUE), x = sample(c(1.5, NA, 1e5, -0.25), m, TRUE),
                                          i = sample(c(1L, NA), m, TRUE), l = sample(c(TRUE, NA), m, TRUE), stringsAsFactors = FALSE) }
  )
}

gen_block <- function() {
  b <- tryCatch(switch(sample.int(6L, 1L),
    content_text(gen_string()),
    content_text(pick(list("hi", "a\nb")), annotations = list(audience = pick(list("user", c("user", "assistant"))), priority = runif(1L),
                                                               last_modified = "2025-01-01T00:00:00Z"), meta = list(k = gen_atomic())),
    content_image("aGk=", pick(list("image/png", "image/jpeg"))),
    content_audio("aGk=", "audio/wav"),
    content_resource_link(pick(list("file:///a", "https://e.x/\u00e9")), gen_string(), title = "T", size = sample(0:10, 1L)),
    content_resource("file:///r", text = gen_string(), mime_type = "text/plain")
  ), error = function(e) NULL)
  if (is.null(b)) content_text("fallback") else b
}

gen_result <- function(depth) {
  r <- tryCatch(switch(sample.int(4L, 1L),
    tool_result(lapply(seq_len(sample(0:3, 1L)), function(i) gen_block())),
    tool_result(structured_content = gen_value(depth + 1L)),
    tool_result(gen_block(), structured_content = list(a = 1L), is_error = runif(1L) < 0.3, meta = list(m = gen_atomic())),
    tool_result(content_text("x"), is_error = TRUE)
  ), error = function(e) NULL)
  if (is.null(r)) tool_result(content_text("fallback")) else r
}

# Edit a result after it was built: a field removed, replaced by anything, or
# the class set by hand.
tamper <- function(r, depth) {
  field <- pick(list("content", "structured_content", "structured_json", "is_error", "meta", "extra"))
  switch(sample.int(5L, 1L),
    { r[[field]] <- NULL; r },
    { r[field] <- list(gen_value(depth + 1L)); r },
    { if (length(r$content)) r$content[[1L]] <- tamper_block(r$content[[1L]], depth + 1L); r },
    structure(unclass(r)[sample(names(unclass(r)))], class = "mcplite_tool_result"),
    tryCatch(structure(gen_value(depth + 1L), class = "mcplite_tool_result"), error = function(e) structure(list(), class = "mcplite_tool_result"))
  )
}

tamper_block <- function(b, depth) {
  field <- pick(list("type", "text", "data", "mime_type", "uri", "name", "size", "annotations", "meta", "title"))
  switch(sample.int(5L, 1L),
    { b[[field]] <- NULL; b },
    { b[field] <- list(gen_value(depth + 1L)); b },
    { b$annotations <- list(audience = gen_value(depth + 1L), priority = gen_value(depth + 1L)); b },
    { class(b) <- pick(list("mcplite_content", c("mcplite_content_audio", "mcplite_content"), c("foo", "mcplite_content"))); b },
    unclass(b)
  )
}

# What a tool got, returned as an ordinary value (a list goes out as JSON).
got <- function(...) list(...)

tools <- list(
  tool(function() "nothing", name = "a0", description = "No arguments."),
  tool(function(x) got(x = x), name = "a1", description = "One argument.", arguments = list(x = type_ignore())),
  tool(function(x, y) got(x = x, y = y), name = "a2", description = "Two arguments.",
       arguments = list(x = type_ignore(), y = type_ignore())),
  tool(function(x, y, z) got(x = x, y = y, z = z), name = "a3", description = "Three arguments.",
       arguments = list(x = type_ignore(), y = type_ignore(), z = type_ignore())),
  tool(function(x = 1) got(x = x), name = "d1", description = "One defaulted.", arguments = list(x = type_ignore())),
  tool(function(x, y = "b") got(x = x, y = y), name = "d2", description = "One plain, one defaulted.",
       arguments = list(x = type_ignore(), y = type_ignore())),
  tool(function(x = NULL, y = list(), z = 3) got(x = x, y = y, z = z), name = "d3", description = "Three defaulted.",
       arguments = list(x = type_ignore(), y = type_ignore(), z = type_ignore())),
  tool(function(...) got(...), name = "v", description = "Only dots."),
  tool(function(x, ...) got(x = x, ...), name = "v1", description = "One formal and dots.", arguments = list(x = type_ignore())),
  tool(function(x, y = 2, ...) got(x = x, y = y, ...), name = "v2", description = "Formal, default, dots.",
       arguments = list(x = type_ignore(), y = type_ignore())),
  tool(function(x) x, name = "echo", description = "Returns its argument as is.", arguments = list(x = type_ignore())),
  tool(function(seed) {
    set.seed(seed)
    gen_value()
  }, name = "ret", description = "Returns a random R object made from `seed`.", arguments = list(seed = type_integer())),
  tool(function(seed) {
    set.seed(seed)
    v <- odd_method_value("quit")
    if (runif(1L) < 0.5) list(v, gen_value()) else v
  }, name = "ret_quit", description = "Returns an R object whose conversion ends R.", arguments = list(seed = type_integer()))
)

mcp_server(tools)
