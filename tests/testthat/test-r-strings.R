# R strings entering Rust (one rule per direction of meaning), the script a
# worker evaluates, and strings longer than R holds: real servers and real
# files.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

# "café" in each encoding R can mark, the same text every time.
cafe_strings <- function() {
  latin1 <- "caf\xe9"
  Encoding(latin1) <- "latin1"
  utf8 <- "caf\u00e9"
  bytes <- "caf\xc3\xa9"
  Encoding(bytes) <- "bytes"
  list(latin1 = latin1, utf8 = utf8, native = enc2native(utf8), bytes = bytes)
}

# ---- text for the protocol: UTF-8 ---------------------------------------------

test_that("a tool name held in any encoding reaches the server as UTF-8", {
  skip_if_no_mcplite_child()
  client <- fixture_client()
  for (kind in names(cafe_strings())) {
    name <- cafe_strings()[[kind]]
    # The fixture has no tool by that name: the server's answer names it,
    # at once (invalid UTF-8 was a parse error without an id, and the call
    # waited its whole timeout).
    cnd <- expect_error(client$call(name, timeout = 20), class = "mcplite_error_client_rpc")
    expect_match(conditionMessage(cnd), "-32602: Invalid params: unknown tool caf\u00e9", fixed = TRUE, info = kind)
  }
  # The same for a method name.
  cnd <- expect_error(client$request(cafe_strings()$latin1, timeout = 20), class = "mcplite_error_client_rpc")
  expect_match(conditionMessage(cnd), "caf\u00e9", fixed = TRUE)
  # And the client still works.
  expect_true(length(client$tools()) > 0)
})

test_that("a \"bytes\" string that is not UTF-8 is refused with the reason, before anything is sent", {
  skip_if_no_mcplite_child()
  client <- fixture_client()
  bad <- "caf\xe9"
  Encoding(bad) <- "bytes"
  expect_snapshot(error = TRUE, {
    client$call(bad)
    client$request(bad)
  })
  expect_error(client$call(bad), class = "mcplite_error")
  # Nothing reached the server; the next call is answered.
  expect_true(length(client$tools()) > 0)
})

# ---- paths for the operating system: the native encoding --------------------

test_that("mcp_config() writes a path held in any encoding under the name R's file functions use", {
  script <- server_script("mcplite::mcp_server(list())")
  with_config_home({
    # (R's own file functions refuse "bytes" strings.) file.path() and
    # paste() would give UTF-8: each path is made in its encoding at the end.
    encoded <- list(latin1 = function(p) iconv(p, "UTF-8", "latin1"), utf8 = enc2utf8, native = enc2native)
    for (kind in names(encoded)) {
      dir <- file.path(home, kind)
      dir.create(dir)
      path <- encoded[[kind]](enc2utf8(file.path(dir, "caf\u00e9.json")))
      expect_identical(Encoding(path), c(latin1 = "latin1", utf8 = "UTF-8", native = Encoding(enc2native("\u00e9")))[[kind]])
      out <- capture.output(mcp_config(script, "cursor", write = TRUE, path = path))
      # One file, named by the native bytes of "café.json" (what file.exists()
      # and every other R file function looks for).
      files <- list.files(dir, all.files = TRUE, no.. = TRUE)
      expect_length(files, 1)
      expect_identical(charToRaw(files), charToRaw(enc2native("caf\u00e9.json")), info = kind)
      expect_true(file.exists(path), info = kind)
      expect_true(file.exists(file.path(dir, enc2native("caf\u00e9.json"))), info = kind)
      expect_match(paste(readLines(path), collapse = "\n"), "mcpServers", fixed = TRUE)
    }
  })
})

# ---- the script a worker evaluates --------------------------------------------

# A folder with a server script that answers `who` with "real" and moves to
# data/ first (`before` runs before library(mcplite)), and a decoy
# data/server.R that answers "decoy". Returns the folder.
decoy_layout <- function(before = 'setwd("data")', workers = 1) {
  dir <- normalizePath(tempfile("script-moves-"), mustWork = FALSE)
  dir.create(file.path(dir, "data", "sub"), recursive = TRUE)
  dir.create(file.path(dir, "sub"))
  serve <- function(answer) c(
    "library(mcplite)",
    sprintf("who <- tool(function() %s, name = 'who', description = 'Who runs.')", deparse(answer)),
    sprintf("mcp_server(who, workers = %d)", workers)
  )
  writeLines(c(before, serve("real")), file.path(dir, "server.R"))
  writeLines(serve("decoy"), file.path(dir, "data", "server.R"))
  dir
}

skip_without_workers <- function() {
  skip_on_os("windows")
  skip_if_no_mcplite_child()
  skip_if_not_installed("mirai")
}

test_that("a worker evaluates the script R runs, after a setwd() ahead of library(mcplite)", {
  skip_without_workers()
  dir <- decoy_layout()
  on.exit(unlink(dir, recursive = TRUE))
  # Started as clients start scripts they were given a relative path to.
  client <- local_mcp_client(command = mcp_rscript(), args = c("--vanilla", "server.R"),
                             cwd = dir, env = child_env())
  for (i in 1:2) {
    res <- client$call("who")
    expect_false(isTRUE(res$isError), info = res$content[[1]]$text)
    expect_identical(res$content[[1]]$text, "real")
  }
})

test_that("a script whose path cannot be found again after a setwd() gets no workers, and says why", {
  skip_without_workers()
  dir <- decoy_layout()
  on.exit(unlink(dir, recursive = TRUE))
  input <- tempfile("input-")
  on.exit(unlink(input), add = TRUE)
  writeLines(c(initialize_line("2025-11-25"),
               '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who"}}'), input)
  # "sub/../server.R" from data/ names the decoy; no open file ends with it.
  res <- processx::run(mcp_rscript(), c("--vanilla", "sub/../server.R"), wd = dir,
                       stdin = input, error_on_status = FALSE,
                       env = c("current", R_LIBS = mcp_child_libs()))
  expect_false(identical(res$status, 0L))
  expect_identical(res$stdout, "")
  expect_match(res$stderr, "`workers` needs the script R runs, and it cannot be found", fixed = TRUE)
  expect_match(res$stderr, "setwd() ahead of library(mcplite)", fixed = TRUE)
  expect_no_match(res$stderr, "decoy", fixed = TRUE)
})

test_that("the refusal names the cause", {
  old <- startup$why
  on.exit(startup$why <- old)
  startup$why <- "the working directory changed before mcplite was loaded (a setwd() ahead of library(mcplite))"
  expect_snapshot(error = TRUE, startup_check_workers(1, quote(mcp_server(who, workers = 1))))
  expect_error(startup_check_workers("mirai", NULL), class = "mcplite_error_workers_script")
  expect_null(startup_check_workers(0, NULL))
  startup$why <- NA_character_
  expect_null(startup_check_workers(2, NULL))
})

test_that("a setwd() a worker cannot replay fails the calls with the cause", {
  skip_without_workers()
  dir <- decoy_layout()
  on.exit(unlink(dir, recursive = TRUE))
  # By its absolute path, from the script's folder: R's start is not
  # recorded until mcplite is loaded, in data/ (where "data" does not exist).
  client <- local_mcp_client(command = mcp_rscript(), args = c("--vanilla", file.path(dir, "server.R")),
                             cwd = dir, env = child_env())
  res <- client$call("who")
  expect_true(isTRUE(res$isError))
  text <- res$content[[1]]$text
  expect_match(text, "cannot change working directory", fixed = TRUE)
  expect_match(text, "a setwd() ahead of library(mcplite) cannot be replayed", fixed = TRUE)
  expect_match(text, file.path(dir, "data"), fixed = TRUE)
  expect_no_match(text, "decoy", fixed = TRUE)
})

# ---- strings longer than R holds ---------------------------------------------

test_that("a string argument of 2 GiB or more is a tool error, not a shortened string", {
  skip_if_not(identical(Sys.getenv("MCPLITE_TEST_HUGE_STRINGS"), "true"),
              "set MCPLITE_TEST_HUGE_STRINGS=true (needs about 10 GB of memory)")
  skip_if_no_mcplite_child()
  proc <- mcp_start(c(
    "library(mcplite)",
    "size <- tool(function(x) nchar(x, type = 'bytes'), name = 'size', description = 'Bytes.',",
    "             arguments = list(x = type_string('Text.')))",
    "mcp_server(size)"
  ))
  on.exit(mcp_kill(proc))
  mcp_send(proc, initialize_line("2025-11-25"))
  mcp_read(proc, 1)
  n <- 2^31 # one byte more than R's limit
  # One vector, newline included (each copy is 2 GiB).
  mcp_send(proc, c(
    charToRaw('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"size","arguments":{"x":"'),
    rep(as.raw(0x61), n),
    charToRaw('"}}}\n')
  ), newline = FALSE)
  res <- mcp_read(proc, 1, timeout = 600)[[1]]
  expect_true(isTRUE(res$result$isError))
  expect_match(res$result$content[[1]]$text, "holds a string of 2147483648 bytes, longer than R's limit")
})
