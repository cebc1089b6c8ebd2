# Helpers for the mcp_client() and mcp_check() tests.

# The environment a child server needs to find the mcplite under test.
child_env <- function() c(R_LIBS = mcp_child_libs())

# A client on the fixture server (tests/testthat/fixtures/server.R), closed
# when the calling test ends, its exchange validated (checked_client()).
fixture_client <- function(protocol = "2025-11-25", server = "server.R", ...) {
  checked_client(mcp_fixture_server(server), env = child_env(), protocol = protocol, ...,
                 .local_envir = parent.frame())
}

# Write R code to a temporary server script, `<tempdir>/my-tools/server.R`
# (so the server name derived from it is stable); returns its path.
server_script <- function(code, dir = file.path(tempfile("mcp-script-"), "my-tools")) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  path <- file.path(dir, "server.R")
  writeLines(code, path)
  normalizePath(path)
}

# Validate the exact wire line of the client's last answer against the
# official schema of the version in force.
validate_last <- function(client, def, strict = TRUE) {
  line <- client$.state()$last_response
  testthat::expect_true(is.character(line) && length(line) == 1)
  mcp_validate(list(structure(list(), json = line)), client$protocol, def, strict = strict)
}

# Does a process with this id exist (a zombie counts)? Linux only.
process_exists <- function(pid) file.exists(file.path("/proc", pid))

skip_if_no_proc <- function() {
  testthat::skip_if_not(dir.exists("/proc/self"), "process checks read /proc (Linux)")
}

# The official example server from npm, installed by `npm ci` in tests/node.
# tools/test.sh sets MCPLITE_REQUIRE_NODE_TESTS=true: there a missing server
# fails instead of skipping.
everything_server <- function() {
  bin <- tryCatch(
    testthat::test_path("..", "node", "node_modules", ".bin",
                        if (.Platform$OS.type == "windows") "mcp-server-everything.cmd" else "mcp-server-everything"),
    error = function(e) ""
  )
  have <- nzchar(bin) && file.exists(bin) && nzchar(Sys.which("node"))
  if (!have) {
    why <- "@modelcontextprotocol/server-everything is not installed (run `npm ci` in tests/node; the R CMD check tarball has no tests/node)"
    if (identical(Sys.getenv("MCPLITE_REQUIRE_NODE_TESTS"), "true")) testthat::fail(why)
    testthat::skip(why)
  }
  normalizePath(bin)
}

# Scrub what changes between runs from printed reports.
scrub_report <- function(lines, script_dir = NULL) {
  if (!is.null(script_dir)) lines <- gsub(script_dir, "<dir>", lines, fixed = TRUE)
  lines <- gsub(file.path(R.home("bin"), "Rscript"), "<Rscript>", lines, fixed = TRUE)
  lines <- gsub(normalizePath(file.path(R.home("bin"), "Rscript"), winslash = "/", mustWork = FALSE), "<Rscript>", lines, fixed = TRUE)
  lines <- gsub("[0-9]+\\.[0-9]+ seconds", "<n> seconds", lines)
  lines <- gsub("\"R_LIBS\": \"[^\"]*\"", "\"R_LIBS\": \"<libs>\"", lines)
  lines <- gsub("R_LIBS = \\\\?\"[^\"]*\\\\?\"", "R_LIBS = \"<libs>\"", lines)
  lines <- gsub("loads it from [^ ]+\\.$", "loads it from <lib>.", lines)
  lines
}

# Tools whose structured content does or does not match the output schema
# they declare (additional properties are not allowed).
conformance_script <- function() {
  server_script(c(
    "library(mcplite)",
    "out <- type_object(total = type_number(), label = type_string(required = FALSE))",
    "stats <- function(value) tool(function() value, 'Stats.', name = deparse(substitute(value)), output_schema = out)",
    "right <- tool_result(structured_content = list(total = 2))",
    "wrong_type <- tool_result(structured_content = list(total = 'two'))",
    "missing_required <- tool_result(structured_content = list(label = 'x'))",
    "extra <- tool_result(structured_content = list(total = 1, colour = 'red'))",
    "no_structured <- tool_result(content_text('2'))",
    "tool_error <- tool_result(content_text('no data'), is_error = TRUE)",
    "several <- tool_result(structured_content = list(total = 'a', label = 1, x = 1))",
    "mcp_server(list(stats(right), stats(wrong_type), stats(missing_required), stats(extra),",
    "  stats(no_structured), stats(tool_error), stats(several)))"
  ), dir = file.path(tempfile("mcp-conformance-"), "stats"))
}

# A scripted broken server in base R (no mcplite, no jsonlite): it answers
# initialize and ping, and answers tools/call with `answer`, R code that
# writes whatever it likes with `send(text)` or `send_raw(bytes)`; `id` is
# the request id as text. `on_eof` runs when its input ends, before it
# exits. `mark` (env MARK_DIR) is a directory where it creates a file
# named after each method it receives, a barrier for tests.
scripted_server <- function(answer, prelude = character(), on_eof = character()) {
  server_script(c(
    'out <- file("/dev/stdout", open = "wb")',
    'send_raw <- function(bytes) { writeBin(c(bytes, as.raw(10)), out); flush(out) }',
    'send <- function(text) send_raw(charToRaw(enc2utf8(text)))',
    'mark <- function(what) { d <- Sys.getenv("MARK_DIR"); if (nzchar(d)) file.create(file.path(d, what)) }',
    prelude,
    'con <- file("stdin", open = "r")',
    'repeat {',
    '  line <- readLines(con, n = 1)',
    '  if (!length(line)) break',
    '  method <- sub(\'.*"method":"([^"]+)".*\', "\\\\1", line)',
    '  if (grepl(\'"method":\', line)) mark(sub("/", "-", method))',
    '  m <- regmatches(line, regexpr(\'"id":[0-9]+\', line))',
    '  if (!length(m)) next',
    '  id <- sub(\'"id":\', "", m)',
    '  if (method == "initialize") {',
    '    send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}\', id))',
    '  } else if (method == "ping") {',
    '    send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{}}\', id))',
    '  } else if (method == "tools/call") {',
    answer,
    '  }',
    '}',
    'mark("eof")',
    on_eof
  ))
}

# The answer line to request `id` with `result` (JSON text).
scripted_result <- function(result) {
  sprintf('send(sprintf(\'{"jsonrpc":"2.0","id":%%s,"result":%s}\', id))', result)
}

# Memory and resources of this R process (Linux).
proc_status <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(strsplit(trimws(sub(".*:", "", line)), " +")[[1]][[1]])
}
open_fds <- function() length(list.files("/proc/self/fd"))

# Is process `pid` a running (not zombie) `sleep`? (Linux; /proc also lists
# threads of other processes under their ids, hence the name check.)
sleep_running <- function(pid) {
  stat <- tryCatch(suppressWarnings(readLines(file.path("/proc", pid, "stat"), warn = FALSE)), error = function(e) "")
  grepl("^[0-9]+ \\(sleep\\) [^Z]", stat)
}

# ---- clients whose whole exchange is validated -------------------------------

# A client (local_mcp_client() with a transcript) whose every line sent and
# received is validated against the official schema of the protocol in force
# when the calling test ends: requests as the client's, answers by the method
# of their request (`strict`: no member the version lacks), notifications by
# method. So a bug the client and the server share cannot pass unseen.
# `pure`: a line on the server's stdout that is not a JSON-RPC message fails
# the test (the client itself only sets such lines apart).
# expect_valid_transcript() checks what was exchanged so far at any point.
checked_client <- function(..., strict = TRUE, pure = TRUE, .local_envir = parent.frame()) {
  client <- local_mcp_client(..., transcript = TRUE, .local_envir = .local_envir)
  # Put first among the frame's exit handlers: it runs while the client is open.
  check <- bquote(expect_valid_transcript(.(client), strict = .(strict), pure = .(pure)))
  do.call(base::on.exit, list(check, TRUE, FALSE), envir = .local_envir)
  client
}

# The schema definitions of what a client sends, and of the result of each
# method's answer.
transcript_defs <- list(
  request = c(initialize = "InitializeRequest", ping = "PingRequest", "tools/list" = "ListToolsRequest",
              "tools/call" = "CallToolRequest", "server/discover" = "DiscoverRequest",
              "notifications/initialized" = "InitializedNotification",
              "notifications/cancelled" = "CancelledNotification",
              "notifications/message" = "LoggingMessageNotification",
              "notifications/progress" = "ProgressNotification"),
  result = c(initialize = "InitializeResult", ping = "EmptyResult", "tools/list" = "ListToolsResult",
             "tools/call" = "CallToolResult", "server/discover" = "DiscoverResult")
)

transcript_state <- new.env(parent = emptyenv())

# Validate the lines exchanged since the previous check (the client's
# $transcript()). Requests whose answer comes later are remembered.
expect_valid_transcript <- function(client, strict = TRUE, pure = TRUE) {
  lines <- client$transcript()
  key <- as.character(client$pid)
  methods <- transcript_state[[key]]
  if (is.null(methods)) methods <- list()
  messages <- list()
  stray <- character()
  defs <- character()
  strictness <- logical()
  for (line in lines) {
    sent <- startsWith(line, "-> ")
    json <- substr(line, 4, nchar(line))
    msg <- tryCatch(jsonlite::parse_json(json), error = function(e) NULL)
    if (!is.list(msg) || !identical(msg$jsonrpc, "2.0")) {
      # Not a protocol message: the client set it apart.
      if (sent || pure) {
        stray <- c(stray, sprintf("the %s a line that is not JSON-RPC: %s", if (sent) "client sent" else "server wrote",
                                  encodeString(substr(json, 1, 200), quote = "'")))
      }
      next
    }
    id <- if (is.null(msg$id)) NA_character_ else jsonlite::toJSON(msg$id, auto_unbox = TRUE, digits = NA)
    def <- NA_character_
    if (!is.null(msg$method)) {
      if (sent && !is.na(id)) methods[[id]] <- msg$method
      def <- unname(transcript_defs$request[msg$method])
    } else if (!is.na(id) && !is.null(methods[[id]])) {
      if (is.null(msg$error)) def <- unname(transcript_defs$result[methods[[id]]])
      methods[[id]] <- NULL
    }
    messages[[length(messages) + 1L]] <- structure(msg, json = json)
    defs <- c(defs, def)
    strictness <- c(strictness, strict && is.null(msg$method))
  }
  transcript_state[[key]] <- methods
  if (length(messages) || length(stray)) {
    failures <- c(stray, mcp_validation_failures(messages, client$protocol, defs, strictness))
    testthat::expect(length(failures) == 0, paste(c("the exchange is not valid MCP:", failures), collapse = "\n"))
  }
  invisible(length(messages))
}
