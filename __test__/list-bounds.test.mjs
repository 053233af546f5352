// listMcpTools (docs/listing.md) across several servers: isolation and config order, hanging servers
// bounded together, and the AbortSignal and deadline of the whole call.
// Every server is a real process or a real HTTP server built with @modelcontextprotocol/sdk;
// see __test__/fixtures/.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools, loadMcp } from "toolnexus"
import { assertAbortedBeforeStart, assertAbortMidway, descendants, leakCheck, nodeFixture, rejection } from "./helpers.mjs"

const T = { timeout: 20000 }
const names = (infos) => infos.map((t) => t.name)

// docs/listing.md "Nothing left running": whatever a test did, no child of this process survives it.
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

test("concurrency: three hanging servers with timeout 1000 finish together", T, async (t) => {
  const hang = () => ({ command: nodeFixture("hang-server"), timeout: 1000 })
  const start = performance.now()
  const inv = await listMcpTools({ mcpServers: { h1: hang(), h2: hang(), h3: hang() } })
  const elapsed = performance.now() - start
  t.diagnostic(`three hang servers (timeout 1000) resolved after ${elapsed.toFixed(1)} ms`)
  assert.deepEqual(inv.status, { h1: "failed", h2: "failed", h3: "failed" })
  // One after another they would take 3 s.
  assert.ok(elapsed < 2500, `took ${elapsed} ms: servers are not connected concurrently`)
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

// ---------------------------------------------------------------------------------------------
// Lists with too many items

test("a listing is bounded in items per server and kind: the first 10000 kept, a warning says how many were dropped", { timeout: 120000 }, async () => {
  const warnings = []
  const onWarning = (w) => w.name === "ToolnexusWarning" && warnings.push(w.message)
  process.on("warning", onWarning)
  // 3 pages of 5000 tools (and `listings`), and 3 pages of 100000 resources.
  const pager = { command: nodeFixture("pager-server", "--pages", "3", "--per", "5000", "--resources", "100000"), timeout: 60000 }
  const source = await loadMcp({ mcpServers: { pager, small: { command: nodeFixture("stdio-server", "--tools", "echo") } } })
  try {
    assert.equal(source.status.pager, "connected", source.errors.pager)
    const mine = source.tools.filter((t) => t.name.startsWith("pager_"))
    assert.equal(mine.length, 10000)
    assert.deepEqual([mine[0].name, mine.at(-1).name], ["pager_t0_0", "pager_t1_4998"], "the first ones, in order")
    assert.deepEqual(names(source.tools.filter((t) => t.name.startsWith("small_"))), ["small_echo"], "another server is whole")
    assert.equal(source.resources.length, 10000)
    assert.deepEqual([source.resources[0].uri, source.resources.at(-1).uri], ["res://0/0", "res://0/9999"])
    // The kept ones work.
    assert.equal((await mine.at(-1).execute({})).output, "t1_4998")
  } finally {
    await source.close()
  }
  // Warnings are emitted on a later tick.
  await new Promise((resolve) => setImmediate(resolve))
  process.off("warning", onWarning)
  assert.deepEqual(warnings.filter((w) => w.includes('"pager"')).sort(), [
    'toolnexus: server "pager" listed more resources than are kept (10000 at most, 32 MiB of JSON): the first 10000 are kept, 90000 more were dropped, and its later pages were not read',
    'toolnexus: server "pager" listed more tools than are kept (10000 at most, 32 MiB of JSON): the first 10000 are kept, 5001 more were dropped',
  ])
  // listMcpTools keeps the same bound.
  const inv = await listMcpTools({ mcpServers: { pager } })
  assert.equal(inv.tools.pager.length, 10000)
})
