// Every public entry point of toolnexus under the runtime running this script: Node, Bun
// (`bun suite.mjs`) or Deno (`deno run -A suite.mjs`). Plain assertions; one line per check, a
// closing `compat (<runtime> <version>): N passed, M failed`, and a non-zero exit on a failure.
// __test__/compat.test.mjs runs it under each runtime.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { Worker } from "node:worker_threads"
import {
  descendants,
  fixture,
  here,
  httpSession,
  isAlive,
  readByMainThread,
  runtime,
  runtimeCommand,
  threadsNamed,
  tmpFile,
  waitFor,
  within,
} from "./lib.mjs"
import { toolnexus } from "./lib.mjs"

const { createToolkit, defineTool, listMcpTools, loadMcp } = toolnexus
const version = runtime === "deno" ? Deno.version.deno : runtime === "bun" ? process.versions.bun : process.versions.node
const checks = []
const check = (name, fn) => checks.push({ name, fn })
const byName = (source) => Object.fromEntries(source.tools.map((t) => [t.name, t]))
const fx = (tools, env = {}) => ({ command: fixture("stdio-server", "--tools", tools), env, timeout: 20000 })
const pidOf = async (file) => waitFor(() => {
  const n = Number(fs.existsSync(file) && fs.readFileSync(file, "utf8").trim())
  return n > 0 ? n : null
}, `pid in ${file}`)
// No child process, nor a stdout reader's thread (`toolnexus-out`, on runtimes other than Node).
const nothingRunning = async (what) => {
  await waitFor(() => descendants().length === 0, `${what}: children still running (${descendants()})`)
  await waitFor(() => threadsNamed("toolnexus-out").length === 0, `${what}: reader threads left (${threadsNamed("toolnexus-out")})`)
}

check("the reader: answers read on the JavaScript thread on Node only, by a thread per server elsewhere", async () => {
  const source = await loadMcp({ mcpServers: { raw: { command: fixture("raw-line-server"), timeout: 20000 } } })
  try {
    const before = readByMainThread()
    const result = await byName(source).raw_big.execute({ text: "abc", times: 1_000_000 })
    assert.equal(result.output.length, 3_000_000)
    const read = readByMainThread() - before
    if (runtime === "node") assert.ok(read > 3_000_000, `the JavaScript thread read ${read} bytes`)
    else assert.ok(read < 1_000_000, `the JavaScript thread read ${read} bytes`)
    assert.equal(threadsNamed("toolnexus-out").length, runtime === "node" ? 0 : 1)
  } finally {
    await source.close()
  }
  await nothingRunning("after close()")
})

check("listMcpTools: statuses, tools, errors, info, and nothing left running", async () => {
  const inventory = await listMcpTools({
    mcpServers: { fx: fx("echo,add"), broken: { command: ["toolnexus-compat-no-such-binary"] }, off: { command: ["x"], disabled: true } },
  })
  assert.deepEqual(inventory.status, { fx: "connected", broken: "failed", off: "disabled" })
  assert.deepEqual(inventory.tools.fx.map((t) => t.name).sort(), ["add", "echo"])
  assert.equal(inventory.errors.broken, 'cannot start "toolnexus-compat-no-such-binary": No such file or directory (os error 2)')
  assert.equal(inventory.info.fx.name, "toolnexus-fixture")
  assert.deepEqual(descendants(), [])
})

const pidFile = tmpFile("pid")
let source
check("loadMcp: a call, then 300 concurrent calls", async () => {
  source = await loadMcp(
    { mcpServers: { fx: fx("echo,sleep,slow,elicit", { PID_FILE: pidFile }) } },
    { waitFor: async (request) => ({ ok: true, data: { name: `Ada (${request.message})` } }) },
  )
  assert.deepEqual(source.status, { fx: "connected" })
  const tools = byName(source)
  assert.deepEqual(await tools.fx_echo.execute({ text: "hi" }), {
    output: "hi",
    isError: false,
    content: [{ type: "text", text: "hi" }],
    metadata: { server: "fx" },
  })
  const many = await Promise.all(Array.from({ length: 300 }, (_, i) => tools.fx_echo.execute({ text: `m${i}` })))
  assert.deepEqual(many.map((r) => r.output), Array.from({ length: 300 }, (_, i) => `m${i}`))
})

check("loadMcp: ctx.timeout, with the exact message", async () => {
  const began = performance.now()
  const result = await byName(source).fx_sleep.execute({ ms: 5000 }, { timeout: 300 })
  assert.deepEqual(result, { output: "MCP tool call timed out after 300 ms", isError: true, metadata: { server: "fx" } })
  assert.ok(performance.now() - began < 2000)
})

check("loadMcp: ctx.signal aborts a call in flight at once; the connection goes on", async () => {
  const tools = byName(source)
  const ac = new AbortController()
  const pending = tools.fx_sleep.execute({ ms: 20000 }, { signal: ac.signal })
  assert.equal((await tools.fx_echo.execute({ text: "sync" })).output, "sync")
  ac.abort()
  const result = await within(pending, 1000, "the aborted call")
  assert.deepEqual(result, { output: "MCP tool call aborted", isError: true, metadata: { server: "fx" } })
  assert.equal((await tools.fx_echo.execute({ text: "after" })).output, "after")
})

check("loadMcp: progress notifications keep a short timeout alive", async () => {
  const result = await byName(source).fx_slow.execute({ steps: 4, intervalMs: 150 }, { timeout: 400 })
  assert.deepEqual(result, {
    output: "slow done after 4 steps",
    isError: false,
    content: [{ type: "text", text: "slow done after 4 steps" }],
    metadata: { server: "fx" },
  })
})

check("loadMcp: a server's elicitation is answered through waitFor", async () => {
  const result = await byName(source).fx_elicit.execute({})
  assert.deepEqual(JSON.parse(result.output), { action: "accept", content: { name: "Ada (What is your name?)" } })
})

check("loadMcp: close() resolves once the server has exited", async () => {
  const pid = await pidOf(pidFile)
  assert.equal(isAlive(pid), true)
  await source.close()
  assert.equal(isAlive(pid), false)
  assert.deepEqual(descendants(), [])
  await nothingRunning("after close()")
})

check("createToolkit: serve a gateway over streamable HTTP (own tool and forwarded tool)", async () => {
  const add = defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    run: ({ a, b }) => String(a + b),
  })
  const calls = []
  const toolkit = await createToolkit({ mcpConfig: { mcpServers: { up: fx("echo") } }, extraTools: [add] })
  try {
    assert.deepEqual(toolkit.mcpStatus(), { up: "connected" })
    assert.deepEqual((await toolkit.execute("up_echo", { text: "direct" })).output, "direct")
    const handle = await toolkit.serve("127.0.0.1:0", { mcp: { name: "gateway" }, onCall: (c) => calls.push([c.name, c.source]) })
    try {
      const client = await httpSession(`${handle.url}/mcp`)
      assert.equal(client.init.result.serverInfo.name, "gateway")
      const listed = await client.request("tools/list", {})
      assert.deepEqual(listed.result.tools.map((t) => t.name), ["up_echo", "add"])
      const sum = await client.request("tools/call", { name: "add", arguments: { a: 2, b: 3 } })
      assert.deepEqual(sum.result.content, [{ type: "text", text: "5" }])
      const echoed = await client.request("tools/call", { name: "up_echo", arguments: { text: "through" } })
      assert.deepEqual(echoed.result.content, [{ type: "text", text: "through" }])
      await client.close()
      assert.deepEqual(calls, [["add", "native"], ["up_echo", "mcp"]])
    } finally {
      await handle.stop()
    }
  } finally {
    await toolkit.close()
  }
  await nothingRunning("after toolkit.close()")
})

for (const how of ["buildMcpServer", "toolkit.serveStdio"]) {
  check(`${how} over stdio, run by ${runtime}, loaded with loadMcp`, async () => {
    const command = runtimeCommand(path.join(here, "server.mjs"), ...(how === "buildMcpServer" ? [] : ["--toolkit"]))
    const own = await loadMcp({ mcpServers: { own: { command, timeout: 20000 } } })
    try {
      assert.deepEqual(own.status, { own: "connected" }, JSON.stringify(own.errors))
      assert.deepEqual(own.info.own, { ...own.info.own, name: "compat", version: "1.2.3" })
      const tools = byName(own)
      assert.equal((await tools.own_add.execute({ a: 2, b: 3 })).output, "5")
      assert.equal((await tools.own_whoami.execute({})).output, runtime)
    } finally {
      await own.close()
    }
    assert.deepEqual(descendants(), [])
  })
}

function runWorker(workerData) {
  const worker = new Worker(new URL("./worker.mjs", import.meta.url), { workerData })
  const message = new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  })
  // Listened for from the start: a worker that ends just after its last message has its
  // "exit" emitted in the same turn as that message, before an await on the message returns.
  const exit = new Promise((resolve) => worker.once("exit", resolve))
  return { worker, message, exit }
}

check("a worker thread loads, calls and closes its own source", async () => {
  const pid = tmpFile("pid")
  const { worker, message, exit } = runWorker({ server: fx("echo,sleep", { PID_FILE: pid }) })
  const said = await within(message, 20000, "the worker's report")
  assert.deepEqual(said.status, { w: "connected" })
  assert.deepEqual(said.outputs, [...Array.from({ length: 20 }, (_, i) => `s${i}`), ...Array.from({ length: 50 }, (_, i) => `c${i}`)])
  assert.equal(isAlive(await pidOf(pid)), false)
  await within(exit, 10000, "the worker's exit")
})

check("a worker thread terminated with a call in flight: its server is gone", async () => {
  const pid = tmpFile("pid")
  const { worker, message } = runWorker({ server: fx("echo,sleep", { PID_FILE: pid }), leave: true })
  assert.deepEqual((await within(message, 20000, "the worker's report")).status, { w: "connected" })
  const server = await pidOf(pid)
  await worker.terminate()
  await waitFor(() => !isAlive(server), "the worker's server gone")
})

check("nothing is left running", () => nothingRunning("at the end"))

let passed = 0
let failed = 0
for (const { name, fn } of checks) {
  const began = performance.now()
  try {
    await within(Promise.resolve().then(fn), 30000, name)
    passed++
    console.log(`ok - ${name} (${(performance.now() - began).toFixed(0)} ms)`)
  } catch (err) {
    failed++
    console.log(`not ok - ${name}\n  ${String(err?.stack ?? err).replaceAll("\n", "\n  ")}`)
  }
}
console.log(`compat (${runtime} ${version} ${process.platform}-${process.arch}): ${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
