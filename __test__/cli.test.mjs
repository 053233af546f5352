// The `toolnexus` command line (bin/toolnexus.mjs), run as a real subprocess against real MCP
// servers: `list` (JSON shape, exit statuses, plain and terminal output), `diff` against a saved
// snapshot, and `serve` as a gateway listed and called by the SDK's own client.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { spawn, spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import * as toolnexus from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { describePids, descendants, isAlive, killAll, nodeFixture, readPid, repoRoot, runNode, tmpConfig, tmpFile, leakCheck } from "./helpers.mjs"

const T = { timeout: 30000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const ANSI = /\x1b\[/
const SGR = /\x1b\[[0-9;]*m/
const { listMcpTools } = toolnexus
const createToolkit = toolnexus.createToolkit ?? toolnexus.default?.createToolkit
const noToolkit = typeof createToolkit !== "function" && "createToolkit is not exported by this build yet (serving issue)"

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

/** An environment without colour switches, plus `extra`. */
function envWith(extra = {}) {
  const env = { ...process.env, ...extra }
  for (const key of ["NO_COLOR", "FORCE_COLOR"]) if (!(key in extra)) delete env[key]
  return env
}

/** Runs `node bin/toolnexus.mjs ...args` from the repository root; resolves { code, signal, stdout, stderr }. */
const cli = (args, { env = {} } = {}) => runNode(BIN, { args, env: envWith(env), timeout: 25000 })

/** A stdio fixture server (see fixtures/stdio-server.mjs) serving `tools`, writing its pid to `pidFile`. */
function fixtureServer(tools, pidFile) {
  const spec = { command: nodeFixture("stdio-server", "--tools", tools.join(",")) }
  if (pidFile) spec.env = { PID_FILE: pidFile }
  return spec
}

const everything = {
  command: process.execPath,
  args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  timeout: 20000,
}
const disabled = { type: "remote", url: "http://127.0.0.1:9/mcp", enabled: false }
const missing = { command: ["/nonexistent-toolnexus-cli-test-binary"], timeout: 5000 }
const crash = { command: nodeFixture("crash-server") }

// A fixture tool as ToolInfo: the SDK lists `execution` on every tool, and it is kept as given.
const plain = (name) => ({
  name,
  description: name,
  inputSchema: { type: "object", properties: {} },
  execution: { taskSupport: "forbidden" },
})
const usageLine = /^Usage: toolnexus/m

// ---------------------------------------------------------------------------------------------
// list --json

test("list --json: a healthy config prints exactly the listMcpTools inventory and exits 0", T, async () => {
  const pidFile = tmpFile("fix.pid")
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping", "add"], pidFile), everything, off: disabled } })

  const r = await cli(["list", config, "--json"])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stderr, "")
  const inv = JSON.parse(r.stdout)
  assert.ok(r.stdout.startsWith("{") && r.stdout.endsWith("}\n"), "nothing but the JSON on stdout")
  assert.deepEqual(Object.keys(inv), ["tools", "resources", "resourceTemplates", "prompts", "status", "errors", "info"])
  assert.deepEqual(inv.status, { fix: "connected", everything: "connected", off: "disabled" })
  assert.deepEqual(Object.keys(inv.status), ["fix", "everything", "off"], "config order")
  assert.deepEqual(Object.keys(inv.tools), ["fix", "everything"])
  assert.deepEqual(inv.errors, {})
  assert.deepEqual(inv.tools.fix[0], plain("ping"))
  assert.equal(inv.tools.fix[1].name, "add")
  assert.deepEqual(inv.tools.fix[1].inputSchema.properties, { a: { type: "number" }, b: { type: "number" } })
  assert.ok(inv.tools.everything.some((t) => t.name === "echo"))

  // Exactly what the library reports for the same file.
  assert.deepEqual(inv, await listMcpTools(config))
  // And nothing left running by the CLI.
  const pid = readPid(pidFile)
  assert.ok(pid, "the fixture server started")
  assert.equal(isAlive(pid), false, `fixture server ${pid} still running`)
})

test("list --json: a failing server gives exit 1, its reason in errors, and the others intact", T, async () => {
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping"]), crash, missing, off: disabled } })
  const r = await cli(["list", config, "--json"])
  assert.equal(r.code, 1, r.stderr)
  const inv = JSON.parse(r.stdout)
  assert.deepEqual(inv.status, { fix: "connected", crash: "failed", missing: "failed", off: "disabled" })
  assert.deepEqual(inv.tools, { fix: [plain("ping")] })
  assert.deepEqual(Object.keys(inv.errors), ["crash", "missing"])
  assert.match(inv.errors.crash, /exited \(code 3\)/)
  assert.match(inv.errors.crash, /fatal: database missing/)
  assert.match(inv.errors.missing, /cannot start .*nonexistent-toolnexus-cli-test-binary/)
})

test("list --timeout: a hanging server fails at the overall deadline, the others keep their tools", T, async () => {
  const pidFile = tmpFile("hang.pid")
  const hang = { command: nodeFixture("hang-server"), env: { PID_FILE: pidFile }, timeout: 60000 }
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping"]), hang } })
  const started = performance.now()
  const r = await cli(["list", config, "--json", "--timeout", "5000"])
  const elapsed = performance.now() - started
  assert.equal(r.code, 1, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), {
    tools: { fix: [plain("ping")] },
    resources: { fix: [] },
    resourceTemplates: { fix: [] },
    prompts: { fix: [] },
    status: { fix: "connected", hang: "failed" },
    errors: { hang: "toolnexus: MCP list deadline exceeded" },
    info: { fix: { protocolVersion: "2025-11-25", name: "toolnexus-fixture", version: "1.0.0" } },
  })
  assert.ok(elapsed < 15000, `took ${Math.round(elapsed)} ms`)
  const pid = readPid(pidFile)
  assert.ok(pid, "the hanging server started")
  assert.equal(isAlive(pid), false, `hang server ${pid} survived the deadline`)
})

// ---------------------------------------------------------------------------------------------
// list, human output

test("list without a terminal: plain lines in config order, tools with descriptions, no ANSI", T, async () => {
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping", "add"]), crash, off: disabled } })
  const r = await cli(["list", config])
  assert.equal(r.code, 1, r.stderr)
  assert.doesNotMatch(r.stdout, ANSI)
  assert.doesNotMatch(r.stderr, ANSI)
  const lines = r.stdout.split("\n")
  assert.match(lines[0], /^✓ fix {4}2 tools {2}\d+ ms {2}toolnexus-fixture · MCP 2025-11-25$/)
  assert.match(lines[1], /^✗ crash {2}exited \(code 3\); stderr: starting crash-fixture$/)
  assert.equal(lines[2], "– off    disabled")
  assert.deepEqual(lines.slice(3), [
    "",
    "fix",
    "  ping  ping",
    "  add   Add two numbers",
    "",
    "crash failed",
    "  exited (code 3); stderr: starting crash-fixture",
    "  fatal: database missing",
    "",
  ])
})

// The live view needs a terminal: util-linux `script` gives the CLI a pseudo-terminal.
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0
const shellQuote = (s) => `'${String(s).replaceAll("'", `'\\''`)}'`

function inTerminal(args, env) {
  const command = [process.execPath, BIN, ...args].map(shellQuote).join(" ")
  const r = spawnSync("script", ["-qec", command, "/dev/null"], {
    cwd: repoRoot,
    env: envWith({ TERM: "xterm-256color", ...env }),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 25000,
  })
  return { code: r.status, stdout: r.stdout }
}

test("list on a terminal: live view with colours; NO_COLOR keeps the view and drops the colours", { ...T, skip: !hasScript && "util-linux `script` is not installed" }, async () => {
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping"]), off: disabled } })

  const coloured = inTerminal(["list", config], {})
  assert.equal(coloured.code, 0, coloured.stdout)
  assert.match(coloured.stdout, /\x1b\[2K/, "lines are redrawn in place")
  assert.ok(coloured.stdout.includes("\x1b[32m✓\x1b[39m fix"), "a green check for a connected server")

  const monochrome = inTerminal(["list", config], { NO_COLOR: "1" })
  assert.equal(monochrome.code, 0, monochrome.stdout)
  assert.match(monochrome.stdout, /\x1b\[2K/, "still a live view")
  assert.doesNotMatch(monochrome.stdout, SGR, "no colour escape with NO_COLOR")
  assert.match(monochrome.stdout, /✓ fix {2}1 tool {2}\d+ ms/)
  assert.match(monochrome.stdout, /– off {2}disabled/)
  assert.match(monochrome.stdout, /\r?\nfix\r?\n {2}ping {2}ping\r?\n/)
})

// ---------------------------------------------------------------------------------------------
// config and usage errors

const BROKEN_JSONC = `{
  // comments are fine, this missing comma is not
  "mcpServers": {
    "fix": { "command": "node", }
    "other": { "command": "node" }
  }
}
`

test("a malformed JSONC config is exit 2 with file:line:col on stderr, for every command", T, async () => {
  const config = tmpConfig(BROKEN_JSONC)
  const snapshot = tmpConfig({ tools: {}, status: {}, errors: {} })
  for (const args of [["list", config], ["list", config, "--json"], ["diff", config, snapshot], ["serve", config, "--addr", "127.0.0.1:0"]]) {
    const r = await cli(args)
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stdout, "", args.join(" "))
    assert.ok(r.stderr.includes(`${config}:5:5`), `${args.join(" ")}: ${r.stderr}`)
  }
  const r = await cli(["list", path.join(path.dirname(config), "no-such-mcp.json")])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /cannot read MCP config .*no-such-mcp\.json/)
})

test("usage errors are exit 2 with the usage on stderr and nothing on stdout", T, async () => {
  const config = tmpConfig({ mcpServers: {} })
  const cases = [
    [],
    ["nope"],
    ["list", config, "extra"],
    ["list", config, "--bogus"],
    ["list", config, "--timeout"],
    ["list", config, "--timeout", "soon"],
    ["list", config, "--timeout", "0"],
    ["diff"],
    ["diff", config, config, config],
    ["diff", config, config, "--addr", "x:1"],
    ["serve", config, "extra"],
    ["serve", config, "--addr", "no-port"],
    ["serve", config, "--addr", "127.0.0.1:99999"],
    ["serve", config, "--json"],
    ["help", "nope"],
    ["call"],
    ["call", "server"],
    ["call", config, "server"],
    ["call", config, "s", "t", "--bogus"],
    ["configs", "extra"],
  ]
  for (const args of cases) {
    const r = await cli(args)
    const label = `toolnexus ${args.join(" ")}`
    assert.equal(r.code, 2, `${label}: ${r.stderr}`)
    assert.equal(r.stdout, "", label)
    assert.match(r.stderr, usageLine, label)
  }
})

test("--help for the top level and each command is exit 0 on stdout", T, async () => {
  const cases = [
    [["--help"], "Usage: toolnexus <command>"],
    [["-h"], "Usage: toolnexus <command>"],
    [["help"], "Usage: toolnexus <command>"],
    [["list", "--help"], "Usage: toolnexus list [<config>]"],
    [["list", "-h"], "Usage: toolnexus list [<config>]"],
    [["help", "list"], "Usage: toolnexus list [<config>]"],
    [["diff", "--help"], "Usage: toolnexus diff [<config>] <snapshot.json>"],
    [["help", "diff"], "Usage: toolnexus diff [<config>] <snapshot.json>"],
    [["serve", "--help"], "Usage: toolnexus serve [<config>]"],
    [["serve", "whatever.json", "-h"], "Usage: toolnexus serve [<config>]"],
    [["call", "--help"], "Usage: toolnexus call [<config>] <server> <tool>"],
    [["help", "call"], "Usage: toolnexus call [<config>] <server> <tool>"],
    [["configs", "--help"], "Usage: toolnexus configs [--json]"],
  ]
  for (const [args, head] of cases) {
    const r = await cli(args)
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stderr, "")
    assert.ok(r.stdout.startsWith(head), `${args.join(" ")}: ${r.stdout.slice(0, 80)}`)
    assert.doesNotMatch(r.stdout, ANSI)
  }
  const diffHelp = (await cli(["diff", "--help"])).stdout
  for (const key of ['"servers"', '"status"', '"from"', '"to"', '"added"', '"removed"', '"changed"', '"fields"', '"drift"']) {
    assert.ok(diffHelp.includes(key), `diff --help documents ${key}`)
  }
  const version = await cli(["--version"])
  assert.equal(version.code, 0)
  assert.equal(version.stdout, `${JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version}\n`)
})

// ---------------------------------------------------------------------------------------------
// diff

const diffServers = () => ({
  a: fixtureServer(["add", "echo", "bare"]),
  b: fixtureServer(["ping"]),
  off: disabled,
  missing,
})

/** `toolnexus list --json` of `config`, as saved by a user. */
async function snapshotOf(config) {
  const r = await cli(["list", config, "--json"])
  assert.equal(r.code, 1, r.stderr) // `missing` fails, on purpose
  return JSON.parse(r.stdout)
}

test("diff: an identical snapshot is no drift, exit 0 (failure reasons are not compared)", T, async () => {
  const config = tmpConfig({ mcpServers: diffServers() })
  const saved = await snapshotOf(config)
  const snapshot = tmpConfig(saved, { name: "snapshot.json" })

  const json = await cli(["diff", config, snapshot, "--json"])
  assert.equal(json.code, 0, json.stderr)
  const none = { added: [], removed: [], changed: [] }
  assert.deepEqual(JSON.parse(json.stdout), {
    servers: { a: none, b: none, off: none, missing: { error: saved.errors.missing, ...none } },
    drift: false,
  })

  const human = await cli(["diff", config, snapshot])
  assert.equal(human.code, 0, human.stderr)
  assert.equal(human.stdout, `no drift: 4 servers match ${snapshot}\n`)
})

test("diff: a drifted snapshot reports every added, removed, changed tool and status change, exit 1", T, async () => {
  const config = tmpConfig({ mcpServers: diffServers() })
  const saved = await snapshotOf(config)
  const edited = structuredClone(saved)
  const a = edited.tools.a
  const byName = (name) => a.find((t) => t.name === name)
  // a: "echo" is new since the snapshot, "retired" is gone, two tools changed.
  edited.tools.a = a.filter((t) => t.name !== "echo")
  edited.tools.a.push(plain("retired"))
  byName("add").description = "Adds numbers (old wording)"
  // Same schema, keys in another order at every level: not a change.
  const reorder = (v) =>
    Array.isArray(v) ? v.map(reorder) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)])) : v
  byName("add").inputSchema = reorder(byName("add").inputSchema)
  byName("bare").description = "was described"
  byName("bare").inputSchema = { type: "object", properties: { verbose: { type: "boolean" } } }
  // b was disabled, off was connected, gone no longer exists.
  edited.status.b = "disabled"
  delete edited.tools.b
  edited.status.off = "connected"
  edited.tools.off = []
  edited.status.gone = "connected"
  edited.tools.gone = [plain("x")]
  const snapshot = tmpConfig(edited, { name: "drifted.json" })

  const json = await cli(["diff", config, snapshot, "--json"])
  assert.equal(json.code, 1, json.stderr)
  assert.deepEqual(JSON.parse(json.stdout), {
    servers: {
      a: {
        added: ["echo"],
        removed: ["retired"],
        changed: [
          { name: "add", fields: ["description"] },
          { name: "bare", fields: ["description", "inputSchema"] },
        ],
      },
      b: { status: { from: "disabled", to: "connected" }, added: [], removed: [], changed: [] },
      off: { status: { from: "connected", to: "disabled" }, added: [], removed: [], changed: [] },
      missing: { error: saved.errors.missing, added: [], removed: [], changed: [] },
      gone: { status: { from: "connected", to: "absent" }, added: [], removed: [], changed: [] },
    },
    drift: true,
  })

  const human = await cli(["diff", config, snapshot])
  assert.equal(human.code, 1, human.stderr)
  assert.doesNotMatch(human.stdout, ANSI)
  assert.equal(
    human.stdout,
    [
      "a",
      "  + echo",
      "  - retired",
      "  ~ add  (description)",
      "  ~ bare  (description, inputSchema)",
      "b",
      "  status disabled → connected",
      "off",
      "  status connected → disabled",
      "gone",
      "  status connected → absent",
      "",
      `drift: 7 changes in 4 of 5 servers since ${snapshot}`,
      "",
    ].join("\n"),
  )
})

test("diff: an unreadable or foreign snapshot is exit 2 before any server starts", T, async () => {
  const pidFile = tmpFile("diff.pid")
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping"], pidFile) } })
  const cases = [
    [path.join(path.dirname(config), "absent.json"), /cannot read snapshot/],
    [tmpConfig("{ not json", { name: "bad.json" }), /is not valid JSON/],
    [tmpConfig([], { name: "array.json" }), /not a `toolnexus list --json` output: expected an object/],
    [tmpConfig({ tools: {} }, { name: "nostatus.json" }), /"status" must be an object/],
    [tmpConfig({ status: { fix: "connected" }, tools: { fix: {} } }, { name: "tools.json" }), /tools\.fix must be an array/],
  ]
  for (const [snapshot, message] of cases) {
    const r = await cli(["diff", config, snapshot])
    assert.equal(r.code, 2, `${snapshot}: ${r.stderr}`)
    assert.equal(r.stdout, "")
    assert.match(r.stderr, message)
  }
  assert.equal(fs.existsSync(pidFile), false, "no server was started")
})

// ---------------------------------------------------------------------------------------------
// serve

/** Starts `toolnexus ...args` and resolves its first stdout line; `exited` resolves at its exit. */
function startCli(args) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: repoRoot, env: envWith(), stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  const firstLine = new Promise((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (d) => {
      stdout += d
      if (stdout.includes("\n")) resolve(stdout.slice(0, stdout.indexOf("\n")))
    })
    child.on("close", (code) => reject(new Error(`toolnexus exited (${code}) before printing a line; stderr:\n${stderr}`)))
  })
  return { child, firstLine, exited, stderr: () => stderr }
}

for (const signal of ["SIGTERM", "SIGINT"]) {
  test(`serve: a gateway over two stdio servers, listed and called by an SDK client, ends cleanly on ${signal}`, { ...T, skip: noToolkit }, async () => {
    const pidA = tmpFile("a.pid")
    const pidB = tmpFile("b.pid")
    const config = tmpConfig({ mcpServers: { a: fixtureServer(["add", "echo"], pidA), b: fixtureServer(["ping"], pidB) } })
    // Off a terminal a line per call is opt-in: SIGTERM's run asks for it, SIGINT's does not.
    const logCalls = signal === "SIGTERM"
    const gw = startCli(["serve", config, "--addr", "127.0.0.1:0", "--tools", "a_add,b_ping,nope", "--name", "gw", ...(logCalls ? ["--log-calls"] : [])])
    let client
    try {
      const line = await gw.firstLine
      const match = /^toolnexus: serving 2 tools at (http:\/\/127\.0\.0\.1:\d+)\/mcp$/.exec(line)
      assert.ok(match, line)
      assert.match(gw.stderr(), /^✓ a {2}connected$/m)
      assert.match(gw.stderr(), /^✓ b {2}connected$/m)
      assert.match(gw.stderr(), /no tool named "nope"/)

      client = new Client({ name: "cli-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${match[1]}/mcp`)))
      assert.equal(client.getServerVersion()?.name, "gw")
      const { tools } = await client.listTools()
      assert.deepEqual(
        tools.map((t) => t.name),
        ["a_add", "b_ping"],
      )
      const sum = await client.callTool({ name: "a_add", arguments: { a: 2, b: 3 } })
      assert.deepEqual(sum.content, [{ type: "text", text: "5" }])
      assert.ok(!sum.isError)
      const ping = await client.callTool({ name: "b_ping", arguments: {} })
      assert.deepEqual(ping.content, [{ type: "text", text: "ping" }])
      await client.close()
      client = undefined

      const servers = [readPid(pidA), readPid(pidB)]
      assert.ok(servers.every((pid) => pid && isAlive(pid)), `servers running while serving: ${servers}`)
      const tree = descendants(gw.child.pid)
      gw.child.kill(signal)
      const end = await gw.exited
      assert.equal(end.code, 0, end.stderr)
      assert.equal(end.signal, null)
      const callLines = end.stderr.split("\n").filter((l) => /^✓ (a_add|b_ping) {2}\d+ ms$/.test(l))
      assert.deepEqual(
        callLines.map((l) => l.split(" ")[1]),
        logCalls ? ["a_add", "b_ping"] : [],
        `a line per call only with --log-calls (stderr is not a terminal):\n${end.stderr}`,
      )
      const left = [...new Set([...servers, ...tree])].filter(isAlive)
      assert.deepEqual(left, [], `left running after ${signal}: ${describePids(left)}`)
    } finally {
      await client?.close().catch(() => {})
      if (gw.child.exitCode === null && gw.child.signalCode === null) {
        gw.child.kill("SIGKILL")
        killAll([readPid(pidA), readPid(pidB)].filter(Boolean)) // orphans once the gateway is gone
      }
    }
  })
}
