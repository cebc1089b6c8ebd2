#!/bin/sh
# One command for the whole benchmark: bash bench/run.sh [--quick]
#
# Needs: Rscript, node >= 18 (no npm modules), and our mcplite installed the
# way the top-level README says (or MCPLITE_LIB=<library holding it>).
# Installs the pure-R mcplite release from CRAN into its own library
# (bench/.lib-cran, or BENCH_CRAN_LIB) so the two packages never mix.
# Sizes and repetitions: see the BENCH_* variables in bench/README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cran_lib=${BENCH_CRAN_LIB:-$here/.lib-cran}
export BENCH_CRAN_LIB="$cran_lib"
repo=${BENCH_CRAN_REPO:-https://cloud.r-project.org}

command -v Rscript >/dev/null || { echo "run.sh: Rscript not found" >&2; exit 1; }
command -v node >/dev/null || { echo "run.sh: node (>= 18) not found" >&2; exit 1; }

mkdir -p "$cran_lib"
if [ ! -f "$cran_lib/mcplite/DESCRIPTION" ]; then
  echo "# installing mcplite from CRAN into $cran_lib" >&2
  Rscript --vanilla -e "install.packages('mcplite', lib = '$cran_lib', repos = '$repo', quiet = TRUE)" >&2
fi

# Optional: R's otel exporters (otelsdk) for the CRAN column of scenario 5.
# Compiles opentelemetry-cpp: needs cmake, libcurl and protobuf headers
# (Debian: cmake libcurl4-openssl-dev libprotobuf-dev protobuf-compiler) and
# takes long on 2 cores, so it is opt-in.
otelsdk_lib=${BENCH_OTELSDK_LIB:-$here/.lib-otelsdk}
export BENCH_OTELSDK_LIB="$otelsdk_lib"
if [ "${BENCH_OTELSDK:-0}" = 1 ] && [ ! -f "$otelsdk_lib/otelsdk/DESCRIPTION" ]; then
  mkdir -p "$otelsdk_lib"
  echo "# installing otelsdk from CRAN into $otelsdk_lib" >&2
  Rscript --vanilla -e "install.packages('otelsdk', lib = '$otelsdk_lib', repos = '$repo', quiet = TRUE)" >&2
fi

echo "# hardware" >&2
{ echo "nproc: $(nproc)"; lscpu | head -n 15; free -h; } >&2 || true

exec node "$here/driver.mjs" "$@"
