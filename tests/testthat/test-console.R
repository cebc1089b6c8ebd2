# mcp_server() run by hand at an interactive R console, through a real
# pseudo-terminal (util-linux `script` gives R one): once Ctrl-C has stopped
# it, nothing of the server may still read the terminal. Each line typed
# afterwards must reach R's prompt, once.

console_session <- function() {
  r <- file.path(R.home("bin"), "R")
  p <- processx::process$new(
    "script", c("-qfec", paste(shQuote(r), "--vanilla -q"), "/dev/null"),
    stdin = "|", stdout = "|", stderr = "2>&1",
    env = c("current", TERM = "dumb", R_LIBS = mcp_child_libs()), cleanup = TRUE
  )
  s <- new.env()
  s$p <- p
  s$out <- ""
  s$wait_for <- function(pattern, seconds = 30) {
    deadline <- Sys.time() + seconds
    repeat {
      if (grepl(pattern, s$out)) return(TRUE)
      if (Sys.time() > deadline || !p$is_alive()) return(FALSE)
      p$poll_io(100)
      s$out <- paste0(s$out, gsub("\r", "", p$read_output()))
    }
  }
  s$type <- function(text) p$write_input(text)
  s
}

test_that("after Ctrl-C stops the server at a console, every line typed reaches R once", {
  skip_on_cran()
  skip_if_not(Sys.info()[["sysname"]] == "Linux", "needs util-linux script(1) for a pseudo-terminal")
  skip_if(!nzchar(Sys.which("script")), "no script(1)")
  skip_if_no_mcplite_child()
  s <- console_session()
  on.exit(s$p$kill(), add = TRUE)

  threads <- function() {
    s$out <- ""
    s$type('cat(paste0("thread", "s:"), length(dir("/proc/self/task")), "\\n")\n')
    expect_true(s$wait_for("threads: [0-9]+ \n"), label = s$out)
    as.integer(regmatches(s$out, regexpr("(?<=threads: )[0-9]+", s$out, perl = TRUE)))
  }
  s$type("library(mcplite)\n")
  before <- threads()
  s$type('mcp_server(list(tool(function() 1, name = "one", description = "One.")))\n')
  expect_true(s$wait_for("waiting for an MCP client"), label = s$out)
  # The terminal turns Ctrl-C into SIGINT for R's process group.
  s$type("\x03")
  expect_true(s$wait_for("the server stopped\\.\n> "), label = s$out)
  # Each line prints "typed-k": the echo of what was typed does not. Lines
  # are typed one at a time, each once R has answered the one before: typed
  # ahead, the terminal's echo of a line can land inside R's output of the
  # previous one. A line something else swallowed never gets its answer.
  lines <- 1:8
  for (k in lines) {
    s$type(sprintf('cat(paste0("typ", "ed-", %d), "\\n")\n', k))
    expect_true(s$wait_for(sprintf("typed-%d \n> ", k), 10), label = s$out)
  }
  seen <- vapply(lines, function(k) lengths(regmatches(s$out, gregexpr(sprintf("typed-%d \n", k), s$out))), 1L)
  expect_equal(seen, rep(1L, length(lines)), label = paste("times each line was evaluated:", s$out))
  # No thread of the server is left.
  expect_equal(threads(), before)
  s$type('q("no")\n')
  deadline <- Sys.time() + 20
  while (s$p$is_alive() && Sys.time() < deadline) s$p$poll_io(100)
  expect_false(s$p$is_alive())
})
