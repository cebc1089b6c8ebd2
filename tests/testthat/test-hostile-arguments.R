# Issue 13, class 1 (and the argument half of class 8): client values R cannot
# hold, or holds only with care, in every argument position: a named formal,
# a defaulted formal, `...`, and nested inside a list. Strings with NUL, lone
# surrogates and odd but valid Unicode, numbers JSON allows and doubles do not,
# deep nesting, odd and duplicate names. Each value is a generated case; one
# server takes all of them in a row, so a case that kills it is named (and
# every later case still runs on a fresh server).

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# ---- case builders -------------------------------------------------------

# A case: a tool, its arguments as JSON text, and a check of the answer that
# returns NULL or what is wrong.
arg_case <- function(label, tool, args, check) list(label = label, tool = tool, args = args, check = check)

# The answer is a tool error whose text contains every fragment.
want_tool_error <- function(...) {
  fragments <- c(...)
  force(fragments)
  function(r) {
    if (is.null(r$result)) return(sprintf("protocol error %s (%s) instead of a tool error", r$error$code, r$error$message))
    if (!hs_is_error(r)) return(sprintf("served (isError false: %s) instead of a tool error", hs_show(hs_text(r))))
    text <- hs_text(r)
    missing <- fragments[!vapply(fragments, function(f) grepl(f, text, fixed = TRUE), TRUE)]
    if (length(missing)) return(sprintf("tool error text lacks %s: %s", paste(sQuote(missing, FALSE), collapse = ", "), hs_show(text)))
    NULL
  }
}

# The answer is a tool error whose text matches a regular expression.
want_tool_error_re <- function(re) {
  force(re)
  function(r) {
    if (is.null(r$result)) return(sprintf("protocol error %s (%s) instead of a tool error", r$error$code, r$error$message))
    if (!hs_is_error(r)) return(sprintf("served (isError false: %s) instead of a tool error", hs_show(hs_text(r))))
    if (!grepl(re, hs_text(r), ignore.case = TRUE)) return(sprintf("tool error text does not match /%s/: %s", re, hs_show(hs_text(r))))
    NULL
  }
}

# The answer is a success whose text is exactly `text`.
want_text <- function(text) {
  force(text)
  function(r) {
    if (is.null(r$result)) return(sprintf("protocol error %s (%s) instead of a result", r$error$code, r$error$message))
    if (hs_is_error(r)) return(sprintf("tool error instead of a result: %s", hs_show(hs_text(r))))
    got <- hs_text(r)
    if (!identical(got, text)) return(sprintf("got %s, want %s", encodeString(hs_show(got, 120), quote = '"'), encodeString(hs_show(text, 120), quote = '"')))
    NULL
  }
}

# The answer is a success whose text matches `re`.
want_text_re <- function(re) {
  force(re)
  function(r) {
    if (is.null(r$result)) return(sprintf("protocol error %s (%s) instead of a result", r$error$code, r$error$message))
    if (hs_is_error(r)) return(sprintf("tool error instead of a result: %s", hs_show(hs_text(r))))
    if (!grepl(re, hs_text(r))) return(sprintf("got %s, want /%s/", encodeString(hs_show(hs_text(r), 120), quote = '"'), re))
    NULL
  }
}

# The answer is a success whose text, read as JSON, equals `value`.
want_json <- function(value) {
  force(value)
  function(r) {
    if (is.null(r$result)) return(sprintf("protocol error %s (%s) instead of a result", r$error$code, r$error$message))
    if (hs_is_error(r)) return(sprintf("tool error instead of a result: %s", hs_show(hs_text(r))))
    got <- tryCatch(jsonlite::parse_json(hs_text(r)), error = function(e) "<not JSON>")
    if (!identical(got, value)) return(sprintf("got %s", hs_show(hs_text(r), 200)))
    NULL
  }
}

# Any answer will do (served or a tool error): the point is the server lives.
want_answer <- function(r) NULL

# A string as a JSON string literal whose every non-ASCII or special character
# is written as a \u escape (surrogate pairs above U+FFFF).
json_escaped <- function(x) {
  cps <- utf8ToInt(enc2utf8(x))
  parts <- vapply(cps, function(cp) {
    if (cp >= 0x20 && cp < 0x7f && cp != 0x22 && cp != 0x5c) return(intToUtf8(cp))
    if (cp <= 0xffff) return(sprintf("\\u%04x", cp))
    v <- cp - 0x10000
    sprintf("\\u%04x\\u%04x", 0xd800 + v %/% 0x400, 0xdc00 + v %% 0x400)
  }, "")
  paste0('"', paste(parts, collapse = ""), '"')
}

# The same JSON value placed in each argument position of a probe tool.
# `value_json` is JSON text; `check_for(position)` gives the check.
in_positions <- function(label, probe, value_json, check) {
  list(
    arg_case(paste(label, "as named formal"), probe, sprintf('{"x":%s}', value_json), check),
    arg_case(paste(label, "as defaulted formal"), paste0(probe, "_default"), sprintf('{"x":%s}', value_json), check),
    arg_case(paste(label, "in ..."), paste0(probe, "_dots"), sprintf('{"z":%s}', value_json), check),
    arg_case(paste(label, "nested in a list"), paste0(probe, "_nested"), sprintf('{"x":[%s]}', value_json), check)
  )
}

nest_array <- function(n, leaf = "1") paste0(strrep("[", n), leaf, strrep("]", n))
nest_object <- function(n, leaf = "1") paste0(strrep('{"a":', n), leaf, strrep("}", n))
nest_mixed <- function(n, leaf = "1") {
  open <- rep_len(c('{"a":', "["), n)
  close <- rev(rep_len(c("}", "]"), n))
  paste0(paste(open, collapse = ""), leaf, paste(close, collapse = ""))
}

# ---- the cases -----------------------------------------------------------

nul_strings <- c('\\u0000', 'a\\u0000', '\\u0000b', 'a\\u0000b', '\\u0000\\u0000',
                 paste0(strrep("x", 5000), '\\u0000'), '\\u00e9\\u0000\\u00e9', '\\ud83d\\ude00\\u0000z')

nul_cases <- function() {
  out <- list()
  for (s in nul_strings) {
    v <- paste0('"', s, '"')
    short <- if (nchar(s) > 30) paste0(substr(s, 1, 12), "...") else s
    spots <- list(
      list("take", sprintf('{"x":%s}', v), "x"),
      list("take", sprintf('{"y":%s}', v), "y"),
      list("take", sprintf('{"zz":%s}', v), "zz"),
      list("take", sprintf('{"x":{"a":[1,%s]}}', v), "x$a[[2]]"),
      list("take", sprintf('{"x":[%s]}', v), "x[[1]]"),
      list("take", sprintf('{"zz":{"b":{"c":%s}}}', v), "zz$b$c"),
      list("take", sprintf('{"y":[[1,[%s]]]}', v), "y[[1]][[2]][[1]]"),
      list("take", sprintf('{"x":"ok","zz":[{"k":%s}]}', v), "zz[[1]]$k"),
      list("one", sprintf('{"x":%s}', v), "x"),
      list("echo_nested", sprintf('{"x":[%s]}', v), "x[[1]]")
    )
    for (sp in spots) {
      out[[length(out) + 1]] <- arg_case(sprintf("NUL string %s at %s (%s)", short, sp[[3]], sp[[1]]), sp[[1]], sp[[2]],
                                         want_tool_error("NUL", sp[[3]]))
    }
  }
  # NUL in a name: for a tool with `...`, for one without, nested in a value.
  for (key in c('a\\u0000b', '\\u0000', 'x\\u0000', '\\u0000x')) {
    out[[length(out) + 1]] <- arg_case(sprintf("NUL in argument name %s (names_of, ...)", key), "names_of",
                                       sprintf('{"%s":1}', key), want_tool_error("NUL"))
    out[[length(out) + 1]] <- arg_case(sprintf("NUL in argument name %s (take, ...)", key), "take",
                                       sprintf('{"x":"ok","%s":1}', key), want_tool_error("NUL"))
    out[[length(out) + 1]] <- arg_case(sprintf("NUL in argument name %s (one, no ...)", key), "one",
                                       sprintf('{"%s":1}', key), want_tool_error_re("."))
    out[[length(out) + 1]] <- arg_case(sprintf("NUL in a nested name %s", key), "echo",
                                       sprintf('{"x":{"%s":1}}', key), want_tool_error("NUL"))
  }
  out
}

surrogate_cases <- function() {
  lone <- list(
    list('\\ud800', "\ufffd"), list('\\udc00x', "\ufffdx"), list('\\ud800\\ud800', "\ufffd\ufffd"),
    list('a\\ud83d', "a\ufffd"), list('\\ude00\\ud83d', "\ufffd\ufffd"), list('\\udbff', "\ufffd"),
    list('x\\udfffy', "x\ufffdy"), list('\\ud83d\\ude00', "\U0001F600"), list('\\ud83d\\ude00\\ud800', "\U0001F600\ufffd"),
    list('\\ud800\\ud83d\\ude00', "\ufffd\U0001F600"), list('\\udbff\\udfff', "\U0010FFFF")
  )
  out <- list()
  for (l in lone) {
    out <- c(out, in_positions(sprintf("string %s", l[[1]]), "echo", paste0('"', l[[1]], '"'), want_text(l[[2]])))
  }
  # A lone surrogate in a name is a name too.
  out[[length(out) + 1]] <- arg_case("lone surrogate in an argument name", "names_of", '{"\\ud800":1}',
                                     want_json(list("\ufffd")))
  out
}

unicode_strings <- c(
  "\uffff", "\ufeffstarts with a BOM", "e\u0301 (combining acute)", "\u202eRTL override\u202c", "\u05e9\u05dc\u05d5\u05dd",
  "\U0001F600", "\U0010FFFF", "\ufdd0", "line\u2028para\u2029", "next\u0085line", "a\u00a0b", "\U0001D11E",
  "\U0001F3F3\ufe0f\u200d\U0001F308", "zero\u200bwidth", "\u65e5\u672c\u8a9e", "tab\tnewline\ncr\rend",
  "del\u007f", "ctl\u0001\u001f", "quote\" backslash\\ slash/", "\u00e9 vs e\u0301", "",
  strrep("\u00e9\u4e2d\U0001F600", 20000)
)

unicode_cases <- function() {
  out <- list()
  for (i in seq_along(unicode_strings)) {
    u <- unicode_strings[[i]]
    short <- encodeString(if (nchar(u) > 20) paste0(substr(u, 1, 12), "...") else u)
    out <- c(out,
             in_positions(sprintf("valid Unicode %s (raw UTF-8)", short), "echo", json_str(u), want_text(u)),
             in_positions(sprintf("valid Unicode %s (escaped)", short), "echo", json_escaped(u), want_text(u)))
  }
  out
}

number_cases <- function() {
  nums <- list(
    list("1e400", "^double:Inf$"), list("-1e400", "^double:-Inf$"), list("1e-400", "^double:0(:negative-zero)?$"),
    list("-1e-400", "^double:0(:negative-zero)?$"), list("123456789012345678901234567890", "^double:1234567890123456[0-9]{14}$"),
    list("-123456789012345678901234567890", "^double:-1234567890123456[0-9]{14}$"),
    list("2147483647", "^integer:2147483647$"), list("-2147483647", "^integer:-2147483647$"),
    list("-2147483648", "^double:-2147483648$"), list("2147483648", "^double:2147483648$"),
    list("9007199254740993", "^double:900719925474099[2-4]$"), list("1.0", "^double:1$"), list("1E2", "^double:100$"),
    list("1e+2", "^double:100$"), list("1e2", "^double:100$"), list("0", "^integer:0$"), list("-0", "^(integer|double):0(:negative-zero)?$"),
    list("-0.0", "^double:0(:negative-zero)?$"), list("0e0", "^double:0$"), list("5e-324", "^double:(4\\.94065645841246[0-9]*e-324|0\\.0+49)"),
    list("1.7976931348623157e308", "^double:17976931348623157[0-9]+$"), list("1.8e308", "^double:Inf$"),
    list("0.1", "^double:0\\.10000000000000001$"), list("1e-7", "^double:0\\.0000000?9{10}"),
    list("12345678901234567890.5", "^double:1234567890123456[0-9]{4}$")
  )
  out <- list()
  for (n in nums) out <- c(out, in_positions(sprintf("number %s", n[[1]]), "kind", n[[1]], want_text_re(n[[2]])))
  out
}

depth_cases <- function() {
  out <- list()
  for (n in c(1, 100, 500)) {
    for (shape in c("array", "object", "mixed")) {
      nest <- switch(shape, array = nest_array, object = nest_object, mixed = nest_mixed)
      out[[length(out) + 1]] <- arg_case(sprintf("%s nested %d deep (named formal)", shape, n), "depth", sprintf('{"x":%s}', nest(n)),
                                         want_text(sprintf("%d integer:1", n)))
      out[[length(out) + 1]] <- arg_case(sprintf("%s nested %d deep (...)", shape, n), "depth_dots", sprintf('{"z":%s}', nest(n)),
                                         want_text(sprintf("%d integer:1", n)))
    }
  }
  for (n in c(520, 600, 1000, 5000)) {
    for (shape in c("array", "object", "mixed")) {
      nest <- switch(shape, array = nest_array, object = nest_object, mixed = nest_mixed)
      out[[length(out) + 1]] <- arg_case(sprintf("%s nested %d deep (named formal)", shape, n), "depth", sprintf('{"x":%s}', nest(n)),
                                         want_tool_error_re("nested"))
      out[[length(out) + 1]] <- arg_case(sprintf("%s nested %d deep (...)", shape, n), "depth_dots", sprintf('{"z":%s}', nest(n)),
                                         want_tool_error_re("nested"))
    }
  }
  out
}

key_cases <- function() {
  out <- list(
    arg_case("empty name (tool with ...)", "take", '{"":1}', want_tool_error_re("empty|name")),
    arg_case("empty name (names_of)", "names_of", '{"":1}', want_tool_error_re("empty|name")),
    arg_case("empty name (tool without ...)", "one", '{"":1}', want_tool_error_re("empty|name")),
    arg_case("empty name beside a good one", "take", '{"x":"a","":1}', want_tool_error_re("empty|name")),
    arg_case("duplicate formal x", "one", '{"x":1,"x":2}', want_tool_error("multiple")),
    arg_case("duplicate formal x (same value)", "one", '{"x":1,"x":1}', want_tool_error("multiple")),
    arg_case("duplicate formal x (tool with ...)", "take", '{"x":"a","x":"b"}', want_tool_error("multiple")),
    arg_case("duplicate defaulted formal", "echo_default", '{"x":"a","x":"b"}', want_tool_error("multiple")),
    arg_case("duplicate names in ...", "names_of", '{"z":1,"z":2}', want_answer),
    arg_case("name ... in ...", "names_of", '{"...":1}', want_answer),
    arg_case("name ..1 in ...", "names_of", '{"..1":1}', want_answer),
    arg_case("name ... for a tool without ...", "one", '{"...":1}', want_answer),
    arg_case("order of names is kept", "names_of", '{"b":1,"a":2,"c":3}', want_json(list("b", "a", "c")))
  )
  keys <- c("\u00e9t\u00e9", "\u043a\u043b\u044e\u0447", "\u540d\u524d", "\U0001F600", "e\u0301", "\u202ertl", "\ufeffbom",
            "a b", "a\"b", "a\\b", "\"", "\\", "a/b", "tab\there", "new\nline", "$", "[[1]]", "NULL", "if", "TRUE",
            "function", "1abc", "_x", ".x", "x-y", "\u2028", strrep("k", 10000), strrep("\u00e9", 3000))
  for (k in keys) {
    short <- encodeString(if (nchar(k) > 20) paste0(substr(k, 1, 10), "...") else k)
    out[[length(out) + 1]] <- arg_case(sprintf("name %s in ... (raw)", short), "names_of", sprintf("{%s:1}", json_str(k)), want_json(list(k)))
    out[[length(out) + 1]] <- arg_case(sprintf("name %s in ... (escaped)", short), "names_of", sprintf("{%s:1}", json_escaped(k)), want_json(list(k)))
  }
  out
}

all_arg_cases <- function() c(nul_cases(), surrogate_cases(), unicode_cases(), number_cases(), depth_cases(), key_cases())

run_arg_cases <- function(version, cases) {
  skip_if_no_mcplite_child()
  s <- hs_start(version)
  on.exit(mcp_kill(s$proc), add = TRUE)
  items <- lapply(cases, function(k) {
    id <- hs_id(s)
    list(id = id, line = hs_call_line(s, id, k$tool, k$args), label = k$label)
  })
  # The server must still answer correctly after all of them.
  last <- hs_id(s)
  items[[length(items) + 1]] <- list(id = last, line = hs_call_line(s, last, "echo", '{"x":"still here"}'), label = "final echo")
  answers <- hs_batch(s, items)
  problems <- character()
  for (i in seq_along(cases)) {
    r <- answers[[items[[i]]$id]]
    if (is.null(r)) next # reported by hs_batch
    why <- cases[[i]]$check(r)
    if (!is.null(why)) problems <- c(problems, sprintf("%s: %s", cases[[i]]$label, why))
  }
  fin <- answers[[last]]
  if (!is.null(fin) && !identical(hs_text(fin), "still here")) problems <- c(problems, "the final echo was not answered correctly")
  hs_close(s)
  hs_validate(answers, version)
  hs_report(c(s$problems, problems), sprintf("%d argument cases in %s (%d server deaths or stalls)", length(cases), version, s$crashes))
}

test_that("strings with NUL, in values or names, at any position, are tool errors that name the place", {
  run_arg_cases("2025-11-25", nul_cases())
})

test_that("lone surrogates arrive as U+FFFD, pairs as the character, in every position", {
  run_arg_cases("2026-07-28", surrogate_cases())
})

test_that("unusual but valid Unicode arrives unchanged, raw or escaped, in every position", {
  run_arg_cases("2025-06-18", unicode_cases())
})

test_that("numbers JSON allows arrive as R numbers: out of range, huge, integer edges, exponents", {
  run_arg_cases("2024-11-05", number_cases())
})

test_that("arguments nested 500 deep arrive; deeper than 512 is a tool error about nesting", {
  run_arg_cases("2026-07-28", depth_cases())
})

test_that("odd names: empty and duplicate names are tool errors, any other name arrives unchanged", {
  run_arg_cases("2025-11-25", key_cases())
})

test_that("-0 arrives as a zero (which type is recorded here)", {
  skip_if_no_mcplite_child()
  s <- hs_start("2025-11-25")
  on.exit(mcp_kill(s$proc), add = TRUE)
  a <- hs_batch(s, list(list(id = "z", line = hs_call_line(s, "z", "kind", '{"x":-0}'), label = "-0")))
  hs_close(s)
  # Today's parser gives integer 0 (serde_json reads -0 as the integer 0);
  # R's integers have no negative zero. Either type is a faithful zero.
  expect_match(hs_text(a$z), "^(integer|double):0(:negative-zero)?$")
  hs_report(s$problems, "-0")
})
