// Serving fidelity found by third-party clients: onCall (and so the CLI's call log) hears calls
// refused by argument validation, and a gateway's tools/list keeps each tool's `execution`
// (rmcp's typed Tool has no such field) over HTTP sessions, over stdio and over an SDK transport.
// The upstream is the real server-everything, whose simulate-research-query is task-required.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import path from "node:path"
import { buildMcpServer, defineTool, loadMcp } from "toolnexus"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { repoRoot, serverEverything, tmpConfig, waitFor } from "./helpers.mjs"
import { INIT, parseBody, post, rawSession, serveHarness, T } from "./lib/serve.mjs"

const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const { defer, serveTools, sdkClient } = serveHarness(afterEach)
const everything = { command: process.execPath, args: [serverEverything] }
const TASK = { taskSupport: "required" }

test("onCall hears a call refused by argument validation, as a failed call", T, async () => {
  const calls = []
  const double = defineTool({
    name: "double",
    inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    run: ({ n }) => String(n * 2),
  })
  const { handle } = await serveTools([double], { onCall: (c) => calls.push(c) })
  const client = await sdkClient(handle.url)
  const refused = await client.callTool({ name: "double", arguments: { n: "x" } })
  assert.equal(refused.isError, true)
  assert.match(refused.content[0].text, /^Invalid arguments for tool double: /)
  const ok = await client.callTool({ name: "double", arguments: { n: 4 } })
  assert.deepEqual(ok.content, [{ type: "text", text: "8" }])
  await waitFor(() => calls.length === 2, { message: "two onCall records" })
  assert.deepEqual(
    calls.map(({ name, source, isError }) => ({ name, source, isError })),
    [
      { name: "double", source: "native", isError: true },
      { name: "double", source: "native", isError: false },
    ],
  )
  assert.ok(calls[0].ms >= 0)
})

test("toolnexus serve over server-everything: a raw tools/list keeps execution; a refused call is logged ✗", T, async () => {
  const config = tmpConfig({ mcpServers: { everything } })
  const child = spawn(process.execPath, [BIN, "serve", config, "--addr", "127.0.0.1:0", "--log-calls"], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)))
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  await waitFor(() => /serving \d+ tools at \S+\/mcp/.test(stdout), { timeout: 20000, message: `serving line in ${stdout}${stderr}` })
  const url = stdout.match(/serving \d+ tools at (\S+)\/mcp/)[1]
  const headers = await rawSession(url)
  const res = await post(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { headers })
  const listed = parseBody(res.type, res.text)
  const task = listed.result.tools.find((t) => t.name === "everything_simulate-research-query")
  assert.deepEqual(task.execution, TASK)
  const echo = listed.result.tools.find((t) => t.name === "everything_echo")
  assert.ok(echo, "everything_echo is served")

  const call = await post(url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "everything_echo", arguments: { message: 5 } } }, { headers })
  const refused = parseBody(call.type, call.text)
  assert.equal(refused.result.isError, true)
  await waitFor(() => /✗ everything_echo {2}\d+ ms/.test(stderr), { message: `✗ line in ${stderr}` })
  child.kill("SIGTERM")
  assert.equal(await exited, 0)
})

/** Sends `messages` through `transport` in order, each request answered before the next. */
async function exchange(transport, messages) {
  const answers = new Map()
  const waiting = new Map()
  transport.onmessage = (m) => {
    if (m.id === undefined) return
    answers.set(m.id, m)
    waiting.get(m.id)?.()
  }
  await transport.start()
  for (const m of messages) {
    const answered = m.id === undefined ? null : new Promise((resolve) => waiting.set(m.id, resolve))
    await transport.send(m)
    if (answered) await answered
  }
  return answers
}

const LIST = [INIT, { jsonrpc: "2.0", method: "notifications/initialized" }, { jsonrpc: "2.0", id: 1, method: "tools/list" }]

test("a gateway over an SDK transport and over stdio keeps execution in tools/list", T, async () => {
  // The bridge holds no handle of its own (its callbacks are weak), so the test keeps Node up.
  const keepAlive = setInterval(() => {}, 1000)
  defer(() => clearInterval(keepAlive))
  const source = await loadMcp({ mcpServers: { everything } })
  defer(() => source.close())
  const server = buildMcpServer(source.tools)
  const [front, back] = InMemoryTransport.createLinkedPair()
  await server.connect(back)
  defer(() => server.close())
  const bridged = (await exchange(front, LIST)).get(1)
  const task = bridged.result.tools.find((t) => t.name.endsWith("simulate-research-query"))
  assert.deepEqual(task.execution, TASK)
  await front.close()

  const config = tmpConfig({ mcpServers: { everything } })
  const stdio = new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", config, "--stdio"], cwd: repoRoot, stderr: "pipe" })
  defer(() => stdio.close())
  const listed = (await exchange(stdio, LIST)).get(1)
  const served = listed.result.tools.find((t) => t.name === "everything_simulate-research-query")
  assert.deepEqual(served.execution, TASK)
})
