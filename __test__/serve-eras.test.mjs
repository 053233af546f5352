// The served endpoint speaks both MCP eras to third-party clients, keeps each handshake client
// to its own session, and stays reachable under a descriptor flood. Clients: the official
// Python `mcp` 2.x client (auto and legacy modes), the TypeScript SDK client, raw HTTP.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { deferredCleanup, pythonClient, repoRoot } from "./helpers.mjs"
import { gateTool } from "./gate-tool.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)

const addTool = () =>
  defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    run: ({ a, b }) => String(a + b),
  })

async function serve(tools, opts = {}) {
  const toolkit = await createToolkit({ extraTools: tools })
  const handle = await toolkit.serve("127.0.0.1:0", { mcp: { name: "eras", version: "2.0.0" }, ...opts })
  defer(() => toolkit.close())
  return handle
}

for (const stateless of [false, true]) {
  const label = stateless ? "stateless" : "with sessions"
  test(`the Python mcp 2.x client reaches a served toolkit (${label}): auto speaks 2026-07-28 (discover succeeds), legacy the handshake`, T, async () => {
    const handle = await serve([addTool()], { stateless })
    const url = `${handle.url}/mcp`
    const expectedOutputs = [
      { text: "1", isError: false },
      { text: "2", isError: false },
      { text: "3", isError: false },
    ]
    const auto = await pythonClient(url, "auto", 3)
    assert.equal(auto.report.protocolVersion, "2026-07-28", auto.stderr)
    assert.deepEqual(auto.report.serverInfo, { name: "eras", version: "2.0.0" })
    assert.deepEqual(auto.report.tools, ["add"])
    assert.deepEqual(auto.report.outputs, expectedOutputs)

    const legacy = await pythonClient(url, "legacy", 3)
    assert.equal(legacy.report.protocolVersion, "2025-11-25", legacy.stderr)
    assert.deepEqual(legacy.report.serverInfo, { name: "eras", version: "2.0.0" })
    assert.deepEqual(legacy.report.outputs, expectedOutputs)
    assert.doesNotMatch(legacy.stderr, /termination failed/i, "the session's DELETE is acknowledged")
  })
}

async function rawPost(url, body, headers = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, session: res.headers.get("mcp-session-id"), text: await res.text() }
}

test("sessions isolate clients: another session (or no session) cannot cancel a client's call; its own cancellation does", T, async () => {
  const gate = gateTool()
  const handle = await serve([gate.tool])
  const url = `${handle.url}/mcp`

  // Client A: the TypeScript SDK. Its call to `gate` is request id 1 of its session.
  const a = new Client({ name: "a", version: "1" })
  await a.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => a.close())
  const controller = new AbortController()
  const first = a.callTool({ name: "gate", arguments: {} }).then((r) => r.content[0].text)
  await waitUntil(() => gate.waiting.length === 1)

  // Client B: its own session, cancelling every plausible request id of A's.
  const init = await rawPost(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "b", version: "1" } },
  })
  const b = { "mcp-session-id": init.session, "mcp-protocol-version": "2025-11-25" }
  assert.equal((await rawPost(url, { jsonrpc: "2.0", method: "notifications/initialized" }, b)).status, 202)
  for (const requestId of [0, 1, 2, 3, "1"]) {
    const r = await rawPost(url, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: "b" } }, b)
    assert.equal(r.status, 202)
  }
  // Without any session a notification is refused outright.
  const bare = await rawPost(url, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, { "mcp-protocol-version": "2025-11-25" })
  assert.equal(bare.status, 400, bare.text)

  gate.waiting[0]()
  assert.equal(await first, "released", "B's cancellations never reached A's call")

  // A's own cancellation does reach its call.
  const second = a.callTool({ name: "gate", arguments: {} }, undefined, { signal: controller.signal }).catch((e) => e)
  await waitUntil(() => gate.waiting.length === 2)
  controller.abort()
  await waitUntil(() => gate.endings.length === 2)
  assert.deepEqual(gate.endings, ["released", "aborted"])
  assert.ok((await second) instanceof Error)
})

async function waitUntil(predicate, ms = 10000) {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > ms) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 5))
  }
}

test("500 half-sent requests under `ulimit -n 256` do not stop a normal client from listing and calling", T, async () => {
  // The server runs in its own process with the low descriptor limit; the flood comes from here.
  const script = `
    import { createToolkit, defineTool } from "toolnexus"
    const tk = await createToolkit({ extraTools: [defineTool({ name: "add", run: ({ a, b }) => String(a + b) })] })
    const h = await tk.serve("127.0.0.1:0")
    console.log(h.url)
    process.stdin.on("end", async () => { await h.stop(); await tk.close() })
    process.stdin.resume()
  `
  const child = spawn("sh", ["-c", `ulimit -n 256 && exec "${process.execPath}" --input-type=module -e '${script}'`], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "inherit"],
  })
  defer(() => child.kill("SIGKILL"))
  const url = await new Promise((resolve, reject) => {
    child.stdout.setEncoding("utf8").once("data", (d) => resolve(d.trim()))
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)))
  })
  const { port } = new URL(url)
  const sockets = []
  defer(() => sockets.forEach((s) => s.destroy()))
  for (let i = 0; i < 500; i++) {
    const s = net.connect(Number(port), "127.0.0.1")
    s.on("error", () => {})
    s.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
    sockets.push(s)
  }
  await Promise.all(sockets.map((s) => new Promise((r) => (s.connecting ? s.once("connect", r).once("error", r).once("close", r) : r()))))

  const client = new Client({ name: "normal", version: "1" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))
  const { tools } = await client.listTools()
  assert.deepEqual(
    tools.map((t) => t.name),
    ["add"],
  )
  const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 2 } })
  assert.deepEqual(sum.content, [{ type: "text", text: "4" }])
  await client.close()
  sockets.forEach((s) => s.destroy())
  child.stdin.end()
  const code = await new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.once("exit", r)))
  assert.equal(code, 0)
})

test("a burst of 100 concurrent 1 MB calls: the serving process's memory comes back near its baseline once clients leave", T, async () => {
  const script = `
    import { createToolkit, defineTool } from "toolnexus"
    const tk = await createToolkit({ extraTools: [defineTool({ name: "len", run: ({ s }) => String(s?.length ?? 0) })] })
    const h = await tk.serve("127.0.0.1:0", { stateless: true })
    console.log(h.url)
    process.stdin.on("end", async () => { await h.stop(); await tk.close() })
    process.stdin.resume()
  `
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] })
  defer(() => child.kill("SIGKILL"))
  const url = await new Promise((resolve, reject) => {
    child.stdout.setEncoding("utf8").once("data", (d) => resolve(`${d.trim()}/mcp`))
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)))
  })
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]) / 1024
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "burst", version: "1" },
  }
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "len", arguments: { s: "x".repeat(1_000_000) }, _meta: meta } })
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "len",
  }
  // Fresh connections that close afterwards, as clients that come and go.
  const call = () => fetch(url, { method: "POST", headers: { ...headers, connection: "close" }, body }).then((r) => r.text())
  assert.match(await call(), /"text":"1000000"/)
  const baseline = rss()
  for (let round = 0; round < 3; round++) {
    const replies = await Promise.all(Array.from({ length: 100 }, call))
    assert.ok(replies.every((r) => r.includes('"text":"1000000"')))
  }
  const peak = rss()
  const start = Date.now()
  while (rss() > baseline + 60 && Date.now() - start < 20000) await new Promise((r) => setTimeout(r, 100))
  const settled = rss()
  assert.ok(settled <= baseline + 60, `RSS ${baseline.toFixed(0)} MB before, ${peak.toFixed(0)} MB after the burst, still ${settled.toFixed(0)} MB`)
  child.stdin.end()
  await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)))
})

test("resources/subscribe served statelessly is refused in words (nothing could carry an update); with sessions it is taken", T, async () => {
  const { defineResource } = await import("toolnexus")
  const tk = await createToolkit({ extraResources: [defineResource({ uri: "notes://a", name: "a", read: () => "a" })] })
  defer(() => tk.close())
  for (const stateless of [true, false]) {
    const h = await tk.serve("127.0.0.1:0", { stateless })
    defer(() => h.stop())
    const client = new Client({ name: "sub", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`)))
    defer(() => client.close())
    const subscribed = await client.subscribeResource({ uri: "notes://a" }).then(
      (r) => ({ ok: r }),
      (e) => ({ code: e.code, message: e.message }),
    )
    if (stateless) {
      assert.deepEqual(subscribed, {
        code: -32601,
        message:
          "MCP error -32601: resources/subscribe is not offered by this stateless server: it keeps no stream to send updates on (read the resource again, or follow it with subscriptions/listen in protocol 2026-07-28)",
      })
    } else assert.deepEqual(subscribed, { ok: {} })
  }
})
