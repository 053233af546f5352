// Served throughput of two builds side by side under wrk (the Node load generator saturates near
// 10k req/s here, wrk does not): each build serves bench/serve-target.mjs's toolkit (a JavaScript
// `echo` tool, and `up_echo` relayed to the raw Python stdio server), and each row is loaded by
// wrk with stateless 2026-07-28 tools/call requests (bench/wrk-call.lua), rounds alternating
// which build goes first. Prints each build's median req/s per row and B/A per round.
//
//   node bench/serve-compare.mjs <checkoutA> <checkoutB>
//     (BENCH_ROUNDS=6 BENCH_SECONDS=5 BENCH_CONNECTIONS=32; release builds in both checkouts)
//
// Telemetry's cost (the same checkout twice): BENCH_ENV_A / BENCH_ENV_B add environment variables
// (a JSON object) to one side's server; the value "otlp" stands for a local OTLP/HTTP receiver
// that takes every export and decodes nothing (__test__/python/otlp_receiver.py --sink), started
// when a side names it. BENCH_METRICS_A=1 / BENCH_METRICS_B=1 serve that side with metrics: true.
//   BENCH_ENV_B='{"OTEL_EXPORTER_OTLP_ENDPOINT":"otlp"}' node bench/serve-compare.mjs new new
import { execFile, spawn } from "node:child_process"
import path from "node:path"
import { promisify } from "node:util"
import { median, root } from "./lib.mjs"

const run = promisify(execFile)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const [dirA, dirB] = process.argv.slice(2).map((d) => path.resolve(d))
if (!dirA || !dirB) throw new Error("usage: node bench/serve-compare.mjs <checkoutA> <checkoutB>")

/** The extra environment of side `name` (BENCH_ENV_<name>), "otlp" replaced by the receiver's URL. */
function sideEnv(name, otlp) {
  const extra = JSON.parse(process.env[`BENCH_ENV_${name}`] ?? "{}")
  for (const [k, v] of Object.entries(extra)) if (v === "otlp") extra[k] = otlp
  if (process.env[`BENCH_METRICS_${name}`] === "1") extra.BENCH_SERVE_METRICS = "1"
  return extra
}

/** A receiver that takes every OTLP export, when a side's environment names one. */
async function receiver() {
  if (![process.env.BENCH_ENV_A, process.env.BENCH_ENV_B].some((e) => e?.includes('"otlp"'))) return null
  const python = path.join(root, ".venv", "bin", "python")
  const child = spawn(python, [path.join(root, "__test__", "python", "otlp_receiver.py"), "--sink"], { stdio: ["ignore", "pipe", "inherit"] })
  child.stdout.setEncoding("utf8")
  for await (const chunk of child.stdout) {
    const port = /"port": (\d+)/.exec(chunk)?.[1]
    if (port) return { url: `http://127.0.0.1:${port}`, child }
  }
  throw new Error("the OTLP receiver exited before it listened")
}

async function serve(name, dir, otlp) {
  const child = spawn(process.execPath, [path.join(root, "bench", "serve-target.mjs"), "toolnexus", dir], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...sideEnv(name, otlp) },
  })
  child.stdout.setEncoding("utf8")
  let out = ""
  for await (const chunk of child.stdout) {
    out += chunk
    const url = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(out)?.[0]
    if (url) return { name, url, child }
  }
  throw new Error(`${name}: the server exited before it served`)
}

async function load(url, tool) {
  const env = { ...process.env, WRK_TOOL: tool }
  const args = ["-t2", `-c${CONNECTIONS}`, `-d${SECONDS}s`, "-s", path.join(root, "bench", "wrk-call.lua"), url]
  const { stdout, stderr } = await run("wrk", args, { env })
  if (!/non-2xx answers: 0; socket errors: 0/.test(stderr)) throw new Error(`wrk saw failures: ${stderr}`)
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1])
}

const sink = await receiver()
const a = await serve("A", dirA, sink?.url)
const b = await serve("B", dirB, sink?.url)
const rows = { echo: "a JavaScript tool", up_echo: "relayed to a stdio server" }
const results = {}
try {
  for (const tool of Object.keys(rows)) {
    const rps = { A: [], B: [] }
    const ratios = []
    for (let round = 0; round < ROUNDS; round++) {
      const got = {}
      for (const side of round % 2 === 0 ? [a, b] : [b, a]) got[side.name] = await load(side.url, tool)
      rps.A.push(got.A)
      rps.B.push(got.B)
      ratios.push(got.B / got.A)
    }
    results[tool] = { rps, ratios }
  }
} finally {
  a.child.stdin.end()
  b.child.stdin.end()
  sink?.child.kill()
}
console.log(`node ${process.version}; wrk -t2 -c${CONNECTIONS}, ${SECONDS} s per run, ${ROUNDS} rounds alternating`)
console.log(`A = ${dirA} ${JSON.stringify(sideEnv("A", "otlp"))}\nB = ${dirB} ${JSON.stringify(sideEnv("B", "otlp"))}\n`)
console.log("| served tools/call | A req/s | B req/s | B/A median | B/A per round |\n|---|---|---|---|---|")
for (const [tool, what] of Object.entries(rows)) {
  const { rps, ratios } = results[tool]
  const sorted = [...ratios].sort((x, y) => x - y)
  console.log(`| \`${tool}\` (${what}) | ${median(rps.A).toFixed(0)} | ${median(rps.B).toFixed(0)} | ` +
    `${median(ratios).toFixed(3)} | ${sorted[0].toFixed(3)} to ${sorted.at(-1).toFixed(3)} |`)
}
