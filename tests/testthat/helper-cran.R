# The pure-R mcplite 0.2.0 from CRAN, in a library of its own, for the interop
# test (test-interop.R). tools/install.sh calls cran_mcplite_install() with
# the library that tools/test.sh then names in MCPLITE_CRAN_LIB, so a test run
# normally finds it installed; otherwise the test installs it into a temporary
# library, and skips only when CRAN cannot be reached.
#
# Kept free of testthat so tools/install.sh can source this file.

cran_mcplite_version <- "0.2.0"
cran_mcplite_repo <- "https://cloud.r-project.org"

cran_mcplite_installed <- function(lib) {
  desc <- file.path(lib, "mcplite", "DESCRIPTION")
  file.exists(desc) &&
    identical(unname(read.dcf(desc, fields = "Version")[1, 1]), cran_mcplite_version) &&
    identical(unname(read.dcf(desc, fields = "Repository")[1, 1]), "CRAN")
}

# Install CRAN mcplite 0.2.0 into `lib` (created if needed), with whatever of
# its dependencies the other libraries lack. Returns "installed" (or
# "present"), "unreachable" when CRAN cannot be reached, or an error message.
cran_mcplite_install <- function(lib, repos = cran_mcplite_repo) {
  if (cran_mcplite_installed(lib)) return("present")
  dir.create(lib, recursive = TRUE, showWarnings = FALSE)
  # Warnings (an index format the mirror lacks, a failed download) are noted,
  # not fatal: what counts is whether an index and the package arrive.
  notes <- character()
  quietly <- function(expr) {
    withCallingHandlers(expr, warning = function(w) {
      notes <<- c(notes, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  }
  avail <- tryCatch(quietly(utils::available.packages(repos = repos)), error = function(e) NULL)
  if (is.null(avail) || nrow(avail) == 0) return("unreachable")
  # The current release while it is 0.2.0, else the archived 0.2.0 tarball.
  pkg <- if ("mcplite" %in% rownames(avail) && avail["mcplite", "Version"] == cran_mcplite_version) {
    "mcplite"
  } else {
    sprintf("%s/src/contrib/Archive/mcplite/mcplite_%s.tar.gz", repos, cran_mcplite_version)
  }
  deps <- c("jsonlite", "nanonext", "otel")
  missing <- deps[!vapply(deps, function(p) nzchar(system.file(package = p, lib.loc = c(lib, .libPaths()))), TRUE)]
  res <- tryCatch(quietly({
    if (length(missing)) utils::install.packages(missing, lib = lib, repos = repos, quiet = TRUE)
    if (identical(pkg, "mcplite")) {
      utils::install.packages(pkg, lib = lib, repos = repos, quiet = TRUE, dependencies = FALSE)
    } else {
      utils::install.packages(pkg, lib = lib, repos = NULL, type = "source", quiet = TRUE)
    }
  }), error = function(e) conditionMessage(e))
  if (cran_mcplite_installed(lib)) return("installed")
  paste(c(sprintf("could not install CRAN mcplite %s into %s", cran_mcplite_version, lib),
          if (is.character(res)) res, notes), collapse = "\n")
}
