#!/usr/bin/env bash
# Regenerate src/rust/vendor.tar.xz (and with --lock, src/rust/Cargo.lock) from
# the full offline vendor set in ../shared/rust-vendor, reproducibly: sorted
# entries, fixed mtime, numeric owner, xz -9e single-threaded. Also rewrites
# inst/AUTHORS and LICENSE.note, which credit every vendored crate.
#
# usage: tools/vendor.sh [--lock]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${MCPLITE_SHARED:-$here/../shared}
full=${MCPLITE_FULL_VENDOR:-$HOME/rust-vendor/vendor}
if [ ! -d "$full" ]; then
  mkdir -p "$(dirname "$full")"
  tar -C "$(dirname "$full")" -xJf "$shared/rust-vendor/rust-vendor.tar.xz"
fi
cfg=(--config "source.crates-io.replace-with=\"vendored-sources\""
     --config "source.vendored-sources.directory=\"$full\"")
cd "$here/src/rust"
if [ "${1:-}" = "--lock" ] || [ ! -f Cargo.lock ]; then
  cargo generate-lockfile --offline "${cfg[@]}"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$shared/rust-vendor/vendor-subset.sh" -l Cargo.lock -s "$full" -o "$tmp/vendor" >/dev/null
tar -C "$tmp" --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime='2026-01-01 00:00:00Z' --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -cf - vendor | xz -9e -T1 > vendor.tar.xz
echo "wrote src/rust/vendor.tar.xz ($(du -h vendor.tar.xz | cut -f1), $(ls "$tmp/vendor" | wc -l) crates)" >&2

# name, version, license and authors of one crate, tab-separated
crate_fields() {
  awk '
    /^\[/ { section = $0 }
    section == "[package]" && /^name = /    { n = $0; sub(/^name = "/, "", n); sub(/"$/, "", n) }
    section == "[package]" && /^version = / { v = $0; sub(/^version = "/, "", v); sub(/"$/, "", v) }
    section == "[package]" && /^license = / { l = $0; sub(/^license = "/, "", l); sub(/"$/, "", l) }
    section == "[package]" && /^repository = / { r = $0; sub(/^repository = "/, "", r); sub(/"$/, "", r) }
    section == "[package]" && /^authors = \[/ { inauth = 1 }
    inauth { a = a $0; if ($0 ~ /\]/) inauth = 0 }
    END {
      sub(/^authors = \[/, "", a); sub(/\]$/, "", a); gsub(/"/, "", a); gsub(/ *, */, ", ", a)
      sub(/^ +/, "", a); sub(/,? *$/, "", a)
      if (a == "") a = "the " n " developers"
      if (r != "") a = a " <" r ">"
      printf "%s\t%s\t%s\t%s\n", n, v, l, a
    }' "$1"
}
{
  cat "$here/tools/AUTHORS.in"
  for d in $(ls "$tmp/vendor" | sort); do
    IFS=$'\t' read -r n v l a < <(crate_fields "$tmp/vendor/$d/Cargo.toml")
    printf -- '- %s %s (%s): %s\n' "$n" "$v" "${l:-see the crate}" "$a"
  done
} > "$here/inst/AUTHORS"
{
  cat "$here/tools/LICENSE.note.in"
  for d in $(ls "$tmp/vendor" | sort); do
    IFS=$'\t' read -r n v l a < <(crate_fields "$tmp/vendor/$d/Cargo.toml")
    printf -- '- %s %s: %s\n' "$n" "$v" "${l:-see the license file in the crate}"
  done
} > "$here/LICENSE.note"
