// The short road for calls (crates/engine/src/serve/http/fast.rs): a handshake-era `tools/call` inside a
// session, from a client that prefers JSON, is answered as application/json without rmcp's
// session worker. Every test compares it with rmcp's own road, taken by the same request with a
// progressToken (or with text/event-stream first in Accept): the same bytes, errors, statuses
// and side effects. Clients: raw HTTP, the TypeScript SDK client, the Python mcp client.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup, nodeFixture, pythonClient, waitFor } from "./helpers.mjs"
import { gateTool } from "./gate-tool.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)
const VERSION = "2025-11-25"
const JSON_FIRST = "application/json, text/event-stream"
const SSE_FIRST = "text/event-stream, application/json"

async function serve(tools) {
  const toolkit = await createToolkit({ extraTools: tools, builtins: false })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.stop())
  return { handle, url: `${handle.url}/mcp` }
}

async function post(url, body, headers = {}, accept = JSON_FIRST) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept, ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() }
}

/** initialize + notifications/initialized; the headers later requests of the session carry. */
async function rawSession(url) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: JSON_FIRST },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "fast", version: "1" } },
    }),
  })
  await res.text()
  assert.equal(res.status, 200)
  const headers = { "mcp-session-id": res.headers.get("mcp-session-id"), "mcp-protocol-version": VERSION }
  assert.equal((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status, 202)
  return headers
}

/** The JSON-RPC messages of an SSE body, as their raw `data:` text. */
function sseData(text) {
  return text
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .filter((l) => l.length > 0)
}

const call = (id, name, args = {}, meta) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
})

const resultTools = () => [
  defineTool({ name: "text", run: () => "plain text" }),
  defineTool({
    name: "structured",
    outputSchema: { type: "object", properties: { t: { type: "number" } } },
    run: () => ({ content: [{ type: "text", text: '{"t":21}' }], structuredContent: { t: 21 } }),
  }),
  defineTool({ name: "failing", run: () => ({ content: [{ type: "text", text: "it broke" }], isError: true }) }),
  defineTool({ name: "throwing", run: () => { throw new Error("thrown here") } }),
  defineTool({ name: "number", run: () => 42 }),
  defineTool({ name: "malformed", run: () => ({ content: "not a list" }) }),
  defineTool({
    name: "typed",
    inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    run: ({ n }) => String(n * 2),
  }),
]

test("a call in a session is answered as JSON, byte for byte the message rmcp's SSE road sends; errors too", T, async () => {
  const { url } = await serve(resultTools())
  const headers = await rawSession(url)
  const cases = [
    ["text"],
    ["structured"],
    ["failing"],
    ["throwing"],
    ["number"],
    ["malformed"],
    ["typed", { n: 4 }],
    ["typed", { n: "four" }], // bad arguments: an isError result naming the path
    ["typed", {}],
    ["nope"], // unknown tool: JSON-RPC -32602
  ]
  let id = 1
  for (const [name, args] of cases) {
    id++
    const fast = await post(url, call(id, name, args), headers)
    assert.equal(fast.status, 200, name)
    assert.equal(fast.type, "application/json", `${name}: ${fast.type}`)
    // The same request (same id) on rmcp's road: asking for progress, or preferring the stream.
    const withProgress = await post(url, call(id, name, args, { progressToken: `p${id}` }), headers)
    const sseFirst = await post(url, call(id, name, args), headers, SSE_FIRST)
    for (const [road, slow] of [["progressToken", withProgress], ["SSE first", sseFirst]]) {
      assert.equal(slow.status, 200, `${name} (${road})`)
      assert.match(slow.type, /^text\/event-stream/, `${name} (${road})`)
      assert.deepEqual(sseData(slow.text), [fast.text], `${name} (${road}): the same bytes`)
    }
  }
  // Spot checks of what those bytes say.
  const structured = JSON.parse((await post(url, call(100, "structured"), headers)).text)
  assert.deepEqual(structured, {
    jsonrpc: "2.0",
    id: 100,
    result: {
      content: [{ type: "text", text: '{"t":21}' }],
      structuredContent: { t: 21 },
      isError: false,
    },
  })
  const unknown = JSON.parse((await post(url, call(101, "nope"), headers)).text)
  assert.deepEqual(unknown, { jsonrpc: "2.0", id: 101, error: { code: -32602, message: "Unknown tool: nope" } })
  const bad = JSON.parse((await post(url, call(102, "typed", { n: "four" }), headers)).text)
  assert.equal(bad.result.isError, true)
  assert.match(bad.result.content[0].text, /^Invalid arguments for tool typed: .*n/)
})

test("a gateway call on the short road carries the upstream result as rmcp's road does: _meta, structuredContent, isError", T, async () => {
  const toolkit = await createToolkit({
    mcpConfig: { up: { command: nodeFixture("stdio-server", "--tools", "meta,structured,fail") } },
    builtins: false,
  })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const url = `${handle.url}/mcp`
  const headers = await rawSession(url)
  let id = 0
  for (const name of ["up_meta", "up_structured", "up_fail"]) {
    id++
    const fast = await post(url, call(id, name), headers)
    assert.equal(fast.type, "application/json", name)
    const slow = await post(url, call(id, name, {}, { progressToken: id }), headers)
    assert.deepEqual(sseData(slow.text), [fast.text], `${name}: the same bytes`)
  }
  const meta = JSON.parse((await post(url, call(9, "up_meta"), headers)).text)
  assert.deepEqual(meta.result, {
    content: [{ type: "text", text: "with meta" }],
    structuredContent: { n: 1 },
    _meta: { "example.com/trace": "t-1", nested: { ok: true } },
  })
})

test("the session checks are rmcp's: unknown or deleted session 404, bad MCP-Protocol-Version 400, foreign Origin 403", T, async () => {
  const { url } = await serve(resultTools())
  const headers = await rawSession(url)
  const both = async (body, h, accept) => {
    const fast = await post(url, body, h, accept)
    const slow = await post(url, { ...body, params: { ...body.params, _meta: { progressToken: 1 } } }, h, accept)
    assert.deepEqual([fast.status, fast.text], [slow.status, slow.text])
    return fast
  }
  const unknown = await both(call(1, "text"), { ...headers, "mcp-session-id": "no-such-session" })
  assert.deepEqual([unknown.status, unknown.text], [404, "Not Found: Session not found"])
  const version = await both(call(2, "text"), { ...headers, "mcp-protocol-version": "1999-01-01" })
  assert.deepEqual([version.status, version.text], [400, "Bad Request: Unsupported MCP-Protocol-Version: 1999-01-01"])
  const origin = await both(call(3, "text"), { ...headers, origin: "http://evil.example" })
  assert.equal(origin.status, 403)
  const onlyJson = await both(call(4, "text"), headers, "application/json")
  assert.equal(onlyJson.status, 406)

  const del = await fetch(url, { method: "DELETE", headers })
  assert.equal(del.status, 200)
  const deleted = await both(call(5, "text"), headers)
  assert.deepEqual([deleted.status, deleted.text], [404, "Not Found: Session not found"])
})

test("notifications/cancelled and DELETE end a call on either road alike: no answer comes, and the run is aborted", T, async () => {
  const gate = gateTool()
  const { url } = await serve([gate.tool])
  for (const meta of [undefined, { progressToken: "slow" }]) {
    const road = meta ? "rmcp's road" : "short road"
    for (const how of ["cancelled", "DELETE"]) {
      const headers = await rawSession(url)
      const before = gate.endings.length
      const pending = post(url, call(7, "gate", {}, meta), headers)
      await waitFor(() => gate.waiting.length > before, { message: `${road}: the call running` })
      if (how === "cancelled") {
        const r = await post(url, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "test" } }, headers)
        assert.equal(r.status, 202)
      } else {
        assert.equal((await fetch(url, { method: "DELETE", headers })).status, 200)
      }
      const answered = await pending
      assert.equal(answered.status, 200, `${road}, ${how}`)
      assert.match(answered.type, /^text\/event-stream/, `${road}, ${how}: a stream that ends`)
      assert.deepEqual(sseData(answered.text), [], `${road}, ${how}: no answer`)
      if (how === "DELETE" && meta) {
        // rmcp's road ends a deleted session's runs only as its service loop winds down, which
        // is not always soon: release the run instead of waiting on that.
        gate.waiting.at(-1)()
        continue
      }
      await waitFor(() => gate.endings.length === before + 1, { message: `${road}, ${how}: the run ended` })
      assert.equal(gate.endings.at(-1), "aborted", `${road}, ${how}`)
    }
  }
})

test("an elicitation of a call goes out on the session's GET stream on either road, and its answer reaches the run", T, async () => {
  const ask = defineTool({
    name: "ask",
    run: async (_args, ctx) => JSON.stringify(await ctx.elicit({ message: "Sure?", requestedSchema: { type: "object", properties: {} } })),
  })
  const { url } = await serve([ask])
  const init = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: JSON_FIRST },
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: VERSION, capabilities: { elicitation: {} }, clientInfo: { name: "fast", version: "1" } } }),
  })
  await init.text()
  const headers = { "mcp-session-id": init.headers.get("mcp-session-id"), "mcp-protocol-version": VERSION }
  assert.equal((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status, 202)
  // The GET stream: every elicitation/create on it is answered (accept, with the request's id).
  const stream = await fetch(url, { headers: { accept: "text/event-stream", ...headers } })
  assert.equal(stream.status, 200)
  const reader = stream.body.getReader()
  defer(() => reader.cancel())
  const asked = []
  ;(async () => {
    const decoder = new TextDecoder()
    let text = ""
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      text += decoder.decode(value, { stream: true })
      const events = text.split("\n\n")
      text = events.pop()
      for (const message of events.flatMap(sseData).map((d) => JSON.parse(d))) {
        if (message.method !== "elicitation/create") continue
        asked.push(message.params.message)
        await post(url, { jsonrpc: "2.0", id: message.id, result: { action: "accept", content: { road: asked.length } } }, headers)
      }
    }
  })().catch(() => {})
  for (const [n, meta] of [[1, { progressToken: "slow" }], [2, undefined]]) {
    const r = await post(url, call(10 + n, "ask", {}, meta), headers)
    assert.equal(r.status, 200)
    const messages = r.type.startsWith("text/event-stream") ? sseData(r.text) : [r.text]
    assert.equal(messages.length, 1, `only the answer on the call's own response: ${r.text}`)
    assert.deepEqual(JSON.parse(messages[0]).result.content, [{ type: "text", text: JSON.stringify({ action: "accept", content: { road: n } }) }])
    assert.equal(r.type, meta ? "text/event-stream" : "application/json")
  }
  assert.deepEqual(asked, ["Sure?", "Sure?"])
})

test("stop() during a short-road call waits for it, and the call is answered in full as JSON", T, async () => {
  const gate = gateTool()
  const toolkit = await createToolkit({ extraTools: [gate.tool], builtins: false })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  const url = `${handle.url}/mcp`
  const headers = await rawSession(url)
  const pending = post(url, call(3, "gate"), headers)
  await waitFor(() => gate.waiting.length === 1, { message: "the call running" })
  let stopped = false
  const stopping = handle.stop().then(() => (stopped = true))
  // stop() is under way once the listener refuses connections; the call is still in flight.
  await waitFor(async () => (await fetch(handle.url).then(() => "open", (e) => e.cause?.code)) === "ECONNREFUSED", { message: "listener closed" })
  assert.equal(stopped, false, "stop() waits for the call in flight")
  gate.waiting[0]()
  const answered = await pending
  await stopping
  assert.equal(answered.type, "application/json")
  assert.deepEqual(JSON.parse(answered.text), {
    jsonrpc: "2.0",
    id: 3,
    result: { content: [{ type: "text", text: "released" }], isError: false },
  })
  assert.deepEqual(gate.endings, ["released"])
})

test("the SDK client on the short road: results, logs on the session stream, elicitation answered, cancellation", T, async () => {
  const gate = gateTool()
  const tools = [
    ...resultTools(),
    gate.tool,
    defineTool({
      name: "chatty",
      async run(_args, ctx) {
        await ctx.log("info", { step: 1 })
        const answer = await ctx.elicit({ message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } })
        await ctx.log("warning", { step: 2 }, "chatty")
        return `hello ${answer.content.name}`
      },
    }),
  ]
  const { url } = await serve(tools)
  const types = []
  const recording = async (input, init) => {
    const res = await fetch(input, init)
    if (init?.method === "POST") types.push(res.headers.get("content-type"))
    return res
  }
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { elicitation: {} } })
  const logs = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }))
  defer(() => client.close())

  types.length = 0
  const s = await client.callTool({ name: "structured", arguments: {} })
  assert.deepEqual(s.structuredContent, { t: 21 })
  assert.equal((await client.callTool({ name: "nope", arguments: {} }).catch((e) => e)).code, -32602)
  assert.deepEqual(types, ["application/json", "application/json"], "both answered on the short road")

  const hello = await client.callTool({ name: "chatty", arguments: {} })
  assert.deepEqual(hello.content, [{ type: "text", text: "hello Ada" }])
  await waitFor(() => logs.length >= 2, { message: "both log messages" })
  assert.deepEqual(logs, [
    { level: "info", data: { step: 1 } },
    { level: "warning", logger: "chatty", data: { step: 2 } },
  ])

  const controller = new AbortController()
  const cancelled = client.callTool({ name: "gate", arguments: {} }, undefined, { signal: controller.signal }).catch((e) => e)
  await waitFor(() => gate.waiting.length === 1, { message: "the gate call running" })
  controller.abort()
  await waitFor(() => gate.endings.length === 1, { message: "the run aborted" })
  assert.deepEqual(gate.endings, ["aborted"])
  assert.ok((await cancelled) instanceof Error)
  // The session goes on.
  assert.deepEqual((await client.callTool({ name: "text", arguments: {} })).content, [{ type: "text", text: "plain text" }])
})

test("the Python mcp client (handshake era) calls through the short road", T, async () => {
  const { url } = await serve([defineTool({ name: "add", run: ({ a, b }) => String(a + b) })])
  const legacy = await pythonClient(url, "legacy", 3)
  assert.equal(legacy.report.protocolVersion, VERSION, legacy.stderr)
  assert.deepEqual(legacy.report.outputs, [
    { text: "1", isError: false },
    { text: "2", isError: false },
    { text: "3", isError: false },
  ])
})
