# The console guard (R/console-guard.R): a tool run in the user's live
# session gets an error instead of waiting at the console, and leaves the
# console's state as it was.

guarded <- function(fun, name = "t") session_guarded_call(fun, list(), name)

test_that("sinks, devices, warn and last.warning are put back, whatever the tool does", {
  had_last_warning <- exists("last.warning", envir = baseenv(), inherits = FALSE)
  old_last_warning <- baseenv()[["last.warning"]]
  withr_warn <- options(warn = 0)
  on.exit(options(withr_warn), add = TRUE)
  pdf(NULL)
  mine <- dev.cur()
  on.exit(dev.off(mine), add = TRUE)
  devices <- dev.list()
  sinks <- sink.number()
  message_sink <- sink.number(type = "message")
  messy <- function(fail) {
    function() {
      sink(tempfile())
      sink(tempfile())
      sink(file(tempfile(), "w"), type = "message")
      pdf(NULL)
      pdf(NULL)
      options(warn = 2, menu.graphics = TRUE)
      # (R's REPL makes last.warning; code can only change it.)
      if (had_last_warning) assign("last.warning", list(tool = quote(f())), envir = baseenv())
      if (fail == "error") stop("failed on purpose")
      if (fail == "interrupt") {
        # What R signals on Ctrl-C (or a cancellation in the server).
        signalCondition(structure(class = c("interrupt", "condition"), list()))
      }
      "done"
    }
  }
  for (fail in c("no", "error", "interrupt")) {
    res <- guarded(messy(fail))
    expect_equal(res$ok, fail == "no", info = fail)
    expect_equal(sink.number(), sinks, info = fail)
    expect_equal(sink.number(type = "message"), message_sink, info = fail)
    expect_equal(dev.list(), devices, info = fail)
    expect_equal(dev.cur(), mine, info = fail)
    expect_equal(getOption("warn"), 0, info = fail)
    expect_equal(exists("last.warning", envir = baseenv(), inherits = FALSE), had_last_warning, info = fail)
    expect_identical(baseenv()[["last.warning"]], old_last_warning, info = fail)
  }
})

test_that("what a tool does on purpose stays: objects, other options, random numbers", {
  on.exit(rm("guard_made", envir = globalenv()), add = TRUE)
  old <- options(mcplite_guard_test = NULL)
  on.exit(options(old), add = TRUE)
  set.seed(1)
  seed <- .Random.seed
  res <- guarded(function() {
    assign("guard_made", 42, envir = globalenv())
    options(mcplite_guard_test = "set")
    runif(1)
  })
  expect_true(res$ok)
  expect_equal(get("guard_made", envir = globalenv()), 42)
  expect_equal(getOption("mcplite_guard_test"), "set")
  expect_false(identical(.Random.seed, seed))
})

test_that("a console read is a tool error, and the console reads again afterwards", {
  # Rscript reads stdin() through the console reader too.
  for (read in list(function() readLines(stdin(), n = 1), function() scan(file = "", n = 1, quiet = TRUE),
                    function() try(readLines(stdin(), n = 1), silent = TRUE))) {
    res <- guarded(read, name = "reader")
    expect_false(res$ok)
    expect_match(res$message, "Tool reader asked for input at the R console", fixed = TRUE)
  }
  expect_snapshot(cat(guarded(function() readLines(stdin(), n = 1), name = "reader")$message))
  # Nothing left switched on: a guarded call that reads nothing is fine.
  expect_equal(guarded(function() 1 + 1)$value, as_tool_value(2))
})

# In an interactive R at a pseudo-terminal: each line typed calls a tool
# through the guard and writes the result to a file (the barrier); a tool
# that waited at the console would never write it.
test_that("at a real console, tools that would prompt get a tool error instead", {
  skip_if_no_tmux()
  skip_if_no_mcplite_child()
  out <- tempfile("guard-")
  dir.create(out)
  s <- tmux_r_start()
  tmux_type(s, paste0(
    "g <- function(f, out) { r <- mcplite:::session_guarded_call(f, list(), \"t\"); ",
    "tmp <- paste0(out, \".tmp\"); writeLines(c(r$ok, if (r$ok) \"\" else r$message), tmp); file.rename(tmp, out) }"
  ))
  prompts <- c(
    readline = 'function() readline("Name? ")',
    menu = 'function() menu(c("a", "b"))',
    askYesNo = 'function() askYesNo("Sure?")',
    browser = "function() { browser(); 1 }",
    debugonce = "function() { f <- function() 1; debugonce(f); f() }",
    recover = 'function() { options(error = recover); f <- function() stop("x"); g <- function() tryCatch(f(), error = function(e) recover()); g() }',
    mirror = "function() utils::chooseCRANmirror(local.only = TRUE)",
    install = 'function() utils::install.packages("nothing", repos = "@CRAN@")',
    scan = "function() scan(n = 1)",
    readLines = "function() readLines(stdin(), n = 1)",
    file.choose = "function() file.choose()",
    caught = 'function() { try(readline("Name? "), silent = TRUE); "went on" }'
  )
  for (what in names(prompts)) {
    path <- file.path(out, what)
    tmux_type(s, sprintf('g(%s, "%s")', prompts[[what]], path))
    lines <- tmux_wait_file(s, path)
    expect_equal(lines[[1]], "FALSE", info = what)
    expect_match(lines[[2]], "Tool t asked for input at the R console", fixed = TRUE, info = what)
  }
  # file("stdin") reads descriptor 0 (the terminal): it sees end of input.
  path <- file.path(out, "stdin")
  tmux_type(s, sprintf('g(function() stopifnot(length(readLines(file("stdin"))) == 0), "%s")', path))
  expect_equal(tmux_wait_file(s, path)[[1]], "TRUE")
  # The console still reads what the user types, and R is interactive.
  path <- file.path(out, "after")
  tmux_type(s, sprintf('writeLines(as.character(c(interactive(), is.null(getOption("error")))), "%s.tmp"); file.rename("%s.tmp", "%s")', path, path, path))
  expect_equal(tmux_wait_file(s, path), c("TRUE", "TRUE"))
})

test_that("at a real console, a tool leaves sinks, devices, .Last.value and last.warning as they were", {
  skip_if_no_tmux()
  skip_if_no_mcplite_child()
  out <- tempfile("guard-state-")
  s <- tmux_r_start()
  # The user's state: a warning of their own, a device, a sink, a last value.
  tmux_type(s, 'f <- function() warning("mine"); f()')
  tmux_type(s, "pdf(NULL); pdf(NULL); dev.set(2)")
  tmux_type(s, 'sink(tempfile()); options(warn = 1)')
  tmux_type(s, "invisible(1234)")
  tmux_type(s, paste0(
    '{ r <- mcplite:::session_guarded_call(function() { sink(tempfile()); sink(file(tempfile(), "w"), type = "message"); ',
    'png(tempfile()); plot(1); options(warn = 2); assign("last.warning", list(x = quote(g())), envir = baseenv()); ',
    'stop("tool failed") }, list(), "t"); ',
    'state <- c(r$ok, .Last.value, sink.number(), sink.number(type = "message"), paste(dev.list(), collapse = " "), dev.cur(), ',
    'getOption("warn"), names(last.warning)); sink(); ',
    sprintf('writeLines(state, "%s.tmp"); file.rename("%s.tmp", "%s") }', out, out, out)
  ))
  expect_equal(tmux_wait_file(s, out), c("FALSE", "1234", "1", "2", "2 3", "2", "1", "mine"))
})

test_that("at a real console, Ctrl-C during a tool puts everything back and the console reads again", {
  skip_if_no_tmux()
  skip_if_no_mcplite_child()
  dir <- tempfile("guard-interrupt-")
  dir.create(dir)
  ready <- file.path(dir, "ready")
  out <- file.path(dir, "out")
  s <- tmux_r_start()
  tmux_type(s, paste0(
    '{ r <- mcplite:::session_guarded_call(function() { sink(tempfile()); pdf(NULL); options(warn = 2); ',
    sprintf('file.create("%s"); repeat Sys.sleep(0.01) }, list(), "t"); ', ready),
    'state <- as.character(c(r$ok, r$message, sink.number(), paste(dev.list(), collapse = " "), getOption("warn"))); ',
    sprintf('writeLines(state, "%s.tmp"); file.rename("%s.tmp", "%s") }', out, out, out)
  ))
  expect_true(wait_until(function() file.exists(ready)), info = tmux_screen(s))
  tmux_key(s, "C-c")
  expect_equal(tmux_wait_file(s, out), c("FALSE", "Tool t was interrupted.", "0", "", "0"))
  # The console reads what the user types again (the guard is off).
  after <- file.path(dir, "after")
  tmux_type(s, sprintf('x <- readline("Name? ")'))
  tmux_type(s, "Ada")
  tmux_type(s, sprintf('writeLines(x, "%s.tmp"); file.rename("%s.tmp", "%s")', after, after, after))
  expect_equal(tmux_wait_file(s, after), "Ada")
})
