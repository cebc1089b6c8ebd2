#!/usr/bin/env bash
# Long-run memory check: pipes N pipelined tools/call requests (default 1e6)
# into a real server and samples the server's resident memory every second.
# Prints the samples and the growth after warm-up. usage: tools/memory-soak.sh [N]
set -euo pipefail
n=${1:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/server.R" <<'RS'
add <- mcplite::tool(function(x, y) x + y, name = "add", description = "Add.",
  arguments = list(x = mcplite::type_number(), y = mcplite::type_number()))
mcplite::mcp_server(add)
RS
{
  echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}'
  awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"x\":%d,\"y\":1}}}\n", i, i }'
} > "$dir/input.jsonl"
start=$(date +%s)
Rscript --vanilla "$dir/server.R" < "$dir/input.jsonl" > "$dir/out.jsonl" 2> "$dir/err.txt" &
pid=$!
samples=()
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && samples+=("$rss")
  sleep 1
done
wait "$pid"
answers=$(wc -l < "$dir/out.jsonl")
echo "requests: $n, answers: $answers, seconds: $(( $(date +%s) - start ))"
echo "RSS samples (MB, one per second): ${samples[*]}"
if [ ${#samples[@]} -ge 4 ]; then
  warm=${samples[2]}
  max=$(printf '%s\n' "${samples[@]:2}" | sort -n | tail -1)
  echo "after warm-up: first ${warm} MB, highest ${max} MB, growth $((max - warm)) MB"
fi
[ "$answers" -eq $((n + 1)) ]
