# What a live session (mcp_session(), issue 40) costs: the time a forwarded
# call adds over the same tool served by mcp_server() (sequential calls, from
# writing the request to reading the answer; goal: under 1 ms median in
# terminal R), and the session server's cold start (spawn to the first
# answer) next to mcp_server()'s. The session is an interactive R in tmux.
# Run from a clone after installing the package:
#
#   Rscript bench/session.R          # R_LIBS picks the mcplite to measure
#
# Needs processx, later and tmux (Linux or macOS).

stopifnot(requireNamespace("processx", quietly = TRUE), requireNamespace("later", quietly = TRUE),
          nzchar(Sys.which("tmux")))
n <- as.integer(Sys.getenv("BENCH_SESSION_CALLS", "300"))
cold_reps <- as.integer(Sys.getenv("BENCH_SESSION_COLD_REPS", "5"))
libs <- paste(unique(c(strsplit(Sys.getenv("R_LIBS"), ":", fixed = TRUE)[[1]], .libPaths())), collapse = ":")
rscript <- file.path(R.home("bin"), "Rscript")
dir <- tempfile("mcpls-bench-", tmpdir = "/tmp")
dir.create(dir, mode = "0700")
tool_code <- "mcplite::tool(function(x, y) x + y, name = 'add', description = 'Add', arguments = list(x = mcplite::type_number(), y = mcplite::type_number()))"

# The session: type the set-up and wait for the file it writes last.
tmux <- basename(tempfile("mcpls-bench-"))
ready <- file.path(dir, "ready")
cmd <- sprintf("env R_LIBS=%s MCPLITE_SESSION_DIR=%s %s --vanilla -q", shQuote(libs), shQuote(dir),
               shQuote(file.path(R.home("bin"), "R")))
system2("tmux", c("new-session", "-d", "-s", tmux, "-x", "200", "-y", "50", shQuote(cmd)))
# (on.exit() does nothing at the top level of a script.)
done <- function() {
  system2("tmux", c("kill-session", "-t", tmux))
  system2("rm", c("-rf", shQuote(dir)))
}
typed <- sprintf("mcplite::mcp_session(%s, name = 'bench'); writeLines('ok', '%s')", tool_code, ready)
system2("tmux", c("send-keys", "-t", tmux, "-l", shQuote(typed)))
system2("tmux", c("send-keys", "-t", tmux, "Enter"))
while (!file.exists(ready)) Sys.sleep(0.01)

server_script <- tempfile(fileext = ".R")
writeLines(sprintf("mcplite::mcp_server(%s)", tool_code), server_script)

start <- function(kind) {
  args <- if (kind == "session") c("--vanilla", "-e", "mcplite::mcp_session_server()") else c("--vanilla", server_script)
  processx::process$new(rscript, args, stdin = "|", stdout = "|", stderr = tempfile(), cleanup = TRUE,
                        env = c("current", R_LIBS = libs, MCPLITE_SESSION_DIR = dir))
}
send <- function(proc, line) proc$write_input(paste0(line, "\n"))
read_line <- function(proc) {
  repeat {
    line <- proc$read_output_lines(1)
    if (length(line)) return(line)
    proc$poll_io(5000)
    if (!proc$is_alive()) stop("the server exited: ", paste(readLines(proc$get_error_file()), collapse = "\n"))
  }
}
meta <- '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
call_line <- function(id) sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"x":%d,"y":1},%s}}', id, id, meta)
list_line <- sprintf('{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{%s}}', meta)

latency <- function(kind) {
  proc <- start(kind)
  on.exit(proc$kill())
  send(proc, list_line)
  read_line(proc)
  ms <- numeric(n)
  for (i in seq_len(n)) {
    t0 <- Sys.time()
    send(proc, call_line(i))
    answer <- read_line(proc)
    ms[[i]] <- 1000 * as.numeric(Sys.time() - t0, units = "secs")
    if (!grepl(sprintf('"text":"%d"', i + 1), answer, fixed = TRUE)) stop("wrong answer: ", answer)
  }
  ms
}

cold <- function(kind) {
  vapply(seq_len(cold_reps), function(i) {
    t0 <- Sys.time()
    proc <- start(kind)
    on.exit(proc$kill())
    send(proc, list_line)
    read_line(proc)
    1000 * as.numeric(Sys.time() - t0, units = "secs")
  }, numeric(1))
}

measured <- tryCatch(list(server = latency("server"), session = latency("session"),
                          cold_server = cold("server"), cold_session = cold("session")),
                     finally = done())
server_ms <- measured$server
session_ms <- measured$session
cat(sprintf("calls (%d sequential, ms)    median    p90    p99\n", n))
row <- function(label, x) cat(sprintf("%-28s %7.3f %7.3f %7.3f\n", label, median(x), quantile(x, 0.9), quantile(x, 0.99)))
row("mcp_server()", server_ms)
row("mcp_session() forwarded", session_ms)
cat(sprintf("forwarding adds (median)     %7.3f ms\n", median(session_ms) - median(server_ms)))
cat(sprintf("\ncold start to tools/list (%d each, ms, median)\n", cold_reps))
cat(sprintf("%-28s %7.0f\n", "mcp_server()", median(measured$cold_server)))
cat(sprintf("%-28s %7.0f\n", "mcp_session_server()", median(measured$cold_session)))
