// A wide tool schema costs about its own size, not hundreds of times it: one tool whose input
// schema has 200 000 properties (about 6 MB of JSON), loaded, called and closed 4 times, and
// listed, in a child process that reports its resident memory (VmHWM, VmRSS after a gc).
// Before, a loadMcp of it grew Node by about 800 MB each time (the schema held as values,
// copied several times) and listMcpTools by about 170 MB. A tool definition over 8 MiB fails
// its server with the reason.
import { test } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { listMcpTools, loadMcp } from "../index.js"
import { descendants, fixture, nodeFixture } from "./helpers.mjs"

const T = { timeout: 120000 }
const run = promisify(execFile)

/** The workload's report: `{ base, peak, retained, results }`, memory in MiB. */
async function workload(mode, rounds) {
  const args = ["--expose-gc", fixture("wide-schema-workload"), "--mode", mode, "--rounds", String(rounds), "--", ...nodeFixture("wide-schema-server")]
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 20 })
  return JSON.parse(stdout)
}

test("loadMcp of a 6 MB schema, called and closed 4 times, costs under 300 MB", T, async () => {
  const { base, peak, retained, results } = await workload("load", 4)
  assert.deepEqual(results, Array(4).fill({ status: "connected", properties: 200000, output: "got 2 arguments" }))
  assert.ok(peak - base < 300, `peak grew by ${(peak - base).toFixed(0)} MiB`)
  assert.ok(retained - base < 300, `retained ${(retained - base).toFixed(0)} MiB`)
})

test("listMcpTools of a 6 MB schema costs far less than 170 MB", T, async () => {
  const { base, peak, results } = await workload("list", 1)
  assert.deepEqual(results, [{ status: "connected", properties: 200000 }])
  assert.ok(peak - base < 120, `peak grew by ${(peak - base).toFixed(0)} MiB`)
})

test("a tool definition over 8 MiB fails its server with the reason; the others connect", T, async () => {
  const padded = JSON.stringify({ name: "padded", description: "x".repeat(9 * 1024 * 1024), inputSchema: { type: "object" } })
  const reason = `tools/list failed: tool "padded" is ${padded.length} bytes of JSON, over the 8 MiB a tool definition may be`
  const config = {
    mcpServers: {
      over: { command: nodeFixture("wide-schema-server", "--properties", "10", "--pad", "9") },
      fine: { command: nodeFixture("wide-schema-server", "--properties", "10") },
    },
  }
  const inventory = await listMcpTools(config)
  assert.deepEqual(inventory.status, { over: "failed", fine: "connected" })
  assert.equal(inventory.errors.over, reason)
  assert.deepEqual(inventory.tools.fine.map((t) => t.name), ["wide"])
  const source = await loadMcp(config)
  try {
    assert.deepEqual(source.status, { over: "failed", fine: "connected" })
    assert.equal(source.errors.over, reason)
    assert.deepEqual(source.tools.map((t) => t.name), ["fine_wide"])
  } finally {
    await source.close()
  }
  assert.deepEqual(descendants(), [])
})
