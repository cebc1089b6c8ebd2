# Issue 13, class 2: tampered results. A tool_result() edited after it was
# built, or made by hand with structure(..., class = "mcplite_tool_result"),
# field by field and block field by block field, with every kind of bad value
# (fixtures/hostile-cases.R generates ~3000 of them). Each answer must be a
# correct, schema-valid result when the edited object still makes sense, or
# isError: true whose text names what is wrong; never an extra stdout line,
# never a lost answer, never a dead server. In every protocol version.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# Rebuild a result with the constructors from its own fields. An edited object
# "still makes sense" exactly when the constructors accept its fields and give
# back an identical object.
hostile_rebuild_block <- function(b) {
  type <- sub("^mcplite_content_", "", class(b)[1])
  fields <- unclass(b)
  if (!identical(fields[["type"]], type)) stop("type and class disagree")
  fields[["type"]] <- NULL
  do.call(get(paste0("content_", type), asNamespace("mcplite")), fields)
}

hostile_rebuild <- function(x) {
  if (!is.list(x) || !identical(class(x), "mcplite_tool_result")) stop("not a plain result")
  extra <- setdiff(names(x), c("content", "structured_content", "structured_json", "is_error", "meta"))
  if (length(extra) || is.null(names(x))) stop("unknown fields")
  content <- lapply(x[["content"]], hostile_rebuild_block)
  if (is.null(x[["structured_content"]])) {
    mcplite::tool_result(content, is_error = x[["is_error"]], meta = x[["meta"]])
  } else {
    mcplite::tool_result(content, x[["structured_content"]], is_error = x[["is_error"]], meta = x[["meta"]])
  }
}

# Unknown annotation names are legitimate (sent as given); their warning is
# tested in test-content.R.
hostile_legit <- function(x) {
  isTRUE(tryCatch(
    identical(suppressWarnings(hostile_rebuild(x), classes = "mcplite_warning_unknown_annotation"), x),
    error = function(e) FALSE
  ))
}

# Words an error text must contain (any one) to say what is wrong.
hostile_what <- function(case) {
  if (identical(case$kind, "handmade")) {
    return(switch(sub("_.*$", "", case$base),
      structured = "structured", meta = "meta", annotations = "annotation|audience|priority",
      is = "is.?error|isError", block = "content|block|type|class", content = "content|block",
      plain = "content|block|class", extra = "class|result",
      "result|content|class"
    ))
  }
  path <- case$path
  chars <- unlist(Filter(is.character, path))
  last <- chars[length(chars)]
  if (length(path) == 2 && is.numeric(path[[2]])) return("content|block")
  if (length(chars) >= 2 && chars[length(chars) - 1] == "meta") return("meta")
  words <- switch(last,
    structured_json = , structured_content = "structured",
    is_error = "is.?error|isError",
    mime_type = "mime.?type|mimeType",
    last_modified = "last.?modified|lastModified|annotations",
    audience = , priority = paste0(last, "|annotations"),
    last
  )
  words
}

# Where a string field of the first block lands on the wire (NULL: not sent in
# this version).
hostile_wire_value <- function(result, case, version) {
  path <- case$path
  if (identical(path, list("meta", "m"))) return(list(result$`_meta`$m))
  if (length(path) < 3 || !identical(path[[1]], "content")) return(NULL)
  block <- result$content[[1]]
  field <- path[[3]]
  if (length(path) == 4 && field == "meta") return(if (version == "2024-11-05") NULL else list(block$`_meta`[[path[[4]]]]))
  if (length(path) == 4 && path[[4]] == "last_modified") {
    return(if (version == "2024-11-05") NULL else list(block$annotations$lastModified))
  }
  wire <- switch(field, mime_type = "mimeType", field)
  holder <- if (identical(block$type, "resource")) block$resource else block
  if (field %in% c("type", "annotations", "meta", "size")) return(NULL)
  list(holder[[wire]])
}

hostile_check <- function(case, obj, legit, value, response, version) {
  label <- case$label
  if (is.null(response)) return(NULL) # reported by hs_batch
  if (is.null(response$result)) {
    return(sprintf("%s: protocol error %s (%s) instead of a result", label, response$error$code, response$error$message))
  }
  err <- hs_is_error(response)
  text <- hs_text(response)
  what <- hostile_what(case)
  bad_error <- function() {
    if (!nzchar(text)) return(sprintf("%s: isError with no text", label))
    if (!grepl(what, text, ignore.case = TRUE)) {
      return(sprintf("%s: the error text does not say what is wrong (want /%s/): %s", label, what, hs_show(text)))
    }
    NULL
  }
  if (legit) {
    # A string that is not valid UTF-8 (a "bytes" string, invalid native
    # bytes) cannot be sent as it is: replacing the bad bytes and refusing
    # the result are both right.
    if (err && is.character(value) && length(value) == 1 && !is.na(value) && is.na(hs_utf8(value))) {
      if (grepl(paste0(what, "|UTF-?8|encod|byte"), text, ignore.case = TRUE)) return(NULL)
      return(sprintf("%s: the error text does not say what is wrong: %s", label, hs_show(text)))
    }
    if (err != isTRUE(obj[["is_error"]])) {
      return(sprintf("%s: a result that still makes sense was %s: %s", label,
                     if (err) "refused" else "sent without its isError", hs_show(text)))
    }
    if (is.character(value) && length(value) == 1 && !is.na(value) && !is.na(hs_utf8(value))) {
      got <- hostile_wire_value(response$result, case, version)
      if (!is.null(got) && !identical(got[[1]], hs_utf8(value))) {
        return(sprintf("%s: sent %s instead of %s", label, encodeString(hs_show(format(got[[1]])), quote = '"'),
                       encodeString(hs_utf8(value), quote = '"')))
      }
    }
    if (identical(case$mutation, "removed")) {
      got <- hostile_wire_value(response$result, case, version)
      if (!is.null(got) && !is.null(got[[1]])) return(sprintf("%s: a removed field was still sent", label))
    }
    return(NULL)
  }
  path <- case$path
  last <- if (length(path)) path[[length(path)]] else ""
  # is_error must be TRUE or FALSE: anything else ("no", NA, c(TRUE, FALSE))
  # may not be read as either. Removing it leaves the default, FALSE.
  must_fail <- (identical(last, "is_error") && !case$mutation %in% c("removed", "null")) ||
    grepl("^is_error", case$base)
  if (err && must_fail && identical(last, "is_error") && case$mutation %in% c("int", "dbl")) {
    return(NULL) # 1L and 2.5 are true in R: an isError answer is right either way
  }
  # A malformed factor (codes outside its levels, levels that are not
  # strings) holds no value at all.
  malformed <- c("factor_code_high", "factor_code_zero", "factor_code_negative", "factor_levels_numeric",
                 "factor_levels_missing", "factor_levels_list")
  # (structured_content is payload data, written as jsonlite would: a code
  # outside the levels is a missing value there, not an error.)
  must_fail <- must_fail || (case$mutation %in% malformed && !identical(last, "structured_content"))
  # An edit of structured_content is sent: its JSON is written again, and the
  # text block generated from the JSON of the value it had follows it.
  if (identical(case$kind, "tamper") && identical(last, "structured_content") && !err) {
    if (identical(text, '{"a":1,"b":"x"}')) {
      return(sprintf("%s: the edit of structured_content was ignored", label))
    }
    sent <- response$result$structuredContent
    if (!is.null(sent) && !identical(sent, jsonlite::parse_json(text))) {
      return(sprintf("%s: structuredContent and the text block generated from it disagree: %s", label, hs_show(text)))
    }
  }
  if (identical(last, "structured_json") && is.character(value) && length(value) == 1 && !is.na(value)) {
    must_fail <- must_fail || !hs_valid_json(hs_utf8(value))
  }
  if (identical(case$kind, "handmade") && grepl("^structured_json_", case$base)) {
    json <- obj$structured_json
    must_fail <- !hs_valid_json(json)
    if (!err && version != "2024-11-05" && !must_fail && !is.null(response$result$structuredContent) &&
        !grepl("duplicate|deep", case$base)) {
      want <- jsonlite::parse_json(json)
      if (!identical(response$result$structuredContent, want)) {
        return(sprintf("%s: structuredContent is not the JSON the object holds", label))
      }
    }
  }
  if (err) return(bad_error())
  if (must_fail) return(sprintf("%s: accepted (isError false) although the value is unusable", label))
  NULL
}

hostile_results_run <- function(version) {
  skip_if_no_mcplite_child()
  env <- hostile_case_env()
  cases <- env$hostile_cases()
  # 2024-11-05 cannot carry audio or resource links: those calls are tool
  # errors by projection, whatever was edited (test-protocol.R covers that).
  keep <- if (version == "2024-11-05") {
    which(!vapply(cases, function(k) k$kind == "tamper" && k$base %in% c("audio", "link"), TRUE))
  } else {
    seq_along(cases)
  }
  s <- hs_start(version)
  on.exit(mcp_kill(s$proc), add = TRUE)
  items <- lapply(keep, function(i) {
    id <- hs_id(s)
    list(id = id, line = hs_call_line(s, id, "tamper", sprintf('{"case":%d}', i)), label = cases[[i]]$label)
  })
  answers <- hs_batch(s, items)
  problems <- character()
  muts <- env$hostile_mutations()
  for (k in seq_along(keep)) {
    case <- cases[[keep[k]]]
    obj <- env$hostile_make(case)
    value <- if (case$kind == "tamper") muts[[case$mutation]] else NULL
    problems <- c(problems, hostile_check(case, obj, hostile_legit(obj), value, answers[[items[[k]]$id]], version))
  }
  hs_close(s)
  problems <- c(s$problems, problems)
  hs_validate(answers, version)
  hs_report(problems, sprintf("tampered results in %s (%d cases, %d server deaths or stalls)", version, length(keep), s$crashes))
}

test_that("the generated cases are what they claim: untouched bases and rebuilt objects are legit", {
  env <- hostile_case_env()
  for (b in names(env$hostile_bases())) expect_true(hostile_legit(env$hostile_bases()[[b]]()), info = b)
  cases <- env$hostile_cases()
  legit <- vapply(cases, function(k) hostile_legit(env$hostile_make(k)), TRUE)
  # Some edits keep a valid object (a text with a newline), most do not.
  expect_gt(sum(legit), 30)
  expect_gt(sum(!legit), 700)
  expect_false(hostile_legit(env$hostile_make(list(kind = "tamper", base = "text", path = list("content", 1L, "text"), mutation = "na"))))
})

for (version in all_versions) {
  local({
    v <- version
    test_that(sprintf("tampered tool results are checked before they reach the wire (%s)", v), {
      hostile_results_run(v)
    })
  })
}

test_that("a lazy vector R cannot produce is a tool error, and the server goes on", {
  # A compact sequence is made only when read; under a vector memory limit R
  # cannot make it. Before, that R error escaped the serializer and ended
  # the server with the call unanswered.
  server <- c(
    "library(mcplite)",
    "invisible(mem.maxVSize(1500))",
    "big <- tool(function() list(n = 1L, x = seq_len(1e9)), name = 'big', description = 'Too long to make')",
    "column <- tool(function() tool_result(structured_content = list(ids = seq_len(1e9))), name = 'column', description = 'Too')",
    "words <- tool(function() list(w = as.character(seq_len(1e9))), name = 'words', description = 'Lazy strings')",
    "ok <- tool(function() 'fine', name = 'ok', description = 'Says fine')",
    "mcp_server(list(big, column, words, ok))"
  )
  call <- function(id, name) rpc(id, "tools/call", sprintf('{"name":"%s","arguments":{}}', name))
  out <- mcp_exchange(c(
    initialize_line("2025-11-25"), initialized_line(),
    call(1, "big"), call(2, "column"), call(3, "words"), call(4, "ok")
  ), server = server, timeout = 120)
  by_id <- setNames(out$responses, vapply(out$responses, function(r) format(r$id), ""))
  for (id in c("1", "2", "3")) {
    r <- by_id[[id]]
    expect_true(isTRUE(r$result$isError), info = id)
    expect_match(r$result$content[[1]]$text, "R could not produce the values of an ALTREP (integer|character) vector of length 1000000000")
  }
  expect_identical(by_id[["4"]]$result$content[[1]]$text, "fine")
})
