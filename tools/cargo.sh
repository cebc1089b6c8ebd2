#!/usr/bin/env bash
# Run cargo on src/rust offline, from the package's own vendor archive, with the
# same private CARGO_HOME that Makevars uses. Example: tools/cargo.sh test --workspace --exclude mcplite
set -euo pipefail
src=$(cd "$(dirname "$0")/../src" && pwd)
if [ ! -d "$src/vendor" ] || [ "$src/rust/vendor.tar.xz" -nt "$src/vendor" ]; then
  rm -rf "$src/vendor" && tar -C "$src" -xJf "$src/rust/vendor.tar.xz" && touch "$src/vendor"
fi
mkdir -p "$src/.cargo" && cp "$src/rust/vendor-config.toml" "$src/.cargo/config.toml"
export CARGO_HOME="$src/.cargo"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
cd "$src/rust"
sub=$1; shift
exec cargo "$sub" --offline --locked "$@"
