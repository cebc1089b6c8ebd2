# tools/wire-names.mjs (run by tools/lint.sh): each MCP field name and each
# served protocol version is spelled in one place of the package's code.
# Run on a copy of the sources with a second spelling planted, one kind at a
# time (skipped where the sources are not beside the tests, as in R CMD check).

lint_sources <- function() {
  root <- normalizePath(test_path("..", ".."), mustWork = FALSE)
  script <- file.path(root, "tools", "wire-names.mjs")
  skip_if_not(file.exists(script) && dir.exists(file.path(root, "src", "rust", "core", "src")),
              "the sources are not beside the tests")
  skip_if(!nzchar(Sys.which("node")), "node is not on PATH")
  copy <- tempfile("lint-") # inside R's session directory, removed at exit
  dir.create(copy)
  for (d in c("R", "tests/schema", "src/rust/core/src", "src/rust/devtools/src", "src/rust/src")) {
    dir.create(file.path(copy, dirname(d)), recursive = TRUE, showWarnings = FALSE)
    file.copy(file.path(root, d), file.path(copy, dirname(d)), recursive = TRUE)
  }
  list(script = script, copy = copy)
}

run_lint <- function(src) {
  out <- suppressWarnings(system2("node", c(shQuote(src$script), shQuote(src$copy)), stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else as.integer(status), out = out)
}

plant <- function(src, file, from, to) {
  path <- file.path(src$copy, file)
  text <- readLines(path, warn = FALSE)
  at <- which(grepl(from, text, fixed = TRUE))[1]
  stopifnot(!is.na(at))
  text[[at]] <- sub(from, to, text[[at]], fixed = TRUE)
  writeLines(text, path)
}

test_that("the package's code spells each field name and served version once", {
  src <- lint_sources()
  clean <- run_lint(src)
  expect_identical(clean$status, 0L, info = paste(clean$out, collapse = "\n"))
  expect_match(clean$out[[1]], "R and all crates: clean")

  cases <- list(
    # R code: a version as a string, field names as a string, a symbol and a
    # JSON key inside a string.
    list("R/protocol.R", "latest_legacy_version <- function() protocol_facts()$latest_legacy",
         'latest_legacy_version <- function() "2025-11-25"', 'R/protocol.R:\\d+: "2025-11-25"'),
    list("R/check.R", 'isTRUE(res[[wire_name("IS_ERROR")]])', "isTRUE(res$isError)", 'R/check.R:\\d+: "isError"'),
    list("R/types.R", 'schema[[wire_name("ADDITIONAL_PROPERTIES")]]', "schema[['additionalProperties']]",
         'R/types.R:\\d+: "additionalProperties"'),
    list("R/protocol.R", "protocol_facts()$names[[id]]", "protocol_facts()$names[[id]] %||% '{\"_meta\":{}}'",
         'R/protocol.R:\\d+: "_meta"'),
    # Rust: a version and a field name outside their modules.
    list("src/rust/devtools/src/check.rs", "v.strict_schema_members)", 'v.id != "2026-07-28")',
         'check.rs:\\d+: "2026-07-28"'),
    list("src/rust/src/client.rs", "mcplite_core::wire::SERVER_INFO", '"serverInfo"', 'client.rs:\\d+: "serverInfo"'),
    # The one places themselves: a second row or constant with the same spelling.
    list("src/rust/core/src/version.rs", 'id: "2024-11-05",', 'id: "2025-06-18",', 'the version "2025-06-18" is also on line'),
    list("src/rust/core/src/wire.rs", 'TTL_MS = "ttlMs";', 'TTL_MS = "ttlMs";\n    TTL = "ttlMs";',
         'the name "ttlMs" is also on line')
  )
  for (case in cases) {
    src <- lint_sources()
    plant(src, case[[1]], case[[2]], case[[3]])
    res <- run_lint(src)
    expect_identical(res$status, 1L, info = case[[3]])
    expect_true(any(grepl(case[[4]], res$out)), info = paste(res$out, collapse = "\n"))
  }

  # Comments and roxygen text may name both; so may test code.
  src <- lint_sources()
  cat("# isError and 2025-11-25 in a comment\n#' `serverInfo`, 2026-07-28\nNULL\n",
      file = file.path(src$copy, "R", "zz-comments.R"))
  expect_identical(run_lint(src)$status, 0L)
})

# tools/module-cycles.mjs (run by tools/lint.sh): the modules of each crate
# import each other in no circle; a planted import back is found.
test_that("the modules of each crate import each other in no circle", {
  src <- lint_sources()
  src$script <- file.path(dirname(src$script), "module-cycles.mjs")
  clean <- run_lint(src)
  expect_identical(clean$status, 0L, info = paste(clean$out, collapse = "\n"))
  expect_match(clean$out[[1]], "three crates: clean")

  cases <- list(
    # The glue: the C API layer reading strings through the RValue view.
    list("src/rust/src/ffi.rs", "pub fn last_error_message() -> String {",
         "pub fn last_error_message() -> String {\n    let _ = crate::sexp::Sx::borrowed;", "import each other: .*ffi\\.rs.*sexp\\.rs"),
    # The core: a parent module calling back into its child.
    list("src/rust/core/src/r/mod.rs", "pub fn quote_names<", "fn _f() { let _ = spec::tool_name; }\npub fn quote_names<",
         "import each other: .*r/mod\\.rs.*r/spec\\.rs"),
    # The developer tools: the schema validator reaching up into the checks.
    list("src/rust/devtools/src/schema/mod.rs", "use regex_lite::Regex;",
         "use regex_lite::Regex;\nuse crate::check::dialect;", "import each other: .*check\\.rs.*schema/mod\\.rs")
  )
  for (case in cases) {
    one <- lint_sources()
    one$script <- src$script
    plant(one, case[[1]], case[[2]], case[[3]])
    res <- run_lint(one)
    expect_identical(res$status, 1L, info = paste(case[[1]], paste(res$out, collapse = "\n")))
    expect_true(any(grepl(case[[4]], res$out)), info = paste(res$out, collapse = "\n"))
  }
})
