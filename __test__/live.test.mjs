// Live tool sets: a server that changes its tool list mid-session (the SDK fixture's `grow` and
// `shrink` tools) is followed by a loadMcp source and by a gateway's clients; `toolnexus serve
// --stdio` driven by the TypeScript SDK and the official Python client; `serve --watch`
// starting and closing servers as the config file changes, with nothing left running.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile, spawn } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import * as toolnexus from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { PYTHON, deferredCleanup, descendants, describePids, isAlive, nodeFixture, readPid, repoRoot, tmpConfig, tmpFile, waitFor } from "./helpers.mjs"

const T = { timeout: 30000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const { loadMcp } = toolnexus
const createToolkit = toolnexus.createToolkit ?? toolnexus.default?.createToolkit
const defer = deferredCleanup(afterEach)

const fixtureServer = (tools, pidFile) => ({ command: nodeFixture("stdio-server", "--tools", tools.join(",")), env: pidFile ? { PID_FILE: pidFile } : {} })
const names = (tools) => tools.map((t) => t.name)

/** An SDK client that counts `notifications/tools/list_changed`; `changes()` reads the count. */
function countingClient() {
  const client = new Client({ name: "live-test", version: "1.0.0" })
  let count = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count++
  })
  return { client, changes: () => count }
}

test("loadMcp: a server's list_changed re-lists it, source.tools follows, onToolsChanged is told", T, async () => {
  const changes = []
  const source = await loadMcp(
    { mcpServers: { fix: fixtureServer(["grow", "shrink", "ping"]), other: fixtureServer(["echo"]) } },
    { onToolsChanged: (change) => changes.push(change) },
  )
  defer(() => source.close())
  assert.deepEqual(names(source.tools), ["fix_grow", "fix_shrink", "fix_ping", "other_echo"])
  const before = source.tools
  assert.equal(source.tools, before, "reading twice without a change gives the same array")

  const grown = await source.tools.find((t) => t.name === "fix_grow").execute({ name: "fresh" })
  assert.equal(grown.output, "added fresh")
  await waitFor(() => changes.length === 1, { message: "onToolsChanged after grow" })
  assert.equal(changes[0].server, "fix")
  assert.deepEqual(names(changes[0].tools), ["grow", "shrink", "ping", "fresh"], "original names, server order")
  assert.deepEqual(changes[0].tools[3], {
    name: "fresh",
    description: "fresh",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "forbidden" }, // as the SDK lists every tool
  })
  assert.deepEqual(names(source.tools), ["fix_grow", "fix_shrink", "fix_ping", "fix_fresh", "other_echo"], "config order kept")
  assert.notEqual(source.tools, before, "a new array after the change")
  const fresh = await source.tools.find((t) => t.name === "fix_fresh").execute({})
  assert.deepEqual([fresh.output, fresh.isError], ["fresh", false])

  await source.tools.find((t) => t.name === "fix_shrink").execute({ name: "ping" })
  await waitFor(() => changes.length === 2, { message: "onToolsChanged after shrink" })
  assert.deepEqual(names(changes[1].tools), ["grow", "shrink", "fresh"])
  assert.deepEqual(names(source.tools), ["fix_grow", "fix_shrink", "fix_fresh", "other_echo"])
  // The old Tool object of a removed tool now reaches a server that no longer has it.
  const stale = await before.find((t) => t.name === "fix_ping").execute({})
  assert.equal(stale.isError, true)
  assert.match(stale.output, /ping/)
})

test("loadMcp: the config's tools filter applies to re-listed tools too; onToolsChanged must be a function", T, async () => {
  const changes = []
  const spec = { ...fixtureServer(["grow", "ping"]), tools: { ping: false, hidden: false } }
  const source = await loadMcp({ mcpServers: { fix: spec } }, { onToolsChanged: (c) => changes.push(c) })
  defer(() => source.close())
  assert.deepEqual(names(source.tools), ["fix_grow"])
  await source.tools[0].execute({ name: "hidden" })
  await source.tools[0].execute({ name: "shown" })
  await waitFor(() => source.tools.length === 2, { message: "shown tool listed" })
  assert.deepEqual(names(source.tools), ["fix_grow", "fix_shown"])
  // onToolsChanged is called from the engine's thread: it may come a moment after source.tools moved.
  await waitFor(() => changes.at(-1)?.tools.length === 2, { message: "onToolsChanged told of shown" })
  assert.deepEqual(names(changes.at(-1).tools), ["grow", "shown"])
  await assert.rejects(loadMcp({ mcpServers: {} }, { onToolsChanged: 5 }), { name: "TypeError", message: "toolnexus: opts.onToolsChanged must be a function" })
})

test("loadMcp: an onToolsChanged that throws is a ToolnexusWarning, and the source keeps following", T, async () => {
  const warnings = []
  const onWarning = (w) => w.name === "ToolnexusWarning" && warnings.push(w.message)
  process.on("warning", onWarning)
  defer(() => process.off("warning", onWarning))
  const source = await loadMcp({ mcpServers: { fix: fixtureServer(["grow"]) } }, { onToolsChanged: () => { throw new Error("app bug") } })
  defer(() => source.close())
  await source.tools[0].execute({ name: "one" })
  await waitFor(() => warnings.length === 1, { message: "the warning" })
  assert.deepEqual(warnings, ["toolnexus: onToolsChanged threw: app bug"])
  await source.tools[0].execute({ name: "two" })
  await waitFor(() => source.tools.length === 3, { message: "still following" })
  assert.deepEqual(names(source.tools), ["fix_grow", "fix_one", "fix_two"])
})

test("gateway: a server's list_changed reaches the toolkit and every client of its endpoint", T, async () => {
  const toolkitChanges = []
  const toolkit = await createToolkit({ mcpConfig: { mcpServers: { fix: fixtureServer(["grow", "ping"]) } }, onToolsChanged: (tools) => toolkitChanges.push(names(tools)) })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const first = countingClient()
  const second = countingClient()
  await first.client.connect(new StreamableHTTPClientTransport(new URL(`${handle.url}/mcp`)))
  await second.client.connect(new StreamableHTTPClientTransport(new URL(`${handle.url}/mcp`)))
  defer(() => first.client.close())
  defer(() => second.client.close())
  assert.deepEqual(names((await first.client.listTools()).tools), ["fix_grow", "fix_ping"])
  assert.deepEqual(first.client.getServerCapabilities()?.tools, { listChanged: true })

  const added = await first.client.callTool({ name: "fix_grow", arguments: { name: "late" } })
  assert.deepEqual(added.content, [{ type: "text", text: "added late" }])
  await waitFor(() => first.changes() === 1 && second.changes() === 1, { message: "list_changed at both clients" })
  assert.deepEqual(names((await second.client.listTools()).tools), ["fix_grow", "fix_ping", "fix_late"])
  const late = await second.client.callTool({ name: "fix_late", arguments: {} })
  assert.deepEqual(late.content, [{ type: "text", text: "late" }])
  assert.deepEqual(names(toolkit.tools()), ["fix_grow", "fix_ping", "fix_late"])
  assert.deepEqual(toolkitChanges, [["fix_grow", "fix_ping", "fix_late"]])
})

test("gateway: list_changed reaches loadMcp clients of both eras (2026-07-28 through subscriptions/listen)", T, async () => {
  const toolkit = await createToolkit({ mcpConfig: { mcpServers: { fix: fixtureServer(["grow", "ping"]) } } })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const clients = []
  for (const protocol of ["2026-07-28", "2025-11-25"]) {
    const changes = []
    const source = await loadMcp({ mcpServers: { gw: { url: `${handle.url}/mcp`, protocol } } }, { onToolsChanged: (c) => changes.push(c) })
    defer(() => source.close())
    assert.equal(source.info.gw.protocolVersion, protocol)
    clients.push({ protocol, source, changes })
  }
  // One client adds a tool through the gateway; both hear of it from the gateway.
  const grow = clients[0].source.tools.find((t) => t.name === "gw_fix_grow")
  assert.equal((await grow.execute({ name: "both" })).output, "added both")
  for (const { protocol, source, changes } of clients) {
    await waitFor(() => changes.length === 1, { message: `list_changed at the ${protocol} client` })
    assert.deepEqual(names(changes[0].tools), ["fix_grow", "fix_ping", "fix_both"], protocol)
    assert.deepEqual(names(source.tools), ["gw_fix_grow", "gw_fix_ping", "gw_fix_both"], protocol)
    const both = await source.tools.find((t) => t.name === "gw_fix_both").execute({})
    assert.deepEqual([both.output, both.isError], ["both", false], protocol)
  }
  // Stopping the endpoint ends both clients' open streams at once (the 2026-07-28 listen
  // stream, the handshake session's GET stream) instead of waiting out the 5 s drain.
  const started = performance.now()
  await handle.stop()
  assert.ok(performance.now() - started < 3000, `stop took ${Math.round(performance.now() - started)} ms with a listener open`)
})

test("toolkit.reload: starts, closes and restarts only the servers whose entries changed; one reload at a time", T, async () => {
  const [pidA, pidB, pidC] = [tmpFile("a.pid"), tmpFile("b.pid"), tmpFile("c.pid")]
  const seen = []
  const toolkit = await createToolkit({ mcpConfig: { mcpServers: { a: fixtureServer(["ping"], pidA), b: fixtureServer(["echo"], pidB) } }, onToolsChanged: (tools) => seen.push(names(tools)) })
  defer(() => toolkit.close())
  const [a, b] = [readPid(pidA), readPid(pidB)]
  assert.deepEqual(await toolkit.reload({ mcpServers: { a: fixtureServer(["ping"], pidA), b: fixtureServer(["echo"], pidB) } }), { added: [], removed: [], restarted: [] })
  assert.deepEqual(seen, [], "no change, no announcement")

  // Two reloads at once run one after the other: the second sees what the first did.
  const first = toolkit.reload({ mcpServers: { a: fixtureServer(["ping"], pidA), c: fixtureServer(["add"], pidC) } })
  const second = toolkit.reload({ mcpServers: { c: fixtureServer(["add"], pidC), a: fixtureServer(["ping", "echo"], pidA) } })
  assert.deepEqual(await first, { added: ["c"], removed: ["b"], restarted: [] })
  assert.deepEqual(await second, { added: [], removed: [], restarted: ["a"] })
  assert.deepEqual(Object.keys(toolkit.mcpStatus()), ["c", "a"], "config order of the last reload")
  assert.deepEqual(names(toolkit.tools()), ["c_add", "a_ping", "a_echo"])
  assert.deepEqual(seen, [["a_ping", "c_add"], ["c_add", "a_ping", "a_echo"]])
  assert.equal(isAlive(b), false, "b was closed")
  await waitFor(() => !isAlive(a), { message: "the old a is gone" })
  assert.notEqual(readPid(pidA), a, "a was started again")
  assert.equal((await toolkit.execute("c_add", { a: 1, b: 2 })).output, "3")

  // A config that cannot be read changes nothing.
  await assert.rejects(toolkit.reload("{ nope"), /invalid MCP config/)
  assert.deepEqual(names(toolkit.tools()), ["c_add", "a_ping", "a_echo"])
  await toolkit.close()
  await assert.rejects(toolkit.reload({ mcpServers: {} }), { message: "toolnexus: this toolkit is closed" })
  const left = [readPid(pidA), readPid(pidC)].filter(isAlive)
  assert.deepEqual(left, [], `left running: ${describePids(left)}`)
})

/** Starts `toolnexus ...args` with piped stdio; `exited` resolves at its exit. */
function startCli(args, { stdin = "ignore" } = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: repoRoot, stdio: [stdin, "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

test("serve --stdio: the TypeScript SDK client lists, calls and hears list_changed; end of input stops it", T, async () => {
  const pidFile = tmpFile("fix.pid")
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["grow", "add"], pidFile) } })
  const { client, changes } = countingClient()
  let stderr = ""
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", config, "--stdio", "--name", "gw"], cwd: repoRoot, stderr: "pipe" })
  transport.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  await client.connect(transport)
  defer(() => client.close())
  const cliPid = transport.pid
  assert.equal(client.getServerVersion()?.name, "gw")
  assert.deepEqual(names((await client.listTools()).tools), ["fix_grow", "fix_add"])
  const sum = await client.callTool({ name: "fix_add", arguments: { a: 2, b: 40 } })
  assert.deepEqual(sum.content, [{ type: "text", text: "42" }])
  await client.callTool({ name: "fix_grow", arguments: { name: "extra" } })
  await waitFor(() => changes() === 1, { message: "list_changed over stdio" })
  assert.deepEqual(names((await client.listTools()).tools), ["fix_grow", "fix_add", "fix_extra"])
  assert.match(stderr, /^✓ fix {2}connected$/m, "statuses go to stderr")
  assert.match(stderr, /serving 2 tools over stdio/)

  const server = readPid(pidFile)
  assert.ok(server && isAlive(server))
  await client.close() // ends the CLI's stdin
  await waitFor(() => !isAlive(cliPid) && !isAlive(server), { timeout: 10000, message: "the CLI and its server exit at end of input" })
  assert.match(stderr, /end of input, stopping/)
})

test("serve --stdio: the official Python client (mcp 2.3.0) in both eras; nothing but protocol on stdout", T, async () => {
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["add", "echo"]) } })
  for (const mode of ["legacy", "auto"]) {
    const script = path.join(repoRoot, "__test__", "python", "stdio_client.py")
    const args = [script, mode, "fix_echo", JSON.stringify({ text: "hi from python" }), process.execPath, BIN, "serve", config, "--stdio"]
    const { stdout } = await new Promise((resolve, reject) =>
      execFile(PYTHON, args, { cwd: repoRoot, timeout: 25000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout, stderr }))),
    )
    const report = JSON.parse(stdout)
    assert.deepEqual(report.tools, ["fix_add", "fix_echo"], mode)
    assert.equal(report.text, "hi from python", mode)
    assert.equal(report.isError, false, mode)
    assert.deepEqual(report.serverInfo, { name: "toolnexus", version: "0.1.0" }, mode)
    assert.equal(report.protocolVersion, mode === "legacy" ? "2025-11-25" : "2026-07-28", mode)
  }
  // Straight from the pipe: every stdout line is one JSON-RPC message.
  const gw = startCli(["serve", config, "--stdio"], { stdin: "pipe" })
  gw.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`)
  await waitFor(() => gw.stdout().includes("\n"), { timeout: 15000, message: "initialize answered" })
  gw.child.stdin.end()
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  const lines = end.stdout.split("\n").filter(Boolean)
  assert.equal(lines.length, 1, end.stdout)
  assert.equal(JSON.parse(lines[0]).id, 1)
  assert.equal(JSON.parse(lines[0]).result.protocolVersion, "2025-11-25")
})

test("serve --watch: servers added, removed and changed in the config start, stop and restart; clients are told", T, async () => {
  const pidA = tmpFile("a.pid")
  const pidB = tmpFile("b.pid")
  const config = tmpConfig({ mcpServers: { a: fixtureServer(["ping"], pidA) } })
  const write = (servers) => fs.writeFileSync(config, JSON.stringify({ mcpServers: servers }))
  const gw = startCli(["serve", config, "--addr", "127.0.0.1:0", "--watch"])
  await waitFor(() => gw.stdout().includes("\n"), { timeout: 20000, message: "serving line" })
  const url = /at (http:\S+)$/m.exec(gw.stdout())[1]
  await waitFor(() => gw.stderr().includes("watching"), { message: "watching line" })
  const { client, changes } = countingClient()
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => client.close())
  assert.deepEqual(names((await client.listTools()).tools), ["a_ping"])
  const a = readPid(pidA)
  assert.ok(a && isAlive(a))

  write({ a: fixtureServer(["ping"], pidA), b: fixtureServer(["echo"], pidB) })
  await waitFor(() => changes() >= 1, { timeout: 15000, message: "list_changed after adding b" })
  assert.deepEqual(names((await client.listTools()).tools), ["a_ping", "b_echo"])
  await waitFor(() => /config changed: added b$/m.test(gw.stderr()), { message: "added b reported" })
  const echo = await client.callTool({ name: "b_echo", arguments: { text: "via b" } })
  assert.deepEqual(echo.content, [{ type: "text", text: "via b" }])
  const b = readPid(pidB)
  assert.equal(readPid(pidA), a, "a was left running, not restarted")
  assert.ok(isAlive(a) && b && isAlive(b))

  const seen = changes()
  write({ b: fixtureServer(["echo"], pidB) })
  await waitFor(() => changes() > seen, { timeout: 15000, message: "list_changed after removing a" })
  assert.deepEqual(names((await client.listTools()).tools), ["b_echo"])
  await waitFor(() => /config changed: removed a$/m.test(gw.stderr()), { message: "removed a reported" })
  await waitFor(() => !isAlive(a), { timeout: 5000, message: `server a (${a}) gone` })

  // A changed entry is restarted: a new process, the old one gone.
  const seenBefore = changes()
  write({ b: fixtureServer(["echo", "ping"], pidB) })
  await waitFor(() => changes() > seenBefore, { timeout: 15000, message: "list_changed after changing b" })
  await waitFor(() => /config changed: restarted b$/m.test(gw.stderr()), { message: "restarted b reported" })
  assert.deepEqual(names((await client.listTools()).tools), ["b_echo", "b_ping"])
  const b2 = readPid(pidB)
  assert.ok(b2 && b2 !== b && isAlive(b2), `b restarted (${b} -> ${b2})`)
  await waitFor(() => !isAlive(b), { timeout: 5000, message: `old server b (${b}) gone` })

  // A broken edit is reported and changes nothing.
  fs.writeFileSync(config, "{ not json")
  await waitFor(() => gw.stderr().includes("config not reloaded"), { timeout: 15000, message: "bad edit reported" })
  assert.deepEqual(names((await client.listTools()).tools), ["b_echo", "b_ping"])

  await client.close()
  const tree = descendants(gw.child.pid)
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  const left = [...new Set([a, b, b2, ...tree])].filter(isAlive)
  assert.deepEqual(left, [], `left running: ${describePids(left)}`)
})
