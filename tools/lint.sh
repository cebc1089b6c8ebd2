#!/usr/bin/env bash
# Lints the Rust code of the three crates (mcplite-core, mcplite-devtools and
# the mcplite glue),
# offline: `cargo fmt --check` (changes nothing) and
# `cargo clippy --all-targets -- -D warnings` (through tools/cargo.sh, from
# the vendor archive). Prints one line per check and crate, then the findings;
# exits non-zero if there are any. Needs the rustfmt and clippy components
# (rustup component add rustfmt clippy). Last, tools/wire-names.mjs (node):
# no MCP field name is spelled in the R or Rust code outside
# src/rust/core/src/wire.rs, and no served protocol version outside
# src/rust/core/src/version.rs; and tools/module-cycles.mjs: the modules of
# each crate import each other in no circle.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0

for crate in mcplite-core mcplite-devtools mcplite; do
  # rustfmt needs no dependencies (and cargo fmt takes no --offline).
  if (cd src/rust && cargo fmt -p "$crate" -- --check --color never) >"$out/fmt.log" 2>&1; then
    echo "fmt    $crate: clean"
  else
    status=1
    places=$(grep -c '^Diff in' "$out/fmt.log")
    files=$(grep '^Diff in' "$out/fmt.log" | sed 's/^Diff in \(.*\):[0-9]*:$/\1/' | sort -u | wc -l)
    echo "fmt    $crate: $places places in $files files differ from rustfmt's formatting"
    [ "$places" -gt 0 ] || tail -20 "$out/fmt.log"
    grep '^Diff in' "$out/fmt.log" | sed "s#$root/##" | sed 's/^/         /'
  fi

  # --no-deps: lint this crate only (the glue depends on the core).
  if tools/cargo.sh clippy -p "$crate" --no-deps --all-targets --message-format short \
       -- -D warnings >"$out/clippy.log" 2>&1; then
    echo "clippy $crate: clean"
  else
    status=1
    # One line per finding; the same finding seen by several targets counts once.
    grep -E '^[^ ]+:[0-9]+:[0-9]+: error' "$out/clippy.log" | sort -u >"$out/findings"
    n=$(wc -l <"$out/findings")
    echo "clippy $crate: $n findings"
    if [ "$n" -eq 0 ]; then tail -30 "$out/clippy.log"; fi
    sed 's/^/         /' "$out/findings"
  fi
done

if command -v node >/dev/null 2>&1; then
  node tools/wire-names.mjs || status=1
  node tools/module-cycles.mjs || status=1
else
  echo "names  skipped: node is not on PATH"; status=1
fi
exit $status
