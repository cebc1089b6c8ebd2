# The repository's own documents (skipped where they are not shipped, as in
# R CMD check, which runs the tests without the README).

readme_lines <- function() {
  path <- test_path("..", "..", "README.md")
  skip_if_not(file.exists(path), "README.md is not beside the tests")
  readLines(path, warn = FALSE)
}

test_that("the README's first screen says which mcplite this is, relative to CRAN's", {
  lines <- readme_lines()
  first <- paste(lines[seq_len(which(startsWith(lines, "## "))[1] - 1)], collapse = " ")
  version <- as.character(packageVersion("mcplite"))
  expect_match(first, "CRAN has mcplite 0.2.0", fixed = TRUE)
  expect_match(first, sprintf("version %s", version), fixed = TRUE)
  expect_match(first, "Scripts written for 0.2.0 run unchanged", fixed = TRUE)
  expect_match(first, "?mcplite-cran", fixed = TRUE)
  expect_match(first, "(#installation)", fixed = TRUE)
  expect_true("## Installation" %in% lines)
})

test_that("the guides and examples find files next to the script with script_file(), not from R's command line", {
  root <- test_path("..", "..")
  files <- c(list.files(file.path(root, "vignettes"), "[.]Rmd$", full.names = TRUE),
             file.path(root, "README.md"))
  skip_if_not(all(file.exists(files)) && length(files) > 1, "the sources are not beside the tests")
  examples <- list.files(system.file("examples", package = "mcplite"), "[.]R$",
                         full.names = TRUE, recursive = TRUE)
  for (file in c(files, examples)) {
    expect_false(any(grepl("--file=", readLines(file, warn = FALSE), fixed = TRUE)), info = file)
  }
  for (doc in c(file.path(root, "vignettes", "mcplite.Rmd"), file.path(root, "README.md"))) {
    text <- readLines(doc, warn = FALSE)
    expect_true(any(grepl("source(mcplite::script_file(\"tools.R\"))", text, fixed = TRUE)), info = doc)
  }
})

test_that("the package's R code uses only exported API of other packages", {
  dir <- test_path("..", "..", "R")
  skip_if_not(dir.exists(dir), "the R sources are not beside the tests")
  for (file in list.files(dir, "[.]R$", full.names = TRUE)) {
    code <- readLines(file, warn = FALSE)
    code <- sub("#.*$", "", code) # comments may name internals
    # `pkg:::name` for any package but this one, and namespace look-ups.
    internal <- regmatches(code, gregexpr("[A-Za-z.][A-Za-z0-9._]*:::", code))
    internal <- setdiff(unlist(internal), "mcplite:::")
    expect_identical(internal, character(), info = basename(file))
    expect_false(any(grepl("asNamespace(", code, fixed = TRUE) & !grepl("asNamespace(\"mcplite\")", code, fixed = TRUE)),
                 info = basename(file))
    expect_false(any(grepl("getNamespace(", code, fixed = TRUE)), info = basename(file))
  }
})
