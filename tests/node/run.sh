#!/usr/bin/env bash
# Runs the validator tests and the official-client interop tests.
# Needs node >= 20 and, for the interop tests, Rscript with mcplite on R_LIBS.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/@modelcontextprotocol/client ] || [ ! -d node_modules/@modelcontextprotocol/sdk ] || [ ! -d node_modules/ajv ]; then
  npm ci --no-audit --no-fund
fi
exec node --test --test-concurrency=1 validate.test.mjs sdk1.test.mjs client2.test.mjs progress.test.mjs
