// The suite every platform runs as it is, with nothing Linux-only (no /proc): `npm run platforms`
// runs it under the official Windows Node in Wine and under this host's Node; the release
// workflow runs it on its macOS and Windows runners. It uses toolnexus installed from the packed
// tarballs when TOOLNEXUS_COMPAT_PACKAGE names the copy (whose binding then picks its platform
// package as a user's install does), else this checkout. The MCP servers are this same Node
// running the test fixtures.
//
// The common path: list, load, call, 300 concurrent calls, abort, timeout, serve over loopback
// HTTP, a gateway, close, and nothing left running. What each platform does its own way: a shim
// named without its extension on PATH (`npx`: a `.cmd` found through PATHEXT on Windows, an
// executable script elsewhere), backslash paths and `cwd` (Windows), CRLF line ends, a process
// tree ended (a job object on Windows, the process group and its marked descendants elsewhere),
// config discovery under %APPDATA% / %USERPROFILE%, ~/Library/Application Support, or XDG.
//
// A process is alive while `process.kill(pid, 0)` succeeds. No fetch (Wine 8 refuses undici's
// keep-alive before connect): HTTP goes through toolnexus itself. One line per check, then
// `portable (node <version> <platform>-<arch>): N passed, M failed`.
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const windows = process.platform === "win32"
const repoRoot = path.join(here, "..", "..")
const packageDir = path.resolve(process.env.TOOLNEXUS_COMPAT_PACKAGE || repoRoot)
const toolnexus = createRequire(import.meta.url)(packageDir)
const { createToolkit, defineTool, listMcpTools, loadMcp } = toolnexus

const fixture = path.join(repoRoot, "__test__", "fixtures", "stdio-server.mjs")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-win-"))
const fx = (tools, env = {}) => ({ command: process.execPath, args: [fixture, "--tools", tools], env, timeout: 30000 })
const byName = (source) => Object.fromEntries(source.tools.map((t) => [t.name, t]))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether Windows process `pid` still runs. */
function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === "EPERM"
  }
}

/** Polls until `predicate` holds; a hang bound, not a sleep standing in for a sync. */
async function waitFor(predicate, what, timeout = 10000) {
  const until = Date.now() + timeout
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (Date.now() > until) throw new Error(`${what}: not within ${timeout} ms`)
    await sleep(25)
  }
}

/** The pid a server wrote to `file` (it writes it at start-up). */
const pidIn = (file) => waitFor(() => {
  const n = fs.existsSync(file) ? Number(fs.readFileSync(file, "utf8").trim()) : 0
  return n > 0 ? n : null
}, `a pid in ${file}`)

const checks = []
const check = (name, fn) => checks.push({ name, fn })
const started = [] // every server pid seen, all of which must be gone at the end

check("listMcpTools: statuses, tools and a failed start in words", async () => {
  const inventory = await listMcpTools({
    mcpServers: { fx: fx("echo,add"), broken: { command: "toolnexus-win-no-such-binary" }, off: { command: "x", disabled: true } },
  })
  assert.deepEqual(inventory.status, { fx: "connected", broken: "failed", off: "disabled" })
  assert.deepEqual(inventory.tools.fx.map((t) => t.name).sort(), ["add", "echo"])
  assert.match(inventory.errors.broken, /^cannot start "toolnexus-win-no-such-binary": /)
  assert.equal(inventory.info.fx.name, "toolnexus-fixture")
})

const pidFile = path.join(scratch, "fx.pid")
let source
check("loadMcp: a call, then 300 concurrent calls", async () => {
  source = await loadMcp({ mcpServers: { fx: fx("echo,sleep,slow", { PID_FILE: pidFile }) } })
  assert.deepEqual(source.status, { fx: "connected" })
  started.push(await pidIn(pidFile))
  const tools = byName(source)
  assert.equal((await tools.fx_echo.execute({ text: "hi" })).output, "hi")
  const many = await Promise.all(Array.from({ length: 300 }, (_, i) => tools.fx_echo.execute({ text: `m${i}` })))
  assert.deepEqual(many.map((r) => r.output), Array.from({ length: 300 }, (_, i) => `m${i}`))
})

check("loadMcp: a timeout and an abort, with their exact messages; the connection goes on", async () => {
  const tools = byName(source)
  const timed = await tools.fx_sleep.execute({ ms: 20000 }, { timeout: 300 })
  assert.deepEqual(timed, { output: "MCP tool call timed out after 300 ms", isError: true, metadata: { server: "fx" } })
  const ac = new AbortController()
  const pending = tools.fx_sleep.execute({ ms: 20000 }, { signal: ac.signal })
  assert.equal((await tools.fx_echo.execute({ text: "sync" })).output, "sync")
  ac.abort()
  assert.deepEqual(await pending, { output: "MCP tool call aborted", isError: true, metadata: { server: "fx" } })
  const slow = await tools.fx_slow.execute({ steps: 3, intervalMs: 150 }, { timeout: 400 })
  assert.equal(slow.output, "slow done after 3 steps")
})

check("loadMcp: close() resolves once the server has exited", async () => {
  const [pid] = started
  assert.equal(isAlive(pid), true)
  await source.close()
  assert.equal(isAlive(pid), false)
})

check(`a shim named without its extension on the server's PATH (as "npx" is${windows ? ": a .cmd found through PATHEXT" : ""})`, async () => {
  const bin = path.join(scratch, "shim bin")
  fs.mkdirSync(bin)
  // What npm writes for a package's bin, in short.
  if (windows) fs.writeFileSync(path.join(bin, "tn-fixture.cmd"), '@"%TN_NODE%" "%TN_FIXTURE%" %*\r\n')
  else fs.writeFileSync(path.join(bin, "tn-fixture"), '#!/bin/sh\nexec "$TN_NODE" "$TN_FIXTURE" "$@"\n', { mode: 0o755 })
  const pid = path.join(scratch, "shim.pid")
  const config = {
    mcpServers: {
      shim: {
        command: "tn-fixture",
        args: ["--tools", "echo"],
        env: { PATH: `${bin}${path.delimiter}${process.env.PATH}`, TN_NODE: process.execPath, TN_FIXTURE: fixture, PID_FILE: pid },
        timeout: 30000,
      },
    },
  }
  const shimmed = await loadMcp(config)
  try {
    assert.deepEqual(shimmed.status, { shim: "connected" }, JSON.stringify(shimmed.errors))
    started.push(await pidIn(pid))
    const said = await byName(shimmed).shim_echo.execute({ text: 'spaces, "quotes" & carets ^ too' })
    assert.equal(said.output, 'spaces, "quotes" & carets ^ too')
  } finally {
    await shimmed.close()
  }
})

check(`a script relative to the server's cwd${windows ? " (backslash paths)" : ""}`, async () => {
  const cwd = path.join(repoRoot, "__test__")
  if (windows) assert.ok(cwd.includes("\\"), cwd)
  const script = path.join("fixtures", "stdio-server.mjs")
  const pid = path.join(scratch, "cwd.pid")
  const relative = await loadMcp({
    mcpServers: { rel: { command: process.execPath, args: [script, "--tools", "echo"], cwd, env: { PID_FILE: pid }, timeout: 30000 } },
  })
  try {
    assert.deepEqual(relative.status, { rel: "connected" }, JSON.stringify(relative.errors))
    started.push(await pidIn(pid))
    assert.equal((await byName(relative).rel_echo.execute({ text: "from cwd" })).output, "from cwd")
  } finally {
    await relative.close()
  }
  const nowhere = windows ? "C:\\toolnexus\\no\\such\\folder" : "/toolnexus/no/such/folder"
  const missing = await listMcpTools({ mcpServers: { gone: { command: process.execPath, cwd: nowhere } } })
  assert.equal(missing.errors.gone, `working directory ${JSON.stringify(nowhere)} does not exist`)
})

check("CRLF line ends: a server that ends each message with \\r\\n is read", async () => {
  const script = path.join(scratch, "crlf-server.cjs")
  fs.writeFileSync(
    script,
    `const rl = require("node:readline").createInterface({ input: process.stdin })
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\r\\n")
rl.on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  if (m.method === "initialize") send({ id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "crlf", version: "1.0.0" } } })
  else if (m.method === "tools/list") send({ id: m.id, result: { tools: [{ name: "hello", inputSchema: { type: "object" } }] } })
  else if (m.method === "tools/call") send({ id: m.id, result: { content: [{ type: "text", text: "line one\\r\\nline two" }] } })
  else send({ id: m.id, error: { code: -32601, message: "no " + m.method } })
})
`,
  )
  const crlf = await loadMcp({ mcpServers: { crlf: { command: process.execPath, args: [script], timeout: 30000 } } })
  try {
    assert.deepEqual(crlf.status, { crlf: "connected" }, JSON.stringify(crlf.errors))
    assert.equal((await byName(crlf).crlf_hello.execute({})).output, "line one\r\nline two")
  } finally {
    await crlf.close()
  }
})

// On macOS (no /proc) a server's tree is its process group: a detached child, in a session of
// its own, is not found (documented); it is ended here by the test instead.
const detachedEnded = process.platform !== "darwin"
check(`close() ends the server's whole tree${windows ? " through its job object" : ""}: a child${detachedEnded ? " and a detached child" : ""}`, async () => {
  const pids = path.join(scratch, "tree.pids")
  const script = path.join(scratch, "tree-server.mjs")
  fs.writeFileSync(
    script,
    `import { spawn } from "node:child_process"
import fs from "node:fs"
const forever = ["-e", "setInterval(() => {}, 1e9)"]
const child = spawn(process.execPath, forever, { stdio: "ignore" })
const detached = spawn(process.execPath, forever, { detached: true, stdio: "ignore" })
detached.unref()
fs.writeFileSync(${JSON.stringify(pids)}, [process.pid, child.pid, detached.pid].join(" "))
await import(${JSON.stringify(new URL(`file:///${fixture.replaceAll("\\", "/")}`).href)})
`,
  )
  const tree = await loadMcp({ mcpServers: { tree: { command: process.execPath, args: [script, "--tools", "echo"], timeout: 30000 } } })
  const all = await waitFor(() => fs.existsSync(pids) && fs.readFileSync(pids, "utf8").split(" ").map(Number), "the tree's pids")
  try {
    assert.deepEqual(tree.status, { tree: "connected" }, JSON.stringify(tree.errors))
    assert.deepEqual(all.map(isAlive), [true, true, true])
    started.push(...all)
  } finally {
    await tree.close()
  }
  if (!detachedEnded) process.kill(all[2], "SIGKILL")
  await waitFor(() => all.every((pid) => !isAlive(pid)), `the tree (${all}) gone`)
})

check("createToolkit: a gateway served over loopback HTTP, called through loadMcp (own tool and forwarded tool)", async () => {
  const pid = path.join(scratch, "up.pid")
  const add = defineTool({
    name: "add",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    run: ({ a, b }) => String(a + b),
  })
  const toolkit = await createToolkit({ extraTools: [add], mcpConfig: { mcpServers: { up: fx("echo", { PID_FILE: pid }) } } })
  try {
    started.push(await pidIn(pid))
    const handle = await toolkit.serve("127.0.0.1:0")
    try {
      assert.match(handle.url, /^http:\/\/127\.0\.0\.1:\d+$/)
      const front = await loadMcp({ mcpServers: { gw: { url: `${handle.url}/mcp`, timeout: 30000 } } })
      try {
        assert.deepEqual(front.status, { gw: "connected" }, JSON.stringify(front.errors))
        const tools = byName(front)
        assert.deepEqual(Object.keys(tools).sort(), ["gw_add", "gw_up_echo"])
        assert.equal((await tools.gw_add.execute({ a: 2, b: 3 })).output, "5")
        assert.equal((await tools.gw_up_echo.execute({ text: "through" })).output, "through")
      } finally {
        await front.close()
      }
    } finally {
      await handle.stop()
    }
  } finally {
    await toolkit.close()
  }
})

check(`config discovery: ${windows ? "%APPDATA% and %USERPROFILE%" : process.platform === "darwin" ? "~/Library/Application Support and ~" : "XDG_CONFIG_HOME and ~"} (the package's own CLI, \`toolnexus configs --json\`)`, async () => {
  const home = path.join(scratch, "home")
  const env = { ...process.env }
  let apps
  if (windows) {
    apps = path.join(scratch, "AppData", "Roaming")
    Object.assign(env, { APPDATA: apps, USERPROFILE: home })
    delete env.HOME
  } else if (process.platform === "darwin") {
    apps = path.join(home, "Library", "Application Support")
    env.HOME = home
  } else {
    apps = path.join(scratch, "xdg")
    Object.assign(env, { HOME: home, XDG_CONFIG_HOME: apps })
  }
  fs.mkdirSync(path.join(apps, "Claude"), { recursive: true })
  fs.mkdirSync(home, { recursive: true })
  const desktop = path.join(apps, "Claude", "claude_desktop_config.json")
  fs.writeFileSync(desktop, JSON.stringify({ mcpServers: { a: { command: "a" }, b: { command: "b" } } }))
  const claudeCode = path.join(home, ".claude.json")
  fs.writeFileSync(claudeCode, JSON.stringify({ mcpServers: { c: { command: "c" } } }))
  const cli = path.join(packageDir, "bin", "toolnexus.mjs")
  const stdout = await new Promise((resolve, reject) =>
    execFile(process.execPath, [cli, "configs", "--json"], { env, cwd: scratch }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))),
  )
  const files = JSON.parse(stdout).files.map((f) => [f.client, f.file, f.servers])
  assert.deepEqual(files, [
    ["Claude Desktop", desktop, ["a", "b"]],
    ["Claude Code", claudeCode, ["c"]],
  ])
})

check("nothing is left running", async () => {
  assert.ok(started.length >= 7, `servers seen: ${started}`)
  await waitFor(() => started.every((pid) => !isAlive(pid)), `servers still running: ${started.filter(isAlive)}`)
})

let passed = 0
let failed = 0
for (const { name, fn } of checks) {
  const began = performance.now()
  try {
    await Promise.race([fn(), sleep(60000).then(() => Promise.reject(new Error(`${name}: not within 60 s`)))])
    passed++
    console.log(`ok - ${name} (${(performance.now() - began).toFixed(0)} ms)`)
  } catch (err) {
    failed++
    console.log(`not ok - ${name}\n  ${String(err?.stack ?? err).replaceAll("\n", "\n  ")}`)
  }
}
fs.rmSync(scratch, { recursive: true, force: true })
console.log(`portable (node ${process.versions.node} ${process.platform}-${process.arch}): ${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
