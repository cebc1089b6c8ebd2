# Drop-in compatibility with the pure-R mcplite 0.2.0 on CRAN: the same
# server script runs under both packages, receives the same requests over real
# pipes, and the answers are compared as parsed JSON. Error `message` texts
# and the server version are left out; every other difference must be one of
# the deliberate differences documented in ?mcplite-cran (the internal table
# cran_differences() that the Rd page is rendered from), matched by request
# label and JSON path. The CRAN package lives in a library of its own
# (MCPLITE_CRAN_LIB, installed by tools/install.sh; see helper-cran.R).

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

interop_state <- new.env(parent = emptyenv())

interop_cran_lib <- function() {
  if (!is.null(interop_state$lib)) return(interop_state$lib)
  lib <- Sys.getenv("MCPLITE_CRAN_LIB")
  if (!nzchar(lib)) lib <- file.path(tempdir(), "cran-mcplite")
  status <- cran_mcplite_install(lib)
  if (identical(status, "unreachable")) {
    skip(sprintf("CRAN cannot be reached to install mcplite %s (set MCPLITE_CRAN_LIB to a library holding it)",
                 cran_mcplite_version))
  }
  if (!status %in% c("present", "installed")) stop(status)
  interop_state$lib <- normalizePath(lib)
  interop_state$lib
}

# ---- the requests -------------------------------------------------------------
#
# Each entry: a label (the id of its answer, or a name for an answer without a
# readable id), the exact line, and which answer is expected: "id", "noid" (an
# error whose id could not be read) or "none" (a notification).

req <- function(label, method, params = NULL) {
  list(label = label, line = rpc(label, method, params), answer = "id")
}
note <- function(method, params = NULL) {
  list(label = NA_character_, line = rpc(NULL, method, params), answer = "none")
}
raw_line <- function(label, line, answer = "noid") list(label = label, line = line, answer = answer)

init <- function(label, version) req(label, "initialize", sprintf(
  '{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}', version))

call <- function(label, name, arguments = "{}", meta = NULL) {
  params <- sprintf('{"name":"%s","arguments":%s%s}', name, arguments,
                    if (is.null(meta)) "" else paste0(",", meta))
  req(label, "tools/call", params)
}

meta_json <- function(version = "2026-07-28", extra = "", capabilities = "{}") {
  sprintf('"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":%s%s}',
          version, capabilities, extra)
}
mreq <- function(label, method, version = "2026-07-28", extra = "") {
  req(label, method, paste0("{", meta_json(version, extra), "}"))
}
mcall <- function(label, name, arguments = "{}", version = "2026-07-28") {
  call(label, name, arguments, meta = meta_json(version))
}

# The calls every era makes, with `p` as the label prefix.
tool_calls <- function(p, make = call) {
  list(
    make(paste0(p, "add"), "add", '{"a":1,"b":2.5}'),
    make(paste0(p, "echo"), "echo", '{"text":"d\\u00e9j\\u00e0 \\ud83d\\ude00","times":2}'),
    make(paste0(p, "fail"), "fail", '{"reason":"on purpose"}'),
    make(paste0(p, "missing-arg"), "echo", "{}"),
    make(paste0(p, "rich"), "rich"),
    make(paste0(p, "media"), "media"),
    make(paste0(p, "stats"), "stats"),
    make(paste0(p, "rows"), "rows"),
    make(paste0(p, "unsendable"), "unsendable"),
    make(paste0(p, "empty"), "empty"),
    make(paste0(p, "pick"), "pick", '{"level":2,"factor":0.5}'),
    make(paste0(p, "ellmer-content"), "ellmer_content"),
    make(paste0(p, "ellmer-value"), "ellmer_value", '{"x":21}'),
    make(paste0(p, "ellmer-error"), "ellmer_error"),
    make(paste0(p, "ellmer-remote"), "ellmer_remote")
  )
}

value_calls <- function(p) {
  kinds <- c("null", "empty", "chr", "num", "df", "named", "mat", "lgl", "date")
  lapply(kinds, function(k) call(paste0(p, "value-", k), "values", sprintf('{"kind":"%s"}', k)))
}

legacy_session <- function(version, p) {
  c(
    list(init(paste0(p, "init"), version), note("notifications/initialized"),
         req(paste0(p, "list"), "tools/list"), req(paste0(p, "ping"), "ping")),
    tool_calls(p),
    list(
      req(paste0(p, "unknown-tool"), "tools/call", '{"name":"no_such_tool","arguments":{}}'),
      req(paste0(p, "args-array"), "tools/call", '{"name":"add","arguments":[1,2]}'),
      req(paste0(p, "no-name"), "tools/call", '{"arguments":{}}'),
      req(paste0(p, "unknown-method"), "resources/list"),
      req(paste0(p, "discover"), "server/discover")
    )
  )
}

interop_sessions <- function() {
  list(
    legacy_2025_11_25 = c(
      legacy_session("2025-11-25", "l3-"),
      value_calls("l3-"),
      list(
        req("l3-list-cursor", "tools/list", '{"cursor":"abc"}'),
        req("l3-list-extra", "tools/list", '{"extra":1}'),
        note("tools/call", '{"name":"add","arguments":{"a":1,"b":1}}'),
        req("l3-initialized-with-id", "notifications/initialized"),
        init("l3-reinit", "2025-06-18"),
        req("l3-list-after-reinit", "tools/list"),
        init("l3-init-modern", "2026-07-28"),
        init("l3-init-unknown", "2025-03-26")
      )
    ),
    legacy_2025_06_18 = legacy_session("2025-06-18", "l2-"),
    legacy_2024_11_05 = legacy_session("2024-11-05", "l1-"),
    modern = c(
      list(mreq("m-discover", "server/discover"), mreq("m-list", "tools/list"), mreq("m-ping", "ping")),
      tool_calls("m-", make = mcall),
      list(
        mreq("m-unknown-method", "resources/list"),
        mcall("m-unknown-tool", "no_such_tool"),
        mreq("m-initialize", "initialize"),
        mreq("m-version-unsupported", "tools/list", version = "2025-03-26"),
        mreq("m-version-unknown", "server/discover", version = "2099-01-01"),
        mreq("m-version-legacy", "tools/list", version = "2025-11-25"),
        mcall("m-version-legacy-call", "media", version = "2024-11-05"),
        req("m-no-capabilities", "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}'),
        req("m-capabilities-array", "tools/list", paste0("{", meta_json(capabilities = "[]"), "}")),
        req("m-capabilities-string", "tools/list", paste0("{", meta_json(capabilities = '"x"'), "}")),
        mreq("m-loglevel-loud", "tools/list", extra = ',"io.modelcontextprotocol/logLevel":"loud"'),
        mreq("m-loglevel-number", "tools/list", extra = ',"io.modelcontextprotocol/logLevel":3'),
        mreq("m-loglevel-ok", "tools/list", extra = ',"io.modelcontextprotocol/logLevel":"debug"'),
        mreq("m-clientinfo-no-version", "tools/list", extra = ',"io.modelcontextprotocol/clientInfo":{"name":"c"}'),
        mreq("m-clientinfo-ok", "tools/list", extra = ',"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}'),
        req("m-only-loglevel", "tools/list", '{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}'),
        req("m-discover-no-meta", "server/discover"),
        req("m-version-number", "tools/list",
            '{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}')
      )
    ),
    before_initialize = list(
      req("pre-list", "tools/list"),
      call("pre-call", "add", '{"a":1,"b":1}'),
      req("pre-ping", "ping"),
      req("pre-unknown-method", "resources/list")
    ),
    bad_initialize = list(
      req("init-version-only", "initialize", '{"protocolVersion":"2025-11-25"}'),
      req("init-no-capabilities", "initialize", '{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}'),
      req("init-no-client-version", "initialize", '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c"}}'),
      req("init-name-number", "initialize", '{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":1,"version":"1"}}'),
      req("init-capabilities-array", "initialize", '{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c","version":"1"}}'),
      req("init-no-params", "initialize"),
      req("init-bad-list", "tools/list"),
      req("init-name-empty", "initialize", '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"","version":"1"}}')
    ),
    envelope = list(
      raw_line("parse-error", '{"jsonrpc":"2.0","id":"x","method":"ping"'),
      raw_line("batch", '[{"jsonrpc":"2.0","id":"b","method":"ping"}]'),
      raw_line("scalar", '"just a string"'),
      raw_line("null-id", '{"jsonrpc":"2.0","id":null,"method":"ping"}'),
      raw_line("fractional-id", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}'),
      raw_line("bool-id", '{"jsonrpc":"2.0","id":true,"method":"ping"}'),
      raw_line("e-wrong-jsonrpc", '{"jsonrpc":"1.0","id":"e-wrong-jsonrpc","method":"ping"}', "id"),
      raw_line("e-no-method", '{"jsonrpc":"2.0","id":"e-no-method"}', "id"),
      raw_line("e-params-scalar", '{"jsonrpc":"2.0","id":"e-params-scalar","method":"ping","params":3}', "id"),
      raw_line("e-params-array", '{"jsonrpc":"2.0","id":"e-params-array","method":"ping","params":[1]}', "id"),
      raw_line("int-id", '{"jsonrpc":"2.0","id":7,"method":"ping"}', "id"),
      raw_line("big-id", '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}', "id"),
      raw_line("response", '{"jsonrpc":"2.0","id":99,"result":{}}', "none"),
      raw_line("notification", '{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}', "none"),
      raw_line("e-method-number", '{"jsonrpc":"2.0","id":"e-method-number","method":1}', "id")
    )
  )
}

# ---- running a session ----------------------------------------------------------

# Run one session against the package found first in `lib`; returns the
# answers as a named list (label -> parsed message), in arrival order.
interop_run <- function(entries, lib) {
  libs <- paste(c(lib, mcp_child_libs()), collapse = .Platform$path.sep)
  proc <- mcp_start(test_path("fixtures", "interop-server.R"), env = c(R_LIBS = libs))
  on.exit(mcp_kill(proc), add = TRUE)
  # A final ping, answered ({}) by both packages in either era, marks the end.
  entries <- c(entries, list(req("sentinel", "ping")))
  for (e in entries) mcp_send(proc, e$line)
  expected <- length(Filter(function(e) e$answer != "none", entries))
  # CRAN mcplite drops requests it has not read when stdin closes: keep stdin
  # open until every expected answer and the sentinel's are in (an answer
  # one package gives unasked would otherwise make the count arrive early).
  got <- list()
  repeat {
    seen <- any(vapply(got, function(m) identical(m$id, "sentinel"), logical(1)))
    if (seen && length(got) >= expected) break
    more <- mcp_read(proc, 1, timeout = 60)
    if (length(more) == 0) break
    got <- c(got, more)
  }
  rest <- mcp_close(proc)
  got <- c(got, rest$responses)
  noid <- vapply(Filter(function(e) e$answer == "noid", entries), `[[`, "", "label")
  by_id <- list()
  for (e in Filter(function(e) !is.na(e$label) && e$answer != "noid", entries)) {
    id <- jsonlite::parse_json(e$line)$id
    if (!is.null(id)) by_id[[interop_id_key(id)]] <- e$label
  }
  out <- list()
  for (msg in got) {
    label <- if (is.null(msg$id)) {
      if (length(noid)) { l <- noid[[1]]; noid <- noid[-1]; l } else "<unexpected answer without id>"
    } else {
      key <- interop_id_key(msg$id)
      if (is.null(by_id[[key]])) paste("<answer with unexpected id", key, ">") else by_id[[key]]
    }
    while (label %in% names(out)) label <- paste0(label, "+")
    out[[label]] <- msg
  }
  out
}

# Ids as compared: strings as they are, numbers to 15 significant digits (a
# server that parses ids as doubles cannot echo more).
interop_id_key <- function(id) {
  if (is.character(id)) paste0("s:", id) else paste0("n:", format(signif(id, 15), digits = 15))
}

# Leave out what may differ by design: error message texts and the version
# in the server's identity.
interop_normalize <- function(msg) {
  if (is.list(msg$error)) msg$error$message <- NULL
  if (is.list(msg$result)) {
    if (is.list(msg$result$serverInfo)) msg$result$serverInfo$version <- NULL
    key <- "io.modelcontextprotocol/serverInfo"
    if (is.list(msg$result[["_meta"]]) && is.list(msg$result[["_meta"]][[key]])) {
      msg$result[["_meta"]][[key]]$version <- NULL
    }
  }
  msg
}

interop_path_key <- function(path, key) {
  if (grepl("^[A-Za-z_$][A-Za-z0-9_$]*$", key)) paste0(path, if (nzchar(path)) ".", key)
  else paste0(path, "[", encodeString(key, quote = "\""), "]")
}

# The JSON paths at which two parsed JSON values differ (object key order
# ignored; numbers compared by value).
interop_diff <- function(a, b, path = "") {
  is_obj <- function(x) is.list(x) && !is.null(names(x))
  is_arr <- function(x) is.list(x) && is.null(names(x))
  here <- if (nzchar(path)) path else "<root>"
  if (is_obj(a) && is_obj(b)) {
    out <- character()
    for (k in union(names(a), names(b))) {
      sub <- interop_path_key(path, k)
      if (!k %in% names(a) || !k %in% names(b)) {
        out <- c(out, sub)
      } else {
        out <- c(out, interop_diff(a[[k]], b[[k]], sub))
      }
    }
    return(out)
  }
  if (is_arr(a) && is_arr(b)) {
    if (length(a) != length(b)) return(here)
    out <- character()
    for (i in seq_along(a)) out <- c(out, interop_diff(a[[i]], b[[i]], sprintf("%s[%d]", path, i - 1L)))
    return(out)
  }
  if (is.numeric(a) && is.numeric(b) && length(a) == 1 && length(b) == 1) {
    return(if (isTRUE(a == b)) character() else here)
  }
  if (identical(a, b)) character() else here
}

# Rows of the table of deliberate differences that explain a difference at
# JSON path `path` in the answer labelled `label`. In `case` and `path`, `*`
# stands for any run of characters and " | " separates alternatives; a row
# also covers everything below its paths.
cran_difference_match <- function(table, label, path) {
  glob <- function(x) {
    parts <- strsplit(x, " | ", fixed = TRUE)[[1]]
    parts <- gsub("([][{}()+*^$|\\\\?.])", "\\\\\\1", parts)
    gsub("\\\\\\*", ".*", parts)
  }
  which(vapply(seq_len(nrow(table)), function(i) {
    any(grepl(paste0("^(", paste(glob(table$case[[i]]), collapse = "|"), ")$"), label)) &&
      any(grepl(paste0("^(", paste(glob(table$path[[i]]), collapse = "|"), ")($|[.\\[])"), path))
  }, logical(1)))
}

interop_show <- function(msg) {
  json <- attr(msg, "json")
  if (is.null(json)) "<no answer>" else substr(json, 1, 400)
}

# ---- the test ---------------------------------------------------------------------

test_that("the same script answers like CRAN mcplite 0.2.0, except for the documented differences", {
  skip_if_no_mcplite_child()
  cran_lib <- interop_cran_lib()
  ours_lib <- dirname(system.file(package = "mcplite"))
  allowed <- cran_differences()
  applies <- is.na(allowed$r_below) | getRversion() < numeric_version(ifelse(is.na(allowed$r_below), "0", allowed$r_below))
  allowed <- allowed[applies, , drop = FALSE]
  used <- rep(FALSE, nrow(allowed))
  unexplained <- character()
  for (session in names(interop_sessions())) {
    entries <- interop_sessions()[[session]]
    ours <- interop_run(entries, ours_lib)
    cran <- interop_run(entries, cran_lib)
    # The two columns really are the two packages.
    versions <- function(answers) unique(unlist(lapply(answers, function(m) {
      c(m$result$serverInfo$version, m$result[["_meta"]][["io.modelcontextprotocol/serverInfo"]]$version)
    })))
    if (length(versions(cran))) expect_identical(versions(cran), cran_mcplite_version)
    if (length(versions(ours))) expect_false(cran_mcplite_version %in% versions(ours))
    for (label in union(names(ours), names(cran))) {
      a <- ours[[label]]
      b <- cran[[label]]
      paths <- if (is.null(a) || is.null(b)) "<answer>" else interop_diff(interop_normalize(a), interop_normalize(b))
      for (p in paths) {
        hit <- cran_difference_match(allowed, label, p)
        if (length(hit)) {
          used[hit] <- TRUE
        } else {
          unexplained <- c(unexplained, sprintf(
            "%s / %s: %s\n    ours: %s\n    CRAN: %s", session, label, p, interop_show(a), interop_show(b)
          ))
        }
      }
    }
  }
  expect(length(unexplained) == 0, paste(
    c("Differences from CRAN mcplite not documented in cran_differences():", unique(unexplained)),
    collapse = "\n"
  ))
  stale <- allowed[!used, c("case", "path")]
  expect(nrow(stale) == 0, paste(
    c("Documented differences that no longer occur (remove them from cran_differences()):",
      sprintf("%s / %s", stale$case, stale$path)),
    collapse = "\n"
  ))
})
