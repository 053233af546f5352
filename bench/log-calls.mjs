// `toolnexus serve` with and without `--log-calls` (stderr to a file, as in a container), side by
// side in one run: the same gateway (one stdio fixture server, its `echo` tool) under the same wrk
// load (stateless 2026-07-28 tools/call, bench/wrk-call.lua), rounds alternating which goes first.
// Prints each side's median req/s, and the ratio per round with its spread.
//
//   node bench/log-calls.mjs            (BENCH_ROUNDS=6 BENCH_SECONDS=5 BENCH_CONNECTIONS=32)
// Needs wrk (Debian's package). Use a release build (`npm run build`) for numbers that mean much,
// or TOOLNEXUS_CLI=<an installed copy>/bin/toolnexus.mjs (e.g. `npm run platforms`' release install).
import { execFile, spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { promisify } from "node:util"
import { median, root } from "./lib.mjs"

const run = promisify(execFile)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-log-calls-"))
const config = path.join(scratch, "mcp.json")
fs.writeFileSync(config, JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [path.join(root, "__test__", "fixtures", "stdio-server.mjs"), "--tools", "echo"] } } }))

async function serve(name, extra) {
  const err = fs.openSync(path.join(scratch, `${name}.stderr`), "w")
  const cli = process.env.TOOLNEXUS_CLI ?? path.join(root, "bin", "toolnexus.mjs")
  const child = spawn(process.execPath, [cli, "serve", config, "--addr", "127.0.0.1:0", ...extra], { stdio: ["ignore", "pipe", err] })
  child.stdout.setEncoding("utf8")
  let out = ""
  for await (const chunk of child.stdout) {
    out += chunk
    const url = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(out)?.[0]
    if (url) return { name, url, child, stderr: path.join(scratch, `${name}.stderr`) }
  }
  throw new Error(`${name}: the server exited before it served`)
}

async function load(url) {
  const { stdout, stderr } = await run("wrk", ["-t2", `-c${CONNECTIONS}`, `-d${SECONDS}s`, "-s", path.join(root, "bench", "wrk-call.lua"), url])
  if (!/non-2xx answers: 0; socket errors: 0/.test(stderr)) throw new Error(`wrk saw failures: ${stderr}`)
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1])
}

const quiet = await serve("quiet", [])
const logged = await serve("logged", ["--log-calls"])
const rps = { quiet: [], logged: [] }
const ratios = []
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [quiet, logged] : [logged, quiet]
    const got = {}
    for (const side of order) got[side.name] = await load(side.url)
    rps.quiet.push(got.quiet)
    rps.logged.push(got.logged)
    ratios.push(got.quiet / got.logged)
  }
} finally {
  quiet.child.kill()
  logged.child.kill()
}
const lines = fs.readFileSync(logged.stderr, "utf8").split("\n").filter((l) => l.includes("fx_echo")).length
const quietLines = fs.readFileSync(quiet.stderr, "utf8").split("\n").filter((l) => l.includes("fx_echo")).length
console.log(`node ${process.version}; wrk -t2 -c${CONNECTIONS}, ${SECONDS} s per run, ${ROUNDS} rounds alternating\n`)
console.log("| serve | req/s (median) |\n|---|---|")
console.log(`| quiet (default off a terminal) | ${median(rps.quiet).toFixed(0)} |`)
console.log(`| --log-calls | ${median(rps.logged).toFixed(0)} |`)
const sorted = [...ratios].sort((a, b) => a - b)
console.log(`\nquiet / --log-calls: ${median(ratios).toFixed(3)} (per-round ratios ${sorted[0].toFixed(3)} to ${sorted.at(-1).toFixed(3)})`)
console.log(`call lines written: ${lines} with --log-calls, ${quietLines} without`)
fs.rmSync(scratch, { recursive: true, force: true })
