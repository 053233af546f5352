// The `toolnexus` command line (bin/toolnexus.mjs), run as a real subprocess against real MCP
// servers: `list` (JSON shape, exit statuses, the overall deadline, plain and terminal output).
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import * as toolnexus from "toolnexus"
import { isAlive, leakCheck, nodeFixture, readPid, repoRoot, tmpConfig, tmpFile } from "./helpers.mjs"
import { ANSI, BIN, SGR, cli, crash, disabled, envWith, everything, fixtureServer, missing, plain } from "./lib/cli.mjs"

const T = { timeout: 30000 }
const { listMcpTools } = toolnexus

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

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
  assert.deepEqual(Object.keys(inv), ["tools", "resources", "resourceTemplates", "prompts", "skills", "status", "errors", "info"])
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
    skills: { fix: [] },
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
