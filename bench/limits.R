# Figures the tests used to assert as limits (issue 37, item 7). The tests
# now check what a user notices (the answers, the ordering, that the server
# exits); the numbers are measured here, on a quiet machine, and read by a
# person. Run from a clone after installing the package:
#
#   Rscript bench/limits.R            # R_LIBS picks the mcplite to measure
#
# Needs processx and jsonlite; the silent-collector figure also needs node.

stopifnot(requireNamespace("processx", quietly = TRUE))
fixtures <- normalizePath(file.path("tests", "testthat", "fixtures"), mustWork = TRUE)
rscript <- file.path(R.home("bin"), "Rscript")

rpc <- function(id, method, params) {
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}', id, method, params)
}
initialize_line <- rpc(0, "initialize",
  '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}')
initialized_line <- '{"jsonrpc":"2.0","method":"notifications/initialized"}'
call_line <- function(id, tool, args) rpc(id, "tools/call", sprintf('{"name":"%s","arguments":%s}', tool, args))

start_server <- function(script, env = character()) {
  processx::process$new(rscript, c("--vanilla", file.path(fixtures, script)),
                        stdin = "|", stdout = "|", stderr = tempfile(), env = c("current", env), cleanup = TRUE)
}

rss_mb <- function(pid) {
  status <- tryCatch(readLines(sprintf("/proc/%d/status", pid)), error = function(e) character())
  kb <- as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmRSS", status, value = TRUE)))
  if (length(kb)) kb / 1024 else NA_real_
}

# 1. Server RSS growth over 100 000 pipelined tools/call requests (between
#    the 20 000th and the 95 000th answer). test-torture.R asserted < 25 MB.
server_rss_growth <- function(n = 100000L) {
  proc <- start_server("protocol-server.R")
  on.exit(proc$kill())
  lines <- c(initialize_line, initialized_line,
             vapply(seq_len(n), function(i) call_line(i, "add", sprintf('{"a":%d,"b":1}', i)), ""))
  got <- 0L
  rss <- c(NA_real_, NA_real_)
  pump <- function(wait) {
    proc$poll_io(wait)
    got <<- got + length(proc$read_output_lines())
    if (got >= 20000 && is.na(rss[1])) rss[1] <<- rss_mb(proc$get_pid())
    if (got >= 95000 && is.na(rss[2])) rss[2] <<- rss_mb(proc$get_pid())
  }
  pending <- charToRaw(paste0(paste(lines, collapse = "\n"), "\n"))
  while (length(pending)) {
    pending <- proc$write_input(pending)
    pump(if (length(pending)) 10 else 0)
  }
  close(proc$get_input_connection())
  while (proc$is_alive() || proc$is_incomplete_output()) pump(100)
  diff(rss)
}

# 2. Seconds from stdin closing to exit, with an OTLP collector that accepts
#    connections and never answers. test-hostile-shutdown.R asserted < 2.5 s.
silent_collector_exit <- function() {
  if (!nzchar(Sys.which("node"))) return(NA_real_)
  sink <- processx::process$new("node", c("-e", paste(
    "const s = require('net').createServer(() => {});",
    "s.listen(0, '127.0.0.1', () => console.log(s.address().port));"
  )), stdout = "|", cleanup = TRUE)
  on.exit(sink$kill())
  sink$poll_io(5000)
  port <- as.integer(sink$read_output_lines(1))
  proc <- start_server("hostile-server.R", c(OTEL_TRACES_EXPORTER = "otlp",
                                             OTEL_EXPORTER_OTLP_ENDPOINT = sprintf("http://127.0.0.1:%d", port)))
  on.exit(proc$kill(), add = TRUE)
  proc$write_input(paste0(paste(c(initialize_line, initialized_line,
    vapply(1:5, function(i) call_line(i, "echo", sprintf('{"x":"span %d"}', i)), "")), collapse = "\n"), "\n"))
  got <- 0L
  while (got < 6 && proc$is_alive()) {
    proc$poll_io(100)
    got <- got + length(proc$read_output_lines())
  }
  t0 <- Sys.time()
  close(proc$get_input_connection())
  proc$wait()
  as.numeric(difftime(Sys.time(), t0, units = "secs"))
}

# 3. Seconds from SIGINT to exit of an idle server that has answered a call.
#    test-hostile-signals.R asserted exit within 5 s.
idle_sigint_exit <- function() {
  if (.Platform$OS.type != "unix") return(NA_real_)
  proc <- start_server("hostile-server.R")
  on.exit(proc$kill())
  proc$write_input(paste0(initialize_line, "\n", initialized_line, "\n", call_line(1, "echo", '{"x":"ready"}'), "\n"))
  got <- 0L
  while (got < 2 && proc$is_alive()) {
    proc$poll_io(100)
    got <- got + length(proc$read_output_lines())
  }
  t0 <- Sys.time()
  proc$interrupt()
  proc$wait()
  as.numeric(difftime(Sys.time(), t0, units = "secs"))
}

# 4. RSS growth of the R session running mcp_client() while a server prints
#    600 stray 1 MB lines before its answer (the client keeps the last few,
#    cut). test-client-faults.R asserted < 100 MB; it now counts the bytes kept.
client_flood_rss_growth <- function() {
  if (!file.exists("/proc/self/status")) return(NA_real_)
  script <- tempfile(fileext = ".R")
  writeLines(c(
    'out <- file("/dev/stdout", open = "wb")',
    'send <- function(text) { writeBin(c(charToRaw(text), as.raw(10)), out); flush(out) }',
    'con <- file("stdin", open = "r")',
    'repeat {',
    '  line <- readLines(con, n = 1)',
    '  if (!length(line)) break',
    '  m <- regmatches(line, regexpr(\'"id":[0-9]+\', line))',
    '  if (!length(m)) next',
    '  id <- sub(\'"id":\', "", m)',
    '  if (grepl(\'"method":"initialize"\', line)) {',
    '    send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}}\', id))',
    '  } else if (grepl(\'"method":"tools/call"\', line)) {',
    '    big <- strrep("x", 1e6)',
    '    for (i in 1:600) send(big)',
    '    send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}\', id))',
    '  } else send(sprintf(\'{"jsonrpc":"2.0","id":%s,"result":{}}\', id))',
    '}'
  ), script)
  gc()
  before <- rss_mb(Sys.getpid())
  client <- mcplite::mcp_client(script)
  on.exit(client$close())
  client$call("t", timeout = 300)
  rss_mb(Sys.getpid()) - before
}

cat(sprintf("mcplite %s from %s\n", utils::packageVersion("mcplite"), dirname(find.package("mcplite"))))
cat(sprintf("server RSS growth, 100 000 pipelined calls: %.1f MB (was asserted < 25 MB)\n", server_rss_growth()))
cat(sprintf("exit after stdin closes, silent OTLP collector: %.2f s (was asserted < 2.5 s)\n", silent_collector_exit()))
cat(sprintf("exit after SIGINT while idle: %.2f s (was asserted < 5 s)\n", idle_sigint_exit()))
cat(sprintf("client RSS growth, 600 stray 1 MB lines: %.1f MB (was asserted < 100 MB)\n", client_flood_rss_growth()))
