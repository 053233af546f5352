// The direct call path over stdio (a handshake-era stdio server's tools/call written on the
// JavaScript thread, its answer taken out of the stdout reader before rmcp): concurrency with
// progress and aborts, lines bigger than the pipe, a server exiting under 100 calls, timeouts
// restarted by progress, notifications/cancelled on abort, and a Python server's exact ids.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { loadMcp } from "../index.js"
import { PYTHON, deferredCleanup, fixture, isAlive, nodeFixture, readPid, tmpFile, waitFor } from "./helpers.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)

async function load(servers) {
  const source = await loadMcp({ mcpServers: servers })
  defer(() => source.close())
  for (const [name, status] of Object.entries(source.status)) {
    assert.equal(status, "connected", `${name}: ${source.errors[name]}`)
  }
  return source
}

function tool(source, name) {
  const found = source.tools.find((t) => t.name.endsWith(`_${name}`))
  assert.ok(found, `tool ${name} among ${source.tools.map((t) => t.name)}`)
  return found
}

const lines = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : [])

test("300 concurrent calls with progress and aborts interleaved all settle with their own values", T, async () => {
  const events = tmpFile("events")
  const source = await load({
    fx: { command: nodeFixture("stdio-server", "--tools", "echo,slow,sleep"), env: { FIXTURE_EVENT_FILE: events }, timeout: 20000 },
  })
  const [echo, slow, sleep] = ["echo", "slow", "sleep"].map((name) => tool(source, name))
  const expected = []
  const calls = []
  const aborts = []
  for (let i = 0; i < 300; i++) {
    if (i % 3 === 0) {
      calls.push(echo.execute({ text: `call ${i}` }))
      expected.push({ output: `call ${i}`, isError: false })
    } else if (i % 3 === 1) {
      // Progress every 5 ms under a 400 ms timeout: each notification restarts it.
      calls.push(slow.execute({ steps: 4, intervalMs: 5 }, { timeout: 400 }))
      expected.push({ output: "slow done after 4 steps", isError: false })
    } else {
      const controller = new AbortController()
      calls.push(sleep.execute({ ms: 30000 }, { signal: controller.signal }))
      aborts.push(controller)
      expected.push({ output: "MCP tool call aborted", isError: true })
    }
  }
  // Abort half the sleeps at once and the other half once the echoes have come back.
  aborts.slice(0, 50).forEach((c) => c.abort())
  await Promise.all(calls.filter((_, i) => i % 3 === 0))
  aborts.slice(50).forEach((c) => c.abort())
  const results = await Promise.all(calls)
  assert.deepEqual(
    results.map((r) => ({ output: r.output, isError: r.isError })),
    expected,
  )
  // The server heard every abort as notifications/cancelled of the request it was running.
  await waitFor(() => lines(events).length === 100, { timeout: 10000, message: "100 cancellations logged" })
  assert.deepEqual(new Set(lines(events)), new Set(["cancelled sleep"]))
  // The connection is still in working order.
  assert.equal((await echo.execute({ text: "after" })).output, "after")
})

test("arguments and results far bigger than the pipe stay whole and in order", T, async () => {
  const source = await load({ fx: { command: nodeFixture("stdio-server", "--tools", "echo"), timeout: 20000 } })
  const echo = tool(source, "echo")
  // 64 KiB is the pipe's buffer: these lines are written partly in place and partly by the
  // flusher, with small calls queued behind them.
  const texts = []
  for (let i = 0; i < 24; i++) {
    const big = i % 2 === 0
    const fill = String.fromCharCode(97 + (i % 26))
    texts.push(big ? `${i}:` + fill.repeat(200_000 + i * 37_000) + "é✓" : `small ${i}`)
  }
  const results = await Promise.all(texts.map((text) => echo.execute({ text })))
  for (const [i, result] of results.entries()) {
    assert.equal(result.isError, false, result.output.slice(0, 200))
    assert.equal(result.output.length, texts[i].length, `call ${i}'s result has the length of its argument`)
    assert.ok(result.output === texts[i], `call ${i}'s result is its own argument`)
  }
})

test("a server exiting under 100 calls in flight fails them all with its exit, and leaves no process", T, async () => {
  const pidFile = tmpFile("server.pid")
  const source = await load({
    fx: { command: nodeFixture("stdio-server", "--tools", "sleep,crash"), env: { PID_FILE: pidFile }, timeout: 20000 },
  })
  const pid = readPid(pidFile)
  assert.ok(isAlive(pid))
  const sleep = tool(source, "sleep")
  const calls = Array.from({ length: 100 }, () => sleep.execute({ ms: 30000 }))
  const began = performance.now()
  const crash = tool(source, "crash").execute({})
  const results = await Promise.all([...calls, crash])
  const ms = performance.now() - began
  assert.deepEqual(new Set(results.map((r) => r.output)), new Set(['server "fx" exited (code 1)']))
  assert.ok(results.every((r) => r.isError))
  assert.ok(ms < 10000, `the exit was reported after ${ms} ms`)
  assert.equal(isAlive(pid), false, "the server is gone from /proc")
  const later = await sleep.execute({ ms: 1 })
  assert.equal(later.output, 'server "fx" exited (code 1)')
})

test("progress restarts the timeout; without progress the call times out with the exact message", T, async () => {
  const events = tmpFile("events")
  const source = await load({
    fx: { command: nodeFixture("stdio-server", "--tools", "slow,sleep"), env: { FIXTURE_EVENT_FILE: events }, timeout: 20000 },
  })
  // 6 × 150 ms is more than twice the 400 ms timeout.
  const slow = await tool(source, "slow").execute({ steps: 6, intervalMs: 150 }, { timeout: 400 })
  assert.deepEqual([slow.output, slow.isError], ["slow done after 6 steps", false])
  const began = performance.now()
  const hung = await tool(source, "sleep").execute({ ms: 30000 }, { timeout: 400 })
  const ms = performance.now() - began
  assert.deepEqual([hung.output, hung.isError], ["MCP tool call timed out after 400 ms", true])
  assert.ok(ms >= 399 && ms < 5000, `timed out after ${ms} ms`)
  // As rmcp does, the server is told to stop.
  await waitFor(() => lines(events).includes("cancelled sleep"), { timeout: 5000, message: "the cancellation logged" })
})

test("a JSON-RPC error answer is the call's error, in the server's words", T, async () => {
  const source = await load({ rpc: { command: nodeFixture("rpc-error-server"), timeout: 20000 } })
  const refuse = tool(source, "refuse")
  const results = await Promise.all(["a", "b"].map((why) => refuse.execute({ why })))
  assert.deepEqual(
    results.map((r) => [r.output, r.isError, r.content]),
    [
      ["refused: a", true, undefined],
      ["refused: b", true, undefined],
    ],
  )
})

test("source closed mid-call: the call settles at once with the closed reason", T, async () => {
  const source = await loadMcp({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep"), timeout: 20000 } } })
  defer(() => source.close())
  const call = tool(source, "sleep").execute({ ms: 30000 })
  await source.close()
  const result = await call
  assert.deepEqual([result.output, result.isError], ["not connected (source closed)", true])
})

test("a Python mcp server keeps the direct ids exact across 200 concurrent calls", T, async () => {
  const log = tmpFile("py.log")
  const source = await load({ py: { command: [PYTHON, path.join(path.dirname(fixture("era-server")), "py-era-server.py"), "stdio", "--log", log], timeout: 20000 } })
  const echo = tool(source, "echo")
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => echo.execute({ text: `py ${i}` })))
  // MCPServer returns a tool's str as structured content too.
  assert.deepEqual(
    results.map((r) => r.output),
    Array.from({ length: 200 }, (_, i) => JSON.stringify({ result: `py ${i}` })),
  )
  assert.deepEqual(results[7].content, [{ type: "text", text: "py 7" }])
  assert.equal(lines(log).filter((l) => JSON.parse(l).method === "tools/call").length, 200)
})
