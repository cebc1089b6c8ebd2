#!/usr/bin/env bash
# Install everything mcplite needs on a fresh Debian machine of this kind, then
# the package itself: system packages (apt, when root), R packages (Debian's
# prebuilt r-cran-* where they exist, CRAN for the rest), the npm modules of the
# interoperability tests, and finally `R CMD INSTALL .` (offline Rust build from
# the shipped vendor archive). Safe to re-run: it only installs what is missing.
# With --demo, it then runs the example server through a scripted client
# exchange (inst/examples/client-demo.R) and prints every request and answer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '[install] %s\n' "$*" >&2; }

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$PATH:$HOME/.cargo/bin"
fi
command -v cargo >/dev/null 2>&1 || { log "cargo (rustc >= 1.85) is required: see SystemRequirements"; exit 1; }

apt_pkgs=(pandoc qpdf xz-utils libcurl4-openssl-dev libssl-dev pkg-config
  r-cran-knitr r-cran-rmarkdown r-cran-roxygen2 r-cran-pkgdown r-cran-processx
  r-cran-testthat r-cran-curl r-cran-openssl r-cran-later r-cran-promises
  r-cran-rlang r-cran-cli r-cran-r6 r-cran-glue r-cran-lifecycle)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "not root: please install ${missing[*]} with apt-get"
  fi
fi

# CRAN packages (current releases: the serializer is compared with jsonlite >= 2.0).
Rscript --vanilla - <<'RS'
repos <- c(CRAN = "https://cloud.r-project.org")
need <- c(jsonlite = "2.0.0", ellmer = "0.3.0", otel = "0.2.0", S7 = "0.2.0", processx = "3.8.0", testthat = "3.1.6",
          mirai = "2.7.3")
have <- function(p, v) {
  ok <- requireNamespace(p, quietly = TRUE)
  ok && utils::packageVersion(p) >= v
}
todo <- names(need)[!mapply(have, names(need), need)]
if (length(todo)) {
  message("[install] CRAN: ", paste(todo, collapse = ", "))
  utils::install.packages(todo, repos = repos, Ncpus = 2L, quiet = TRUE)
}
still <- names(need)[!mapply(have, names(need), need)]
if (length(still)) stop("could not install: ", paste(still, collapse = ", "))
RS

if [ -f tests/node/package.json ] && [ ! -d tests/node/node_modules ]; then
  log "npm ci (tests/node)"
  (cd tests/node && npm ci --no-audit --no-fund --silent)
fi

log "R CMD INSTALL ."
R CMD INSTALL --no-multiarch . >/tmp/mcplite-install.log 2>&1 || { tail -50 /tmp/mcplite-install.log >&2; exit 1; }
log "installed mcplite $(Rscript --vanilla -e 'cat(format(packageVersion("mcplite")))')"

if [ "${1:-}" = "--demo" ]; then
  log "demo: a scripted client talks to inst/examples/minimal.R"
  Rscript --vanilla inst/examples/client-demo.R "$root/inst/examples/minimal.R"
fi
