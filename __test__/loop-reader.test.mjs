// A loadMcp stdio server's stdout read by the reader Node gets, on the JavaScript thread (a libuv
// poll on the pipe, once the handshake is done), and by the two others, through the binding's
// test hook `stdoutReaderForTests` (not part of the package's API): on a thread of its own per
// server (what Bun and Deno get, see __test__/compat/) and on the runtime (the transport's
// reader, what a toolkit's sources get):
// which thread reads, lines cut across writes with stray output around them, lines of
// megabytes and one past the bound, bytes buffered at the hand-off, a server exiting mid-call,
// a server request answered meanwhile, and a worker thread terminated with a call in flight.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import { Worker } from "node:worker_threads"
import { loadMcp } from "../index.js"
import binding from "../binding.js"
import { deferredCleanup, isAlive, nodeFixture, readPid, tmpFile, waitFor } from "./helpers.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)
// The event loop's reader is Node's own choice; Bun and Deno get the thread reader (a thread per
// server); the hook gives Node the other two.
const MODES = { "event loop": undefined, thread: "thread", runtime: "runtime" }

async function load(mode, servers, opts) {
  binding.stdoutReaderForTests(MODES[mode])
  try {
    const source = await loadMcp({ mcpServers: servers }, opts)
    defer(() => source.close())
    for (const [name, status] of Object.entries(source.status)) {
      assert.equal(status, "connected", `${name}: ${source.errors[name]}`)
    }
    return source
  } finally {
    binding.stdoutReaderForTests()
  }
}

const raw = (...flags) => ({ raw: { command: nodeFixture("raw-line-server", ...flags), timeout: 20000 } })
const tool = (source, name) => source.tools.find((t) => t.name === `raw_${name}`) ?? assert.fail(`no tool ${name}`)
// Bytes read by this process's JavaScript thread (its thread id is the process id).
const readByMainThread = () => Number(/^rchar: (\d+)$/m.exec(fs.readFileSync(`/proc/self/task/${process.pid}/io`, "utf8"))[1])

// This process's stdout reader threads (named `toolnexus-out`).
const readerThreads = () =>
  fs.readdirSync(`/proc/self/task`).filter((t) => {
    try {
      return fs.readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() === "toolnexus-out"
    } catch {
      return false
    }
  }).length

for (const mode of Object.keys(MODES)) {
  test(`${mode}: the answers are read by the thread the mode says`, T, async () => {
    const source = await load(mode, raw())
    const before = readByMainThread()
    const result = await tool(source, "big").execute({ text: "abc", times: 1_000_000 })
    assert.equal(result.output.length, 3_000_000)
    const read = readByMainThread() - before
    if (mode === "event loop") assert.ok(read > 3_000_000, `the JavaScript thread read ${read} bytes`)
    else assert.ok(read < 1_000_000, `the JavaScript thread read ${read} bytes`)
    // The thread reader is a thread of its own per server; the other two start none (a reader
    // of an earlier test's closed source may still be ending: waited for).
    const expected = MODES[mode] === "thread" ? 1 : 0
    await waitFor(() => readerThreads() === expected, { message: `${expected} reader thread(s), not ${readerThreads()}` })
  })

  test(`${mode}: answers cut across writes, between a banner and a log line, and of megabytes`, T, async () => {
    const source = await load(mode, raw())
    const split = tool(source, "split")
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await split.execute({ text: `piece ${i}` }), { output: `piece ${i}`, isError: false, content: [{ type: "text", text: `piece ${i}` }], metadata: { server: "raw" } })
    }
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => split.execute({ text: `many ${i}` })))
    assert.deepEqual(many.map((r) => r.output), Array.from({ length: 40 }, (_, i) => `many ${i}`))
    const big = await tool(source, "big").execute({ text: "0123456789", times: 500_000 })
    assert.equal(big.isError, false)
    assert.equal(big.output, "0123456789".repeat(500_000))
  })

  test(`${mode}: a line over 16 MiB mid-session fails the call at once, and the server with it`, T, async () => {
    const source = await load(mode, raw())
    const result = await tool(source, "huge").execute({})
    assert.deepEqual([result.isError, result.output], [true, 'server "raw" sent an invalid message: a line over 16 MiB long'])
    const again = await tool(source, "split").execute({ text: "after" })
    assert.deepEqual([again.isError, again.output], [true, 'server "raw" sent an invalid message: a line over 16 MiB long'])
  })

  test(`${mode}: bytes read before the hand-off (a whole line and half of one) are not lost`, T, async () => {
    const changes = []
    const source = await load(mode, raw("--stray"), { onToolsChanged: (change) => changes.push(change.tools.map((t) => t.name)) })
    // The whole list_changed sent behind the first listing: a re-listing adds `second`; the
    // other's second half comes before that answer, and a second re-listing adds `third`.
    await waitFor(() => changes.length === 2, { timeout: 10000, message: "two re-listings" })
    assert.deepEqual(changes.map((names) => names.slice(4)), [["second"], ["second", "third"]])
    assert.equal((await tool(source, "split").execute({ text: "joined" })).output, "joined")
  })

  test(`${mode}: a server exiting mid-call fails the calls in flight with its exit`, T, async () => {
    const pidFile = tmpFile("pid")
    const source = await load(mode, { fx: { command: nodeFixture("stdio-server", "--tools", "sleep,crash"), env: { PID_FILE: pidFile }, timeout: 20000 } })
    const sleep = source.tools.find((t) => t.name === "fx_sleep")
    const sleeping = Array.from({ length: 20 }, () => sleep.execute({ ms: 30000 }))
    const crash = await source.tools.find((t) => t.name === "fx_crash").execute({})
    const results = await Promise.all(sleeping)
    assert.equal(crash.output, 'server "fx" exited (code 1)')
    assert.deepEqual(new Set(results.map((r) => r.output)), new Set([crash.output]))
    assert.equal(isAlive(readPid(pidFile)), false)
  })

  test(`${mode}: a server's elicitation mid-call is answered through waitFor`, T, async () => {
    const asked = []
    const source = await load(mode, { fx: { command: nodeFixture("stdio-server", "--tools", "elicit,echo"), timeout: 20000 } }, {
      waitFor: async (request) => {
        asked.push(request.message)
        return { ok: true, data: { name: "Ada" } }
      },
    })
    const elicit = source.tools.find((t) => t.name === "fx_elicit")
    const echo = source.tools.find((t) => t.name === "fx_echo")
    const [answer, echoed] = await Promise.all([elicit.execute({}), echo.execute({ text: "meanwhile" })])
    assert.deepEqual(JSON.parse(answer.output), { action: "accept", content: { name: "Ada" } })
    assert.equal(echoed.output, "meanwhile")
    assert.deepEqual(asked, ["What is your name?"])
  })
}

test("a worker thread terminated with calls in flight: its server is gone, the main thread's source works", T, async () => {
  const main = await load("event loop", { fx: { command: nodeFixture("stdio-server", "--tools", "echo"), timeout: 20000 } })
  const pidFile = tmpFile("pid")
  const server = { command: nodeFixture("stdio-server", "--tools", "echo,sleep"), env: { PID_FILE: pidFile }, timeout: 20000 }
  const worker = new Worker(
    `const { loadMcp } = require(${JSON.stringify(new URL("../index.js", import.meta.url).pathname)})
     const { parentPort } = require("node:worker_threads")
     loadMcp({ mcpServers: { w: ${JSON.stringify(server)} } }).then(async (source) => {
       const echo = source.tools.find((t) => t.name === "w_echo")
       for (let i = 0; i < 50; i++) if ((await echo.execute({ text: "x" + i })).output !== "x" + i) throw new Error("wrong answer")
       source.tools.find((t) => t.name === "w_sleep").execute({ ms: 30000 })
       Promise.all(Array.from({ length: 20 }, (_, i) => echo.execute({ text: "y" + i })))
       parentPort.postMessage("calling")
     })`,
    { eval: true },
  )
  const said = await new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  })
  assert.equal(said, "calling")
  const pid = readPid(pidFile)
  await worker.terminate()
  await waitFor(() => !isAlive(pid), { timeout: 5000, message: "the worker's server gone" })
  assert.equal((await main.tools[0].execute({ text: "still here" })).output, "still here")
})
