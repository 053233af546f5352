// What the serving tests (serve-*.test.mjs) share: the seed 003 tools, a toolkit served on
// 127.0.0.1:0 and an SDK client of it (both closed after the test), and raw HTTP: the first
// exchange of a raw client, a POST, the one JSON-RPC message of a JSON or SSE body, a request
// with its own Host header, and a bare TCP connection attempt.
import assert from "node:assert/strict"
import http from "node:http"
import net from "node:net"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { deferredCleanup } from "../helpers.mjs"
import { eachLine } from "../fixtures/lines.mjs"

export { within } from "../helpers.mjs"

export const T = { timeout: 30000 }
export const names = (tools) => tools.map((t) => t.name)

/**
 * The clean-up a serving test file registers with `afterEach` (a safety net only: whatever a
 * failing test left open is closed before the process check; tests that are about teardown
 * assert it themselves, before this runs), and what opens things under it: `serveTools(tools,
 * opts)` serves `tools` from a fresh toolkit, `sdkClient(url, name)` connects the SDK client
 * (named `name` in its clientInfo) over streamable HTTP to `url + "/mcp"`.
 */
export function serveHarness(afterEach) {
  const defer = deferredCleanup(afterEach)
  async function serveTools(tools, opts = {}) {
    const tk = await createToolkit({ extraTools: tools, builtins: false })
    defer(() => tk.close())
    const handle = await tk.serve("127.0.0.1:0", opts)
    defer(() => handle.stop())
    return { tk, handle }
  }
  async function sdkClient(url, name = "serve-test") {
    const client = new Client({ name, version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))
    defer(() => client.close())
    return client
  }
  return { defer, serveTools, sdkClient }
}

/** A promise with its resolve function exposed. */
export function deferred() {
  let resolve
  const promise = new Promise((r) => (resolve = r))
  return { promise, resolve }
}

export const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
}

/** POSTs `body` (an object, or raw text) to `url + path`; resolves { status, type, text }. */
export async function post(url, body, { accept = "application/json, text/event-stream", headers = {}, path = "/mcp" } = {}) {
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
export async function rawSession(url) {
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

/** The `data:` payloads of an SSE body, blank ones dropped. */
export function sseData(text) {
  return text
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .filter((l) => l.length > 0)
}

/**
 * The JSON-RPC messages of an SSE response body as they arrive (an empty `data:`, such as a
 * priming event's, skipped). Leaving the loop cancels the body.
 * @param {ReadableStream<Uint8Array>} body
 */
export async function* sseMessages(body) {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ""
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      text += decoder.decode(value, { stream: true })
      const events = text.split("\n\n")
      text = events.pop()
      for (const data of events.flatMap(sseData)) yield JSON.parse(data)
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

/** The single JSON-RPC message of a JSON or SSE response body. */
export function parseBody(type, text) {
  if (type.startsWith("text/event-stream")) {
    const data = sseData(text)
    assert.equal(data.length, 1, `one data line expected in ${JSON.stringify(text)}`)
    return JSON.parse(data[0])
  }
  assert.match(type, /^application\/json/)
  return JSON.parse(text)
}

/** A raw HTTP request through node:http, which (unlike fetch) lets the test set `Host`. */
export function rawHttp(url, { method = "POST", path = "/mcp", headers = {}, body = "" } = {}) {
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
export function tryConnect(url) {
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

/**
 * Reads newline-delimited JSON-RPC from a child's stdout: every line must be one message (a
 * line that is not JSON throws), and each is handed to `onMessage`.
 */
export function onLines(stream, onMessage) {
  eachLine(stream, (line) => onMessage(JSON.parse(line)))
}

// The seed 003 tools, in JavaScript.
export const addTool = () =>
  defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    run: (args) => String(Math.trunc(args.a + args.b)),
  })
export const explodeTool = () =>
  defineTool({
    name: "explode",
    description: "Always errors",
    run: () => {
      throw new Error("kaboom")
    },
  })
export const mk = (name) => defineTool({ name, description: name, run: () => name })
