# mcp_check(session = ) and mcp_check(command = ) of the session server's
# command line. The server (mcp_session_server(), the session link) answers
# the end-to-end test; the rest runs without it.

session_args <- c("--vanilla", "-e", "mcplite::mcp_session_server()")

skip_if_no_session_server <- function() {
  skip_if_not(exists("mcp_session_server", asNamespace("mcplite")),
              "mcplite::mcp_session_server() does not exist in this build (the session link is not merged)")
}

test_that("mcp_check() wants one of script, command and session", {
  expect_snapshot(error = TRUE, {
    mcp_check(session = NA)
    mcp_check(session = "")
    mcp_check("server.R", session = TRUE)
    mcp_check(command = c("Rscript", "--vanilla", "-e", "mcplite::mcp_session_server()"), session = "a")
    mcp_check(session = "a", env = c(MCPLITE_SESSION = "b"))
  })
  cnd <- expect_error(mcp_check("server.R", session = TRUE), class = "mcplite_error_argument")
  expect_equal(cnd$arg, "session")
  cnd <- expect_error(expect_mcp_check(session = NA), class = "mcplite_error_argument")
  expect_equal(cnd$arg, "session")
})

test_that("a command line of Rscript on PATH, --vanilla and -e with an mcplite call is checked as a client runs it", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  skip_on_os("windows") # a link named Rscript
  # The session server's shape, with a server the running build has: the
  # program found on PATH as clients find it, and an expression with `::`,
  # parentheses and quotes passed as one argument. PATH starts with this R's
  # Rscript: the first one on PATH may be another R's, or under R CMD check
  # a stub that only says "'Rscript' should not be used without a path".
  bin <- tempfile("bin-")
  dir.create(bin)
  on.exit(unlink(bin, recursive = TRUE), add = TRUE)
  file.symlink(file.path(R.home("bin"), "Rscript"), file.path(bin, "Rscript"))
  old_path <- Sys.getenv("PATH")
  on.exit(Sys.setenv(PATH = old_path), add = TRUE)
  Sys.setenv(PATH = paste(bin, old_path, sep = .Platform$path.sep))
  command <- c("Rscript", "--vanilla", "-e",
               "mcplite::mcp_server(mcplite::tool(function() 'ok', \"Answer ok.\", name = 'ping'))")
  res <- mcp_check(command = command, env = child_env(), calls = list(ping = list()))
  expect_true(res$ok, info = paste(capture.output(print(res)), collapse = "\n"))
  expect_equal(res$command, command)
  expect_equal(res$versions$tools, rep(1L, 4))
  expect_equal(res$calls$ping$`2026-07-28`$content[[1]]$text, "ok")
  expect_false(res$session)
})

test_that("mcp_check(session =) checks the session server as mcp_config(session =) configures it", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  skip_if_no_session_server()
  rscript <- file.path(R.home("bin"), "Rscript")
  for (session in list(TRUE, "nobody-has-this-name")) {
    res <- mcp_check(session = session, env = child_env())
    shown <- capture.output(print(res))
    expect_true(res$ok, info = paste(shown, collapse = "\n"))
    expect_identical(res$session, session)
    expect_equal(res$command, c(rscript, session_args))
    expect_true(is.na(res$script))
    # Without a session it still serves, in every version, the tools that
    # say how to attach.
    expect_equal(res$versions$served, res$versions$asked)
    expect_true(all(res$versions$tools >= 1))
    expect_false("command_only" %in% c(res$problems$rule, res$notes$rule))
    if (isTRUE(session)) {
      expect_equal(res$env, child_env())
    } else {
      expect_equal(res$env, c(child_env(), MCPLITE_SESSION = session))
    }
    # The report ends with the configuration that starts this server.
    snippet <- capture.output(mcp_config(session = session, env = res$env))
    expect_equal(shown[seq_along(snippet) + length(shown) - length(snippet) - 1], snippet)
  }
  # The plain command line is the same check, without the snippet.
  res <- mcp_check(command = c(rscript, session_args), env = child_env())
  expect_true(res$ok)
  expect_equal(res$versions$tools, mcp_check(session = TRUE, env = child_env())$versions$tools)
  expect_no_match(paste(capture.output(print(res)), collapse = "\n"), "mcpServers")
  expect_mcp_check(session = TRUE, env = child_env())
})

test_that("the report shows the command line quoted, so it can be pasted into a shell", {
  skip_on_os("windows") # run through sh
  skip_on_cran()
  skip_if_no_mcplite_child()
  # The session server's shape with an expression that fails: the report's
  # fix says to run the command, and the shell must get these words back.
  command <- c(file.path(R.home("bin"), "Rscript"), "--vanilla", "-e", "mcplite::no_such_server()")
  res <- mcp_check(command = command, env = child_env())
  expect_false(res$ok)
  expect_equal(res$problems$rule, "start_error")
  expect_match(res$problems$message, "no_such_server", fixed = TRUE)
  line <- sub("^.*to see the error: ", "", res$problems$fix)
  words <- system2("sh", c("-c", shQuote(paste("printf '%s\\n'", line))), stdout = TRUE)
  expect_equal(words, command)
  shown <- capture.output(print(res))
  expect_true(paste0("Started as clients do: ", line) %in% shown)
})
