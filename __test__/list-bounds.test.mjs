// listMcpTools (SPEC §3) across several servers: isolation and config order, hanging servers
// bounded together, and the AbortSignal and deadline of the whole call.
// Every server is a real process or a real HTTP server built with @modelcontextprotocol/sdk;
// see __test__/fixtures/.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools } from "toolnexus"
import { assertAbortedBeforeStart, assertAbortMidway, descendants, leakCheck, nodeFixture, rejection } from "./helpers.mjs"

const T = { timeout: 20000 }
const names = (infos) => infos.map((t) => t.name)

// SPEC §3 "Nothing left running": whatever a test did, no child of this process survives it.
leakCheck(afterEach)
// The abort cases time an HTTP session's close: its first connection's set-up is paid before.

// ---------------------------------------------------------------------------------------------
// Several servers

test("isolation and order: mixed outcomes keep config order", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      zeta: { command: nodeFixture("stdio-server", "--tools", "z1") },
      alpha: { command: ["true"], enabled: false },
      mid: { command: ["/nonexistent-toolnexus-test-binary"] },
      beta: { command: nodeFixture("stdio-server", "--tools", "b1,b2") },
      crash: { command: nodeFixture("crash-server") },
      aaa: { command: nodeFixture("liar-server", "pages", "2") },
      hang: { command: nodeFixture("hang-server"), timeout: 300 },
      off: { url: "http://127.0.0.1:1/mcp", disabled: true },
    },
  })
  const order = ["zeta", "alpha", "mid", "beta", "crash", "aaa", "hang", "off"]
  assert.deepEqual(Object.keys(inv.status), order)
  assert.deepEqual(inv.status, {
    zeta: "connected",
    alpha: "disabled",
    mid: "failed",
    beta: "connected",
    crash: "failed",
    aaa: "connected",
    hang: "failed",
    off: "disabled",
  })
  assert.deepEqual(Object.keys(inv.tools), ["zeta", "beta", "aaa"])
  assert.deepEqual(names(inv.tools.zeta), ["z1"])
  assert.deepEqual(names(inv.tools.beta), ["b1", "b2"])
  assert.deepEqual(names(inv.tools.aaa), ["t1", "t2"])
  assert.deepEqual(Object.keys(inv.errors), ["mid", "crash", "hang"])
})

test("concurrency: three hanging servers with timeout 500 finish together", T, async (t) => {
  const hang = () => ({ command: nodeFixture("hang-server"), timeout: 500 })
  const start = performance.now()
  const inv = await listMcpTools({ mcpServers: { h1: hang(), h2: hang(), h3: hang() } })
  const elapsed = performance.now() - start
  t.diagnostic(`three hang servers (timeout 500) resolved after ${elapsed.toFixed(1)} ms`)
  assert.deepEqual(inv.status, { h1: "failed", h2: "failed", h3: "failed" })
  assert.ok(elapsed < 1500, `took ${elapsed} ms: servers are not connected concurrently`)
})

// ---------------------------------------------------------------------------------------------
// Cancellation and deadline

test("AbortSignal: already aborted rejects with signal.reason and spawns nothing", T, () => assertAbortedBeforeStart(listMcpTools))

for (const [label, makeReason] of [
  ["default reason", () => undefined],
  ["custom Error reason", () => new Error("stop")],
  ["non-Error reason", () => "plain string"],
]) {
  test(`AbortSignal: aborting mid-listing rejects with the exact reason (${label}) and tears down`, T, async (t) => {
    await assertAbortMidway(t, listMcpTools, makeReason())
  })
}

for (const key of ["deadline", "timeout"]) {
  test(`opts.${key}: 100 ms bounds the whole call with the exact message`, T, async () => {
    const start = performance.now()
    const err = await rejection(
      listMcpTools({ mcpServers: { slow: { type: "local", command: ["sleep", "5"], timeout: 30000 } } }, { [key]: 100 }),
    )
    const elapsed = performance.now() - start
    assert.ok(err instanceof Error, `rejected with ${err}`)
    assert.equal(err.message, "toolnexus: MCP list deadline exceeded")
    assert.ok(elapsed < 100 + 1500, `deadline rejection after ${elapsed} ms`)
    assert.deepEqual(descendants(), [])
  })
}
