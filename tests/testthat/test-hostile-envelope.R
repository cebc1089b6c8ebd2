# Issue 13, class 8 (and the "elsewhere" half of class 1): truthful answers
# outside tool arguments. A message with no id and no string method is an
# invalid request (-32600, no id member); one with no id and a string method is
# a notification, never answered whatever it holds; values the parser cannot
# hold (deep nesting, lone surrogates, 1e400) outside arguments are served or
# get an error that names the real problem, never "params must be an object",
# and nesting past the limit says "nested". Each line is followed by a marker
# request, so every answer is tied to the line that caused it.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

nest_array <- function(n, leaf = "1") paste0(strrep("[", n), leaf, strrep("]", n))
nest_object <- function(n, leaf = "1") paste0(strrep('{"a":', n), leaf, strrep("}", n))

# Send `line`, then a marker call; return what arrived in between.
hs_probe <- function(s, line, timeout = 20) {
  marker <- hs_id(s)
  hs_quiet(s, mcp_send(s$proc, line))
  hs_quiet(s, mcp_send(s$proc, hs_call_line(s, marker, "echo", '{"x":"marker"}')))
  got <- list()
  deadline <- Sys.time() + timeout
  repeat {
    n <- hs_quiet(s, mcp_pump(s$proc))
    while (length(s$proc$queue)) {
      msg <- s$proc$queue[[1]]
      s$proc$queue <- s$proc$queue[-1]
      if (identical(msg$id, marker)) return(list(answers = got, marker = TRUE))
      got[[length(got) + 1]] <- msg
    }
    if (n == 0) {
      if (!s$proc$process$is_alive() || Sys.time() > deadline) {
        why <- if (s$proc$process$is_alive()) "stalled" else sprintf("exited with status %s", s$proc$process$get_exit_status())
        s$problems <- c(s$problems, sprintf("the server %s; stderr ends: %s", why, hs_tail(mcp_stderr(s$proc))))
        s$crashes <- s$crashes + 1L
        mcp_kill(s$proc)
        hs_boot(s)
        return(list(answers = got, marker = FALSE))
      }
      Sys.sleep(0.003)
    }
  }
}

lies <- "params must be an object"

# Checks of the answers a line got (NULL or what is wrong).
want_invalid_no_id <- function(a) {
  if (length(a) != 1) return(sprintf("%d answers, want one -32600", length(a)))
  r <- a[[1]]
  if (is.null(r$error) || !identical(as.integer(r$error$code), -32600L)) return(sprintf("answer %s, want -32600", hs_show(attr(r, "json"))))
  if ("id" %in% names(r)) return(sprintf("the -32600 carries an id: %s", hs_show(attr(r, "json"))))
  NULL
}
want_silence <- function(a) if (length(a)) sprintf("a notification was answered: %s", hs_show(attr(a[[1]], "json"))) else NULL
want_truth <- function(nested) {
  force(nested)
  function(a) {
    if (length(a) != 1) return(sprintf("%d answers, want one", length(a)))
    r <- a[[1]]
    msg <- if (!is.null(r$error)) r$error$message else if (hs_is_error(r)) hs_text(r) else NULL
    if (!is.null(msg) && grepl(lies, msg, fixed = TRUE)) return(sprintf("the error lies: %s", msg))
    if (nested && (is.null(msg) || !grepl("nested", msg, ignore.case = TRUE))) {
      return(sprintf("want an error saying \"nested\", got %s", hs_show(attr(r, "json"))))
    }
    NULL
  }
}

envelope_cases <- function(version) {
  modern <- version == "2026-07-28"
  meta_with <- function(extra) {
    if (modern) {
      sprintf('"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x":%s}', extra)
    } else {
      sprintf('"_meta":{"x":%s}', extra)
    }
  }
  plain_meta <- if (modern) paste0(",", modern_meta()) else ""
  out <- list()
  add <- function(label, line, check) out[[length(out) + 1]] <<- list(label = label, line = line, check = check)
  for (l in c('{"jsonrpc":"2.0","methodExtra":1}', '{"jsonrpc":"2.0","method":1,"params":"bar"}',
              '{"jsonrpc":"2.0","method":null}', '{"jsonrpc":"2.0","method":["tools/list"]}', '{"jsonrpc":"2.0","method":{}}',
              '{"jsonrpc":"2.0","method":true}', '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","params":{}}', "{}",
              '{"jsonrpc":"2.0","method":1.5,"params":[]}', '{"method":7}')) {
    add(sprintf("no id, no string method: %s", l), l, want_invalid_no_id)
  }
  methods <- c("tools/call", "tools/list", "initialize", "ping", "server/discover", "", "x", "notifications/cancelled",
               "notifications/initialized", "notifications/message", "a\\u0000b", "\\ud800", strrep("m", 10000), "rpc.discover")
  params <- c("", '"bar"', "1", "null", "[]", "{}", '{"name":"echo","arguments":{"x":"a\\u0000b"}}',
              sprintf('{"x":%s}', nest_array(600)), '{"x":1e400}', '{"x":"\\ud800"}', '{"requestId":"nope"}')
  for (m in methods) {
    for (p in params) {
      line <- sprintf('{"jsonrpc":"2.0","method":"%s"%s}', m, if (nzchar(p)) paste0(',"params":', p) else "")
      add(sprintf("notification %s with params %s", substr(m, 1, 30), substr(p, 1, 40)), line, want_silence)
    }
  }
  add("notification with jsonrpc 1.0", '{"jsonrpc":"1.0","method":"x"}', want_silence)
  add("notification without jsonrpc", '{"method":"tools/list"}', want_silence)

  values <- list(
    list("100 deep", nest_array(100), FALSE), list("520 deep", nest_array(520), TRUE),
    list("600 deep objects", nest_object(600), TRUE), list("5000 deep", nest_array(5000), TRUE),
    list("100000 deep", nest_array(100000), TRUE),
    list("lone surrogate", '"\\ud800"', FALSE), list("lone low surrogate", '"a\\udc00b"', FALSE),
    list("1e400", "1e400", FALSE), list("-1e400", "-1e400", FALSE)
  )
  k <- 0
  for (v in values) {
    for (where in c("_meta of tools/list", "_meta of tools/call", "params member", "top-level member")) {
      k <- k + 1
      id <- sprintf('"e%d"', k)
      line <- switch(where,
        "_meta of tools/list" = sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{%s}}', id, meta_with(v[[2]])),
        "_meta of tools/call" = sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"x":"ok"},%s}}', id, meta_with(v[[2]])),
        "params member" = sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"x":"ok"},"extra":%s%s}}', id, v[[2]], plain_meta),
        "top-level member" = sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/list","extra":%s%s}', id, v[[2]],
                                     if (modern) sprintf(',"params":{%s}', modern_meta()) else "")
      )
      # Past the limit inside _meta, which the server reads, is an error that
      # says "nested"; members it never reads may also be ignored.
      add(sprintf("%s in the %s", v[[1]], where), line, want_truth(v[[3]] && startsWith(where, "_meta")))
    }
    k <- k + 1
    add(sprintf("%s in arguments (...)", v[[1]]), hs_call_line(list(version = version), sprintf("e%d", k), "echo_dots",
                                                                 sprintf('{"z":%s}', v[[2]])),
        want_truth(v[[3]]))
  }
  add("lone surrogate in the tool name", hs_call_line(list(version = version), "t1", "echo\\ud800", "{}"), want_truth(FALSE))
  add("lone surrogate in the method", sprintf('{"jsonrpc":"2.0","id":"t2","method":"tools/list\\ud800"%s}',
                                               if (modern) sprintf(',"params":{%s}', modern_meta()) else ""), want_truth(FALSE))
  add("1e400 as the id", sprintf('{"jsonrpc":"2.0","id":1e400,"method":"tools/list"%s}',
                                 if (modern) sprintf(',"params":{%s}', modern_meta()) else ""), want_truth(FALSE))
  add("100000 unclosed brackets", strrep("[", 100000), function(a) {
    if (length(a) != 1 || is.null(a[[1]]$error)) return(sprintf("%d answers, want one error", length(a)))
    NULL
  })
  out
}

run_envelope <- function(version) {
  skip_if_no_mcplite_child()
  s <- hs_start(version)
  on.exit(mcp_kill(s$proc), add = TRUE)
  problems <- character()
  all <- list()
  for (k in envelope_cases(version)) {
    got <- hs_probe(s, k$line)
    all <- c(all, got$answers)
    why <- k$check(got$answers)
    if (!got$marker) why <- c(why, "the marker after it was not answered")
    if (length(why)) problems <- c(problems, sprintf("%s: %s", k$label, paste(why, collapse = "; ")))
  }
  hs_close(s)
  if (length(all)) mcp_validate(all, version)
  hs_report(c(s$problems, problems), sprintf("envelope cases in %s (%d server deaths or stalls)", version, s$crashes))
}

test_that("invalid requests get -32600 without an id, notifications get nothing, errors tell the truth (2025-11-25)", {
  run_envelope("2025-11-25")
})

test_that("invalid requests get -32600 without an id, notifications get nothing, errors tell the truth (2026-07-28)", {
  run_envelope("2026-07-28")
})
