// loadMcp (docs/loading.md), part 2: a call's ctx.timeout (restarted by progress, overriding the
// server's) and ctx.signal (the server is told to cancel), and the deadline, timeout and
// abort signal of the load itself.
// Real servers throughout (server-everything, the SDK-built fixtures in __test__/fixtures/, an
// in-process streamable-HTTP server); the shared set-up and clean-up are in lib/load.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import { loadMcp } from "toolnexus"
import {
  assertAbortedBeforeStart,
  assertAbortMidway,
  descendants,
  isAlive,
  nodeFixture,
  rejection,
  tmpFile,
  waitFor,
  watchDescendants,
} from "./helpers.mjs"
import { byName, call, everything, loadHarness, T } from "./lib/load.mjs"

const load = loadHarness(afterEach)
// The abort cases time an HTTP session's close: its first connection's set-up is paid before.

// ---------------------------------------------------------------------------------------------
// ctx.timeout and ctx.signal of a call

test("server-everything: progress notifications restart ctx.timeout (3 s operation, 1.5 s timeout)", T, async (t) => {
  const source = await load({ mcpServers: { everything: everything() } })
  const op = byName(source)["everything_trigger-long-running-operation"]
  const start = performance.now()
  const result = await call(op, { duration: 3, steps: 3 }, { timeout: 1500 })
  const elapsed = performance.now() - start
  t.diagnostic(`3-step operation with ctx.timeout 1500 finished after ${elapsed.toFixed(0)} ms`)
  assert.deepEqual(result, {
    output: "Long running operation completed. Duration: 3 seconds, Steps: 3.",
    isError: false,
    metadata: { server: "everything" },
  })
  assert.ok(elapsed > 1500, `finished after ${elapsed} ms: the operation did not outlive the timeout`)
  await source.close()
})

test("ctx.timeout without progress: the exact timeout message, and the server is told to cancel", T, async () => {
  const events = tmpFile("events")
  const source = await load({
    mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep,echo"), env: { FIXTURE_EVENT_FILE: events } } },
  })
  const tools = byName(source)
  const start = performance.now()
  const result = await call(tools.fx_sleep, { ms: 5000 }, { timeout: 1500 })
  const elapsed = performance.now() - start
  assert.deepEqual(result, { output: "MCP tool call timed out after 1500 ms", isError: true, metadata: { server: "fx" } })
  assert.ok(elapsed >= 1490 && elapsed < 1500 + 1000, `timed out after ${elapsed} ms`)
  await waitFor(() => fs.existsSync(events) && fs.readFileSync(events, "utf8") === "cancelled sleep\n", {
    timeout: 3000,
    message: "the timed-out call is cancelled at the server",
  })
  // The connection is still usable.
  assert.equal((await call(tools.fx_echo, { text: "still here" })).output, "still here")
  await source.close()
})

test("ctx.timeout overrides the server's timeout in both directions", T, async () => {
  // The server's timeout also bounds starting the fixture (a node process: over a second on a
  // busy machine), so it is not made tight.
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep"), timeout: 2500 } } })
  const sleep = byName(source).fx_sleep
  assert.deepEqual(await call(sleep, { ms: 6000 }), {
    output: "MCP tool call timed out after 2500 ms",
    isError: true,
    metadata: { server: "fx" },
  })
  assert.deepEqual(await call(sleep, { ms: 3000 }, { timeout: 8000 }), { output: "slept 3000", isError: false, metadata: { server: "fx" } })
  assert.deepEqual(await call(sleep, { ms: 3000 }, { timeout: 200 }), {
    output: "MCP tool call timed out after 200 ms",
    isError: true,
    metadata: { server: "fx" },
  })
  await source.close()
})

test("fixture slow tool: progress every 200 ms keeps a 300 ms timeout alive for 1 s", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "slow") } } })
  assert.deepEqual(await call(byName(source).fx_slow, { steps: 5, intervalMs: 200 }, { timeout: 300 }), {
    output: "slow done after 5 steps",
    isError: false,
    metadata: { server: "fx" },
  })
  await source.close()
})

test("server-everything: ctx.signal aborts a long-running operation fast", T, async (t) => {
  const source = await load({ mcpServers: { everything: everything() } })
  const tools = byName(source)
  const ac = new AbortController()
  const pending = tools["everything_trigger-long-running-operation"].execute({ duration: 20, steps: 2 }, { signal: ac.signal })
  // Messages are handled in order: once this echo is answered, the operation has started.
  assert.equal((await call(tools.everything_echo, { message: "sync" })).output, "Echo: sync")
  const start = performance.now()
  ac.abort()
  const result = await pending
  const latency = performance.now() - start
  t.diagnostic(`abort -> result latency: ${latency.toFixed(2)} ms`)
  assert.deepEqual(result, { output: "MCP tool call aborted", isError: true, metadata: { server: "everything" } })
  assert.ok(latency < 1000, `the aborted call resolved ${latency} ms after abort`)
  // The connection survives an aborted call.
  assert.equal((await call(tools.everything_echo, { message: "after" })).output, "Echo: after")
  await source.close()
})

test("ctx.signal: the server receives notifications/cancelled (fixture records it)", T, async () => {
  const events = tmpFile("events")
  const source = await load({
    mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep,echo"), env: { FIXTURE_EVENT_FILE: events } } },
  })
  const tools = byName(source)
  const ac = new AbortController()
  const pending = tools.fx_sleep.execute({ ms: 20000 }, { signal: ac.signal })
  assert.equal((await call(tools.fx_echo, { text: "sync" })).output, "sync")
  assert.equal(fs.existsSync(events), false)
  const start = performance.now()
  ac.abort(new Error("user pressed stop"))
  const result = await pending
  const latency = performance.now() - start
  assert.deepEqual(result, { output: "MCP tool call aborted", isError: true, metadata: { server: "fx" } })
  assert.ok(latency < 1000, `resolved ${latency} ms after abort`)
  await waitFor(() => fs.existsSync(events) && fs.readFileSync(events, "utf8") === "cancelled sleep\n", {
    timeout: 3000,
    message: "the fixture recorded the cancellation",
  })
  // An already-aborted signal resolves at once with the same message.
  const before = performance.now()
  assert.deepEqual(await call(tools.fx_sleep, { ms: 20000 }, { signal: AbortSignal.abort() }), {
    output: "MCP tool call aborted",
    isError: true,
    metadata: { server: "fx" },
  })
  assert.ok(performance.now() - before < 1000)
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// Deadline and abort of the load itself

for (const key of ["deadline", "timeout"]) {
  test(`opts.${key}: 100 ms with a hang server rejects with the exact message, nothing left`, T, async () => {
    const pidFile = tmpFile("hang.pid")
    const watch = watchDescendants()
    const start = performance.now()
    const err = await rejection(
      loadMcp(
        {
          mcpServers: {
            ok: { command: nodeFixture("stdio-server", "--tools", "a") },
            hang: { command: nodeFixture("hang-server"), env: { PID_FILE: pidFile }, timeout: 30000 },
          },
        },
        { [key]: 100 },
      ),
    )
    const elapsed = performance.now() - start
    const seen = watch.stop()
    assert.ok(err instanceof Error, `rejected with ${err}`)
    assert.equal(err.message, "toolnexus: MCP load deadline exceeded")
    assert.ok(elapsed < 100 + 1500, `deadline rejection after ${elapsed} ms`)
    assert.ok(seen.length > 0, "the servers were spawned")
    for (const pid of seen) assert.equal(isAlive(pid), false, `${pid} alive after the deadline rejection`)
    assert.deepEqual(descendants(), [])
  })
}

for (const [label, makeReason] of [
  ["default reason", () => undefined],
  ["custom Error reason", () => new Error("stop loading")],
  ["non-Error reason", () => "plain string"],
]) {
  test(`abort mid-load rejects with the exact reason (${label}) and tears everything down`, T, async (t) => {
    await assertAbortMidway(t, loadMcp, makeReason(), { waitFor: async () => ({ ok: false }) })
  })
}

test("an already-aborted signal rejects at once with its reason and spawns nothing", T, () => assertAbortedBeforeStart(loadMcp))
