// One build's turn for bench/compare.mjs, in a node process of its own (so no other build's
// addon, runtime threads, JIT or heap share it): loads the checkout's index.js, warms up, runs
// each job REPS times (jobs interleaved), and prints one JSON line { job: median ms }.
//
//   node bench/compare-one.mjs <checkout> <calls> <reps> <job,job,...>
//   jobs: seq, concurrent (N `tools/call` of `echo` on one loadMcp source of the raw Python
//   server), list10 (listMcpTools of 10 raw servers: connect, initialize, list, disconnect)
import path from "node:path"
import { pathToFileURL } from "node:url"
import { median, serverCommand } from "./lib.mjs"

const [checkout, calls, reps, jobList] = process.argv.slice(2)
const CALLS = Number(calls)
const REPS = Number(reps)
const { listMcpTools, loadMcp } = await import(pathToFileURL(path.join(path.resolve(checkout), "index.js")).href)
const command = serverCommand()
const jobNames = jobList.split(",")

const source = await loadMcp({ s: { command } })
const echo = source.tools.find((t) => t.name === "s_echo")
if (!echo) throw new Error(`${checkout}: no s_echo tool (${JSON.stringify(source.errors ?? {})})`)
const args = { message: "m" }
const call = () => echo.execute(args).then((r) => {
  if (r.isError) throw new Error(r.output)
})
const list10Config = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`s${i}`, { command }]))
const jobs = {
  seq: async () => {
    for (let i = 0; i < CALLS; i++) await call()
  },
  concurrent: () => Promise.all(Array.from({ length: CALLS }, call)),
  list10: async () => {
    const inventory = await listMcpTools(list10Config)
    for (const name of Object.keys(list10Config)) {
      if (inventory.status[name] !== "connected") throw new Error(JSON.stringify(inventory.errors))
      if (inventory.tools[name].length !== 3) throw new Error(`listed ${inventory.tools[name].length} tools, expected 3`)
    }
  },
}
for (const name of jobNames) if (!jobs[name]) throw new Error(`unknown job ${name} (seq, concurrent, list10)`)

// The same warm-up as bench/bench.mjs: 2000 calls, plus one listing if that job is wanted.
for (let i = 0; i < 2000; i++) await call()
if (jobNames.includes("list10")) await jobs.list10()

const samples = Object.fromEntries(jobNames.map((n) => [n, []]))
for (let rep = 0; rep < REPS; rep++) {
  for (const name of jobNames) {
    const t0 = performance.now()
    await jobs[name]()
    samples[name].push(performance.now() - t0)
  }
}
await source.close()
process.stdout.write(`${JSON.stringify(Object.fromEntries(jobNames.map((n) => [n, median(samples[n])])))}\n`)
