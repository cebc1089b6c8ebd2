#!/usr/bin/env bash
# Builds the platform layer (src/rust/src/platform) with its test program
# (tools/platform-check.rs) for two targets and runs both:
#   1. Linux, natively, with the Rust toolchain on PATH (libc from the vendor
#      archive): checks the unix implementation;
#   2. Windows (x86_64-pc-windows-gnu), with Debian's rustc 1.63, its Windows
#      standard library and MinGW-w64, run under wine64: checks the Windows
#      implementation.
# The rest of the package cannot be built for Windows here (Debian ships a
# Windows std only for its own rustc 1.63, older than the package's minimum),
# so this checks the OS-specific code, not a Windows build of mcplite.
#
# Needs the Debian packages rustc, libstd-rust-dev-windows,
# gcc-mingw-w64-x86-64 and wine64 (installed here when running as root).
# Environment: RUSTC (native rustc, default: rustc on PATH, then
# ~/.cargo/bin/rustc), WINDOWS_RUSTC (default: Debian's /usr/bin/rustc),
# WINE64 (default: wine64 from the wine64 package), WINEPREFIX (default: a
# temporary one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '[check-windows] %s\n' "$*" >&2; }
. tools/apt.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pkgs=(rustc libstd-rust-dev-windows gcc-mingw-w64-x86-64 wine64)
apt_install_missing "${pkgs[@]}" || exit 1

native_rustc=${RUSTC:-$(command -v rustc || echo "$HOME/.cargo/bin/rustc")}
windows_rustc=${WINDOWS_RUSTC:-/usr/bin/rustc}
wine64=${WINE64:-$(dpkg -L wine64 | grep -E '/wine64$' | head -1)}
[ -x "$wine64" ] || { log "wine64 not found"; exit 1; }

# ---- 1. Linux ---------------------------------------------------------------
log "native: $("$native_rustc" --version)"
mkdir -p "$work/linux"
tar -C "$work" -xJf src/rust/vendor.tar.xz --wildcards 'vendor/libc-*'
libc_src=$(ls -d "$work"/vendor/libc-*)
"$native_rustc" --edition 2021 --crate-type rlib --crate-name libc --cfg 'feature="std"' \
  --cap-lints allow -O "$libc_src/src/lib.rs" --out-dir "$work/linux"
"$native_rustc" --edition 2021 -O -D warnings --extern libc="$work/linux/liblibc.rlib" \
  tools/platform-check.rs -o "$work/linux/platform-check"
"$work/linux/platform-check"

# ---- 2. Windows, under wine -------------------------------------------------
log "windows: $("$windows_rustc" --version), $(x86_64-w64-mingw32-gcc --version | head -1)"
mkdir -p "$work/windows"
for gui in "" gui; do
  "$windows_rustc" --edition 2021 --target x86_64-pc-windows-gnu -C linker=x86_64-w64-mingw32-gcc \
    -O -D warnings ${gui:+--cfg platform_check_gui} tools/platform-check.rs \
    -o "$work/windows/platform-check${gui:+-gui}.exe"
done
export WINEPREFIX=${WINEPREFIX:-$work/wineprefix} WINEDEBUG=-all
wineserver=$(dirname "$wine64")/wineserver64
[ -x "$wineserver" ] || wineserver=$(dirname "$wine64")/wineserver
log "running under $wine64 (WINEPREFIX=$WINEPREFIX)"
"$wine64" wineboot --init >/dev/null 2>&1 || true  # create the prefix quietly
status=0
"$wine64" "$work/windows/platform-check.exe" || status=$?
# The subject as a GUI program (like Rgui), driven by the console program.
"$wine64" "$work/windows/platform-check.exe" driver-gui || status=$?
"$wineserver" -w 2>/dev/null || true  # let wine finish before the prefix goes
[ "$status" -eq 0 ] || { log "the Windows implementation failed"; exit 1; }
log "both implementations passed"
