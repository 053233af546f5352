// The hostile fuzzer (`npm run fuzz`; a short smoke of it runs in `npm test`). Seeded and
// replayable: each case's seed comes from the run's seed, its kind and its index, and a failing
// case prints the command that replays it alone.
//
//   node __test__/fuzz/run.mjs [--seed N] [--stdio N] [--http N] [--clients N]
//                              [--concurrency K] [--only kind:index]
//
// stdio    a hostile stdio server (hostile-stdio-server.mjs) listed with listMcpTools or loaded
//          with loadMcp, a few of its tools called (some aborted), then closed
// http     the same against a hostile streamable-HTTP server (hostile-http-server.mjs)
// clients  hostile clients (hostile-client.mjs) against one served toolkit, a well-behaved SDK
//          client checking after each batch that it still lists and calls
//
// What is checked: every call settles within a bound; statuses are "connected" or "failed" with
// a reason in words; no message names a Rust type; the hostile server's process is gone when
// listMcpTools resolves or close() does; nothing is left running at the end; Node's resident
// memory stays bounded. Exit 0 when every case passed; the last line is `fuzz: N passed, M failed`.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { createToolkit, defineTool, listMcpTools, loadMcp } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { caseSeed, rng } from "./rng.mjs"
import { leaksInternals } from "./checks.mjs"
import { startHostileHttp } from "./hostile-http-server.mjs"
import { runHostileClient } from "./hostile-client.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : fallback
}
const seed = Number(opt("seed", String(Date.now() % 2 ** 31)))
const counts = { stdio: Number(opt("stdio", "300")), http: Number(opt("http", "100")), clients: Number(opt("clients", "200")) }
const concurrency = Number(opt("concurrency", "4"))
const only = opt("only")
const TIMEOUT = 1000
/** A listing or load: start-up, listing and close, each within the timeout, plus teardown. */
const SETTLE_BOUND = 4 * TIMEOUT + 5000
const RSS_BOUND = 1536 * 1024 * 1024
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-fuzz-"))
// OAuth state a hostile server may provoke stays in the run's own folder.
process.env.XDG_CONFIG_HOME = tmp
process.env.HOME = tmp

const withBound = (promise, what, ms = SETTLE_BOUND) => {
  let timer
  const bound = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms) })
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer))
}

function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const seen = { connected: 0, failed: 0, tools: 0, resolved: 0, rejected: 0, clientSteps: 0 }

function checkInventory(inv, name, problems) {
  const status = inv.status[name]
  seen[status] = (seen[status] ?? 0) + 1
  seen.tools += (inv.tools?.[name] ?? []).length
  if (status !== "connected" && status !== "failed") problems.push(`status ${JSON.stringify(status)}`)
  if (status === "failed" && !(typeof inv.errors[name] === "string" && inv.errors[name].length > 0)) problems.push("failed without a reason")
  if (leaksInternals(JSON.stringify(inv.errors))) problems.push(`reason names an internal type: ${inv.errors[name]}`)
}

/** One hostile server, stdio or HTTP: listed, or loaded, called and closed. */
async function serverCase(kind, caseSeed_) {
  const r = rng(caseSeed_ ^ 0x5bd1e995)
  const problems = []
  const pidFile = path.join(tmp, `pid-${kind}-${caseSeed_}`)
  let http
  let entry
  if (kind === "stdio") entry = { command: [process.execPath, path.join(here, "hostile-stdio-server.mjs"), String(caseSeed_), pidFile], timeout: TIMEOUT }
  else {
    http = await startHostileHttp(caseSeed_)
    entry = { url: http.url, timeout: TIMEOUT, protocol: r.pick(["auto", "2025-11-25", "2026-07-28"]) }
  }
  const config = { mcpServers: { h: entry } }
  const pid = () => { try { return Number(fs.readFileSync(pidFile, "utf8")) } catch { return undefined } }
  try {
    if (r.chance(0.5)) {
      const inv = await withBound(listMcpTools(config), "listMcpTools")
      checkInventory(inv, "h", problems)
      if (pid() && alive(pid())) problems.push(`server ${pid()} still running after listMcpTools resolved`)
    } else {
      const source = await withBound(loadMcp(config), "loadMcp")
      checkInventory(source, "h", problems)
      const calls = source.tools.slice(0, 3).map(async (tool) => {
        const ctx = r.chance(0.3) ? { signal: AbortSignal.timeout(r.int(200)) } : r.chance(0.2) ? { timeout: r.int(300) + 1 } : undefined
        try {
          const result = await withBound(tool.execute(r.chance(0.7) ? { text: r.string(), n: r.int(9) } : r.value(2) ?? {}, ctx), `${tool.name}.execute`, 2 * TIMEOUT + 3000)
          seen.resolved++
          if (typeof result?.output !== "string" || typeof result.isError !== "boolean") problems.push(`execute resolved with ${JSON.stringify(result).slice(0, 200)}`)
        } catch (err) {
          seen.rejected++
          const message = String(err?.message ?? err)
          if (/did not settle/.test(message) || leaksInternals(message)) problems.push(message)
        }
      })
      await Promise.all(calls)
      await withBound(source.close(), "close")
      if (pid() && alive(pid())) problems.push(`server ${pid()} still running after close() resolved`)
    }
  } catch (err) {
    problems.push(String(err?.stack ?? err))
  } finally {
    await http?.close()
    fs.rmSync(pidFile, { force: true })
  }
  return problems
}

let served
async function servedToolkit() {
  if (served) return served
  const echo = defineTool({ name: "fz_echo", inputSchema: { type: "object", properties: { text: { type: "string" } } }, run: ({ text }) => String(text) })
  const slow = defineTool({ name: "fz_slow", inputSchema: { type: "object", properties: { ms: { type: "number" } } }, run: async ({ ms }) => { await new Promise((resolve) => setTimeout(resolve, Math.min(Number(ms) || 0, 50))); return "slow" } })
  const toolkit = await createToolkit({ extraTools: [echo, slow] })
  const handle = await toolkit.serve("127.0.0.1:0")
  served = { toolkit, handle, url: `${handle.url}/mcp` }
  return served
}

/** A well-behaved client still lists and calls. */
async function wellBehaved(url) {
  const client = new Client({ name: "fuzz-check", version: "1" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  try {
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name).sort().join(",")
    if (names !== "fz_echo,fz_slow") return [`a good client lists ${names}`]
    const result = await client.callTool({ name: "fz_echo", arguments: { text: "still here" } })
    return result.content?.[0]?.text === "still here" ? [] : [`a good client's call answered ${JSON.stringify(result)}`]
  } finally {
    await client.close()
  }
}

async function clientCase(s) {
  const { url } = await servedToolkit()
  const problems = await withBound(runHostileClient(url, s), "hostile client", 120000)
  return [...problems, ...(await withBound(wellBehaved(url), "a good client", 20000))]
}

const cases = []
for (const kind of ["stdio", "http", "clients"]) for (let i = 0; i < counts[kind]; i++) cases.push({ kind, index: i, seed: caseSeed(seed, kind, i) })
const chosen = only ? cases.filter((c) => `${c.kind}:${c.index}` === only).concat(only && !cases.some((c) => `${c.kind}:${c.index}` === only) ? [{ kind: only.split(":")[0], index: Number(only.split(":")[1]), seed: caseSeed(seed, only.split(":")[0], Number(only.split(":")[1])) }] : []) : cases

console.log(`fuzz: seed ${seed}, ${chosen.length} cases (${Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(", ")}), ${concurrency} at a time`)
const started = Date.now()
let passed = 0
let failed = 0
let peak = 0
let next = 0
async function worker() {
  while (next < chosen.length) {
    const c = chosen[next++]
    const problems = c.kind === "clients" ? await clientCase(c.seed) : await serverCase(c.kind, c.seed)
    peak = Math.max(peak, process.memoryUsage().rss)
    if (problems.length === 0) passed++
    else {
      failed++
      console.log(`FAIL ${c.kind}:${c.index} (case seed ${c.seed}): ${problems.join("; ").slice(0, 2000)}`)
      console.log(`  replay: node __test__/fuzz/run.mjs --seed ${seed} --only ${c.kind}:${c.index}`)
    }
  }
}
// Client cases share one toolkit; run them after the server cases so each batch sees it alone.
const serverCases = chosen.filter((c) => c.kind !== "clients")
const clientCases = chosen.filter((c) => c.kind === "clients")
chosen.splice(0, chosen.length, ...serverCases)
await Promise.all(Array.from({ length: concurrency }, worker))
chosen.splice(0, chosen.length, ...clientCases)
next = 0
await Promise.all(Array.from({ length: concurrency }, worker))
if (served) {
  await served.handle.stop()
  await served.toolkit.close()
}
fs.rmSync(tmp, { recursive: true, force: true })

const left = fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p) && p !== String(process.pid)).filter((p) => {
  try {
    const stat = fs.readFileSync(`/proc/${p}/stat`, "utf8")
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    const cmd = fs.readFileSync(`/proc/${p}/cmdline`, "utf8")
    return ppid === process.pid && !cmd.includes("toolnexus-watchdog") && !/ Z /.test(stat.slice(stat.lastIndexOf(")")))
  } catch {
    return false
  }
})
if (left.length > 0) {
  failed++
  console.log(`FAIL: processes left running: ${left.join(", ")}`)
}
if (peak > RSS_BOUND) {
  failed++
  console.log(`FAIL: resident memory peaked at ${(peak / 2 ** 20).toFixed(0)} MB`)
}
console.log(`fuzz: ${((Date.now() - started) / 1000).toFixed(1)} s, peak RSS ${(peak / 2 ** 20).toFixed(0)} MB; servers connected ${seen.connected}, failed ${seen.failed}, ${seen.tools} tools listed; calls resolved ${seen.resolved}, rejected ${seen.rejected}`)
console.log(`fuzz: ${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
