#!/usr/bin/env bash
# A longer fuzz run than the smoke inside `npm test`: the proptest properties of
# crates/engine/tests/fuzz_config.rs (JSONC, config loading and normalising, variable expansion, text vs path)
# with many more cases, then the napi boundary (__test__/boundary.test.mjs) with many more
# random hostile values, from a fresh random seed each run (printed, to replay a failure with
# BOUNDARY_RANDOM_SEED=<seed>).
#
# Usage: scripts/fuzz-long.sh [proptest cases per property, default 20000] [random JS cases, default 5000]
# Debug builds, like the rest of the tests; OPT=2 builds the Rust tests optimised (a full rebuild).
set -euo pipefail
cd "$(dirname "$0")/.."

cases="${1:-20000}"
js_cases="${2:-5000}"
seed="${BOUNDARY_RANDOM_SEED:-$(( (RANDOM << 15) | RANDOM ))}"

printf '\n== proptest: %s cases per property\n' "$cases"
start=$(date +%s)
if [ -n "${OPT:-}" ]; then export CARGO_PROFILE_TEST_OPT_LEVEL="$OPT" CARGO_PROFILE_DEV_OPT_LEVEL="$OPT"; fi
PROPTEST_CASES="$cases" cargo test --test fuzz_config
printf 'proptest: %s s\n' "$(( $(date +%s) - start ))"

printf '\n== napi boundary: %s random hostile values, seed %s\n' "$js_cases" "$seed"
node scripts/ensure-built.mjs
start=$(date +%s)
BOUNDARY_RANDOM_CASES="$js_cases" BOUNDARY_RANDOM_SEED="$seed" \
  node --test --test-concurrency=1 __test__/boundary.test.mjs
printf 'napi boundary: %s s\n' "$(( $(date +%s) - start ))"
