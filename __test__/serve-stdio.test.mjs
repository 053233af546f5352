// Serving (docs/serving.md), part 4: buildMcpServer over stdio, natively and through the SDK's
// StdioServerTransport, driven by listMcpTools/loadMcp, the SDK client and raw
// newline-delimited JSON-RPC; the server process ends by itself at end of input or close().
// Every server is real, every socket a real loopback socket on 127.0.0.1:0; the shared
// set-up and clean-up are in lib/serve.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import { listMcpTools, loadMcp } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { fixture, isAlive, nodeFixture, readPid, tmpFile, waitFor, within } from "./helpers.mjs"
import { INIT, names, onLines, serveHarness, T } from "./lib/serve.mjs"

const { defer } = serveHarness(afterEach)

/**
 * Spawns the native-stdio-server fixture with `args`, recording its events in `events`; killed
 * after the test if it is still running. Returns the child, `exited` (a promise of its
 * { code, signal } once it has closed) and `stderr` (what it has written there so far).
 */
function startNative(args, events) {
  const child = spawn(process.execPath, [fixture("native-stdio-server"), ...args], {
    env: { ...process.env, EVENT_FILE: events },
    stdio: ["pipe", "pipe", "pipe"],
  })
  defer(() => child.kill("SIGKILL"))
  const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })))
  const server = { child, exited, stderr: "" }
  child.stderr.setEncoding("utf8").on("data", (d) => (server.stderr += d))
  return server
}

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
    const server = startNative(["--transport", transport, "--name", "raw"], events)
    const { child, exited } = server
    const pending = new Map()
    onLines(child.stdout, (msg) => pending.get(msg.id)?.(msg)) // every stdout line must be one JSON-RPC message
    const request = (id, method, params) =>
      new Promise((resolve) => {
        pending.set(id, resolve)
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
      })

    const init = await within(request(1, "initialize", INIT.params), 10000, `initialize (stderr: ${server.stderr})`)
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
    assert.deepEqual(end, { code: 0, signal: null }, server.stderr)
    if (transport === "native") assert.match(fs.readFileSync(events, "utf8"), /^connect resolved$/m)
  })
}

test("buildMcpServer connect(): close() ends native stdio serving with the input still open", T, async () => {
  const events = tmpFile("events")
  const server = startNative(["--close-on-sigusr2"], events)
  const { child, exited } = server
  const replies = []
  onLines(child.stdout, (msg) => replies.push(msg))
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
  assert.deepEqual(end, { code: 0, signal: null }, server.stderr)
})
