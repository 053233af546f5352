// listMcpTools over stdio (docs/listing.md; seed 001): disabled servers, SDK servers and
// server-everything, and the failure modes of a single server (hang, grandchild, crash, flood,
// liar, a tool rmcp refuses, no answer to tools/list).
// Every server is a real process or a real HTTP server built with @modelcontextprotocol/sdk;
// see __test__/fixtures/.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { listMcpTools } from "toolnexus"
import {
  descendants,
  fixture,
  isAlive,
  killAll,
  leakCheck,
  nodeFixture,
  readPid,
  repoRoot,
  runNode,
  serverEverything,
  tmpFile,
  waitFor,
  watchDescendants,
} from "./helpers.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const T = { timeout: 20000 }
const names = (infos) => infos.map((t) => t.name)

// docs/listing.md "Nothing left running": whatever a test did, no child of this process survives it.
leakCheck(afterEach)

// ---------------------------------------------------------------------------------------------
// Seed 001, example 1 (verbatim, as its own process)

test("seed 001 example 1: a disabled-only config reports status and connects nothing", T, async () => {
  const r = await runNode(path.join(here, "seed", "001-example-1.mjs"), { cwd: repoRoot })
  assert.equal(r.code, 0, `exit ${r.code} ${r.signal ?? ""}\n${r.stderr}`)
  assert.match(r.stdout, /^ok: \{"search":"disabled"\}$/m)
})

test("disabled servers: status only, no tools, no errors, nothing spawned", T, async () => {
  const marker = tmpFile("spawned")
  const inv = await listMcpTools({
    mcpServers: {
      off: { type: "local", command: ["sh", "-c", `echo > '${marker}'`], enabled: false },
      off2: { command: "sh", args: ["-c", `echo > '${marker}'`], disabled: true },
      web: { type: "remote", url: "https://example.com/mcp", enabled: false },
    },
  })
  assert.deepEqual(inv, {
    tools: {},
    resources: {},
    resourceTemplates: {},
    prompts: {},
    skills: {},
    status: { off: "disabled", off2: "disabled", web: "disabled" },
    errors: {},
    info: {},
  })
  assert.equal(fs.existsSync(marker), false)
})

// ---------------------------------------------------------------------------------------------
// stdio

test("stdio: SDK server connected and unfiltered; a nonexistent command fails alone", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      srv: { command: nodeFixture("stdio-server", "--tools", "a,b,c"), tools: { a: true } },
      bad: { command: ["/nonexistent-toolnexus-test-binary"], timeout: 5000 },
    },
  })
  assert.deepEqual(inv.status, { srv: "connected", bad: "failed" })
  assert.deepEqual(Object.keys(inv.tools), ["srv"])
  assert.deepEqual(names(inv.tools.srv), ["a", "b", "c"], "the tools allowlist is ignored by listMcpTools")
  // The SDK lists `execution` on every tool; ToolInfo keeps it as given.
  assert.deepEqual(inv.tools.srv[0], {
    name: "a",
    description: "a",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "forbidden" },
  })
  assert.equal(inv.tools.bad, undefined)
  assert.equal("bad" in inv.tools, false)
  assert.deepEqual(Object.keys(inv.errors), ["bad"])
  assert.match(inv.errors.bad, /spawn|no such file|not found|enoent/i)
})

test("stdio: command as a string plus args, and ToolInfo keeps the server's schema", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      srv: { type: "stdio", command: process.execPath, args: [fixture("stdio-server"), "--tools", "add,echo,bare"] },
    },
  })
  assert.equal(inv.status.srv, "connected")
  assert.deepEqual(names(inv.tools.srv), ["add", "echo", "bare"])
  const add = inv.tools.srv[0]
  assert.equal(add.description, "Add two numbers")
  assert.equal(add.inputSchema.type, "object")
  assert.deepEqual(add.inputSchema.properties, { a: { type: "number" }, b: { type: "number" } })
  assert.deepEqual(add.inputSchema.required, ["a", "b"])
  const bare = inv.tools.srv[2]
  assert.equal(bare.description, "", "a tool without a description gets an empty one")
  assert.deepEqual(bare.inputSchema, { type: "object", properties: {} })
})

test("stdio: @modelcontextprotocol/server-everything", T, async () => {
  const inv = await listMcpTools({
    mcpServers: { everything: { command: [process.execPath, serverEverything, "stdio"], timeout: 15000 } },
  })
  assert.equal(inv.status.everything, "connected", inv.errors.everything)
  const list = names(inv.tools.everything)
  assert.ok(list.includes("echo"), list.join(","))
  assert.ok(list.includes("get-sum"), list.join(","))
  for (const info of inv.tools.everything) {
    assert.equal(typeof info.name, "string")
    assert.equal(typeof info.description, "string")
    assert.equal(info.inputSchema.type, "object", info.name)
    assert.equal(typeof info.inputSchema.properties, "object", info.name)
    assert.notEqual(info.inputSchema.properties, null, info.name)
  }
  const sum = inv.tools.everything.find((t) => t.name === "get-sum")
  assert.deepEqual(Object.keys(sum.inputSchema.properties).sort(), ["a", "b"])
})

// ---------------------------------------------------------------------------------------------
// Failure modes of a single server

test("hang server: fails at its timeout, promptly, and is killed", T, async (t) => {
  const pidFile = tmpFile("hang.pid")
  const watch = watchDescendants()
  const start = performance.now()
  const inv = await listMcpTools({
    mcpServers: { hang: { command: nodeFixture("hang-server"), environment: { PID_FILE: pidFile }, timeout: 300 } },
  })
  const elapsed = performance.now() - start
  const seen = watch.stop()
  t.diagnostic(`hang server with timeout 300 resolved after ${elapsed.toFixed(1)} ms`)
  assert.deepEqual(inv.status, { hang: "failed" })
  assert.deepEqual(inv.tools, {})
  assert.match(inv.errors.hang, /time(d)?[ -]?out/i)
  assert.ok(elapsed < 300 + 1500, `resolved after ${elapsed} ms`)
  // The pid file exists only if node got as far as running the script within 300 ms.
  const pids = [...new Set([...seen, readPid(pidFile)].filter((p) => p !== null))]
  assert.ok(pids.length > 0, "the hang server was spawned")
  for (const pid of pids) assert.equal(isAlive(pid), false, `hang server ${pid} still alive`)
})

test("grandchild server: connected, and child and grandchild are both gone after resolve", T, async (t) => {
  const gcFile = tmpFile("grandchild.pid")
  const childFile = tmpFile("child.pid")
  t.after(() => killAll([readPid(gcFile)].filter(Boolean)))
  const inv = await listMcpTools({
    mcpServers: {
      gc: { command: nodeFixture("grandchild-server"), env: { GRANDCHILD_PID_FILE: gcFile, PID_FILE: childFile } },
    },
  })
  const child = readPid(childFile)
  const grandchild = readPid(gcFile)
  assert.equal(inv.status.gc, "connected", inv.errors.gc)
  assert.deepEqual(names(inv.tools.gc), ["a"])
  assert.notEqual(child, null)
  assert.notEqual(grandchild, null)
  assert.equal(isAlive(child), false, `child ${child} still alive`)
  if (isAlive(grandchild)) {
    // Diagnose before failing: was the group killed but not awaited, or not killed at all?
    const start = performance.now()
    const died = await waitFor(() => !isAlive(grandchild), { timeout: 2000 }).then(() => true, () => false)
    const after = (performance.now() - start).toFixed(1)
    assert.fail(
      died
        ? `grandchild ${grandchild} was still alive when listMcpTools resolved (it exited ${after} ms later: the group was killed but its exit not awaited)`
        : `grandchild ${grandchild} survived: its process group was not killed`,
    )
  }
})

for (const immediate of [false, true]) {
  test(`crash server${immediate ? " (crashes before reading stdin)" : ""}: exit code 3 and stderr in errors`, T, async () => {
    const inv = await listMcpTools({
      mcpServers: { crash: { command: nodeFixture("crash-server", ...(immediate ? ["--immediate"] : [])) } },
    })
    assert.deepEqual(inv.status, { crash: "failed" })
    assert.deepEqual(inv.tools, {})
    assert.match(inv.errors.crash, /exit\w*\W+(?:\w+\W+){0,3}3\b/i, inv.errors.crash)
    assert.ok(inv.errors.crash.includes("fatal: database missing"), inv.errors.crash)
  })
}

test("flood server: 5 MB of stderr is drained and the server connects", T, async () => {
  const inv = await listMcpTools({ mcpServers: { flood: { command: nodeFixture("flood-server"), timeout: 10000 } } })
  assert.equal(inv.status.flood, "connected", inv.errors.flood)
  assert.deepEqual(names(inv.tools.flood), ["a"])
})

test("liar: a repeated cursor fails the server", T, async () => {
  const inv = await listMcpTools({ mcpServers: { liar: { command: nodeFixture("liar-server", "repeat-cursor"), timeout: 5000 } } })
  assert.deepEqual(inv.status, { liar: "failed" })
  assert.deepEqual(inv.tools, {})
  assert.match(inv.errors.liar, /cursor/i)
})

test("liar: a tools/list result that is not a list fails the server", T, async () => {
  const inv = await listMcpTools({ mcpServers: { liar: { command: nodeFixture("liar-server", "bad-tools"), timeout: 5000 } } })
  assert.deepEqual(inv.status, { liar: "failed" })
  assert.deepEqual(inv.tools, {})
  assert.ok(inv.errors.liar.length > 0)
})

test("liar: three pages of one tool each", T, async () => {
  const inv = await listMcpTools({ mcpServers: { liar: { command: nodeFixture("liar-server", "pages", "3") } } })
  assert.equal(inv.status.liar, "connected", inv.errors.liar)
  assert.deepEqual(names(inv.tools.liar), ["t1", "t2", "t3"])
})

test("liar: missing description and properties are filled in", T, async () => {
  const inv = await listMcpTools({ mcpServers: { liar: { command: nodeFixture("liar-server", "minimal") } } })
  assert.equal(inv.status.liar, "connected", inv.errors.liar)
  assert.deepEqual(inv.tools.liar, [{ name: "minimal", description: "", inputSchema: { type: "object", properties: {} } }])
})


test("a tools/list answer with a tool rmcp's model refuses (no inputSchema): failed, saying which field, with no process left", { timeout: 30000 }, async () => {
  const inv = await listMcpTools({
    mcpServers: { bad: { command: nodeFixture("bad-stdout-server", "bad-tool", "tools/list"), timeout: 20000 } },
  })
  assert.deepEqual(inv.status, { bad: "failed" })
  assert.match(
    inv.errors.bad,
    /^tools\/list failed: the server's answer is not a tool listing \(missing field `inputSchema` at line 1 column \d+\)$/,
  )
  assert.deepEqual(descendants(), [])
})

test("a server that never answers tools/list (asked directly over stdio): failed with the listing's timeout, nothing left running", { timeout: 30000 }, async () => {
  const began = performance.now()
  // 4000 ms: the timeout bounds the SDK server's start-up too, which takes over a second on a
  // machine whose cores are busy; the listing must be what times out.
  const inv = await listMcpTools({
    mcpServers: { quiet: { command: nodeFixture("bad-stdout-server", "silent", "tools/list"), timeout: 4000 } },
  })
  assert.deepEqual(inv.status, { quiet: "failed" })
  assert.equal(inv.errors.quiet, "timed out after 4000 ms during tools/list")
  assert.ok(performance.now() - began < 10000, "a hang bound, not a timing claim")
  assert.deepEqual(descendants(), [])
})
