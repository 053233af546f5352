#!/usr/bin/env bash
# The whole test command: its own set-up, quality gates, the Rust tests, the build, the Node
# suite, the types, the suite under every runtime (Node, Bun, Deno), conformance.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "test dependencies (scripts/setup-test-deps.sh; quick once installed)"
bash scripts/setup-test-deps.sh

step "cargo fmt --check"
cargo fmt --check

step "cargo clippy -- -D warnings"
cargo clippy --all-targets -- -D warnings

step "cargo test"
cargo test

step "napi build (debug)"
npm run build:debug

step "generated binding.js / binding.d.ts match the committed ones"
git diff --exit-code -- binding.js binding.d.ts

step "TypeScript check of the package's JavaScript (index.js, lib/, checkJs)"
npx tsc -p lib/tsconfig.json

step "TypeScript check of index.d.ts against the seed examples"
npx tsc -p __test__/tsconfig.json

step "TypeScript check of the framework adapters against the frameworks' own types"
npx tsc -p __test__/tsconfig.adapters.json

step "node --test"
suite=()
for file in __test__/*.test.mjs; do [ "$file" = __test__/compat.test.mjs ] || suite+=("$file"); done
node --test --test-concurrency=1 "${suite[@]}"

step "compatibility suite under each runtime (this Node, Node 22, Bun, Deno)"
node --test --test-concurrency=1 __test__/compat.test.mjs

step "conformance (official MCP suite: server and client modes, each era)"
# run.mjs bounds itself (7 min); the outer bound is the backstop for a wedged Node.
timeout --kill-after=10 600 node __test__/conformance/run.mjs
