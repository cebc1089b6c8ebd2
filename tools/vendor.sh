#!/usr/bin/env bash
# Regenerate src/rust/Cargo.lock and src/rust/vendor.tar.xz from the full offline
# vendor set in ../shared/rust-vendor, reproducibly: sorted entries, fixed mtime,
# numeric owner, xz -9e single-threaded.
#
# usage: tools/vendor.sh [--lock]   (--lock: also re-resolve Cargo.lock offline)
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
