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
//
// A shared state store's cost (issue 43; the same checkout twice): BENCH_ENV's BENCH_STATE=key
// serves that side with a stateKey (a fixed test key), BENCH_STATE=store with the same key and
// stateStore: a redis-server on 127.0.0.1 (a free port, nothing kept on disk) started when a side
// names it and stopped at the end. BENCH_SESSION=1 loads each side inside one handshake-era
// session (initialize and notifications/initialized over fetch, then wrk with
// bench/wrk-session.lua: 2025-11-25 tools/call with its Mcp-Session-Id) instead of stateless
// 2026-07-28 calls. The rows:
//   1. Stateless calls, key only against key and store (expected equal: a stateless call never
//      asks the store unless it retries a requestState):
//        BENCH_ENV_A='{"BENCH_STATE":"key"}' BENCH_ENV_B='{"BENCH_STATE":"store"}' node bench/serve-compare.mjs new new
//   2. Session calls, key only against key and store (the cost of one Redis round trip, "is the
//      session revoked", per request):
//        BENCH_SESSION=1 BENCH_ENV_A='{"BENCH_STATE":"key"}' BENCH_ENV_B='{"BENCH_STATE":"store"}' node bench/serve-compare.mjs new new
//   3. Without a store, the build before against this one (within noise), in both modes:
//        node bench/serve-compare.mjs old new
//        BENCH_SESSION=1 node bench/serve-compare.mjs old new
//   4. Rate limits counted in the store (one script per request) against this replica's own
//      table, stateless calls:
//        BENCH_ENV_A='{"BENCH_STATE":"key","BENCH_LIMITS":"1"}' BENCH_ENV_B='{"BENCH_STATE":"store","BENCH_LIMITS":"1"}' node bench/serve-compare.mjs new new
import { execFile, spawn } from "node:child_process"
import net from "node:net"
import path from "node:path"
import { promisify } from "node:util"
import { median, root } from "./lib.mjs"
import { startRedis as startTestRedis } from "../__test__/lib/redis.mjs"

const run = promisify(execFile)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const [dirA, dirB] = process.argv.slice(2).map((d) => path.resolve(d))
if (!dirA || !dirB) throw new Error("usage: node bench/serve-compare.mjs <checkoutA> <checkoutB>")

const SESSION = process.env.BENCH_SESSION === "1"
const PROTOCOL = "2025-11-25"

/**
 * The extra environment of side `name` (BENCH_ENV_<name>), "otlp" replaced by the receiver's URL,
 * and BENCH_REDIS_URL set to the store's when the side serves with BENCH_STATE=store.
 */
function sideEnv(name, otlp, redis) {
  const extra = JSON.parse(process.env[`BENCH_ENV_${name}`] ?? "{}")
  for (const [k, v] of Object.entries(extra)) if (v === "otlp") extra[k] = otlp
  if (process.env[`BENCH_METRICS_${name}`] === "1") extra.BENCH_SERVE_METRICS = "1"
  if (extra.BENCH_STATE === "store") extra.BENCH_REDIS_URL = redis
  return extra
}

/** Whether a side's environment names BENCH_STATE=store. */
const wantsStore = () => ["A", "B"].some((name) => JSON.parse(process.env[`BENCH_ENV_${name}`] ?? "{}").BENCH_STATE === "store")

/**
 * One redis-server on 127.0.0.1 (a free port, nothing kept on disk: __test__/lib/redis.mjs's),
 * when a side's environment names BENCH_STATE=store; resolves { url, stop(), commands() }.
 */
async function startRedis() {
  if (!wantsStore()) return null
  // The lib kills a server that never answered through its cleanup: run it if the start fails.
  const cleanups = []
  const { url, port, stop } = await startTestRedis((cleanup) => cleanups.push(cleanup)).catch(async (e) => {
    for (const cleanup of cleanups) await cleanup()
    throw e
  })
  /** Its command counts (INFO commandstats: "get=123 set=4"), to show the store was asked. */
  const commands = () =>
    new Promise((resolve) => {
      let answer = ""
      const s = net.connect(port, "127.0.0.1", () => s.write("INFO commandstats\r\n"))
      s.setEncoding("utf8")
      s.on("data", (d) => {
        answer += d
        const length = Number(/^\$(\d+)\r\n/.exec(answer)?.[1])
        if (Buffer.byteLength(answer) >= length + String(length).length + 5) {
          s.destroy()
          resolve([...answer.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].filter((m) => m[1] !== "info" && m[1] !== "ping").map((m) => `${m[1]}=${m[2]}`).join(" ") || "none")
        }
      })
      s.on("error", (e) => resolve(`unknown (${e.message})`))
    })
  return { url, stop, commands }
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

async function serve(name, dir, otlp, redis) {
  const child = spawn(process.execPath, [path.join(root, "bench", "serve-target.mjs"), "toolnexus", dir], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...sideEnv(name, otlp, redis) },
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

/** A POST of `message` to `url` in the handshake era (in `session` when given); resolves the Response. */
function post(url, message, session) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": PROTOCOL }
  if (session) headers["mcp-session-id"] = session
  return fetch(url, { method: "POST", headers, body: JSON.stringify(message) })
}

/** The JSON-RPC message of an answer, JSON or SSE (its first `data:` line that holds one). */
async function answerOf(res) {
  const text = await res.text()
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text)
  for (const line of text.split("\n")) {
    if (line.startsWith("data:") && line.slice(5).trim().startsWith("{")) return JSON.parse(line.slice(5))
  }
  throw new Error(`no message in the SSE answer: ${text}`)
}

/**
 * A handshake-era session at side `side`'s URL (initialize, then notifications/initialized), with
 * one tools/call of each tool checked to succeed in it: resolves its Mcp-Session-Id.
 */
async function openSession(side, tools) {
  const init = await post(side.url, {
    jsonrpc: "2.0", id: 0, method: "initialize",
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "wrk", version: "1" } },
  })
  const initAnswer = await answerOf(init)
  const session = init.headers.get("mcp-session-id")
  if (init.status !== 200 || !session) throw new Error(`${side.name}: initialize: HTTP ${init.status} ${JSON.stringify(initAnswer)}`)
  if (initAnswer.result?.protocolVersion !== PROTOCOL) throw new Error(`${side.name}: initialize answered ${JSON.stringify(initAnswer)}`)
  const ack = await post(side.url, { jsonrpc: "2.0", method: "notifications/initialized" }, session)
  await ack.text()
  if (ack.status !== 202) throw new Error(`${side.name}: notifications/initialized: HTTP ${ack.status}`)
  for (const tool of tools) {
    const call = await post(side.url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: { text: "hi" } } }, session)
    const answer = await answerOf(call)
    if (call.status !== 200 || !answer.result || answer.result.isError) throw new Error(`${side.name}: tools/call ${tool} in the session: HTTP ${call.status} ${JSON.stringify(answer)}`)
  }
  return session
}

async function load(side, tool) {
  const env = { ...process.env, WRK_TOOL: tool }
  if (SESSION) env.WRK_SESSION = side.session
  const script = path.join(root, "bench", SESSION ? "wrk-session.lua" : "wrk-call.lua")
  const args = ["-t2", `-c${CONNECTIONS}`, `-d${SECONDS}s`, "-s", script, side.url]
  const { stdout, stderr } = await run("wrk", args, { env })
  if (!/non-2xx answers: 0; socket errors: 0/.test(stderr)) throw new Error(`wrk saw failures: ${stderr}`)
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1])
}

const sink = await receiver()
const redis = await startRedis()
const started = []
try {
  for (const [name, dir] of [["A", dirA], ["B", dirB]]) started.push(await serve(name, dir, sink?.url, redis?.url))
} catch (e) {
  for (const side of started) side.child.stdin.end()
  sink?.child.kill()
  await redis?.stop()
  throw e
}
const [a, b] = started
const rows = { echo: "a JavaScript tool", up_echo: "relayed to a stdio server" }
const results = {}
let redisCommands
try {
  if (SESSION) for (const side of [a, b]) side.session = await openSession(side, Object.keys(rows))
  for (const tool of Object.keys(rows)) {
    const rps = { A: [], B: [] }
    const ratios = []
    for (let round = 0; round < ROUNDS; round++) {
      const got = {}
      for (const side of round % 2 === 0 ? [a, b] : [b, a]) got[side.name] = await load(side, tool)
      rps.A.push(got.A)
      rps.B.push(got.B)
      ratios.push(got.B / got.A)
    }
    results[tool] = { rps, ratios }
  }
} finally {
  a.child.stdin.end()
  b.child.stdin.end()
  await Promise.all([a, b].map((side) => new Promise((resolve) => (side.child.exitCode !== null ? resolve() : side.child.on("exit", resolve)))))
  sink?.child.kill()
  if (redis) redisCommands = await redis.commands()
  await redis?.stop()
}
const mode = SESSION ? `one ${PROTOCOL} session per side (bench/wrk-session.lua)` : "stateless 2026-07-28 calls (bench/wrk-call.lua)"
console.log(`node ${process.version}; wrk -t2 -c${CONNECTIONS}, ${SECONDS} s per run, ${ROUNDS} rounds alternating; ${mode}`)
console.log(`A = ${dirA} ${JSON.stringify(sideEnv("A", "otlp", redis?.url))}\nB = ${dirB} ${JSON.stringify(sideEnv("B", "otlp", redis?.url))}`)
if (redis) console.log(`Redis commands over the run (INFO commandstats): ${redisCommands}`)
console.log("")
console.log(`| served ${SESSION ? "session " : ""}tools/call | A req/s | B req/s | B/A median | B/A per round |\n|---|---|---|---|---|`)
for (const [tool, what] of Object.entries(rows)) {
  const { rps, ratios } = results[tool]
  const sorted = [...ratios].sort((x, y) => x - y)
  console.log(`| \`${tool}\` (${what}) | ${median(rps.A).toFixed(0)} | ${median(rps.B).toFixed(0)} | ` +
    `${median(ratios).toFixed(3)} | ${sorted[0].toFixed(3)} to ${sorted.at(-1).toFixed(3)} |`)
}
