#!/usr/bin/env bash
# Install everything mcplite needs on a fresh Debian machine of this kind, then
# the package itself: system packages (apt, when root), R packages (Debian's
# prebuilt r-cran-* where they exist, CRAN for the rest), the npm modules of the
# interoperability tests and of the website, and finally `R CMD INSTALL .`
# (offline Rust build from the shipped vendor archive). Safe to re-run: it
# installs only what is missing or too old, and compiles the package only when
# its sources changed since the installed copy was built (see "The package
# itself" below; --rebuild forces it).
# With --demo, it then runs the example server through a scripted client
# exchange (inst/examples/client-demo.R) and prints every request and answer.
# With --no-package, it installs everything but mcplite itself (CI, whose
# fresh clone builds and installs the package).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '[install] %s\n' "$*" >&2; }
demo=no rebuild=no package=yes
for arg in "$@"; do
  case "$arg" in
    --demo) demo=yes ;;
    --rebuild) rebuild=yes ;;
    --no-package) package=no ;;
    *) log "unknown argument '$arg' (usage: tools/install.sh [--demo] [--rebuild] [--no-package])"; exit 2 ;;
  esac
done
. tools/apt.sh

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH" # rustup's cargo with rustup's rustc
fi
command -v cargo >/dev/null 2>&1 || { log "cargo (rustc >= 1.85) is required: see SystemRequirements"; exit 1; }

# devscripts: checkbashisms, which R CMD check --as-cran runs on configure.
# chromium: tools/site.sh looks at every page of the website in it.
# tmux: the live-session tests type into an interactive R at a pseudo-terminal.
apt_pkgs=(pandoc qpdf xz-utils libcurl4-openssl-dev libssl-dev pkg-config devscripts chromium tmux
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

# CRAN packages (current releases: the serializer is compared with jsonlite >= 2.0;
# the snapshots in tests/testthat/_snaps are in testthat 3.3's format).
# Every check runs in a new R process that has loaded nothing else, so it sees
# what a user's session will load: an R session that has already loaded
# Debian's older jsonlite or rlang keeps those versions after installing newer
# ones, and would wrongly report them as missing.
export MCPLITE_NEED="jsonlite=2.0.0 ellmer=0.3.0 otel=0.2.0 S7=0.2.0 processx=3.9.0 testthat=3.3.0 ggplot2=3.4.0 ragg=1.2.0 mirai=2.7.3 later=1.3.0"
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
node_deps_missing() { # [dir], default tests/node
  (cd "${1:-tests/node}" && node -e 'for (const d of Object.keys(require("./package.json").dependencies))
    require("fs").accessSync("node_modules/" + d + "/package.json")') 2>/dev/null && return 1 || return 0
}
if [ -f tests/node/package.json ] && { [ ! -d tests/node/node_modules ] || node_deps_missing; }; then
  log "npm ci (tests/node)"
  (cd tests/node && npm ci --no-audit --no-fund --silent)
fi
# The real clients' command-line programs (Claude Code, Gemini CLI, Codex CLI)
# for the mcp_config() tests, tests/testthat/test-config-clients.R.
if [ -f tests/clients/package.json ] && { [ ! -d tests/clients/node_modules ] || node_deps_missing tests/clients; }; then
  log "npm ci (tests/clients)"
  (cd tests/clients && npm ci --no-audit --no-fund --silent)
fi
# The website's own copies of the scripts and fonts pkgdown loads from CDNs,
# and playwright-core for the browser check of the site (tools/site.sh).
if [ -f pkgdown/node/package.json ] && { [ ! -d pkgdown/node/node_modules ] || node_deps_missing pkgdown/node; }; then
  log "npm ci (pkgdown/node)"
  (cd pkgdown/node && npm ci --no-audit --no-fund --silent)
fi

if [ "$package" = no ]; then
  log "--no-package: everything but mcplite itself is installed"
  exit 0
fi

# The package itself. The installed copy carries a hash of the sources it was
# built from (MCPLITE_SOURCE_HASH in its directory): when that matches these
# sources, the same R and the same rustc, nothing is compiled. Otherwise it is
# built into a staging library beside the target one and moved into place at
# the end, so the installed package stays usable (a server or a check running
# from it keeps working) until the new one is complete. --rebuild builds anyway.
hash_cmd="sha256sum"; command -v sha256sum >/dev/null 2>&1 || hash_cmd="shasum -a 256"
source_hash() { # the files R CMD INSTALL reads (not what a build leaves in src/), R's and rustc's versions
  {
    find DESCRIPTION NAMESPACE configure configure.win cleanup R src inst man -type f \
      ! -path 'src/rust/target/*' ! -path 'src/vendor/*' ! -path 'src/.cargo/*' ! -path src/symbols.rds ! -name Makevars \
      ! -name '*.o' ! -name '*.so' ! -name '*.dll' ! -name '*.a' 2>/dev/null | LC_ALL=C sort | while read -r f; do
      printf '%s ' "$f"; $hash_cmd <"$f"
    done
    Rscript --vanilla -e 'cat(R.version.string, R.version$platform, "\n")'
    rustc --version
  } | $hash_cmd | cut -d' ' -f1
}
want_hash=$(source_hash)
installed_hash=$(cat "$rlib/mcplite/MCPLITE_SOURCE_HASH" 2>/dev/null || true)
if [ "$rebuild" = no ] && [ "$installed_hash" = "$want_hash" ] &&
   MCPLITE_LIB="$rlib" Rscript --vanilla -e 'loadNamespace("mcplite", lib.loc = Sys.getenv("MCPLITE_LIB"))' >/dev/null 2>&1; then
  log "mcplite in $rlib is up to date (built from these sources: ${want_hash:0:12}); not compiling (--rebuild builds anyway)"
else
  if [ -z "$installed_hash" ]; then why="not installed by this script"; elif [ "$installed_hash" != "$want_hash" ]; then why="the sources changed"; else why="asked to rebuild, or it does not load"; fi
  staging=$(mktemp -d "$rlib/.mcplite-staging.XXXXXX") || { log "cannot create a staging library in $rlib"; exit 1; }
  trap 'rm -rf "$staging"' EXIT
  log "R CMD INSTALL . (into a staging library in $rlib, then moved into place: $why)"
  install_log=$(mktemp "${TMPDIR:-/tmp}/mcplite-install.XXXXXX")
  R CMD INSTALL --no-multiarch -l "$staging" . >"$install_log" 2>&1 || { tail -50 "$install_log" >&2; exit 1; }
  rm -f "$install_log"
  printf '%s\n' "$want_hash" >"$staging/mcplite/MCPLITE_SOURCE_HASH"
  # Two renames within one file system: the package is missing only between them.
  [ ! -e "$rlib/mcplite" ] || mv "$rlib/mcplite" "$staging/mcplite.old"
  mv "$staging/mcplite" "$rlib/mcplite"
  rm -rf "$staging"; trap - EXIT
fi
MCPLITE_LIB="$rlib" Rscript --vanilla -e '
  lib <- Sys.getenv("MCPLITE_LIB")
  message("[install] installed mcplite ", packageVersion("mcplite", lib.loc = lib), " in ", lib)
  seen <- dirname(find.package("mcplite"))
  if (normalizePath(seen) != lib) message("[install] NOTE: R loads another mcplite first, from ", seen)'

if [ "$demo" = yes ]; then
  log "demo: a scripted client talks to inst/examples/minimal.R"
  Rscript --vanilla inst/examples/client-demo.R "$root/inst/examples/minimal.R"
fi
