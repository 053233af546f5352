// loadMcp tool calls settle in batches through one channel per environment (src/settle.rs):
// every call still gets its own result, a pending call keeps Node alive until it settles, and an
// idle source does not keep Node alive.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { loadMcp } from "toolnexus"
import { deferredCleanup, fixture, nodeFixture, runNode } from "./helpers.mjs"

// After each test, what it deferred is closed, then no child of this process may be left
// (checked in /proc).
const defer = deferredCleanup(afterEach)

const T = { timeout: 60000 }

test("2000 calls in flight at once each resolve with their own result", T, async () => {
  const source = await loadMcp({ s: { command: nodeFixture("stdio-server.mjs", "--tools", "echo,sleep") } })
  defer(() => source.close())
  assert.equal(source.status.s, "connected", JSON.stringify(source.errors))
  const echo = source.tools.find((tool) => tool.name === "s_echo")
  const sleep = source.tools.find((tool) => tool.name === "s_sleep")
  // A slow call among them settles after the burst, with its own result too.
  const slow = sleep.execute({ ms: 300 })
  const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => echo.execute({ text: `m${i}` })))
  results.forEach((result, i) => {
    assert.equal(result.isError, false, result.output)
    assert.equal(result.output, `m${i}`)
    assert.deepEqual(result.content, [{ type: "text", text: `m${i}` }])
    assert.deepEqual(result.metadata, { server: "s" })
  })
  const slept = await slow
  assert.equal(slept.output, "slept 300")
})

test("bad arguments are the call's error result, settled like any other", T, async () => {
  const source = await loadMcp({ s: { command: nodeFixture("stdio-server.mjs", "--tools", "echo") } })
  defer(() => source.close())
  const [echo] = source.tools
  const cyclic = {}
  cyclic.self = cyclic
  const [bad, good, timeout] = await Promise.all([
    echo.execute(cyclic),
    echo.execute({ text: "fine" }),
    echo.execute({ text: "x" }, { timeout: "soon" }),
  ])
  assert.equal(bad.isError, true)
  assert.match(bad.output, /cycl|circular/i)
  assert.deepEqual(bad.metadata, { server: "s" })
  assert.equal(good.output, "fine")
  assert.equal(timeout.isError, true)
  assert.match(timeout.output, /ctx\.timeout/)
})

test("a pending call keeps Node alive until it settles; an idle source does not", T, async () => {
  const local = path.join(import.meta.dirname, `_settle_${process.pid}.mjs`)
  fs.writeFileSync(
    local,
    `import { loadMcp } from "toolnexus"
const source = await loadMcp({ s: { command: [process.execPath, ${JSON.stringify(fixture("stdio-server.mjs"))}, "--tools", "sleep"] } })
const [sleep] = source.tools
sleep.execute({ ms: 400 }).then((r) => console.log("settled", r.output))
`,
  )
  try {
    // Nothing else holds the event loop: without the pending call Node would exit at once.
    const r = await runNode(local)
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, "settled slept 400\n")
    // After it settled, the idle source (never closed) let Node exit: runNode resolved.
  } finally {
    fs.rmSync(local, { force: true })
  }
})
