#!/usr/bin/env bash
# Build the pkgdown website into docs/ from the INSTALLED package (run
# tools/install.sh first), then look at every page in headless Chromium with
# the network off (pkgdown/node/check-site.mjs). Needs no network: _pkgdown.yml
# turns off the CRAN look-ups, and the scripts, style sheets and fonts that
# pkgdown 2.0.7 loads from CDNs are served by the site itself (see
# pkgdown/templates/head.html). Any pkgdown warning fails the build.
#   tools/site.sh [--shots DIR]   DIR: a full-page screenshot of every page
#   tools/site.sh --only-r-libs   the same, with mcplite in a library that only
#                                 R_LIBS names (as for a user who installed it
#                                 there): no example may show that library
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log() { printf '[site] %s\n' "$*" >&2; }
check_args=()
case "${1:-}" in
  --shots) [ -n "${2:-}" ] || { log "--shots needs a directory"; exit 2; }
    mkdir -p "$2"; check_args=(--shots "$(cd "$2" && pwd)") ;;
  --only-r-libs)
    # A copy of the installed mcplite in a library of its own, named by
    # R_LIBS only; the site libraries are replaced by a farm of links to
    # every package they hold but mcplite. Then the ordinary build.
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    pkg=$(Rscript -e 'cat(find.package("mcplite"))')
    mkdir -p "$tmp/only-r-libs" "$tmp/site"
    cp -a "$pkg" "$tmp/only-r-libs/"
    for lib in $(Rscript --vanilla -e 'cat(.libPaths()[-length(.libPaths())], sep = "\n")'); do
      for p in "$lib"/*/; do
        p=${p%/}; name=${p##*/}
        [ "$name" = mcplite ] || [ -e "$tmp/site/$name" ] || ln -s "$p" "$tmp/site/$name"
      done
    done
    export R_LIBS="$tmp/only-r-libs" R_LIBS_SITE="$tmp/site" R_LIBS_USER="$tmp/site"
    log "mcplite only in R_LIBS: $(Rscript --vanilla -e 'cat(find.package("mcplite"), "(without R_LIBS:", nzchar(system.file(package = "mcplite", lib.loc = setdiff(.libPaths(), Sys.getenv("R_LIBS")))), ")")')"
    "$0"; exit $? ;;
  "") ;;
  *) log "unknown argument '$1' (usage: tools/site.sh [--shots DIR | --only-r-libs])"; exit 2 ;;
esac
node_dir=pkgdown/node
chromium=${MCPLITE_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { log "no Chromium at $chromium: tools/install.sh installs Debian's chromium"; exit 1; }
[ -d "$node_dir/node_modules/playwright-core" ] || { log "$node_dir/node_modules is missing: tools/install.sh runs npm ci there"; exit 1; }

# A clean build: no page left over from an earlier one.
rm -rf docs
Rscript --vanilla -e '
withCallingHandlers(
  pkgdown::build_site(install = FALSE, new_process = FALSE, preview = FALSE),
  warning = function(w) stop("pkgdown warning: ", conditionMessage(w), call. = FALSE)
)'

# The files pkgdown/templates/head.html loads, from the npm packages pinned in
# pkgdown/node/package-lock.json (the versions pkgdown 2.0.7 takes from CDNs).
nm=$node_dir/node_modules
vendor=docs/vendor
mkdir -p "$vendor"/{fontawesome-free,headroom.js,clipboard,fuse.js,autocomplete.js,mark.js}
cp -R "$nm/@fortawesome/fontawesome-free/css" "$nm/@fortawesome/fontawesome-free/webfonts" \
  "$nm/@fortawesome/fontawesome-free/LICENSE.txt" "$vendor/fontawesome-free/"
cp "$nm/headroom.js/dist/headroom.min.js" "$nm/headroom.js/dist/jQuery.headroom.min.js" "$nm/headroom.js/LICENSE" "$vendor/headroom.js/"
cp "$nm/clipboard/dist/clipboard.min.js" "$nm/clipboard/LICENSE" "$vendor/clipboard/"
cp "$nm/fuse.js/dist/fuse.js" "$nm/fuse.js/LICENSE" "$vendor/fuse.js/"
cp "$nm/autocomplete.js/dist/autocomplete.jquery.min.js" "$nm/autocomplete.js/LICENSE" "$vendor/autocomplete.js/"
cp "$nm/mark.js/dist/mark.min.js" "$nm/mark.js/LICENSE" "$vendor/mark.js/"

# What must not appear on any page: the build machine's R libraries (as R
# started both ways sees them, and as the environment names them) and this
# checkout's path.
forbidden=$( {
  Rscript --vanilla -e 'cat(.libPaths(), normalizePath(.libPaths()), sep = "\n")'
  Rscript -e 'cat(.libPaths(), normalizePath(.libPaths()), sep = "\n")'
  for v in R_LIBS R_LIBS_USER R_LIBS_SITE; do printf '%s\n' "${!v:-}" | tr ':' '\n'; done
  printf '%s\n' "$root"
} | grep -v '^$' | sort -u)
guides=$(ls vignettes/*.Rmd | sed 's|vignettes/||; s|\.Rmd$||')
export MCPLITE_SITE_FORBIDDEN="$forbidden" MCPLITE_SITE_GUIDES="$guides" MCPLITE_CHROMIUM="$chromium"
check=(node "$node_dir/check-site.mjs" ${check_args[@]+"${check_args[@]}"} docs)
# The check refuses every request outside the site; where it can, it also
# runs in a network namespace of its own that has nothing but loopback.
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 &&
   unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
  log "headless Chromium ($("$chromium" --version 2>/dev/null | head -1)), in a network namespace with only loopback: every page of docs/"
  unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${check[@]}"
else
  log "headless Chromium ($("$chromium" --version 2>/dev/null | head -1)), requests outside the site refused (no unshare -n here): every page of docs/"
  "${check[@]}"
fi
