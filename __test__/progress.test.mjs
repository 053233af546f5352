// ctx.onProgress on a loadMcp tool's execute: the server's progress notifications about that
// call, in order, over the direct stdio path and over streamable HTTP (rmcp's path), through a
// gateway too; a throwing callback is a warning; a bad one is the call's error.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, loadMcp } from "toolnexus"
import { nodeFixture, leakCheck } from "./helpers.mjs"

const T = { timeout: 30000 }
const slow = { command: nodeFixture("stdio-server", "--tools", "slow,echo") }
const steps = (n) => Array.from({ length: n }, (_, i) => ({ progress: i + 1, total: n, message: `step ${i + 1}` }))

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

test("onProgress hears every progress notification of its call, in order (stdio)", T, async () => {
  const source = await loadMcp({ mcpServers: { s: slow } })
  try {
    const tool = source.tools.find((t) => t.name === "s_slow")
    const heard = []
    const result = await tool.execute({ steps: 4, intervalMs: 20 }, { onProgress: (p) => heard.push(p) })
    assert.equal(result.output, "slow done after 4 steps")
    assert.deepEqual(heard, steps(4))
    // Concurrent calls each hear their own.
    const a = []
    const b = []
    await Promise.all([
      tool.execute({ steps: 3, intervalMs: 15 }, { onProgress: (p) => a.push(p.progress) }),
      tool.execute({ steps: 5, intervalMs: 10 }, { onProgress: (p) => b.push(p.progress) }),
    ])
    assert.deepEqual([a, b], [[1, 2, 3], [1, 2, 3, 4, 5]])
  } finally {
    await source.close()
  }
})

test("onProgress through a gateway over streamable HTTP (rmcp's path), both eras", T, async () => {
  const toolkit = await createToolkit({ mcpConfig: { mcpServers: { s: slow } } })
  const handle = await toolkit.serve("127.0.0.1:0")
  try {
    for (const protocol of ["2025-11-25", "2026-07-28"]) {
      const source = await loadMcp({ mcpServers: { gw: { url: `${handle.url}/mcp`, protocol } } })
      try {
        const heard = []
        const result = await source.tools.find((t) => t.name === "gw_s_slow").execute({ steps: 3, intervalMs: 20 }, { onProgress: (p) => heard.push(p) })
        assert.equal(result.output, "slow done after 3 steps", protocol)
        assert.deepEqual(heard, steps(3), protocol)
      } finally {
        await source.close()
      }
    }
  } finally {
    await handle.stop()
    await toolkit.close()
  }
})

test("a throwing onProgress is a ToolnexusWarning and the call goes on; a non-function is the call's error", T, async () => {
  const warnings = []
  const onWarning = (w) => w.name === "ToolnexusWarning" && warnings.push(w.message)
  process.on("warning", onWarning)
  const source = await loadMcp({ mcpServers: { s: slow } })
  try {
    const tool = source.tools.find((t) => t.name === "s_slow")
    const result = await tool.execute({ steps: 2, intervalMs: 10 }, { onProgress: () => { throw new Error("app bug") } })
    assert.equal(result.output, "slow done after 2 steps")
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(warnings, ["toolnexus: ctx.onProgress threw: app bug", "toolnexus: ctx.onProgress threw: app bug"])
    const bad = await tool.execute({ steps: 1 }, { onProgress: 7 })
    assert.deepEqual([bad.output, bad.isError], ["toolnexus: ctx.onProgress must be a function", true])
    // A call without onProgress is unchanged.
    assert.equal((await source.tools.find((t) => t.name === "s_echo").execute({ text: "hi" })).output, "hi")
  } finally {
    process.off("warning", onWarning)
    await source.close()
  }
})
