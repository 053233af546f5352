// Nothing a stdio server started is left running, whatever ends Node: its whole process tree —
// a child in its group, a setsid() child and a double-forked daemon (fixtures/tree-server.mjs) —
// is gone after listMcpTools, after close(), and after Node ends by SIGKILL, by SIGTERM or
// SIGINT with no handler, by process.exit(), by an uncaught throw, by returning, and after the
// worker thread that loaded it ends. Processes are found in /proc by a marker in their argv.
import { test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { listMcpTools, loadMcp } from "../index.js"
import { fixture, killAll, waitFor } from "./helpers.mjs"

const T = { timeout: 60000 }
/** The fixture's tree: the server, its group child, its setsid() child and the daemon. */
const TREE_SIZE = 4

/** Live (non-zombie) processes whose argv contains `needle`, as "pid argv" strings. */
function marked(needle) {
  const found = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let cmdline, stat
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    if (state !== "Z" && cmdline.includes(needle)) found.push(`${entry} ${cmdline.trim().slice(-60)}`)
  }
  return found
}

const pidsOf = (found) => found.map((line) => Number(line.split(" ")[0]))

function treeServer(marker) {
  return { command: [process.execPath, fixture("tree-server.mjs"), marker] }
}

test("listMcpTools leaves no process of a server's tree: not its setsid() child, not its daemon", T, async (t) => {
  const marker = `tree-${randomUUID()}`
  t.after(() => killAll(pidsOf(marked(marker))))
  const inv = await listMcpTools({ mcpServers: { t: treeServer(marker) } })
  assert.deepEqual(inv.status, { t: "connected" }, JSON.stringify(inv.errors))
  // The promise settled: everything is already gone, with no waiting.
  assert.deepEqual(marked(marker), [])
})

test("close() leaves no process of a loaded server's tree", T, async (t) => {
  const marker = `tree-${randomUUID()}`
  t.after(() => killAll(pidsOf(marked(marker))))
  const source = await loadMcp({ mcpServers: { t: treeServer(marker) } })
  assert.equal(source.status.t, "connected", JSON.stringify(source.errors))
  assert.equal(marked(marker).length, TREE_SIZE, marked(marker).join("\n"))
  await source.close()
  assert.deepEqual(marked(marker), [])
})

/**
 * Spawns a Node host (a script in this directory, so `toolnexus` resolves to this package) and
 * resolves once it printed "loaded".
 */
async function spawnHost(t, body) {
  const file = path.join(import.meta.dirname, `_orphans_${randomUUID()}.mjs`)
  fs.writeFileSync(file, body)
  t.after(() => fs.rmSync(file, { force: true }))
  const host = spawn(process.execPath, [file], { stdio: ["pipe", "pipe", "pipe"] })
  t.after(() => host.kill("SIGKILL"))
  let stdout = ""
  let stderr = ""
  host.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  host.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => host.on("exit", (code, signal) => resolve({ code, signal })))
  await waitFor(() => /^loaded$/m.test(stdout) || host.exitCode !== null, { timeout: 20000, message: "host loaded" })
  assert.match(stdout, /^loaded$/m, stderr)
  return { host, exited, stdout: () => stdout, stderr: () => stderr }
}

/**
 * Starts a host that loads the tree server (not named after the marker: the host is not part of
 * the tree); resolves once the whole tree and the host's watchdog run.
 */
async function startHost(t, marker, body) {
  const { host, exited, stderr } = await spawnHost(t, body)
  await waitFor(() => marked(marker).length === TREE_SIZE, { timeout: 10000, message: `${TREE_SIZE} processes of the tree up` })
  assert.equal(watchdogs(host.pid).length, 1, "the host's watchdog runs")
  return { host, exited, stderr }
}

/** The watchdog processes of host `pid` (its argv ends with the host's pid). */
const watchdogs = (pid) => marked("toolnexus-watchdog").filter((p) => p.endsWith(` ${pid}`))

/** Runs a host as startHost does, ends it with `end(host)`, and waits for it to exit. */
async function runHost(t, marker, body, end) {
  const { host, exited, stderr } = await startHost(t, marker, body)
  await end(host)
  return { exit: await exited, host, stderr }
}

/** Polls /proc until nothing with `marker` is left (generous bound); returns the ms it took. */
async function gone(t, marker, what) {
  const began = performance.now()
  await waitFor(() => marked(marker).length === 0, {
    timeout: 10000,
    interval: 10,
    message: `${what}: no process left (still: ${marked(marker).join("; ")})`,
  })
  const ms = performance.now() - began
  t.diagnostic(`${what}: tree gone ${ms.toFixed(0)} ms after the host ended`)
  return ms
}

const loadScript = (marker, ending) => `import { loadMcp } from "toolnexus"
const source = await loadMcp({ mcpServers: { t: ${JSON.stringify(treeServer(marker))} } })
if (source.status.t !== "connected") { console.error(JSON.stringify(source.errors)); process.exit(9) }
console.log("loaded")
process.stdin.once("data", () => { process.stdin.destroy(); ${ending} })
`

for (const [way, ending, expected, end] of [
  ["SIGKILL", "", { code: null, signal: "SIGKILL" }, (host) => host.kill("SIGKILL")],
  ["SIGTERM with no handler", "", { code: null, signal: "SIGTERM" }, (host) => host.kill("SIGTERM")],
  ["SIGINT with no handler", "", { code: null, signal: "SIGINT" }, (host) => host.kill("SIGINT")],
  ["process.exit(0)", "process.exit(0)", { code: 0, signal: null }, (host) => host.stdin.write("go\n")],
  ["an uncaught throw", 'throw new Error("boom")', { code: 1, signal: null }, (host) => host.stdin.write("go\n")],
  ["returning from its last callback", "", { code: 0, signal: null }, (host) => host.stdin.write("go\n")],
]) {
  test(`Node ended by ${way}: no process of a loaded server's tree is left`, T, async (t) => {
    const marker = `tree-${randomUUID()}`
    t.after(() => killAll(pidsOf(marked(marker))))
    const { exit, host, stderr } = await runHost(t, marker, loadScript(marker, ending), end)
    assert.deepEqual(exit, expected, stderr())
    await gone(t, marker, way)
    // The watchdog did its work and went too.
    await waitFor(() => watchdogs(host.pid).length === 0, {
      timeout: 5000,
      message: "the host's watchdog gone",
    })
  })
}

test("a worker thread ending ends its servers' trees and leaves the main thread's running", T, async (t) => {
  const mine = `tree-${randomUUID()}`
  const workers = `tree-${randomUUID()}`
  t.after(() => killAll(pidsOf([...marked(mine), ...marked(workers)])))
  const body = `import { Worker } from "node:worker_threads"
import { loadMcp } from "toolnexus"
const main = await loadMcp({ mcpServers: { t: ${JSON.stringify(treeServer(mine))} } })
const worker = new Worker(\`
  const { loadMcp } = require("toolnexus")
  const { parentPort } = require("node:worker_threads")
  loadMcp({ mcpServers: { t: ${JSON.stringify(treeServer(workers)).replaceAll("\\", "\\\\")} } }).then((s) => parentPort.postMessage(s.status.t))
  setInterval(() => {}, 1e9)
\`, { eval: true })
const status = await new Promise((resolve) => worker.once("message", resolve))
if (main.status.t !== "connected" || status !== "connected") process.exit(9)
console.log("loaded")
process.stdin.once("data", async () => {
  await worker.terminate()
  console.log("worker ended")
})
setInterval(() => {}, 1e9)
`
  const { host, stdout } = await spawnHost(t, body)
  await waitFor(() => marked(workers).length === TREE_SIZE && marked(mine).length === TREE_SIZE, {
    timeout: 10000,
    message: "both trees up",
  })
  host.stdin.write("go\n")
  await waitFor(() => /^worker ended$/m.test(stdout()), { timeout: 10000, message: "worker ended" })
  await gone(t, workers, "worker thread ended")
  assert.equal(host.exitCode, null, "the host is still running")
  assert.equal(marked(mine).length, TREE_SIZE, "the main thread's tree is untouched")
  host.kill("SIGKILL")
  await gone(t, mine, "SIGKILL after the worker")
})

test("one host's death leaves another host's servers alone", T, async (t) => {
  const first = `tree-${randomUUID()}`
  const second = `tree-${randomUUID()}`
  t.after(() => killAll(pidsOf([...marked(first), ...marked(second)])))
  const a = await startHost(t, first, loadScript(first, ""))
  const b = await startHost(t, second, loadScript(second, ""))
  a.host.kill("SIGKILL")
  await a.exited
  await gone(t, first, "SIGKILL of one of two hosts")
  assert.equal(marked(second).length, TREE_SIZE, "the other host's tree is untouched")
  assert.equal(watchdogs(b.host.pid).length, 1, "the other host's watchdog still runs")
  b.host.kill("SIGKILL")
  await b.exited
  await gone(t, second, "SIGKILL of the other host")
})
