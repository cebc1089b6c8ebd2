#!/usr/bin/env bash
# Cold start of loading mcplite against a bare Rscript, interleaved runs,
# medians in milliseconds. usage: tools/cold-start.sh [runs]
set -euo pipefail
runs=${1:-15}
Rscript --vanilla -e 'library(mcplite)' >/dev/null   # warm the file cache once
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
bare=() pkg=()
for _ in $(seq "$runs"); do
  bare+=("$(ms Rscript --vanilla -e 'NULL')")
  pkg+=("$(ms Rscript --vanilla -e 'library(mcplite)')")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mb=$(median "${bare[@]}"); mp=$(median "${pkg[@]}")
echo "Rscript --vanilla -e 'NULL':             median ${mb} ms (runs: ${bare[*]})"
echo "Rscript --vanilla -e 'library(mcplite)': median ${mp} ms (runs: ${pkg[*]})"
echo "library(mcplite) adds: $(awk -v a="$mp" -v b="$mb" 'BEGIN {print a - b}') ms ($runs interleaved runs each)"
