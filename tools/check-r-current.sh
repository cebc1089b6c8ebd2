#!/usr/bin/env bash
# R CMD check --as-cran of this working tree under the current R (Debian
# unstable's r-base-dev, R 4.6.x) with Debian's own rustc and cargo, in a
# Debian unstable root built with debootstrap and cached outside the clone.
#
#   tools/check-r-current.sh           # build or update the root if needed, then build and check
#   tools/check-r-current.sh TARBALL   # ... check this tarball (from R CMD build) instead
#   tools/check-r-current.sh --setup   # only build or update the root
#
# The root (default /var/cache/mcplite/r-current, or MCPLITE_R_CURRENT_ROOT)
# is built once and reused; it is rebuilt when it is missing, when it does not
# work (no shell, R, rustc or cargo inside), when updating it fails, or with
# MCPLITE_R_CURRENT_REBUILD=1. Inside it go r-base-dev, rustc and cargo (>= the
# rustc that DESCRIPTION's SystemRequirements names), what R CMD check --as-cran
# uses (pandoc, qpdf, tidy, checkbashisms), tmux (the live-session tests), and
# the R packages of DESCRIPTION's Suggests and tools/install.sh's MCPLITE_NEED
# list: Debian's r-cran-* where unstable has them (and new enough), CRAN for
# the rest; plus CRAN mcplite 0.2.0 in a library of its own for the interop
# test.
#
# The check: without TARBALL, the tracked and untracked (not ignored) files of
# the working tree are copied into the root and `R CMD build` makes the tarball
# there under R 4.6 (.ci/run passes the tarball it built, which saves one Rust
# build); `R CMD check --as-cran --no-manual` (the root has no LaTeX) checks it,
# with NOT_CRAN=true so the whole testthat suite runs, skip_on_cran() tests
# included. Tests that need node (the official SDK clients, schema
# validation) would skip there; schema validation runs as on the host: the
# root has Debian's nodejs, and tests/node/validate.mjs with its node_modules
# (from tools/install.sh's npm ci; plain JavaScript) and tests/schema are
# copied in and named by MCPLITE_VALIDATOR (MCPLITE_R_CURRENT_VALIDATE=0 turns
# that off: a test that validates then stops at that point).
# is not set. Prints the R and rustc versions, testthat's counts, the check's
# Status line and every NOTE; exits non-zero on an ERROR, a WARNING or a failing
# test.
#
# Needs root (debootstrap, chroot, mounting /proc, /dev and /sys into the
# root); installs debootstrap with apt-get when missing. Environment:
#   MCPLITE_R_CURRENT_ROOT     where the root lives (default /var/cache/mcplite/r-current)
#   MCPLITE_R_CURRENT_REBUILD  1: build the root afresh
#   MCPLITE_DEBIAN_MIRROR      (default http://deb.debian.org/debian)
#   MCPLITE_CRAN               (default https://cloud.r-project.org)
#   MCPLITE_BUILD_LOCK         a file: R CMD build and check (which compile the
#                              Rust code) run under `flock` on it
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '[check-r-current] %s\n' "$*" >&2; }
say() { printf 'r-current: %s\n' "$*"; }
. tools/apt.sh

setup_only=no tarball_in=""
case "${1:-}" in
  --setup) setup_only=yes ;;
  "") ;;
  -*) log "usage: tools/check-r-current.sh [--setup | TARBALL]"; exit 2 ;;
  *) [ -f "$1" ] || { log "ERROR: no tarball at $1"; exit 2; }
     tarball_in=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") ;;
esac

if [ "$(id -u)" != 0 ]; then
  log "ERROR: must run as root: it builds a Debian root with debootstrap, enters it with chroot"
  log "and mounts /proc, /dev and /sys into it, which only root may do (try: sudo $0)"
  exit 1
fi

target=${MCPLITE_R_CURRENT_ROOT:-/var/cache/mcplite/r-current}
target=${target%/}
mirror=${MCPLITE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cran=${MCPLITE_CRAN:-https://cloud.r-project.org}
suite=unstable
cran_lib=/opt/mcplite-cran        # inside the root: CRAN mcplite 0.2.0
build=/build                      # inside the root: the sources, tarball and check
# Unstable's Release file on a mirror may be past its Valid-Until date.
apt_opts=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0)
case "$target" in
  "" | / | /bin | /boot | /dev | /etc | /home | /lib* | /opt | /proc | /root | /run | /sbin | /srv | /sys | /tmp | /usr | /var | /var/cache)
    log "ERROR: MCPLITE_R_CURRENT_ROOT=$target is not a directory to build a root in"; exit 1 ;;
esac
case "$target/" in
  "$root"/*) log "ERROR: the root must live outside the clone ($root)"; exit 1 ;;
esac

apt_install_missing debootstrap || { log "ERROR: debootstrap is needed"; exit 1; }
command -v flock >/dev/null 2>&1 || [ -z "${MCPLITE_BUILD_LOCK:-}" ] || { log "ERROR: MCPLITE_BUILD_LOCK is set but flock is missing"; exit 1; }

# ---- mounts, and their undoing on every exit --------------------------------
mounted=()     # mount points, in the order mounted
mount_dir=""   # the root they belong to
# A clean environment for the root. HTTPS (CRAN) there trusts the certificates
# the host trusts (a copy of its bundle, which may hold a proxy's CA).
host_ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
root_env=(HOME=/root LANG=C.UTF-8 TZ=UTC TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
[ -f "$host_ca" ] && root_env+=(SSL_CERT_FILE=/etc/ssl/host-ca-certificates.crt CURL_CA_BUNDLE=/etc/ssl/host-ca-certificates.crt)
# Long commands run in the background and are waited for, so that a signal
# to this script runs its traps (unmounting) at once, not when they end.
# A shell without job control starts background commands with SIGINT and
# SIGQUIT ignored, and everything they start inherits that: the tests that
# interrupt an R process would wait for an interrupt R never sees. The
# subshell puts both back to their defaults before it becomes the command.
child=""
run() {
  (trap - INT QUIT; exec "$@") &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=""
  return $rc
}
in_root() { # run a command in the root, in that environment
  run chroot "$mount_dir" /usr/bin/env -i "${root_env[@]}" DEBIAN_FRONTEND=noninteractive "$@"
}
kill_root_processes() { # processes still running in the root (started by this script)
  local d pids=() p
  [ -n "$mount_dir" ] || return 0
  for d in /proc/[0-9]*; do
    [ "$(readlink "$d/root" 2>/dev/null)" = "$mount_dir" ] && pids+=("${d#/proc/}")
  done
  [ ${#pids[@]} -eq 0 ] && return 0
  log "stopping processes left in the root: ${pids[*]}"
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 2
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}
unmount_all() {
  local i m
  kill_root_processes
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    m=${mounted[i]}
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "WARNING: could not unmount $m"
  done
  mounted=()
  mount_dir=""
}
mount_root() { # $1: the root
  local r=$1
  mount_dir=$r
  if [ -f "$host_ca" ]; then mkdir -p "$r/etc/ssl" && cp "$host_ca" "$r/etc/ssl/host-ca-certificates.crt" || return 1; fi
  mkdir -p "$r/proc" "$r/dev" "$r/sys"
  mount -t proc proc "$r/proc" && mounted+=("$r/proc") || return 1
  mount --bind /dev "$r/dev" && mounted+=("$r/dev") || return 1
  if mountpoint -q /dev/pts; then
    mount --bind /dev/pts "$r/dev/pts" && mounted+=("$r/dev/pts") || return 1
  fi
  if mountpoint -q /dev/shm; then
    mount --bind /dev/shm "$r/dev/shm" && mounted+=("$r/dev/shm") || return 1
  fi
  mount --bind /sys "$r/sys" && mounted+=("$r/sys") || return 1
  mount -o remount,bind,ro "$r/sys" 2>/dev/null || true
}
work=$(mktemp -d)
checking=""    # the check's directory in the root while R CMD check runs
# The script's own stderr, kept for the exit trap: it may run while a
# command's output is redirected to a log (which the trap then deletes).
exec 9>&2
cleanup() {
  local rc=$?
  exec 2>&9
  [ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true
  # Stopped (a time limit, Ctrl-C) in the middle of the check: show where.
  if [ -n "$checking" ]; then
    log "stopped during R CMD check; the end of its log and of the test output so far:"
    tail -15 "$work/check.log" >&2 2>/dev/null || true
    tail -40 "$checking/tests/testthat.Rout" >&2 2>/dev/null || true
  fi
  unmount_all
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Is anything mounted at or under $1? (Never delete a tree with /dev bound in it.)
mounted_under() { awk -v d="$1" '$2 == d || index($2, d "/") == 1 { found = 1 } END { exit !found }' /proc/self/mounts; }
remove_tree() {
  local d=$1
  [ -e "$d" ] || return 0
  if mounted_under "$d"; then
    awk -v d="$d" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r |
      while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
    mounted_under "$d" && { log "ERROR: something is still mounted under $d: not removing it"; return 1; }
  fi
  rm -rf --one-file-system "$d"
}

# ---- what goes into the root --------------------------------------------------
# What R CMD build and R CMD check --as-cran use: compilers and headers
# (r-base-dev), the Rust toolchain, xz for the vendor archive, pandoc for the
# vignettes, qpdf, tidy (HTML of the help pages), checkbashisms (devscripts),
# ca-certificates for CRAN over https, the headers CRAN packages built from
# source commonly need, and tmux, in which the live-session tests type into an
# interactive R at a pseudo-terminal (the root's /dev/pts is the host's).
base_pkgs=(r-base-dev rustc cargo xz-utils pandoc qpdf tidy devscripts ca-certificates
  libcurl4-openssl-dev libssl-dev pkg-config tmux nodejs)
# The R packages the tests use: DESCRIPTION's Suggests and tools/install.sh's
# MCPLITE_NEED list ("name=min-version"), without R's own packages.
r_need() {
  local suggests need
  suggests=$(awk '/^Suggests:/ { f = 1; sub(/^Suggests:/, ""); print; next }
                  f && /^[ \t]/ { print; next } { f = 0 }' DESCRIPTION | tr -d '\n' | tr ',' '\n' |
    sed -n 's/^[[:space:]]*\([A-Za-z0-9.]*\)[[:space:]]*\((>=[[:space:]]*\([0-9.-]*\))\)\{0,1\}[[:space:]]*$/\1=\3/p')
  need=$(sed -n 's/^export MCPLITE_NEED="\(.*\)"$/\1/p' tools/install.sh)
  [ -n "$need" ] || { log "ERROR: no MCPLITE_NEED list in tools/install.sh"; return 1; }
  # One entry per package, with the highest minimum version either names.
  printf '%s\n' $suggests $need |
    grep -vE '^(base|compiler|datasets|grDevices|graphics|grid|methods|parallel|splines|stats|stats4|tcltk|tools|utils)=' |
    sort -t= -k1,1 -k2,2V | awk -F= '{ v[$1] = $0 } END { for (p in v) print v[p] }' | sort | tr '\n' ' '
}
r_needs=$(r_need)

# Prints the R packages (of "name=version" pairs in MCPLITE_NEED) that a fresh
# R session in the root cannot load at that version; --report: every verdict.
r_unmet_in_root() {
  in_root MCPLITE_NEED="$r_needs" /usr/bin/Rscript --vanilla -e '
    report <- identical(commandArgs(TRUE), "--report")
    for (n in strsplit(strsplit(trimws(Sys.getenv("MCPLITE_NEED")), " +")[[1]], "=")) {
      p <- n[[1]]; want <- if (length(n) > 1 && nzchar(n[[2]])) n[[2]] else "0"
      why <- tryCatch({
        v <- getNamespaceVersion(loadNamespace(p))
        if (package_version(v) >= want) "" else sprintf("version %s < %s", v, want)
      }, error = function(e) gsub("\n", " ", conditionMessage(e)))
      if (nzchar(why)) cat(p, "\n")
      if (report) message(sprintf("[check-r-current]   %-9s %s", p, if (nzchar(why)) paste("NOT OK:", why) else
        sprintf("%s (%s)", getNamespaceVersion(p), dirname(getNamespaceInfo(p, "path")))))
    }' "$@"
}

root_works() { # $1: a root; does it have a shell, R, rustc and cargo?
  [ -f "$1/.mcplite-root" ] && chroot "$1" /bin/sh -c 'exit 0' 2>/dev/null
}
tools_work() {
  in_root /usr/bin/Rscript --version >/dev/null 2>&1 && in_root rustc --version >/dev/null 2>&1 &&
    in_root cargo --version >/dev/null 2>&1
}

# A fresh Debian unstable root (minbase), built beside the old one and moved
# into its place only when debootstrap succeeded.
debootstrap_root() {
  local new="$target.new"
  remove_tree "$new" || return 1
  remove_tree "$target" || return 1
  mkdir -p "$(dirname "$target")"
  log "debootstrap $suite from $mirror into $target (takes a few minutes)"
  run debootstrap --variant=minbase --include=ca-certificates "$suite" "$new" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -30 "$work/debootstrap.log" >&2; [ -f "$new/debootstrap/debootstrap.log" ] && tail -30 "$new/debootstrap/debootstrap.log" >&2
      log "ERROR: debootstrap failed"; return 1; }
  # No services start in the root; apt never asks.
  printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d" && chmod 755 "$new/usr/sbin/policy-rc.d"
  printf 'deb %s %s main\n' "$mirror" "$suite" >"$new/etc/apt/sources.list"
  # R packages: where Rscript --vanilla looks first, and CRAN as the repository.
  date -u +%FT%TZ >"$new/.mcplite-root"
  mv "$new" "$target"
}

# Install what is missing (apt, then CRAN); safe to repeat, quick when nothing is.
provision() {
  local missing=() p a todo still deps
  in_root apt-get "${apt_opts[@]}" -qq update >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; log "apt-get update failed"; return 1; }
  for p in "${base_pkgs[@]}"; do
    in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    in_root apt-get "${apt_opts[@]}" -y -qq install "${missing[@]}" >"$work/apt.log" 2>&1 ||
      { tail -30 "$work/apt.log" >&2; log "apt-get install failed"; return 1; }
  fi
  tools_work || { log "R, rustc or cargo does not run in the root"; return 1; }
  # R packages: Debian's r-cran-* where unstable has them and they are new
  # enough, then CRAN for what a fresh R session still cannot load.
  todo=$(r_unmet_in_root) || { log "checking R packages failed"; return 1; }
  missing=()
  for p in $todo; do
    a=r-cran-$(printf '%s' "$p" | tr '[:upper:]' '[:lower:]')
    in_root dpkg-query -W -f='${Status}' "$a" 2>/dev/null | grep -q "install ok installed" && continue
    in_root apt-cache show --no-all-versions "$a" >/dev/null 2>&1 && missing+=("$a")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    in_root apt-get "${apt_opts[@]}" -y -qq install "${missing[@]}" >"$work/apt.log" 2>&1 ||
      { tail -30 "$work/apt.log" >&2; log "apt-get install failed"; return 1; }
    todo=$(r_unmet_in_root) || { log "checking R packages failed"; return 1; }
  fi
  todo=$(echo $todo)
  if [ -n "$todo" ]; then
    # Their dependencies from Debian too, where unstable has them (CRAN then
    # builds only what is missing or too old).
    deps=$(in_root MCPLITE_TODO="$todo" MCPLITE_CRAN="$cran" /usr/bin/Rscript --vanilla -e '
      todo <- strsplit(Sys.getenv("MCPLITE_TODO"), " ")[[1]]
      db <- utils::available.packages(repos = Sys.getenv("MCPLITE_CRAN"))
      deps <- unlist(tools::package_dependencies(todo, db, which = c("Depends", "Imports", "LinkingTo"), recursive = TRUE))
      have <- rownames(utils::installed.packages())
      cat(setdiff(unique(deps), c(have, todo)))') || { log "could not read CRAN's package index"; return 1; }
    missing=()
    for p in $deps; do
      a=r-cran-$(printf '%s' "$p" | tr '[:upper:]' '[:lower:]')
      in_root apt-cache show --no-all-versions "$a" >/dev/null 2>&1 && missing+=("$a")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      log "apt-get install ${missing[*]} (for $todo)"
      in_root apt-get "${apt_opts[@]}" -y -qq install "${missing[@]}" >"$work/apt.log" 2>&1 ||
        { tail -30 "$work/apt.log" >&2; log "apt-get install failed"; return 1; }
    fi
    log "CRAN: $todo (into /usr/local/lib/R/site-library)"
    in_root MCPLITE_TODO="$todo" MCPLITE_CRAN="$cran" /usr/bin/Rscript --vanilla -e '
      utils::install.packages(strsplit(Sys.getenv("MCPLITE_TODO"), " ")[[1]], lib = "/usr/local/lib/R/site-library",
                              repos = Sys.getenv("MCPLITE_CRAN"), Ncpus = 2L, quiet = TRUE)' >"$work/cran.log" 2>&1 ||
      { tail -40 "$work/cran.log" >&2; log "CRAN install failed"; return 1; }
  fi
  log "R packages, as a new R session in the root loads them:"
  still=$(r_unmet_in_root --report) || { log "checking R packages failed"; return 1; }
  still=$(echo $still)
  [ -z "$still" ] || { grep -iE "error|warning" "$work/cran.log" 2>/dev/null | tail -20 >&2; log "could not install: $still"; return 1; }
  # CRAN's pure-R mcplite 0.2.0 for the interop test, as tools/install.sh does on the host.
  mkdir -p "$target/opt"
  cp tests/testthat/helper-cran.R "$target/opt/helper-cran.R"
  in_root MCPLITE_CRAN="$cran" /usr/bin/Rscript --vanilla -e '
    source("/opt/helper-cran.R")
    s <- cran_mcplite_install(commandArgs(TRUE)[1], repos = Sys.getenv("MCPLITE_CRAN"))
    message("[check-r-current] CRAN mcplite 0.2.0: ", s)
    if (!s %in% c("present", "installed")) quit(status = 1)' "$cran_lib" || { log "could not install CRAN mcplite 0.2.0"; return 1; }
  rm -f "$target/opt/helper-cran.R"
  in_root apt-get clean # the downloaded .deb files (hundreds of MB)
}

t0=$(date +%s)
fresh=no
if [ "${MCPLITE_R_CURRENT_REBUILD:-}" = 1 ] || ! root_works "$target"; then
  [ -e "$target" ] && log "the root in $target is incomplete or broken: rebuilding it"
  debootstrap_root || exit 1
  fresh=yes
fi
mount_root "$target" || { log "ERROR: could not mount /proc, /dev and /sys into $target"; exit 1; }
if ! provision; then
  [ "$fresh" = no ] || { log "ERROR: could not set up the root in $target"; exit 1; }
  log "updating the cached root failed: rebuilding it from scratch"
  unmount_all
  debootstrap_root || exit 1
  fresh=yes
  mount_root "$target" || { log "ERROR: could not mount /proc, /dev and /sys into $target"; exit 1; }
  provision || { log "ERROR: could not set up the root in $target"; exit 1; }
fi
t1=$(date +%s)
r_version=$(in_root /usr/bin/Rscript --vanilla -e 'cat(R.version.string)')
rustc_version=$(in_root rustc --version)
cargo_version=$(in_root cargo --version)
say "root $target ($([ "$fresh" = yes ] && echo "built" || echo "cached, checked") in $((t1 - t0)) s): Debian $suite"
say "$r_version"
say "$rustc_version, $cargo_version"
# configure enforces this too, but say it before a long build.
min=$(tr '\n' ' ' <DESCRIPTION | sed -n 's/.*rustc *>= *\([0-9][0-9.]*\).*/\1/p')
have=$(printf '%s\n' "$rustc_version" | sed -n 's/^rustc \([0-9][0-9.]*\).*/\1/p')
if [ "$(printf '%s\n%s\n' "$min" "$have" | sort -V | head -1)" != "$min" ]; then
  log "ERROR: Debian $suite's rustc $have is older than the $min that DESCRIPTION requires"; exit 1
fi
[ "$setup_only" = no ] || exit 0

# ---- build and check -------------------------------------------------------------
remove_tree "$target$build" || exit 1
mkdir -p "$target$build/mcplite"
lock=()
[ -z "${MCPLITE_BUILD_LOCK:-}" ] || lock=(flock "$MCPLITE_BUILD_LOCK")
t2=$(date +%s)
if [ -n "$tarball_in" ]; then
  cp "$tarball_in" "$target$build/"
else
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Tracked files as they are in the working tree, and untracked ones that are not ignored.
    git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
      tar --null -T - -cf - | tar -xf - -C "$target$build/mcplite"
  else
    tar --exclude=./.git --exclude=./src/rust/target --exclude=./src/rust/vendor --exclude=./src/vendor \
      --exclude='./src/*.o' --exclude='./src/*.so' --exclude=node_modules --exclude=./bench/.lib-cran \
      --exclude=./docs --exclude=./mcplite.Rcheck -cf - . | tar -xf - -C "$target$build/mcplite"
  fi
  log "R CMD build (in the root)"
  if ! run "${lock[@]}" chroot "$target" /usr/bin/env -i "${root_env[@]}" sh -c "cd $build && R CMD build mcplite" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    say "R CMD build failed"
    exit 1
  fi
fi
if [ -n "$tarball_in" ]; then tarball=$(basename "$tarball_in"); else tarball=$(cd "$target$build" && ls mcplite_*.tar.gz); fi
# The schema validator the tests use (tests/node is not in the tarball).
validator=$build/validator/tests/node/validate.mjs
validator_env=()
if [ "${MCPLITE_R_CURRENT_VALIDATE:-1}" = 0 ]; then
  : # validation skips in the root (see the top of this file)
elif [ -d tests/node/node_modules/ajv ] && [ -d tests/schema ]; then
  mkdir -p "$target$build/validator/tests"
  cp -R tests/schema "$target$build/validator/tests/schema"
  mkdir -p "$target$build/validator/tests/node"
  cp -RH tests/node/validate.mjs tests/node/package.json tests/node/node_modules "$target$build/validator/tests/node/"
  validator_env=(MCPLITE_VALIDATOR="$validator")
else
  log "WARNING: no tests/node/node_modules (run tools/install.sh): schema validation skips in the root"
fi
log "R CMD check --as-cran --no-manual $tarball (in the root: NOT_CRAN=true, the whole testthat suite)"
check_status=0
checking="$target$build/mcplite.Rcheck"
# The network reaches package registries only: the incoming checks that ask
# CRAN (and Bioconductor) about the package are skipped.
run "${lock[@]}" chroot "$target" /usr/bin/env -i "${root_env[@]}" NOT_CRAN=true MCPLITE_CRAN_LIB="$cran_lib" "${validator_env[@]}" \
  _R_CHECK_CRAN_INCOMING_REMOTE_=false \
  sh -c "cd $build && R CMD check --as-cran --no-manual $tarball" >"$work/check.log" 2>&1 || check_status=$?
checking=""
t3=$(date +%s)
cp "$work/check.log" "$target$build/check.log"
rcheck="$target$build/mcplite.Rcheck"

# testthat's closing line under R CMD check: [ FAIL n | WARN n | SKIP n | PASS n ]
counts=$(grep -hE '^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' \
  "$rcheck"/tests/testthat.Rout "$rcheck"/tests/testthat.Rout.fail 2>/dev/null | tail -1 || true)
status_line=$(grep -E '^Status:' "$work/check.log" | tail -1 || true)
say "$([ -n "$tarball_in" ] && echo "R CMD check of $(basename "$tarball_in")" || echo "R CMD build + check") in $((t3 - t2)) s"
say "testthat: ${counts:-no result (the tests did not run to the end)}"
say "${status_line:-Status: (none: R CMD check stopped early)}"
# Every check that gave a NOTE, WARNING or ERROR, with its text.
awk 'function flush() { if (bad) printf "%s", block; block = ""; bad = 0 }
     /^\* / || /^Status:/ { flush() }
     /^Status:/ { exit }
     /^\* / || block != "" { block = block $0 "\n"; if ($0 ~ /(NOTE|WARNING|ERROR)$/) bad = 1 }
     END { flush() }' "$work/check.log"

failed=no
[ "$check_status" -eq 0 ] || failed=yes
case "$status_line" in *ERROR* | *WARNING*) failed=yes ;; esac
fails=$(printf '%s\n' "$counts" | sed -n 's/^\[ FAIL \([0-9]*\) .*/\1/p')
[ -n "$fails" ] && [ "$fails" -eq 0 ] || failed=yes
if grep -q "Found non-API call" "$work/check.log"; then
  say "known: the NOTE \"Found non-API call to R: ptr_R_ReadConsole\" is the live session's console guard (cran-comments.md says why); any other name there is new"
fi
if [ "$failed" = yes ]; then
  for f in "$rcheck"/tests/*.Rout.fail; do
    [ -f "$f" ] || continue
    if grep -q "^══ Failed" "$f"; then
      echo "---- $(basename "$f"): the failures"; sed -n '/^══ Failed/,$p' "$f" | head -300
    else
      echo "---- $(basename "$f") (last 80 lines)"; tail -80 "$f"
    fi
  done
  [ -n "$status_line" ] || tail -40 "$work/check.log"
  say "FAILED (full log: $target$build/check.log)"
  exit 1
fi
say "OK"
