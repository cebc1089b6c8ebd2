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
. tools/apt.sh

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH" # rustup's cargo with rustup's rustc
fi
command -v cargo >/dev/null 2>&1 || { log "cargo (rustc >= 1.85) is required: see SystemRequirements"; exit 1; }

# devscripts: checkbashisms, which R CMD check --as-cran runs on configure.
apt_pkgs=(pandoc qpdf xz-utils libcurl4-openssl-dev libssl-dev pkg-config devscripts
  r-cran-knitr r-cran-rmarkdown r-cran-roxygen2 r-cran-pkgdown r-cran-processx
  r-cran-testthat r-cran-curl r-cran-openssl r-cran-later r-cran-promises
  r-cran-rlang r-cran-cli r-cran-r6 r-cran-glue r-cran-lifecycle)
# Without root (status 1) the rest may still work: go on. A failing apt-get stops.
apt_install_missing "${apt_pkgs[@]}" || [ $? -eq 1 ]

# R packages go into the first writable library that `Rscript --vanilla` (the
# way MCP clients start servers) sees; when none is writable, into the user
# library, created as R would offer to.
rlib=$(Rscript --vanilla -e '
  libs <- .libPaths()
  ok <- libs[file.access(libs, 2) == 0]
  lib <- if (length(ok)) ok[[1]] else Sys.getenv("R_LIBS_USER")
  if (!nzchar(lib)) stop("no writable R library: set R_LIBS_USER")
  dir.create(lib, recursive = TRUE, showWarnings = FALSE)
  cat(normalizePath(lib))') || { log "cannot find a writable R library"; exit 1; }
log "R library: $rlib"

# CRAN packages (current releases: the serializer is compared with jsonlite >= 2.0).
# Every check runs in a new R process that has loaded nothing else, so it sees
# what a user's session will load: an R session that has already loaded
# Debian's older jsonlite or rlang keeps those versions after installing newer
# ones, and would wrongly report them as missing.
export MCPLITE_NEED="jsonlite=2.0.0 ellmer=0.3.0 otel=0.2.0 S7=0.2.0 processx=3.8.0 testthat=3.1.6 ggplot2=3.4.0 ragg=1.2.0 mirai=2.7.3"
r_unmet() { # prints the packages that are missing, too old or do not load; --report: every verdict on stderr
  Rscript --vanilla - "$@" <<'RS'
report <- identical(commandArgs(TRUE), "--report")
need <- strsplit(strsplit(Sys.getenv("MCPLITE_NEED"), " ")[[1]], "=")
for (n in need) {
  p <- n[[1]]; want <- n[[2]]
  why <- tryCatch({
    v <- getNamespaceVersion(loadNamespace(p))
    if (package_version(v) >= want) "" else sprintf("version %s < %s", v, want)
  }, error = function(e) gsub("\n", " ", conditionMessage(e)))
  if (nzchar(why)) cat(p, "\n")
  if (report) message(sprintf("[install]   %-9s %s", p, if (nzchar(why)) paste("NOT OK:", why) else
    sprintf("%s (%s)", getNamespaceVersion(p), dirname(getNamespaceInfo(p, "path")))))
}
RS
}
todo=$(r_unmet) || { log "checking R packages failed"; exit 1; }
todo=$(echo $todo)
if [ -n "$todo" ]; then
  log "CRAN: $todo (into $rlib)"
  # A separate R process that reads the user's profiles (their repos option)
  # but not environ files, so it sees the same libraries as `Rscript --vanilla`
  # and installs every dependency those sessions lack.
  MCPLITE_TODO="$todo" MCPLITE_LIB="$rlib" Rscript --no-environ -e '
    repos <- getOption("repos")
    if (!length(repos)) repos <- c(CRAN = "@CRAN@")
    repos[repos == "@CRAN@"] <- "https://cloud.r-project.org"
    utils::install.packages(strsplit(Sys.getenv("MCPLITE_TODO"), " ")[[1]],
                            lib = Sys.getenv("MCPLITE_LIB"), repos = repos, Ncpus = 2L, quiet = TRUE)'
fi
log "R packages, as a new R session loads them:"
still=$(r_unmet --report) || { log "checking R packages failed"; exit 1; }
still=$(echo $still)
[ -z "$still" ] || { log "could not install: $still (see the NOT OK lines above)"; exit 1; }

# CRAN's pure-R mcplite 0.2.0, in a library of its own, for the interop test
# (tests/testthat/test-interop.R) and the benchmarks (bench/run.sh); tools/test.sh
# points MCPLITE_CRAN_LIB at it. Never mixed with the library holding this package.
cran_lib="$root/bench/.lib-cran"
log "CRAN mcplite 0.2.0 -> $cran_lib"
Rscript --vanilla -e 'source("tests/testthat/helper-cran.R"); s <- cran_mcplite_install(commandArgs(TRUE)[1]); message("[install] CRAN mcplite: ", s); if (!s %in% c("present", "installed", "unreachable")) quit(status = 1)' "$cran_lib" ||
  { log "could not install CRAN mcplite 0.2.0"; exit 1; }

# Also when a dependency of package.json is missing from node_modules (one
# was added since the last install).
node_deps_missing() {
  (cd tests/node && node -e 'for (const d of Object.keys(require("./package.json").dependencies))
    require("fs").accessSync("node_modules/" + d + "/package.json")') 2>/dev/null && return 1 || return 0
}
if [ -f tests/node/package.json ] && { [ ! -d tests/node/node_modules ] || node_deps_missing; }; then
  log "npm ci (tests/node)"
  (cd tests/node && npm ci --no-audit --no-fund --silent)
fi

log "R CMD INSTALL . (into $rlib)"
install_log=$(mktemp "${TMPDIR:-/tmp}/mcplite-install.XXXXXX")
R CMD INSTALL --no-multiarch -l "$rlib" . >"$install_log" 2>&1 || { tail -50 "$install_log" >&2; exit 1; }
rm -f "$install_log"
MCPLITE_LIB="$rlib" Rscript --vanilla -e '
  lib <- Sys.getenv("MCPLITE_LIB")
  message("[install] installed mcplite ", packageVersion("mcplite", lib.loc = lib), " in ", lib)
  seen <- dirname(find.package("mcplite"))
  if (normalizePath(seen) != lib) message("[install] NOTE: R loads another mcplite first, from ", seen)'


if [ "${1:-}" = "--demo" ]; then
  log "demo: a scripted client talks to inst/examples/minimal.R"
  Rscript --vanilla inst/examples/client-demo.R "$root/inst/examples/minimal.R"
fi
