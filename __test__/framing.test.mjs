// stdio framing: a server whose answer is a line over 16 MiB, a line that
// is not UTF-8, or JSON that answers our request without being a JSON-RPC response fails AT
// ONCE with "server sent an invalid message: …" — in initialize, tools/list or tools/call —
// long before its 20 s timeout. Lines that are not JSON (a banner) are tolerated, and quoted
// in the reason when the server fails for another cause.
import { test } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools, loadMcp } from "../index.js"
import { descendants, nodeFixture } from "./helpers.mjs"

const T = { timeout: 60000 }
/** The servers' timeout: a failure that waited for it would take this long. */
const TIMEOUT = 20000
/** Generous bound for "at once". */
const PROMPT = 5000

const bad = (mode, method) => ({ command: nodeFixture("bad-stdout-server", mode, ...(method ? [method] : [])), timeout: TIMEOUT })

async function listed(server) {
  const began = performance.now()
  const inv = await listMcpTools({ mcpServers: { bad: server } })
  return { inv, ms: performance.now() - began }
}

for (const [mode, method, reason] of [
  ["huge", undefined, /^server sent an invalid message: a line over 16 MiB long$/],
  ["utf8", undefined, /^server sent an invalid message: a line that is not valid UTF-8 \(byte 0xFF at offset 1\)$/],
  [
    "no-jsonrpc",
    undefined,
    /^server sent an invalid message: the answer to request 0 is not a valid JSON-RPC response \(it lacks "jsonrpc": "2\.0"\): \{"result":\{"protocolVersion":/,
  ],
  [
    "bad-error",
    undefined,
    /^server sent an invalid message: the answer to request 0 is not a valid JSON-RPC response \(its "error" is not an object with a numeric "code" and a "message"\): \{"jsonrpc":"2\.0","id":0,"error":"nope"\}$/,
  ],
  [
    "not-init-result",
    undefined,
    /^server sent an invalid message: the answer to initialize is not an initialize result \(it needs "protocolVersion", "capabilities" and "serverInfo"\): \{"jsonrpc":"2\.0","id":0,"result":\{"hello":"world"\}\}$/,
  ],
  ["utf8", "tools/list", /^server sent an invalid message: a line that is not valid UTF-8 \(byte 0xFF at offset 1\)$/],
  ["no-jsonrpc", "tools/list", /^server sent an invalid message: the answer to request \d+ is not a valid JSON-RPC response \(it lacks "jsonrpc": "2\.0"\): \{"result":\{"tools":\[/],
]) {
  test(`stdio framing: ${mode} in the answer to ${method ?? "initialize"} fails the server at once`, T, async (t) => {
    const { inv, ms } = await listed(bad(mode, method))
    t.diagnostic(`failed after ${ms.toFixed(0)} ms: ${inv.errors.bad?.slice(0, 160)}`)
    assert.deepEqual(inv.status, { bad: "failed" })
    assert.match(inv.errors.bad, reason)
    assert.ok(ms < PROMPT, `took ${ms} ms (timeout ${TIMEOUT} ms)`)
    assert.deepEqual(descendants(), [])
  })
}

test("stdio framing: an answer to tools/call that is not JSON-RPC fails the call at once", T, async (t) => {
  const source = await loadMcp({ mcpServers: { bad: bad("no-jsonrpc", "tools/call") } })
  t.after(() => source.close())
  assert.equal(source.status.bad, "connected", JSON.stringify(source.errors))
  const began = performance.now()
  const result = await source.tools[0].execute({})
  const ms = performance.now() - began
  t.diagnostic(`call failed after ${ms.toFixed(0)} ms: ${result.output.slice(0, 160)}`)
  assert.equal(result.isError, true)
  assert.match(
    result.output,
    /^server "bad" sent an invalid message: the answer to request \d+ is not a valid JSON-RPC response \(it lacks "jsonrpc": "2\.0"\): \{"result":\{"content":\[/,
  )
  assert.ok(ms < PROMPT, `took ${ms} ms (timeout ${TIMEOUT} ms)`)
  // The connection is gone for good: the next call says so at once too.
  const again = await source.tools[0].execute({})
  assert.equal(again.isError, true)
  assert.match(again.output, /^server "bad" sent an invalid message: /)
})

test("stdio framing: a banner and a JSON log line on stdout are tolerated", T, async () => {
  const { inv } = await listed(bad("banner"))
  assert.deepEqual(inv.status, { bad: "connected" }, JSON.stringify(inv.errors))
  assert.deepEqual(
    inv.tools.bad.map((tool) => tool.name),
    ["a"],
  )
})

test("stdio framing: a server that printed a banner and crashed is quoted in the reason", T, async () => {
  const { inv, ms } = await listed(bad("banner-crash"))
  assert.deepEqual(inv.status, { bad: "failed" })
  assert.equal(
    inv.errors.bad,
    'exited (code 3); stdout (not JSON-RPC): "Welcome to banner-server v1.0" "{\\"level\\":\\"info\\",\\"msg\\":\\"starting\\"}"',
  )
  assert.ok(ms < PROMPT, `took ${ms} ms`)
})
