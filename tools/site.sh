#!/usr/bin/env bash
# Build the pkgdown website into docs/ from the INSTALLED package (run
# tools/install.sh first). Needs no network: _pkgdown.yml turns off the CRAN
# look-ups. Any pkgdown warning fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
Rscript --vanilla -e '
withCallingHandlers(
  pkgdown::build_site(install = FALSE, new_process = FALSE, preview = FALSE),
  warning = function(w) stop("pkgdown warning: ", conditionMessage(w), call. = FALSE)
)'
