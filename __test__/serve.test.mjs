// Serving (SPEC §5, issue 4, seed 003): defineTool, exposedMcpTools, buildMcpServer over stdio
// (native and through an SDK transport), createToolkit and toolkit.serve over streamable HTTP,
// and the gateway that re-serves tools from loadMcp. Every server is real, every socket a real
// loopback socket on 127.0.0.1:0, and every client is either this package's own loadMcp /
// listMcpTools, the @modelcontextprotocol/sdk client, or raw HTTP.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import http from "node:http"
import net from "node:net"
import { createToolkit, defineTool, exposedMcpTools, listMcpTools, loadMcp } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import {
  deferredCleanup,
  descendants,
  describePids,
  fixture,
  isAlive,
  nodeFixture,
  readPid,
  runNode,
  tmpFile,
  waitFor,
} from "./helpers.mjs"

const T = { timeout: 30000 }
const names = (tools) => tools.map((t) => t.name)

// Safety net only: whatever a failing test left open is closed before the process check. Tests
// that are about teardown assert it themselves, before this runs.
const defer = deferredCleanup(afterEach)

/** Rejects with `what` if `promise` has not settled within `ms` (a hang detector, not a sleep). */
function within(promise, ms, what) {
  let timer
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms)
  })
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer))
}

/** A promise with its resolve function exposed. */
function deferred() {
  let resolve
  const promise = new Promise((r) => (resolve = r))
  return { promise, resolve }
}

/** Serves `tools` from a fresh toolkit; both are closed after the test. */
async function serveTools(tools, opts = {}) {
  const tk = await createToolkit({ extraTools: tools, builtins: false })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", opts)
  defer(() => handle.stop())
  return { tk, handle }
}

/** An SDK client connected over streamable HTTP to `url + "/mcp"`; closed after the test. */
async function sdkClient(url) {
  const client = new Client({ name: "serve-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))
  defer(() => client.close())
  return client
}

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
}

/** POSTs `body` (an object, or raw text) to `url + path`; resolves { status, type, text }. */
async function post(url, body, { accept = "application/json, text/event-stream", headers = {}, path = "/mcp" } = {}) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  })
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() }
}

/**
 * Does what a raw MCP client does first: initialize (+ notifications/initialized). Resolves the
 * headers later requests carry (session id when the server gave one, protocol version).
 */
async function rawSession(url) {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(INIT),
  })
  assert.equal(res.status, 200)
  const init = parseBody(res.headers.get("content-type") ?? "", await res.text())
  assert.equal(init.id, 0)
  const headers = { "mcp-protocol-version": init.result.protocolVersion }
  const session = res.headers.get("mcp-session-id")
  if (session) headers["mcp-session-id"] = session
  const ack = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, { headers })
  assert.equal(ack.status, 202)
  return headers
}

/** The single JSON-RPC message of a JSON or SSE response body. */
function parseBody(type, text) {
  if (type.startsWith("text/event-stream")) {
    const data = text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .filter((l) => l.length > 0)
    assert.equal(data.length, 1, `one data line expected in ${JSON.stringify(text)}`)
    return JSON.parse(data[0])
  }
  assert.match(type, /^application\/json/)
  return JSON.parse(text)
}

/** A raw HTTP request through node:http, which (unlike fetch) lets the test set `Host`. */
function rawHttp(url, { method = "POST", path = "/mcp", headers = {}, body = "" } = {}) {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (d) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode, type: res.headers["content-type"] ?? "", text }))
    })
    req.on("error", reject)
    req.end(body)
  })
}

/** Resolves with the error code of a TCP connection attempt to `url`'s port (or "connected"). */
function tryConnect(url) {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const sock = net.connect({ host: hostname, port: Number(port) })
    sock.once("connect", () => {
      sock.destroy()
      resolve("connected")
    })
    sock.once("error", (err) => resolve(err.code))
  })
}

// The seed 003 tools, in JavaScript.
const addTool = () =>
  defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    run: (args) => String(Math.trunc(args.a + args.b)),
  })
const explodeTool = () =>
  defineTool({
    name: "explode",
    description: "Always errors",
    run: () => {
      throw new Error("kaboom")
    },
  })
const mk = (name) => defineTool({ name, description: name, run: () => name })

// ---------------------------------------------------------------------------------------------
// defineTool

test("defineTool: run results map exactly per SPEC §5", T, async () => {
  const cases = [
    ["a string is kept", () => "plain text", { output: "plain text", isError: false }],
    ["an empty string is kept", () => "", { output: "", isError: false }],
    ["an async string is kept", async () => "later", { output: "later", isError: false }],
    ["a ToolResult is kept", () => ({ output: "bad input", isError: true }), { output: "bad input", isError: true }],
    [
      "a ToolResult with metadata is kept",
      async () => ({ output: "ok", isError: false, metadata: { rows: 2 } }),
      { output: "ok", isError: false, metadata: { rows: 2 } },
    ],
    ["undefined gives an empty output", () => undefined, { output: "", isError: false }],
    ["a resolved undefined gives an empty output", async () => {}, { output: "", isError: false }],
    ["null is JSON-stringified", () => null, { output: "null", isError: false }],
    ["a number is JSON-stringified", () => 42, { output: "42", isError: false }],
    ["false is JSON-stringified", () => false, { output: "false", isError: false }],
    ["an object is JSON-stringified", () => ({ a: 1, b: [true, "x"] }), { output: '{"a":1,"b":[true,"x"]}', isError: false }],
    ["an array is JSON-stringified", async () => [1, "two"], { output: '[1,"two"]', isError: false }],
    ["an object with output but no isError is not a ToolResult", () => ({ output: "x" }), { output: '{"output":"x"}', isError: false }],
    [
      "a synchronous throw is an isError result",
      () => {
        throw new Error("sync failure")
      },
      { output: "sync failure", isError: true },
    ],
    [
      "a rejection is an isError result",
      async () => {
        throw new Error("async failure")
      },
      { output: "async failure", isError: true },
    ],
    ["a rejected promise is an isError result", () => Promise.reject(new Error("rejected")), { output: "rejected", isError: true }],
    [
      "a thrown non-Error is stringified",
      () => {
        throw "not an Error" // eslint-disable-line no-throw-literal
      },
      { output: "not an Error", isError: true },
    ],
  ]
  for (const [what, run, expected] of cases) {
    const tool = defineTool({ name: "t", description: what, run })
    assert.deepEqual(await tool.execute({}), expected, what)
  }
})

test("defineTool: fields, defaults and the args handed to run", T, async () => {
  const seen = []
  const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] }
  const custom = defineTool({
    name: "search",
    description: "Search the docs",
    inputSchema: schema,
    source: "custom",
    run: (args, ctx) => {
      seen.push({ args, ctxType: typeof ctx })
      return `results for ${args.q}`
    },
  })
  assert.equal(custom.name, "search")
  assert.equal(custom.description, "Search the docs")
  assert.deepEqual(custom.inputSchema, schema)
  assert.equal(custom.source, "custom")
  assert.equal(typeof custom.execute, "function")
  assert.deepEqual(await custom.execute({ q: "mcp" }), { output: "results for mcp", isError: false })
  assert.deepEqual(seen, [{ args: { q: "mcp" }, ctxType: "object" }])

  const bare = defineTool({ name: "bare", run: () => "b" })
  assert.equal(bare.source, "native")
  assert.equal(bare.description, "")
  assert.deepEqual(bare.inputSchema, { type: "object", properties: {} })
})

test("defineTool: a missing or invalid name or run is a TypeError", T, () => {
  const run = () => "x"
  for (const [what, opts, message] of [
    ["no options", undefined, /options/],
    ["missing name", { description: "d", run }, /name/],
    ["empty name", { name: "", run }, /name/],
    ["non-string name", { name: 5, run }, /name/],
    ["missing run", { name: "x", description: "d" }, /run/],
    ["non-function run", { name: "x", run: "x" }, /run/],
  ]) {
    assert.throws(() => defineTool(opts), (err) => err instanceof TypeError && message.test(err.message), what)
  }
})

// ---------------------------------------------------------------------------------------------
// Seed 003, in JavaScript

test("seed 003 example 1: exposedMcpTools filters by name, unknown names silently dropped", T, async () => {
  const tools = [mk("add"), mk("explode")]
  for (const cfg of [undefined, {}]) {
    const all = exposedMcpTools(tools, cfg)
    assert.equal(all.length, 2, JSON.stringify(cfg))
    assert.equal(all[0], tools[0], "the same tool objects come back")
    assert.equal(all[1], tools[1], "the same tool objects come back")
  }
  assert.deepEqual(names(exposedMcpTools(tools)), ["add", "explode"])
  const subset = exposedMcpTools(tools, { tools: ["explode"] })
  assert.deepEqual(names(subset), ["explode"])
  assert.equal(subset[0], tools[1])
  assert.deepEqual(exposedMcpTools(tools, { tools: ["nope"] }), [])
  assert.deepEqual(names(exposedMcpTools(tools, { tools: ["explode", "add"] })), ["add", "explode"], "toolkit order is kept")
  assert.deepEqual(await exposedMcpTools(tools, { tools: ["add"] })[0].execute({}), { output: "add", isError: false })
})

test("seed 003 example 2: our own loadMcp against our own served toolkit", T, async () => {
  const tk = await createToolkit({ extraTools: [addTool(), explodeTool()], builtins: false })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", { mcp: { name: "gateway", version: "9.9.9" } })
  defer(() => handle.stop())
  assert.match(handle.url, /^http:\/\/127\.0\.0\.1:\d+$/, "no trailing slash")
  assert.notEqual(new URL(handle.url).port, "0")

  const source = await loadMcp({ mcpServers: { gw: { url: handle.url + "/mcp", timeout: 10000 } } })
  defer(() => source.close())
  assert.deepEqual(source.status, { gw: "connected" })
  assert.deepEqual(source.errors, {})
  assert.deepEqual(names(source.tools), ["gw_add", "gw_explode"])

  const add = source.tools.find((t) => t.name === "gw_add")
  assert.equal(add.source, "mcp")
  assert.equal(add.description, "Add two numbers")
  assert.deepEqual(add.inputSchema.properties, { a: { type: "number" }, b: { type: "number" } })
  const result = await add.execute({ a: 2, b: 3 })
  assert.equal(result.isError, false)
  assert.equal(result.output, "5")

  // isError propagates end to end (run throws -> MCP isError -> client error)
  const explode = source.tools.find((t) => t.name === "gw_explode")
  const er = await explode.execute({})
  assert.equal(er.isError, true)
  assert.equal(er.output, "kaboom")

  // initialize's serverInfo, as the SDK client sees it
  const client = await sdkClient(handle.url)
  assert.deepEqual(client.getServerVersion(), { name: "gateway", version: "9.9.9" })
  assert.ok(client.getServerCapabilities()?.tools, "the tools capability is advertised")

  await source.close()
  await handle.stop()
})

test("seed 003 example 3: mcp.tools filters the exposed subset over the real wire", T, async () => {
  const { handle } = await serveTools([mk("add"), mk("explode")], { mcp: { tools: ["add", "does-not-exist"] } })
  const source = await loadMcp({ mcpServers: { gw: { url: handle.url + "/mcp", timeout: 10000 } } })
  defer(() => source.close())
  assert.deepEqual(source.status, { gw: "connected" })
  // only "add" survives: "explode" is filtered out, "does-not-exist" is silently ignored
  assert.deepEqual(names(source.tools), ["gw_add"])
  assert.deepEqual(await source.tools[0].execute({}), { output: "add", isError: false, content: [{ type: "text", text: "add" }], metadata: { server: "gw" } })

  // the filtered-out tool cannot be called either
  const headers = await rawSession(handle.url)
  const r = await post(handle.url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "explode", arguments: {} } }, { headers })
  assert.deepEqual(parseBody(r.type, r.text), { jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Unknown tool: explode" } })
  await source.close()
})

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

// ---------------------------------------------------------------------------------------------
// onCall, concurrency, failures

test("onCall: one record {name, source, ms, isError} per call; a throwing onCall is isolated", T, async () => {
  const calls = []
  const tools = [addTool(), explodeTool(), defineTool({ name: "custom", source: "skill", run: () => "c" })]
  const { handle } = await serveTools(tools, {
    onCall: (c) => {
      calls.push(c)
      throw new Error("onCall itself fails")
    },
  })
  const client = await sdkClient(handle.url)
  const r1 = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })
  assert.deepEqual(r1.content, [{ type: "text", text: "5" }])
  const r2 = await client.callTool({ name: "explode", arguments: {} })
  assert.equal(r2.isError, true)
  const r3 = await client.callTool({ name: "custom", arguments: {} })
  assert.deepEqual(r3.content, [{ type: "text", text: "c" }])
  await assert.rejects(client.callTool({ name: "nope", arguments: {} }), { code: -32602 })
  const r4 = await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })
  assert.deepEqual(r4.content, [{ type: "text", text: "2" }], "still serving after onCall threw")

  await waitFor(() => calls.length >= 4, { message: "four onCall records" })
  for (const c of calls) {
    assert.deepEqual(Object.keys(c).sort(), ["isError", "ms", "name", "source"])
    assert.equal(typeof c.ms, "number")
    assert.ok(Number.isFinite(c.ms) && c.ms >= 0, `ms = ${c.ms}`)
  }
  assert.deepEqual(
    calls.map(({ name, source, isError }) => ({ name, source, isError })),
    [
      { name: "add", source: "native", isError: false },
      { name: "explode", source: "native", isError: true },
      { name: "custom", source: "skill", isError: false },
      { name: "add", source: "native", isError: false },
    ],
  )
})

test("run callbacks run concurrently: 10 calls that each wait for all 10 to have started", T, async () => {
  const N = 10
  let started = 0
  const allStarted = deferred()
  const gate = defineTool({
    name: "gate",
    description: "Waits until every call has started",
    inputSchema: { type: "object", properties: { i: { type: "number" } } },
    run: async ({ i }) => {
      started++
      if (started === N) allStarted.resolve()
      await allStarted.promise
      return `done ${i}`
    },
  })
  const { handle } = await serveTools([gate])
  const client = await sdkClient(handle.url)
  const results = await within(
    Promise.all(Array.from({ length: N }, (_, i) => client.callTool({ name: "gate", arguments: { i } }))),
    20000,
    `${N} concurrent calls (started: ${started})`,
  )
  assert.equal(started, N)
  assert.deepEqual(
    results.map((r) => [r.content, r.isError]),
    Array.from({ length: N }, (_, i) => [[{ type: "text", text: `done ${i}` }], false]),
  )
})

test("run callbacks: a sync throw and a rejected promise are isError and the server keeps serving", T, async () => {
  const tools = [
    defineTool({
      name: "sync-throw",
      run: () => {
        throw new TypeError("thrown synchronously")
      },
    }),
    defineTool({ name: "rejects", run: () => Promise.reject(new Error("rejected later")) }),
    defineTool({ name: "ok", run: () => "fine" }),
  ]
  const { tk, handle } = await serveTools(tools)
  const client = await sdkClient(handle.url)
  for (let round = 0; round < 3; round++) {
    const a = await client.callTool({ name: "sync-throw", arguments: {} })
    assert.deepEqual([a.content, a.isError], [[{ type: "text", text: "thrown synchronously" }], true])
    const b = await client.callTool({ name: "rejects", arguments: {} })
    assert.deepEqual([b.content, b.isError], [[{ type: "text", text: "rejected later" }], true])
    const c = await client.callTool({ name: "ok", arguments: {} })
    assert.deepEqual([c.content, c.isError], [[{ type: "text", text: "fine" }], false])
  }
  // the toolkit's own execute agrees, and an unknown name is an isError result
  assert.deepEqual(await tk.execute("sync-throw", {}), { output: "thrown synchronously", isError: true })
  assert.deepEqual(await tk.execute("rejects", {}), { output: "rejected later", isError: true })
  assert.deepEqual(await tk.execute("nope", {}), { output: "Unknown tool: nope", isError: true })
})

// ---------------------------------------------------------------------------------------------
// Gateway

test("gateway: two stdio servers re-served as their union, calls forwarded, onCall source mcp", T, async () => {
  const pidA = tmpFile("a.pid")
  const pidB = tmpFile("b.pid")
  const tk = await createToolkit({
    mcpConfig: {
      a: { command: nodeFixture("stdio-server", "--tools", "x,y"), env: { PID_FILE: pidA } },
      b: { command: nodeFixture("stdio-server", "--tools", "z"), env: { PID_FILE: pidB } },
    },
  })
  defer(() => tk.close())
  assert.deepEqual(tk.mcpStatus(), { a: "connected", b: "connected" })
  assert.deepEqual(names(tk.tools()), ["a_x", "a_y", "b_z"])
  const servers = [readPid(pidA), readPid(pidB)]
  assert.ok(servers.every((pid) => pid && isAlive(pid)), `stdio servers running: ${servers}`)

  const calls = []
  const handle = await tk.serve("127.0.0.1:0", { mcp: { name: "gw" }, onCall: (c) => calls.push(c) })
  defer(() => handle.stop())
  const client = await sdkClient(handle.url)
  assert.equal(client.getServerVersion()?.name, "gw")
  const { tools } = await client.listTools()
  assert.deepEqual(names(tools), ["a_x", "a_y", "b_z"])
  assert.deepEqual(tools[0].description, "x")
  for (const name of ["a_x", "a_y", "b_z"]) {
    const r = await client.callTool({ name, arguments: {} })
    assert.deepEqual(r.content, [{ type: "text", text: name.slice(2) }], name)
    // forwarded as the upstream server answered it (the SDK fixture omits isError: false)
    assert.notEqual(r.isError, true, name)
  }
  await waitFor(() => calls.length >= 3, { message: "three onCall records" })
  assert.deepEqual(
    calls.map(({ name, source, isError }) => ({ name, source, isError })),
    ["a_x", "a_y", "b_z"].map((name) => ({ name, source: "mcp", isError: false })),
  )
  for (const c of calls) assert.ok(typeof c.ms === "number" && c.ms >= 0, `ms = ${c.ms}`)

  await client.close()
  const tree = descendants()
  await tk.close()
  await handle.stop()
  const left = [...new Set([...servers, ...tree])].filter(isAlive)
  assert.deepEqual(left, [], `left running after toolkit.close() and handle.stop(): ${describePids(left)}`)
  assert.deepEqual(descendants(), [])
})

test("gateway: forwarded isError results and the toolkit's own loadMcp tools re-served", T, async () => {
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { s: { command: nodeFixture("stdio-server", "--tools", "add,fail,echo") } } },
    extraTools: [mk("local")],
  })
  defer(() => tk.close())
  const calls = []
  const handle = await tk.serve("127.0.0.1:0", { onCall: (c) => calls.push(c) })
  defer(() => handle.stop())

  const source = await loadMcp({ mcpServers: { gw: { url: handle.url + "/mcp", timeout: 10000 } } })
  defer(() => source.close())
  assert.deepEqual(names(source.tools), ["gw_s_add", "gw_s_fail", "gw_s_echo", "gw_local"])
  const byName = Object.fromEntries(source.tools.map((t) => [t.name, t]))
  assert.deepEqual(await byName.gw_s_add.execute({ a: 2, b: 3 }), { output: "5", isError: false, content: [{ type: "text", text: "5" }], metadata: { server: "gw" } })
  assert.deepEqual(await byName.gw_s_echo.execute({ text: "héllo\nworld" }), {
    output: "héllo\nworld",
    isError: false,
    content: [{ type: "text", text: "héllo\nworld" }],
    metadata: { server: "gw" },
  })
  const fail = await byName.gw_s_fail.execute({})
  assert.equal(fail.isError, true)
  assert.equal(fail.output, "first problem\n\nsecond problem")
  assert.deepEqual(await byName.gw_local.execute({}), { output: "local", isError: false, content: [{ type: "text", text: "local" }], metadata: { server: "gw" } })

  await waitFor(() => calls.length >= 4, { message: "four onCall records" })
  assert.deepEqual(
    calls.map(({ name, source: src, isError }) => [name, src, isError]),
    [
      ["s_add", "mcp", false],
      ["s_echo", "mcp", false],
      ["s_fail", "mcp", true],
      ["local", "native", false],
    ],
  )
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// buildMcpServer over stdio

const NATIVE_TOOLS = ["add", "echo", "json", "fail"]

for (const transport of ["native", "sdk"]) {
  const how = transport === "native" ? "connect() serving its own stdio" : "connect(new StdioServerTransport())"

  test(`buildMcpServer ${how}: listMcpTools and loadMcp list and call it`, T, async () => {
    const events = tmpFile("events")
    const command = nodeFixture("native-stdio-server", "--transport", transport)
    const inv = await listMcpTools({ srv: { command } })
    assert.deepEqual(inv.status, { srv: "connected" })
    assert.deepEqual(names(inv.tools.srv), NATIVE_TOOLS)
    assert.deepEqual(inv.tools.srv[0], {
      name: "add",
      description: "Add two numbers",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    })
    assert.deepEqual(inv.tools.srv[2], { name: "json", description: "Returns an object", inputSchema: { type: "object", properties: {} } })

    const source = await loadMcp({ srv: { command, env: { EVENT_FILE: events } } })
    defer(() => source.close())
    assert.deepEqual(source.status, { srv: "connected" })
    assert.deepEqual(names(source.tools), NATIVE_TOOLS.map((n) => `srv_${n}`))
    const [add, echo, json, fail] = source.tools
    const meta = { server: "srv" }
    assert.deepEqual(await add.execute({ a: 2, b: 3 }), { output: "5", isError: false, content: [{ type: "text", text: "5" }], metadata: meta })
    assert.deepEqual(await echo.execute({ text: "über" }), { output: "über", isError: false, content: [{ type: "text", text: "über" }], metadata: meta })
    assert.deepEqual(await json.execute({}), { output: '{"ok":true,"n":1}', isError: false, content: [{ type: "text", text: '{"ok":true,"n":1}' }], metadata: meta })
    assert.deepEqual(await fail.execute({}), { output: "native failure", isError: true, content: [{ type: "text", text: "native failure" }], metadata: meta })
    await source.close()

    const records = fs
      .readFileSync(events, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
    assert.deepEqual(
      records.map(({ name, source: src, isError }) => [name, src, isError]),
      [
        ["add", "native", false],
        ["echo", "native", false],
        ["json", "native", false],
        ["fail", "native", true],
      ],
    )
    for (const r of records) assert.ok(typeof r.ms === "number" && r.ms >= 0, `ms = ${r.ms}`)
  })

  test(`buildMcpServer ${how}: the SDK client over StdioClientTransport`, T, async () => {
    const events = tmpFile("events")
    const pidFile = tmpFile("pid")
    const client = new Client({ name: "serve-test", version: "1.0.0" })
    const [command, ...args] = nodeFixture("native-stdio-server", "--transport", transport, "--name", "native-demo", "--version", "2.0.0", "--expose", "add,fail,missing")
    const stdio = new StdioClientTransport({
      command,
      args,
      env: { ...process.env, EVENT_FILE: events, PID_FILE: pidFile },
      stderr: "pipe",
    })
    await client.connect(stdio)
    defer(() => client.close())
    assert.deepEqual(client.getServerVersion(), { name: "native-demo", version: "2.0.0" })
    const { tools } = await client.listTools()
    assert.deepEqual(names(tools), ["add", "fail"], "the cfg.tools filter, unknown names ignored")
    const sum = await client.callTool({ name: "add", arguments: { a: 20, b: 22 } })
    assert.deepEqual([sum.content, sum.isError], [[{ type: "text", text: "42" }], false])
    const fail = await client.callTool({ name: "fail", arguments: {} })
    assert.deepEqual([fail.content, fail.isError], [[{ type: "text", text: "native failure" }], true])
    await assert.rejects(client.callTool({ name: "echo", arguments: { text: "x" } }), (err) => {
      assert.equal(err.code, -32602)
      assert.match(err.message, /Unknown tool: echo/)
      return true
    })
    const pid = readPid(pidFile)
    await client.close()
    assert.equal(isAlive(pid), false, "the server exited once its input ended")
    if (transport === "native") {
      assert.match(fs.readFileSync(events, "utf8"), /^connect resolved$/m, "connect() resolved at end of input")
    }
  })
}

for (const transport of ["native", "sdk"]) {
  test(`buildMcpServer over stdio (${transport}): raw newline-delimited JSON-RPC; the process exits 0 by itself at end of input`, T, async () => {
    const events = tmpFile("events")
    const child = spawn(process.execPath, [fixture("native-stdio-server"), "--transport", transport, "--name", "raw"], {
      env: { ...process.env, EVENT_FILE: events },
      stdio: ["pipe", "pipe", "pipe"],
    })
    defer(() => child.kill("SIGKILL"))
    const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })))
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    let buf = ""
    const pending = new Map()
    child.stdout.setEncoding("utf8").on("data", (d) => {
      buf += d
      let nl
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        const msg = JSON.parse(line) // every stdout line must be one JSON-RPC message
        pending.get(msg.id)?.(msg)
      }
    })
    const request = (id, method, params) =>
      new Promise((resolve) => {
        pending.set(id, resolve)
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
      })

    const init = await within(request(1, "initialize", INIT.params), 10000, `initialize (stderr: ${stderr})`)
    assert.deepEqual(init.result.serverInfo, { name: "raw", version: "0.1.0" })
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
    const call = await request(2, "tools/call", { name: "add", arguments: { a: 1, b: 2 } })
    assert.deepEqual(call, { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "3" }], isError: false } })
    const unknown = await request(3, "tools/call", { name: "nope", arguments: {} })
    assert.deepEqual(unknown, { jsonrpc: "2.0", id: 3, error: { code: -32602, message: "Unknown tool: nope" } })
    const nomethod = await request(4, "frobnicate", {})
    assert.deepEqual(nomethod.error, { code: -32601, message: "frobnicate" })

    // End of input: connect() resolves (native) and, with nothing else to do, the process exits
    // on its own, exactly as a plain SDK stdio server does. Nobody signals it.
    child.stdin.end()
    const end = await within(exited, 10000, `exit after end of input (${transport})`)
    assert.deepEqual(end, { code: 0, signal: null }, stderr)
    if (transport === "native") assert.match(fs.readFileSync(events, "utf8"), /^connect resolved$/m)
  })
}

test("buildMcpServer connect(): close() ends native stdio serving with the input still open", T, async () => {
  const events = tmpFile("events")
  const child = spawn(process.execPath, [fixture("native-stdio-server"), "--close-on-sigusr2"], {
    env: { ...process.env, EVENT_FILE: events },
    stdio: ["pipe", "pipe", "pipe"],
  })
  defer(() => child.kill("SIGKILL"))
  const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })))
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  let stdout = ""
  const replies = []
  child.stdout.setEncoding("utf8").on("data", (d) => {
    stdout += d
    let nl
    while ((nl = stdout.indexOf("\n")) >= 0) {
      replies.push(JSON.parse(stdout.slice(0, nl)))
      stdout = stdout.slice(nl + 1)
    }
  })
  const send = (msg) => child.stdin.write(JSON.stringify(msg) + "\n")
  send(INIT)
  send({ jsonrpc: "2.0", method: "notifications/initialized" })
  send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "still here" } } })
  await waitFor(() => replies.some((r) => r.id === 1), { timeout: 10000, message: "the echo reply" })
  assert.deepEqual(replies.find((r) => r.id === 1).result, { content: [{ type: "text", text: "still here" }], isError: false })

  child.kill("SIGUSR2") // the fixture calls server.close()
  // connect() resolves although stdin is still open ...
  const readEvents = () => (fs.existsSync(events) ? fs.readFileSync(events, "utf8") : "")
  await waitFor(() => /^connect resolved$/m.test(readEvents()), { timeout: 10000, message: "connect() resolved after close()" })
  await waitFor(() => /^close resolved$/m.test(readEvents()), { timeout: 10000, message: "close() resolved" })
  // ... and the process then ends by itself: nobody closes its input or signals it again.
  const end = await within(exited, 10000, "exit after close()")
  assert.deepEqual(end, { code: 0, signal: null }, stderr)
})

// ---------------------------------------------------------------------------------------------
// stop()

test("stop() waits for an in-flight call; afterwards the port refuses connections", T, async () => {
  const entered = deferred()
  const stopCalled = deferred()
  const order = []
  let url
  const hold = defineTool({
    name: "hold",
    run: async () => {
      entered.resolve()
      await stopCalled.promise
      // Return only once the server has stopped accepting: stop() is then under way for sure,
      // and this call is still in flight.
      await waitFor(async () => (await tryConnect(url)) === "ECONNREFUSED", { timeout: 10000, message: "listener closed by stop()" })
      order.push("run returned")
      return "held to the end"
    },
  })
  const tk = await createToolkit({ extraTools: [hold, mk("quick")], builtins: false })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  url = handle.url
  const headers = await rawSession(handle.url)
  assert.equal(await tryConnect(handle.url), "connected")

  const inFlight = post(handle.url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hold", arguments: {} } }, { headers })
  await within(entered.promise, 10000, "the held call reaching run")

  const stopping = handle.stop().then(() => order.push("stop resolved"))
  stopCalled.resolve()
  await within(stopping, 15000, "stop()")
  assert.deepEqual(order, ["run returned", "stop resolved"], "stop() resolved only after the in-flight call finished")

  // the in-flight request was answered in full, not cut off
  const r = await inFlight
  assert.equal(r.status, 200)
  assert.deepEqual(parseBody(r.type, r.text), {
    jsonrpc: "2.0",
    id: 1,
    result: { content: [{ type: "text", text: "held to the end" }], isError: false },
  })

  assert.equal(await tryConnect(handle.url), "ECONNREFUSED")
  await handle.close() // same as stop(), and harmless a second time
  await tk.close()
  assert.equal(await tryConnect(handle.url), "ECONNREFUSED")
})

test("a process with a served toolkit exits on its own after stop()", T, async () => {
  // --parked: a 2026-07-28 run left waiting for its retry is ended by stop(), not kept alive.
  for (const [args, called] of [[[], "hello"], [["--close-toolkit"], "hello"], [["--parked"], "input_required"]]) {
    const r = await runNode(fixture("serve-and-stop"), { args, timeout: 20000 })
    assert.equal(r.signal, null, `killed by the test timeout (${args}): the process did not exit by itself\n${r.stderr}`)
    assert.equal(r.code, 0, `${args}: ${r.stderr}`)
    assert.match(r.stdout, new RegExp(`^served http://127\\.0\\.0\\.1:\\d+\\ncalled ${called}\\nstopped\\n$`), args.join(" "))
  }
})

test("a client's cancellation reaches a served run() as ctx.signal, and the server keeps serving", T, async () => {
  let started
  const running = new Promise((resolve) => (started = resolve))
  let sawAbort
  const aborted = new Promise((resolve) => (sawAbort = resolve))
  const wait = defineTool({
    name: "wait",
    run: (_args, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          sawAbort(ctx.signal.reason.message)
          resolve("stopped")
        })
        started()
      }),
  })
  const echo = defineTool({ name: "echo", run: ({ text }) => text })
  const tk = await createToolkit({ extraTools: [wait, echo] })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  const client = new Client({ name: "cancel-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(handle.url + "/mcp")))
  defer(() => client.close())

  const ac = new AbortController()
  const call = client.callTool({ name: "wait", arguments: {} }, undefined, { signal: ac.signal })
  await running
  ac.abort(new Error("user gave up"))
  await assert.rejects(call)
  assert.equal(await aborted, "toolnexus: the MCP client cancelled this call")
  const after = await client.callTool({ name: "echo", arguments: { text: "still serving" } })
  assert.deepEqual(after.content, [{ type: "text", text: "still serving" }])
})

test("a gateway passes a client's cancellation on to the upstream server", T, async () => {
  const events = tmpFile("events")
  fs.writeFileSync(events, "")
  const tk = await createToolkit({
    mcpConfig: {
      up: {
        command: ["node", fixture("stdio-server.mjs"), "--tools", "sleep,echo"],
        environment: { FIXTURE_EVENT_FILE: events },
      },
    },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  const client = new Client({ name: "cancel-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(handle.url + "/mcp")))
  defer(() => client.close())

  const ac = new AbortController()
  const call = client.callTool({ name: "up_sleep", arguments: { ms: 20000 } }, undefined, { signal: ac.signal })
  // The upstream call is in flight once a later call on the same connection has come back.
  const echoed = await client.callTool({ name: "up_echo", arguments: { text: "x" } })
  assert.deepEqual(echoed.content, [{ type: "text", text: "x" }])
  ac.abort()
  await assert.rejects(call)
  await waitFor(() => fs.readFileSync(events, "utf8").includes("cancelled sleep"), {
    timeout: 5000,
    message: "the upstream server saw notifications/cancelled",
  })
})

test("toolkit.mcpStatus() and mcpErrors() report every configured server, in config order", T, async () => {
  const tk = await createToolkit({
    mcpConfig: {
      ok: { command: ["node", fixture("stdio-server.mjs"), "--tools", "echo"] },
      gone: { command: ["toolnexus-test-no-such-binary"] },
      off: { command: ["node"], enabled: false },
    },
  })
  defer(() => tk.close())
  assert.deepEqual(tk.mcpStatus(), { ok: "connected", gone: "failed", off: "disabled" })
  assert.deepEqual(Object.keys(tk.mcpErrors()), ["gone"])
  assert.match(tk.mcpErrors().gone, /^cannot start "toolnexus-test-no-such-binary": No such file or directory/)
  assert.deepEqual(names(tk.tools()), ["ok_echo"])
})
