# The repository's own documents (skipped where they are not shipped, as in
# R CMD check, which runs the tests without the README).

readme_lines <- function() {
  path <- test_path("..", "..", "README.md")
  skip_if_not(file.exists(path), "README.md is not beside the tests")
  readLines(path, warn = FALSE)
}

# The README's fenced code blocks: a list of list(lang, code, line).
readme_blocks <- function(lines) {
  fences <- which(startsWith(lines, "```"))
  blocks <- list()
  for (k in seq(1, length(fences) - 1, by = 2)) {
    open <- fences[[k]]
    close <- fences[[k + 1]]
    blocks[[length(blocks) + 1]] <- list(lang = sub("^```", "", lines[[open]]),
                                         code = lines[seq_len(close - open - 1) + open], line = open)
  }
  blocks
}

test_that("the README's links, help topics, version and commands are real", {
  skip_if_not_installed("jsonlite")
  lines <- readme_lines()
  root <- test_path("..", "..")
  text <- paste(lines, collapse = "\n")
  # Its fences pair up, and every R and JSON block parses.
  expect_true(length(which(startsWith(lines, "```"))) %% 2 == 0)
  for (b in readme_blocks(lines)) {
    if (b$lang == "r") expect_no_error(parse(text = b$code), message = sprintf("README.md:%d", b$line))
    if (b$lang == "json") expect_true(jsonlite::validate(paste(b$code, collapse = "\n")), info = sprintf("README.md:%d", b$line))
  }
  # In-page links go to a heading.
  anchors <- tolower(gsub("[^A-Za-z0-9 -]", "", sub("^#+ ", "", grep("^#+ ", lines, value = TRUE))))
  anchors <- gsub(" ", "-", anchors)
  for (link in unique(regmatches(text, gregexpr("\\]\\(#[^)]+\\)", text))[[1]])) {
    expect_true(sub("^\\]\\(#(.*)\\)$", "\\1", link) %in% anchors, info = link)
  }
  # The help topics it points to exist in the installed package.
  for (topic in unique(sub("^`\\?", "", regmatches(text, gregexpr("`\\?[A-Za-z0-9_.-]+", text))[[1]]))) {
    expect_true(length(utils::help(topic, package = "mcplite")) == 1, info = topic)
  }
  # It says which version it describes: this one.
  said <- regmatches(text, regexpr("version [0-9]+[.][0-9]+[.][0-9]+", text))
  expect_identical(sub("version ", "", said), as.character(packageVersion("mcplite")))
  # The repository scripts and files it tells you to run or read exist (the
  # scripts executable), and so do the installed examples it names.
  # (Paths from the repository's root: not the tail of another path, such
  # as src/rust/devtools/src/platform.rs.)
  named <- unique(unlist(regmatches(text, gregexpr("(?<![A-Za-z0-9_./-])(tools|bench|inst/examples|tests)/[A-Za-z0-9_./-]+[.](sh|mjs|rs|R|md)\\b", text, perl = TRUE))))
  expect_true(length(named) > 5)
  for (path in named) {
    expect_true(file.exists(file.path(root, path)), info = path)
    if (endsWith(path, ".sh")) expect_true(file.access(file.path(root, path), 1) == 0, info = path)
  }
  for (example in unique(sub('.*"examples", "([^"]+)".*', "\\1", grep('system.file("examples", "', lines, fixed = TRUE, value = TRUE)))) {
    expect_true(nzchar(system.file("examples", example, package = "mcplite")), info = example)
  }
})

test_that("the README's minimal server passes mcp_check(), and its client example runs as shown", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_if_no_mcplite_child()
  lines <- readme_lines()
  blocks <- Filter(function(b) b$lang == "r", readme_blocks(lines))
  server <- Filter(function(b) any(grepl("mcp_server(", b$code, fixed = TRUE)), blocks)
  expect_length(server, 1)
  script <- server_script(server[[1]]$code)
  res <- mcp_check(script, env = child_env())
  expect_true(res$ok, info = paste(res$problems$message, collapse = "\n"))
  # The mcp_client() block, evaluated as written (the server it starts finds
  # the mcplite under test through R_LIBS).
  client_code <- Filter(function(b) any(grepl("mcp_client(", b$code, fixed = TRUE)), blocks)
  expect_length(client_code, 1)
  old <- Sys.getenv("R_LIBS", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("R_LIBS") else Sys.setenv(R_LIBS = old), add = TRUE)
  Sys.setenv(R_LIBS = mcp_child_libs())
  env <- new.env()
  values <- lapply(parse(text = client_code[[1]]$code), eval, envir = env)
  expect_true(length(values[[2]]) >= 1)
  expect_identical(values[[3]]$content[[1]]$text, "3")
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
})

test_that("the README's script_file() lines work in a server started from elsewhere", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_if_no_mcplite_child()
  lines <- readme_lines()
  shown <- Filter(function(b) b$lang == "r" && any(grepl("script_file(", b$code, fixed = TRUE)), readme_blocks(lines))
  expect_length(shown, 1)
  script <- server_script(c(
    shown[[1]]$code,
    "mcplite::mcp_server(mcplite::tool(function() total(sales), name = 'total', description = 'Total sales.'))"
  ))
  dir <- dirname(script)
  writeLines("total <- function(d) sum(d$amount)", file.path(dir, "tools.R"))
  dir.create(file.path(dir, "data"))
  write.csv(data.frame(amount = c(2, 40)), file.path(dir, "data", "sales.csv"), row.names = FALSE)
  # mcp_check() starts it from another directory, as clients do.
  res <- mcp_check(script, env = child_env())
  expect_true(res$ok, info = paste(res$problems$message, collapse = "\n"))
  client <- checked_client(script, env = child_env())
  expect_identical(client$call("total")$content[[1]]$text, "42")
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
