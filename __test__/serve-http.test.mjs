// Serving (docs/serving.md), part 2: toolkit.serve over streamable HTTP, seen by the SDK client and
// by raw HTTP: unknown tools and methods, server/discover, paths, malformed JSON, Host and
// Origin checks, and the Accept header's JSON-or-SSE answers.
// Every server is real, every socket a real loopback socket on 127.0.0.1:0; the shared
// set-up and clean-up are in lib/serve.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { defineTool } from "toolnexus"
import { addTool, explodeTool, INIT, parseBody, post, rawHttp, rawSession, serveHarness, T } from "./lib/serve.mjs"

const { serveTools, sdkClient } = serveHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// toolkit.serve over streamable HTTP: the SDK client

test("serve: the SDK client lists and calls a served toolkit; defaults name toolnexus 0.1.0", T, async () => {
  const json = defineTool({ name: "json", description: "An object", run: () => ({ ok: true }) })
  const { handle } = await serveTools([addTool(), explodeTool(), json])
  const client = await sdkClient(handle.url)
  assert.deepEqual(client.getServerVersion(), { name: "toolnexus", version: "0.1.0" })

  const { tools } = await client.listTools()
  assert.deepEqual(tools, [
    {
      name: "add",
      description: "Add two numbers",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    },
    { name: "explode", description: "Always errors", inputSchema: { type: "object", properties: {} } },
    { name: "json", description: "An object", inputSchema: { type: "object", properties: {} } },
  ])

  const sum = await client.callTool({ name: "add", arguments: { a: 2.9, b: 3 } })
  assert.deepEqual(sum.content, [{ type: "text", text: "5" }])
  assert.equal(sum.isError, false)
  const boom = await client.callTool({ name: "explode", arguments: {} })
  assert.deepEqual(boom.content, [{ type: "text", text: "kaboom" }])
  assert.equal(boom.isError, true)
  const obj = await client.callTool({ name: "json", arguments: {} })
  assert.deepEqual(obj.content, [{ type: "text", text: '{"ok":true}' }])

  await assert.rejects(client.callTool({ name: "nope", arguments: {} }), (err) => {
    assert.equal(err.code, -32602)
    assert.match(err.message, /Unknown tool: nope/)
    return true
  })
  // still serving after the error
  const again = await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })
  assert.deepEqual(again.content, [{ type: "text", text: "2" }])
})

// ---------------------------------------------------------------------------------------------
// toolkit.serve over streamable HTTP: the wire, raw

test("serve wire: tools/call of an unknown tool is JSON-RPC -32602 'Unknown tool: nope'", T, async () => {
  const { handle } = await serveTools([addTool()])
  const headers = await rawSession(handle.url)
  const r = await post(handle.url, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "nope", arguments: {} } }, { headers })
  assert.equal(r.status, 200)
  assert.deepEqual(parseBody(r.type, r.text), { jsonrpc: "2.0", id: 7, error: { code: -32602, message: "Unknown tool: nope" } })
})

test("serve wire: unknown methods are -32601; server/discover answers the 2026-07-28 era", T, async () => {
  const { handle } = await serveTools([addTool()])
  const headers = await rawSession(handle.url)
  for (const [id, method] of [
    [1, "frobnicate"],
    [3, "resources/list"],
  ]) {
    const r = await post(handle.url, { jsonrpc: "2.0", id, method, params: {} }, { headers })
    assert.equal(r.status, 200, method)
    const msg = parseBody(r.type, r.text)
    assert.equal(msg.id, id, method)
    assert.equal(msg.error?.code, -32601, `${method}: ${r.text}`)
    assert.equal(msg.result, undefined, method)
  }
  // The way a 2026-07-28 client probes: no session, the lifecycle in the request's _meta.
  const modern = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  }
  const probe = await post(
    handle.url,
    { jsonrpc: "2.0", id: 9, method: "server/discover", params: { _meta: modern } },
    { headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" } },
  )
  assert.equal(probe.status, 200, probe.text)
  const discovered = parseBody(probe.type, probe.text).result
  assert.ok(discovered.supportedVersions.includes("2026-07-28"), probe.text)
  assert.ok(discovered.supportedVersions.includes("2025-11-25"), probe.text)
  // listChanged: a gateway tells clients in a session when its servers' tools change.
  assert.deepEqual(discovered.capabilities.tools, { listChanged: true })
  assert.deepEqual(discovered._meta["io.modelcontextprotocol/serverInfo"], { name: "toolnexus", version: "0.1.0" })
  // A discover without the required _meta is an invalid request of that era, not a legacy method.
  const bare = await post(handle.url, { jsonrpc: "2.0", id: 10, method: "server/discover", params: {} })
  assert.equal(parseBody(bare.type, bare.text).error?.code, -32602, bare.text)
})

test("serve wire: other paths are 404", T, async () => {
  const { handle } = await serveTools([addTool()])
  for (const [method, path] of [
    ["GET", "/other"],
    ["POST", "/other"],
    ["GET", "/"],
    ["POST", "/mcp/extra"],
  ]) {
    const res = await fetch(`${handle.url}${path}`, {
      method,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) : undefined,
    })
    await res.arrayBuffer()
    assert.equal(res.status, 404, `${method} ${path}`)
  }
})

test("serve wire: malformed JSON is HTTP 400 with JSON-RPC -32700, and serving goes on", T, async () => {
  const { handle } = await serveTools([addTool()])
  const headers = await rawSession(handle.url)
  const r = await post(handle.url, '{"jsonrpc": "2.0", "id": 1, "method": ', { headers })
  assert.equal(r.status, 400)
  const msg = JSON.parse(r.text)
  assert.equal(msg.jsonrpc, "2.0")
  assert.equal(msg.id, null)
  assert.equal(msg.error.code, -32700)
  const ok = await post(handle.url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }, { headers })
  assert.deepEqual(parseBody(ok.type, ok.text).result, { content: [{ type: "text", text: "3" }], isError: false })
})

test("serve wire: a foreign Host or Origin is refused with 403 on a loopback bind", T, async () => {
  const calls = []
  const { handle } = await serveTools([addTool()], { onCall: (c) => calls.push(c) })
  const port = new URL(handle.url).port
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 1 } } })
  const base = { "content-type": "application/json", accept: "application/json, text/event-stream" }

  for (const host of ["evil.example", `evil.example:${port}`, `attacker.test:${port}`]) {
    const r = await rawHttp(handle.url, { headers: { ...base, host }, body })
    assert.equal(r.status, 403, `Host: ${host}`)
  }
  for (const origin of ["http://evil.example", `http://evil.example:${port}`, "null"]) {
    const r = await post(handle.url, body, { headers: { origin } })
    assert.equal(r.status, 403, `Origin: ${origin}`)
  }
  assert.deepEqual(calls, [], "a refused request never reaches a tool")

  // the legitimate forms are served
  const init = JSON.stringify(INIT)
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
    const r = await rawHttp(handle.url, { headers: { ...base, host }, body: init })
    assert.equal(r.status, 200, `Host: ${host}`)
    assert.equal(parseBody(r.type, r.text).result.serverInfo.name, "toolnexus")
  }
  const own = await post(handle.url, init, { headers: { origin: handle.url } })
  assert.equal(own.status, 200, `Origin: ${handle.url}`)
})

test("serve wire: the client must accept both JSON and SSE (406 otherwise); a plain call is answered as JSON, one asking for progress as SSE", T, async () => {
  const { handle } = await serveTools([addTool()])
  const headers = await rawSession(handle.url)
  const call = (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "add", arguments: { a: 20, b: 22 } } })
  const expected = (id) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "42" }], isError: false } })

  for (const accept of ["text/event-stream", "application/json"]) {
    const r = await post(handle.url, call(1), { accept, headers })
    assert.equal(r.status, 406, accept)
    assert.match(r.text, /must accept both application\/json and text\/event-stream/)
  }
  const both = await post(handle.url, call(3), { accept: "application/json, text/event-stream", headers })
  assert.equal(both.status, 200)
  assert.match(both.type, /^application\/json/)
  assert.deepEqual(JSON.parse(both.text), expected(3))
  const progress = { ...call(4), params: { ...call(4).params, _meta: { progressToken: "p" } } }
  const streamed = await post(handle.url, progress, { accept: "application/json, text/event-stream", headers })
  assert.equal(streamed.status, 200)
  assert.match(streamed.type, /^text\/event-stream/)
  assert.deepEqual(parseBody(streamed.type, streamed.text), expected(4))
})
