#!/usr/bin/env bash
# The Node suite: every __test__/*.test.mjs but the compatibility suite (run under each runtime
# on its own), one file at a time. With a path, each failing test is also written there as a
# JSON line { file, name } (scripts/failures-reporter.mjs), for scripts/test.sh and
# scripts/test-repeat.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=()
for file in __test__/*.test.mjs; do [ "$file" = __test__/compat.test.mjs ] || suite+=("$file"); done
reporters=(--test-reporter=spec --test-reporter-destination=stdout)
if [ -n "${1:-}" ]; then
  reporters+=(--test-reporter=./scripts/failures-reporter.mjs "--test-reporter-destination=$1")
fi
exec node --test --test-concurrency=1 "${reporters[@]}" "${suite[@]}"
