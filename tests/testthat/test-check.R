# mcp_check() on good and broken server scripts. Each run starts the script
# as clients do (reduced environment, another directory), so the mcplite
# under test is passed in through R_LIBS, as a client configuration would.

rules_of <- function(res, severity = NULL) {
  p <- rbind(res$problems, res$notes)
  if (!is.null(severity)) p <- p[p$severity %in% severity, , drop = FALSE]
  p$rule
}

print_report <- function(res, dir) {
  cat(scrub_report(capture.output(print(res)), dir), sep = "\n")
}

mcplite_tool_code <- c(
  'add <- mcplite::tool(function(a, b) a + b, name = "add", description = "Add two numbers.",',
  '  arguments = list(a = mcplite::type_number("A number."), b = mcplite::type_number("Another.")))'
)

test_that("a good server passes, in every version, and its calls are made", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  res <- mcp_check(normalizePath(mcp_fixture_server()), env = child_env())
  expect_s3_class(res, "mcplite_check")
  expect_true(res$ok)
  expect_equal(nrow(res$problems), 0)
  expect_equal(res$versions$asked, c("2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"))
  expect_equal(res$versions$served, res$versions$asked)
  expect_equal(res$versions$tools, rep(5L, 4))
  expect_equal(vapply(res$tools, function(t) t$name, ""), c("add", "echo", "summarise", "fail", "noisy"))
  # A figure is reported (its size is the machine's business).
  expect_true(is.finite(res$first_answer_seconds) && res$first_answer_seconds > 0)
  # 2024-11-05 has no output schemas: a note, not a problem.
  expect_equal(rules_of(res), "output_schema_dropped")
  expect_equal(res$notes$tool, "summarise")
  expect_equal(res$env, child_env())

  res <- mcp_check(normalizePath(mcp_fixture_server()), env = child_env(),
                   calls = list(add = list(a = 1, b = 2), fail = list(reason = "on purpose")))
  expect_false(res$ok)
  expect_equal(res$calls$add$`2026-07-28`$content[[1]]$text, "3")
  expect_equal(res$calls$add$`2024-11-05`$content[[1]]$text, "3")
  # One finding for the same failure in every version, naming them.
  failed <- res$problems[res$problems$rule == "call_tool_error", ]
  expect_equal(nrow(failed), 1)
  expect_equal(failed$version, NA_character_)
  expect_match(failed$message, "(2026-07-28, 2025-11-25, 2025-06-18, 2024-11-05)", fixed = TRUE)
  expect_match(failed$message[[1]], "fixture failure: on purpose", fixed = TRUE)
})

test_that("a missing script and a relative path are reported", {
  res <- mcp_check("/nonexistent/dir/server.R")
  expect_false(res$ok)
  expect_equal(rules_of(res), "script_missing")
  expect_snapshot(print(res))

  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(mcplite_tool_code, "mcplite::mcp_server(add)"))
  old <- setwd(dirname(script))
  on.exit(setwd(old))
  # As the README runs it: a clean check, with a note on the path it used.
  res <- mcp_check("server.R", env = child_env())
  expect_true(res$ok)
  expect_equal(nrow(res$problems), 0)
  expect_true("script_relative" %in% rules_of(res, "info"))
  expect_match(res$notes$message[res$notes$rule == "script_relative"], script, fixed = TRUE)
  expect_equal(res$script, script)
})

test_that("output printed at start-up is found", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c('cat("Loading my tools...\\n")', 'print(sessionInfo()$R.version$major)',
                            mcplite_tool_code, "mcplite::mcp_server(add)"))
  res <- mcp_check(script, env = child_env())
  expect_false(res$ok)
  expect_equal(rules_of(res, "error"), "stdout_noise")
  expect_match(res$problems$message, "2 lines to standard output at start-up", fixed = TRUE)
  expect_match(res$problems$message, "Loading my tools...", fixed = TRUE)
  # The check goes on: the tools are still listed.
  expect_equal(res$versions$tools, rep(1L, 4))
})

test_that("a package only visible through R_LIBS is found, with the env entry that fixes it", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  # Hide the site library, where mcplite may also be installed: the server
  # then finds mcplite only through R_LIBS, as with a personal library that
  # only the user's shell (or ~/.Renviron, which --vanilla skips) knows.
  empty <- tempfile("empty-site-")
  dir.create(empty)
  script <- server_script(c("library(mcplite)", mcplite_tool_code, "mcp_server(add)"))
  res <- mcp_check(script, env = c(R_LIBS_SITE = empty))
  expect_false(res$ok)
  expect_equal(rules_of(res, "error"), "package_not_found")
  lib <- normalizePath(dirname(find.package("mcplite")), winslash = "/")
  expect_match(res$problems$message, "package mcplite", fixed = TRUE)
  expect_match(res$problems$fix, sprintf('R_LIBS = "%s"', lib), fixed = TRUE)
  # The check went on with that entry, and the configuration carries it.
  expect_equal(unname(res$env[["R_LIBS"]]), lib)
  expect_equal(res$versions$tools, rep(1L, 4))
  out <- capture.output(print(res))
  expect_true(any(grepl(sprintf('"R_LIBS": "%s"', lib), out, fixed = TRUE)))
  expect_snapshot(print_report(res, dirname(script)), transform = function(x) {
    gsub("/[^ \"]*empty-site-[0-9a-f]+", "<empty>", x)
  })
})

test_that("a package installed nowhere is reported with install.packages()", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c("library(mcplitenosuchpackage)", mcplite_tool_code, "mcplite::mcp_server(add)"))
  res <- mcp_check(script, env = child_env())
  expect_equal(rules_of(res), "package_not_installed")
  expect_match(res$problems$fix, 'install.packages("mcplitenosuchpackage")', fixed = TRUE)
})

test_that("text printed without a newline is found and the server still checked", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c('cat("Loading...")', mcplite_tool_code, "mcplite::mcp_server(add)"))
  res <- mcp_check(script, env = child_env(), timeout = 20)
  expect_equal(rules_of(res, "error"), "stdout_noise")
  expect_match(res$problems$message, "Loading...", fixed = TRUE)
  expect_equal(res$versions$tools, rep(1L, 4))
})

test_that("an error before serving is shown with what R wrote to stderr", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c('message("connecting")', 'stop("cannot reach the database")'))
  res <- mcp_check(script, env = child_env())
  expect_false(res$ok)
  expect_equal(rules_of(res), "start_error")
  expect_match(res$problems$message, "Error: cannot reach the database", fixed = TRUE)
  expect_true(any(grepl("connecting", res$stderr)))
  expect_snapshot(print_report(res, dirname(script)))
})

test_that("a script that never serves, or reads files by relative paths, is explained", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  res <- mcp_check(server_script(mcplite_tool_code), env = child_env())
  expect_equal(rules_of(res), "no_server")

  dir <- tempfile("mcp-sibling-")
  script <- server_script(c('source("tools.R")', "mcplite::mcp_server(add)"), dir = dir)
  writeLines(mcplite_tool_code, file.path(dir, "tools.R"))
  res <- mcp_check(script, env = child_env())
  expect_equal(rules_of(res), c("start_error", "relative_file"))

  # The layout the guide recommends: find the sibling with script_file().
  writeLines(c('source(mcplite::script_file("tools.R"))', "mcplite::mcp_server(add)"), script)
  expect_mcp_check(script, env = child_env())
})

test_that("the Get started layout with workers is checked on the workers, with and without calls", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  skip_if_no_mcplite_child()
  script <- server_script("", dir = file.path(tempfile("mcp-workers-"), "my-tools"))
  dir <- dirname(script)
  writeLines(mcplite_tool_code, file.path(dir, "tools.R"))
  writeLines(c('source(mcplite::script_file("tools.R"))', "mcplite::mcp_server(add, workers = 2)"), script)
  res <- expect_mcp_check(script, env = child_env(), calls = list(add = list(a = 1, b = 2)))
  expect_identical(res$calls$add[["2025-11-25"]]$content[[1]]$text, "3")
  expect_false("workers_failed" %in% rules_of(res))

  # Finding tools.R from the command line works in the server only: the
  # workers fail, which the check reports without any call.
  writeLines(c(
    'here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))))',
    'source(file.path(here, "tools.R"))',
    "mcplite::mcp_server(add, workers = 2)"
  ), script)
  res <- mcp_check(script, env = child_env())
  expect_false(res$ok)
  expect_identical(rules_of(res, "error"), "workers_failed")
  found <- res$problems[res$problems$rule == "workers_failed", ]
  expect_match(found$message, "The worker could not evaluate the server script", fixed = TRUE)
  expect_snapshot(print_report(res, dir))
  expect_failure(expect_mcp_check(script, env = child_env()))
})

test_that("the check waits for the workers' line after their starting line", {
  # A client whose stderr holds the first two lines at the first read (the
  # starting line comes before any answer) and gains one at each read after.
  fake <- function(lines, alive = TRUE) {
    reads <- 0L
    list(stderr = function() {
      reads <<- reads + 1L
      lines[seq_len(min(reads + 1L, length(lines)))]
    }, is_alive = function() alive, reads = function() reads)
  }
  starting <- sprintf(workers_starting_line, 2L, "s")
  ready <- paste0(workers_ready_prefix, "2 workers evaluated the script in 1.0 s.")
  failed <- paste0(worker_failure_prefix, "The worker could not evaluate the server script s.R: no")
  for (last in c(ready, failed)) {
    client <- fake(c("R says hello", starting, "mcplite: something else", last))
    expect_true(check_workers_settled(client, 60))
    expect_identical(client$reads(), 3L)
  }
  # No workers: nothing to wait for.
  client <- fake(c("R says hello"))
  expect_true(check_workers_settled(client, 60))
  expect_identical(client$reads(), 1L)
  # The server exited before its workers were ready.
  expect_false(check_workers_settled(fake(c(starting), alive = FALSE), 60))
})

test_that("warnings R gave while the script started are reported, and do not fail the check", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    mcplite_tool_code,
    # One warning after a top-level call, two after another, one printed at once.
    'odd <- mcplite::tool(function() 1, "Odd.", name = "odd", annotations = list(readonly = TRUE))',
    'invisible({warning("first of two"); warning("second of two")})',
    'options(warn = 1); warning("printed at once"); options(warn = 0)',
    "mcplite::mcp_server(list(add, odd))"
  ))
  res <- expect_mcp_check(script, env = child_env())
  expect_identical(rules_of(res, "warning"), rep("startup_warning", 4))
  messages <- res$problems$message
  expect_match(messages[1], "readonly", fixed = TRUE)
  expect_match(messages[2], "first of two", fixed = TRUE)
  expect_match(messages[3], "second of two", fixed = TRUE)
  expect_match(messages[4], "printed at once", fixed = TRUE)
  expect_snapshot(print_report(res, dirname(script)))
})

test_that("expect_mcp_check() fails with every error in its message", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(mcplite_tool_code, "mcplite::mcp_server(add)"))
  # Without R_LIBS the child cannot find this mcplite (installed in a
  # library the reduced environment does not name), unless it is in R's own.
  res <- mcp_check(script)
  skip_if(res$ok, "mcplite is in a library every R sees")
  err <- tryCatch(expect_mcp_check(script), expectation_failure = function(e) e)
  expect_s3_class(err, "expectation_failure")
  expect_match(conditionMessage(err), "mcp_check() found", fixed = TRUE)
  expect_match(conditionMessage(err), "fix: Set R_LIBS in the client configuration", fixed = TRUE)
  expect_success(expect_mcp_check(script, env = child_env()))
})

test_that("a server that does not answer in time is reported", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  # The server answers after 30 s: a check that ignored its timeout would
  # see the answers and report nothing.
  script <- server_script(c("Sys.sleep(30)", mcplite_tool_code, "mcplite::mcp_server(add)"))
  res <- mcp_check(script, env = child_env(), timeout = 1)
  expect_equal(rules_of(res), "no_answer")
})

test_that("schemas that clients reject are reported with their sources", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    'pick <- mcplite::tool(function(a = NULL, b = NULL) "ok", name = "pick.one", description = "Pick one.",',
    '  arguments = mcplite::type_from_schema(list(type = "object",',
    '    properties = list(a = list(type = "string"), b = list(type = "array")),',
    '    anyOf = list(list(required = I("a")), list(required = I("b"))))))',
    'typo <- mcplite::tool(function(x) x, name = "typo", description = "A typo in a type.",',
    '  arguments = mcplite::type_from_schema(list(type = "object", properties = list(x = list(type = "strin")))))',
    'rows <- mcplite::tool(function() list(1), name = "rows", description = "Rows.",',
    '  output_schema = mcplite::type_array(mcplite::type_number()))',
    "mcplite::mcp_server(list(pick, typo, rows))"
  ))
  res <- mcp_check(script, env = child_env())
  expect_false(res$ok)
  p <- res$problems
  expect_equal(p$rule, c("schema_invalid", "portability_name", "portability_top_composition",
                         "portability_array_items", "output_schema_dropped"))
  expect_equal(p$tool, c("typo", "pick.one", "pick.one", "pick.one", "rows"))
  expect_true(all(!is.na(p$source[startsWith(p$rule, "portability")])))
  expect_match(p$message[[1]], "/properties/x/type", fixed = TRUE)
  expect_match(p$message[[5]], "2025-11-25, 2025-06-18, 2024-11-05", fixed = TRUE)
  expect_snapshot(print_report(res, dirname(script)))
})

test_that("a server not built on mcplite is checked listing by listing", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  tools <- tempfile(fileext = ".json")
  writeLines('[
    {"name": "no description", "inputSchema": {"type": "object"}},
    {"name": "text", "description": "A string root.", "inputSchema": {"type": "string"}},
    {"name": "req", "description": "Requires b.", "inputSchema": {"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}},
    {"name": "old", "description": "Draft 4.", "inputSchema": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}},
    {"name": "flag", "description": "A boolean subschema.", "inputSchema": {"type": "object", "properties": {"x": true}}},
    {"name": "flag", "description": "Twice.", "inputSchema": {"type": "object"}},
    {"name": "junk", "description": "Prints.", "inputSchema": {"type": "object"}}
  ]', tools)
  res <- mcp_check(normalizePath(mcp_fixture_server("raw-server.R")),
                   env = c(RAW_TOOLS = tools, RAW_BANNER = "1"), calls = list(junk = list()))
  expect_false(res$ok)
  expect_equal(res$versions$served, c(NA, "2025-11-25", "2025-06-18", "2024-11-05"))
  expect_match(res$versions$error[[1]], "Method not found", fixed = TRUE)
  p <- res$problems
  errors <- p[p$severity == "error", ]
  expect_setequal(errors$rule, c("stdout_noise", "input_root_type", "legacy_schema_shape", "name_duplicate"))
  noise <- errors$message[errors$rule == "stdout_noise"]
  expect_length(noise, 4) # at start-up, then while calling junk in each version
  expect_match(noise[[1]], "at start-up", fixed = TRUE)
  expect_match(noise[[2]], "while calling junk", fixed = TRUE)
  shapes <- errors[errors$rule == "legacy_schema_shape", ]
  expect_equal(shapes$tool, c("text", "flag"))
  expect_match(shapes$message[[2]], "2025-11-25, 2025-06-18, 2024-11-05", fixed = TRUE)
  warnings <- p[p$severity == "warning", ]
  expect_equal(warnings$rule, c("name_rule", "description_missing", "required_unknown", "dialect"))
  expect_equal(warnings$tool, c("no description", "no description", "req", "old"))
  expect_true("modern_unsupported" %in% res$notes$rule)

  # No tools at all, and a call the server refuses.
  writeLines("[]", tools)
  res <- mcp_check(normalizePath(mcp_fixture_server("raw-server.R")), env = c(RAW_TOOLS = tools),
                   calls = list(missing = list()))
  expect_equal(res$versions$tools, c(NA, 0L, 0L, 0L))
  expect_setequal(rules_of(res, c("error", "warning")), c("no_tools", "call_failed"))
})

test_that("a failing call is one finding per cause, with the fix for that cause", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    'boom <- mcplite::tool(function(x = 1) stop("no data for ", x), name = "boom", description = "Fails.")',
    'env <- mcplite::tool(function() new.env(), name = "env", description = "Cannot be sent.")',
    'link <- mcplite::tool(function() mcplite::tool_result(list(mcplite::content_resource_link("file:///data.csv", "data"))),',
    '  name = "link", description = "A link, which 2024-11-05 cannot carry.")',
    'back <- mcplite::tool(function() { mcplite::mcp_progress(-1); "done" }, name = "back", description = "Bad progress.")',
    'plain <- mcplite::tool(function(a = 1) a, name = "plain", description = "One argument.")',
    'field <- mcplite::tool(function() mcplite::tool_result(structured_content = list(x = new.env())),',
    '  name = "field", description = "Structured content that cannot be sent.")',
    "mcplite::mcp_server(list(boom, env, link, back, plain, field))"
  ))
  res <- mcp_check(script, env = child_env(), calls = list(
    boom = list(x = 3), env = list(), link = list(), back = list(), plain = list(zzz = 1), field = list()
  ))
  p <- res$problems
  # Not once per protocol version: one finding per tool, each cause once.
  expect_equal(p$rule, rep("call_tool_error", 6))
  expect_equal(p$tool, c("boom", "env", "link", "back", "plain", "field"))
  all_versions <- "(2026-07-28, 2025-11-25, 2025-06-18, 2024-11-05)"
  expect_equal(p$version, c(NA, NA, "2024-11-05", NA, NA, NA))
  expect_true(all(grepl(all_versions, p$message[-3], fixed = TRUE)))
  # The link fails only where the version cannot carry it.
  expect_equal(names(Filter(function(r) isTRUE(r$isError), res$calls$link)), "2024-11-05")
  expect_snapshot(for (i in seq_len(nrow(p))) mcplite:::print_finding(p[i, ]))
})

test_that("a call that times out is one finding, with the time limit in its fix", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  # The tool waits for a file nobody writes: every version's call times out.
  never <- tempfile("never-")
  script <- server_script(c(
    sprintf('wait <- mcplite::tool(function() { while (!file.exists("%s")) Sys.sleep(0.05); 1 },', never),
    '  name = "wait", description = "Waits.")',
    "mcplite::mcp_server(wait)"
  ))
  res <- mcp_check(script, env = child_env(), calls = list(wait = list()), timeout = 4)
  p <- res$problems
  expect_equal(p$rule, "call_failed")
  expect_match(p$message, "Calling wait failed (2026-07-28, 2025-11-25, 2025-06-18, 2024-11-05): ", fixed = TRUE)
  expect_match(p$fix, "Make the tool answer within 4 seconds (the `timeout` of this check)", fixed = TRUE)
})

test_that("mcp_check() checks its arguments", {
  expect_snapshot(error = TRUE, {
    mcp_check(1)
    mcp_check("server.R", env = "R_LIBS=/x")
    mcp_check("server.R", calls = list(add = 1))
    mcp_check("server.R", timeout = NA)
  })
})

test_that("calls whose structured content breaks the output schema are problems, with the path", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- conformance_script()
  res <- mcp_check(script, env = child_env(),
                   calls = list(right = list(), wrong_type = list(), no_structured = list()))
  expect_false(res$ok)
  found <- res$problems[res$problems$rule == "output_schema_mismatch", ]
  # Once each, naming the three versions that have output schemas.
  expect_setequal(found$tool, c("wrong_type", "no_structured"))
  expect_equal(nrow(found), 2)
  expect_equal(found$version, c(NA_character_, NA_character_))
  expect_true(all(grepl("(2026-07-28, 2025-11-25, 2025-06-18)", found$message, fixed = TRUE)))
  expect_true(all(grepl("at /total: ", found$message[found$tool == "wrong_type"], fixed = TRUE)))
  expect_false("right" %in% res$problems$tool)
})

# A package this session loads from a library of its own, which the reduced
# environment mcp_check() gives the server does not name (as a package that
# only the user's R_LIBS or ~/.Renviron finds).
private_package <- function() {
  lib <- check_state$private_lib
  if (is.null(lib)) {
    lib <- test_package_lib(private_package_name, 'hello <- function() "hello"', "hello")
    check_state$private_lib <- lib
  }
  # (By a variable: R CMD check looks for a literal name in the repositories.)
  loadNamespace(private_package_name, lib.loc = lib)
  normalizePath(lib, winslash = "/")
}
check_state <- new.env(parent = emptyenv())
private_package_name <- "mcplitecheckpkg"

test_that("the error that stops the script is shown after the R_LIBS fix for a missing package", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  lib <- private_package()
  # A typo in tool()'s arguments stops the script, once R finds the package.
  script <- server_script(c(
    "library(mcplitecheckpkg)",
    'hi <- mcplite::tool(function(x) hello(), name = "hi", description = "Hello.",',
    '  arguments = list(x = mcplite::type_strng("Anything.")))',
    "mcplite::mcp_server(hi)"
  ))
  res <- mcp_check(script, env = child_env())
  expect_false(res$ok)
  expect_equal(rules_of(res, "error"), c("package_not_found", "start_error"))
  found <- res$problems[res$problems$rule == "package_not_found", ]
  expect_match(found$fix, lib, fixed = TRUE)
  failed <- res$problems[res$problems$rule == "start_error", ]
  expect_match(failed$message, "type_strng", fixed = TRUE)
  expect_match(res$env[["R_LIBS"]], lib, fixed = TRUE)
})

test_that("packages that only tool bodies use are checked where the client starts the server", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  lib <- private_package()
  script <- server_script(c(
    'f <- function() {',
    '  mcplitecheckpkg::hello()',
    '  nosuchpkg.a:::g()',
    '  library(nosuchpkgb)',
    '  requireNamespace("nosuchpkgc", quietly = TRUE)',
    '  require(package = nosuchpkgd)',
    '  pkg <- "notknownstatically"',
    '  library(pkg, character.only = TRUE)',
    '  stats::sd(1:3) + utils::head(1)',
    '}',
    'hi <- mcplite::tool(function() f(), name = "hi", description = "Hello.")',
    "mcplite::mcp_server(hi)"
  ))
  res <- mcp_check(script, env = child_env())
  # The server itself starts and lists its tool.
  expect_equal(res$versions$tools, rep(1L, 4))
  expect_false(res$ok)
  p <- res$problems
  expect_equal(p$rule[p$rule == "package_not_found"], "package_not_found")
  expect_match(p$message[p$rule == "package_not_found"], "mcplitecheckpkg", fixed = TRUE)
  expect_match(p$fix[p$rule == "package_not_found"], lib, fixed = TRUE)
  missing <- regmatches(p$message[p$rule == "package_not_installed"],
                        regexpr("package [^ ,]+", p$message[p$rule == "package_not_installed"]))
  expect_setequal(missing, paste("package", c("nosuchpkg.a", "nosuchpkgb", "nosuchpkgc", "nosuchpkgd")))
  expect_false(any(grepl("notknownstatically|stats|utils", p$message)))

  # With the library in the client's environment, only the uninstalled ones remain.
  env <- child_env()
  env[["R_LIBS"]] <- paste(env[["R_LIBS"]], lib, sep = .Platform$path.sep)
  res <- mcp_check(script, env = env)
  expect_setequal(rules_of(res, "error"), "package_not_installed")
})

test_that("mcp_check(command =) runs exactly the command a client runs", {
  expect_snapshot(error = TRUE, {
    mcp_check()
    mcp_check("server.R", command = c("Rscript", "server.R"))
    mcp_check(command = c("Rscript", NA))
    mcp_check(command = character())
  })
  expect_error(mcp_check(command = 1), class = "mcplite_error_argument")

  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(mcplite_tool_code, "mcplite::mcp_server(add)"))
  # A profile that prints: harmless with --vanilla (what `script` runs), a
  # broken server for a configuration without it.
  profile <- tempfile("Rprofile-")
  writeLines('cat("Welcome to R!\\n")', profile)
  env <- c(child_env(), R_PROFILE_USER = profile)
  rscript <- file.path(R.home("bin"), "Rscript")

  expect_true(mcp_check(script, env = env)$ok)

  res <- mcp_check(command = c(rscript, script), env = env)
  expect_false(res$ok)
  expect_equal(res$command, c(rscript, script))
  expect_true(is.na(res$script))
  expect_equal(rules_of(res, "error"), "stdout_noise")
  expect_match(res$problems$message, "Welcome to R!", fixed = TRUE)
  expect_true("command_only" %in% rules_of(res, "info"))
  expect_equal(res$versions$tools, rep(1L, 4))

  res <- mcp_check(command = c(rscript, "--vanilla", script), env = env, calls = list(add = list(a = 1, b = 2)))
  expect_true(res$ok)
  expect_equal(res$calls$add$`2026-07-28`$content[[1]]$text, "3")
  shown <- capture.output(print(res))
  expect_match(shown[[1]], paste(rscript, "--vanilla", script), fixed = TRUE)
  expect_false(any(grepl("mcpServers", shown)))
})

test_that("a non-zero number sent as 0 is said once per tool on stderr, and reported by mcp_check(calls =)", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    'fit <- mcplite::tool(function() list(estimate = 2.5, p_value = 1.2e-5), name = "fit", description = "A fit.")',
    'table <- mcplite::tool(function() mcplite::tool_result(structured_content = data.frame(term = c("a", "b"), p = c(0.5, 3e-5))),',
    '  name = "table", description = "A table.")',
    'fine <- mcplite::tool(function() list(p = 0.25, zero = 0), name = "fine", description = "Nothing lost.")',
    "mcplite::mcp_server(list(fit, table, fine))"
  ))
  client <- mcp_client(script, env = child_env())
  for (i in 1:3) {
    expect_equal(client$call("fit")$content[[1]]$text, '{"estimate":2.5,"p_value":0}')
    client$call("table")
    client$call("fine")
  }
  # Closed, the server has exited and everything it wrote to stderr is read.
  client$close()
  notes <- grep("was sent as 0", client$stderr(), value = TRUE)
  expect_length(notes, 2)
  expect_match(notes[[1]], "^mcplite: tool fit: a non-zero number was sent as 0 \\(numbers keep 4 decimal places")
  expect_match(notes[[2]], "^mcplite: tool table: ")
  expect_match(notes[[1]], "options(mcplite.json.digits = NA)", fixed = TRUE)

  res <- mcp_check(script, env = child_env(), calls = list(fit = list(), fine = list()))
  found <- res$problems[res$problems$rule == "number_sent_as_zero", ]
  expect_equal(found$tool, "fit")
  expect_equal(found$severity, "warning")

  # On a worker, the tool_result() built there counts too.
  if (requireNamespace("mirai", quietly = TRUE)) {
    on_workers <- server_script(sub("mcp_server(list(fit, table, fine))",
                                    "mcp_server(list(fit, table, fine), workers = 1)",
                                    readLines(script), fixed = TRUE))
    client <- mcp_client(on_workers, env = child_env())
    client$call("table")
    client$call("fine")
    client$close()
    expect_equal(grep("was sent as 0", client$stderr(), value = TRUE),
                 grep("^mcplite: tool table: ", client$stderr(), value = TRUE))
    expect_length(grep("was sent as 0", client$stderr()), 1)
  }

  # With every digit kept there is nothing to say.
  script <- server_script(c('options(mcplite.json.digits = NA)', readLines(script)))
  client <- mcp_client(script, env = child_env())
  expect_equal(client$call("fit")$content[[1]]$text, '{"estimate":2.5,"p_value":1.2e-05}')
  client$call("table")
  client$close()
  expect_false(any(grepl("was sent as 0", client$stderr())))
})
