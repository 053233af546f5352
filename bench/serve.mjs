// The served rows, side by side in one run: a toolkit served by toolnexus and the MCP TypeScript
// SDK's own McpServer (bench/serve-target.mjs, each in its own process), serving a JavaScript
// tool and a gateway tool forwarded to the raw Python stdio server; the load comes from a third
// process (bench/load.mjs) with 1, 32 and 256 concurrent sessions. Rounds alternate between the
// servers, in an order rotated each round (turnOrder in bench/lib.mjs, so no server always goes
// first); each cell is the median round. Prints Markdown tables. For one build against another,
// bench/compare.mjs is the fairer measure (fresh processes, per-round ratios and their spread).
//
//   npm run build && node bench/serve.mjs
//   BASELINE=/path/to/another/checkout node bench/serve.mjs   # an older build too, same run
//   TOOLNEXUS=/path/to/a/checkout BASELINE=/path/to/another node bench/serve.mjs
import { execFile, spawn } from "node:child_process"
import { once } from "node:events"
import path from "node:path"
import { promisify } from "node:util"
import { median, root, turnOrder } from "./lib.mjs"

const run = promisify(execFile)
const ROUNDS = Number(process.env.BENCH_SERVE_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SERVE_SECONDS ?? 2)
const LEVELS = (process.env.BENCH_CLIENTS ?? "1,32,256").split(",").map(Number)

async function start(...args) {
  const child = spawn(process.execPath, [path.join(root, "bench", "serve-target.mjs"), ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  })
  child.stdout.setEncoding("utf8")
  let text = ""
  while (!text.includes("\n")) {
    const [chunk] = await Promise.race([once(child.stdout, "data"), once(child, "exit").then(() => { throw new Error(`${args[0]} server exited`) })])
    text += chunk
  }
  return { url: text.trim(), stop: async () => { child.stdin.end(); await once(child, "exit") } }
}

async function load(url, tool, clients) {
  const { stdout } = await run(process.execPath, [path.join(root, "bench", "load.mjs"), url, tool, String(clients), String(SECONDS)], { maxBuffer: 1 << 20 })
  return JSON.parse(stdout)
}

// TOOLNEXUS=<checkout> serves another build in place of this one (as in bench/bench.mjs).
const servers = { toolnexus: await start("toolnexus", path.resolve(process.env.TOOLNEXUS ?? root)), sdk: await start("sdk") }
if (process.env.BASELINE) servers.baseline = await start("toolnexus", path.resolve(process.env.BASELINE))
const jobs = [["served JavaScript tool", "echo"], ["gateway to a stdio upstream", "up_echo"]]

console.log(`\nnode ${process.version}; load from a separate process, one session per client, ${SECONDS} s per round, median of ${ROUNDS} rounds\n`)
const vsBaseline = servers.baseline ? " ours / baseline req/s |" : ""
console.log(`| job | clients | ${Object.keys(servers).map((s) => `${s} req/s | p50 | p99`).join(" | ")} | ours / SDK req/s |${vsBaseline}`)
console.log(`|---|---|${Object.keys(servers).map(() => "---|---|---").join("|")}|---|${vsBaseline ? "---|" : ""}`)
for (const [job, tool] of jobs) {
  for (const clients of LEVELS) {
    const samples = Object.fromEntries(Object.keys(servers).map((s) => [s, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of turnOrder(Object.keys(servers), round)) samples[name].push(await load(servers[name].url, tool, clients))
    }
    const cell = (s) => {
      const pick = (k) => median(samples[s].map((r) => r[k]))
      return { rps: pick("rps"), p50: pick("p50"), p99: pick("p99") }
    }
    const cells = Object.keys(servers).map((s) => {
      const c = cell(s)
      return `${c.rps.toFixed(0)} | ${c.p50.toFixed(2)} ms | ${c.p99.toFixed(2)} ms`
    })
    const againstBaseline = servers.baseline ? ` ${(cell("toolnexus").rps / cell("baseline").rps).toFixed(2)}× |` : ""
    console.log(`| ${job} | ${clients} | ${cells.join(" | ")} | ${(cell("toolnexus").rps / cell("sdk").rps).toFixed(2)}× |${againstBaseline}`)
  }
}
await Promise.all(Object.values(servers).map((s) => s.stop()))
