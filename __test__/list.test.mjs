// listMcpTools, parseMcpConfig, sanitize and expandEnvHeaders against real MCP servers
// (SPEC §2, §3; seeds 000 and 001). Every server here is a real process or a real HTTP
// server built with @modelcontextprotocol/sdk; see __test__/fixtures/.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { listMcpTools, parseMcpConfig, sanitize, expandEnvHeaders } from "toolnexus"
import {
  assertAbortMidway,
  assertAbortedBeforeStart,
  descendants,
  describePids,
  fixture,
  isAlive,
  killAll,
  nodeFixture,
  readPid,
  rejection,
  repoRoot,
  runNode,
  serverEverything,
  tmpConfig,
  tmpFile,
  waitFor,
  watchDescendants,
} from "./helpers.mjs"
import { startLegacySse, startStatus, startStreamableHttp } from "./fixtures/http-servers.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const T = { timeout: 20000 }
const names = (infos) => infos.map((t) => t.name)

// SPEC §3 "Nothing left running": whatever a test did, no child of this process survives it.
afterEach(() => {
  const left = descendants()
  killAll(left) // keep one failure from cascading into the next tests
  assert.deepEqual(left, [], `processes left running after the test: ${describePids(left)}`)
})

/** Runs `fn` with process.env temporarily extended by `vars` (undefined deletes a variable). */
async function withEnv(vars, fn) {
  const saved = {}
  for (const [k, v] of Object.entries(vars)) {
    saved[k] = process.env[k]
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  try {
    return await fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

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
  assert.deepEqual(inv, { tools: {}, status: { off: "disabled", off2: "disabled", web: "disabled" }, errors: {}, info: {} })
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
// HTTP

test("streamable HTTP: 250 tools over 3 pages, in order, session DELETEd before resolve", T, async (t) => {
  const s = await startStreamableHttp({ tools: 250, pageSize: 100 })
  t.after(() => s.close())
  const inv = await listMcpTools({ mcpServers: { web: { type: "streamable-http", url: s.url } } })
  // Read the counters before anything else can happen: the DELETE must already have arrived.
  const deletes = s.stats.http.DELETE
  const closed = s.stats.sessions.closed
  assert.equal(inv.status.web, "connected", inv.errors.web)
  const expected = Array.from({ length: 250 }, (_, i) => `tool${String(i + 1).padStart(3, "0")}`)
  assert.deepEqual(names(inv.tools.web), expected)
  assert.equal(s.stats.rpc["tools/list"], 3)
  assert.equal(s.stats.sessions.opened, 1)
  assert.equal(deletes, 1, "the session is closed with DELETE by the time listMcpTools resolves")
  assert.equal(closed, 1)
})

test("streamable HTTP: headers expand ${VAR} from the environment; a plain url is auto", T, async (t) => {
  const s = await startStreamableHttp({ tools: 2, pageSize: 100 })
  t.after(() => s.close())
  const inv = await withEnv({ TOKEN: "s3cret-token" }, () =>
    listMcpTools({ mcpServers: { web: { url: s.url, headers: { Authorization: "Bearer ${TOKEN}" } } } }),
  )
  assert.equal(inv.status.web, "connected", inv.errors.web)
  assert.deepEqual(names(inv.tools.web), ["tool1", "tool2"])
  const posts = s.stats.requests.filter((r) => r.method === "POST")
  assert.ok(posts.length > 0)
  for (const r of posts) assert.equal(r.headers.authorization, "Bearer s3cret-token")
})

test("legacy SSE: type sse connects directly, without a streamable attempt", T, async (t) => {
  const s = await startLegacySse({ tools: ["alpha", "beta"] })
  t.after(() => s.close())
  const inv = await listMcpTools({ mcpServers: { old: { type: "sse", url: s.url } } })
  assert.equal(inv.status.old, "connected", inv.errors.old)
  assert.deepEqual(names(inv.tools.old), ["alpha", "beta"])
  assert.deepEqual(
    s.stats.requests.filter((r) => r.path === "/sse" && r.method !== "GET"),
    [],
    "type sse must not try streamable HTTP first",
  )
  await waitFor(() => s.stats.sessions.closed === s.stats.sessions.opened, {
    timeout: 3000,
    message: "the SSE stream is closed after listing",
  })
})

test("legacy SSE: a plain url falls back from streamable HTTP to SSE", T, async (t) => {
  const s = await startLegacySse({ tools: ["alpha", "beta"] })
  t.after(() => s.close())
  const inv = await listMcpTools({ mcpServers: { old: { url: s.url } } })
  assert.equal(inv.status.old, "connected", inv.errors.old)
  assert.deepEqual(names(inv.tools.old), ["alpha", "beta"])
  assert.ok(
    s.stats.requests.some((r) => r.path === "/sse" && r.method === "POST"),
    "auto transport tries streamable HTTP (POST) first",
  )
  assert.equal(s.stats.sessions.opened, 1)
  await waitFor(() => s.stats.sessions.closed === 1, { timeout: 3000, message: "the SSE stream is closed" })
})

for (const code of [500, 404]) {
  test(`HTTP ${code}: failed, with the status in errors`, T, async (t) => {
    const s = await startStatus(code)
    t.after(() => s.close())
    const inv = await listMcpTools({ mcpServers: { web: { url: s.url, timeout: 5000 } } })
    assert.deepEqual(inv.status, { web: "failed" })
    assert.deepEqual(inv.tools, {})
    assert.match(inv.errors.web, new RegExp(`\\b${code}\\b`))
    assert.ok(s.stats.http.POST >= 1)
  })
}

test("https to a closed loopback port: failed with a reason", T, async () => {
  const inv = await listMcpTools({ mcpServers: { tls: { url: "https://127.0.0.1:1/mcp", timeout: 5000 } } })
  assert.deepEqual(inv.status, { tls: "failed" })
  assert.deepEqual(inv.tools, {})
  assert.equal(typeof inv.errors.tls, "string")
  assert.ok(inv.errors.tls.trim().length > 0)
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

// ---------------------------------------------------------------------------------------------
// Several servers

test("isolation and order: mixed outcomes keep config order", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      zeta: { command: nodeFixture("stdio-server", "--tools", "z1") },
      alpha: { command: ["true"], enabled: false },
      mid: { command: ["/nonexistent-toolnexus-test-binary"] },
      beta: { command: nodeFixture("stdio-server", "--tools", "b1,b2") },
      crash: { command: nodeFixture("crash-server") },
      aaa: { command: nodeFixture("liar-server", "pages", "2") },
      hang: { command: nodeFixture("hang-server"), timeout: 300 },
      off: { url: "http://127.0.0.1:1/mcp", disabled: true },
    },
  })
  const order = ["zeta", "alpha", "mid", "beta", "crash", "aaa", "hang", "off"]
  assert.deepEqual(Object.keys(inv.status), order)
  assert.deepEqual(inv.status, {
    zeta: "connected",
    alpha: "disabled",
    mid: "failed",
    beta: "connected",
    crash: "failed",
    aaa: "connected",
    hang: "failed",
    off: "disabled",
  })
  assert.deepEqual(Object.keys(inv.tools), ["zeta", "beta", "aaa"])
  assert.deepEqual(names(inv.tools.zeta), ["z1"])
  assert.deepEqual(names(inv.tools.beta), ["b1", "b2"])
  assert.deepEqual(names(inv.tools.aaa), ["t1", "t2"])
  assert.deepEqual(Object.keys(inv.errors), ["mid", "crash", "hang"])
})

test("concurrency: three hanging servers with timeout 500 finish together", T, async (t) => {
  const hang = () => ({ command: nodeFixture("hang-server"), timeout: 500 })
  const start = performance.now()
  const inv = await listMcpTools({ mcpServers: { h1: hang(), h2: hang(), h3: hang() } })
  const elapsed = performance.now() - start
  t.diagnostic(`three hang servers (timeout 500) resolved after ${elapsed.toFixed(1)} ms`)
  assert.deepEqual(inv.status, { h1: "failed", h2: "failed", h3: "failed" })
  assert.ok(elapsed < 1500, `took ${elapsed} ms: servers are not connected concurrently`)
})

// ---------------------------------------------------------------------------------------------
// Cancellation and deadline

test("AbortSignal: already aborted rejects with signal.reason and spawns nothing", T, () => assertAbortedBeforeStart(listMcpTools))

for (const [label, makeReason] of [
  ["default reason", () => undefined],
  ["custom Error reason", () => new Error("stop")],
  ["non-Error reason", () => "plain string"],
]) {
  test(`AbortSignal: aborting mid-listing rejects with the exact reason (${label}) and tears down`, T, async (t) => {
    await assertAbortMidway(t, listMcpTools, makeReason())
  })
}

for (const key of ["deadline", "timeout"]) {
  test(`opts.${key}: 100 ms bounds the whole call with the exact message`, T, async () => {
    const start = performance.now()
    const err = await rejection(
      listMcpTools({ mcpServers: { slow: { type: "local", command: ["sleep", "5"], timeout: 30000 } } }, { [key]: 100 }),
    )
    const elapsed = performance.now() - start
    assert.ok(err instanceof Error, `rejected with ${err}`)
    assert.equal(err.message, "toolnexus: MCP list deadline exceeded")
    assert.ok(elapsed < 100 + 1500, `deadline rejection after ${elapsed} ms`)
    assert.deepEqual(descendants(), [])
  })
}

// ---------------------------------------------------------------------------------------------
// Config input

test("malformed JSON text rejects before anything is spawned", T, async () => {
  const err = await rejection(listMcpTools("{not valid json"))
  assert.ok(err instanceof Error, `rejected with ${err}`)
  const marker = tmpFile("spawned")
  const text = `{"mcpServers": {"a": {"command": ["sh", "-c", "echo > '${marker}'; exec sleep 30"]}}, oops}`
  const err2 = await rejection(listMcpTools(text))
  assert.ok(err2 instanceof Error)
  assert.deepEqual(descendants(), [])
  assert.equal(fs.existsSync(marker), false)
})

test("a JSONC file with comments and trailing commas lists fine, by absolute and relative path", T, async () => {
  const command = JSON.stringify(nodeFixture("stdio-server", "--tools", "a,b"))
  const file = tmpConfig(
    `// an editor-style config
{
  /* block comment */
  "mcpServers": {
    "srv": { "command": ${command}, }, // trailing comma inside
  },
}
`,
    { name: "mcp.json" },
  )
  for (const input of [file, path.relative(process.cwd(), file)]) {
    const inv = await listMcpTools(input)
    assert.equal(inv.status.srv, "connected", inv.errors.srv)
    assert.deepEqual(names(inv.tools.srv), ["a", "b"])
  }
})

test("a syntax error in a file names the file and line:column", T, async () => {
  // The stray "@" is line 3, column 19 (1-based).
  const file = tmpConfig(`{
  // servers
  "mcpServers": { @ }
}
`)
  const err = await rejection(listMcpTools(file))
  assert.ok(err instanceof Error)
  assert.ok(err.message.includes(`${file}:3:19`), err.message)
  assert.throws(
    () => parseMcpConfig(file),
    (e) => e instanceof Error && e.message.includes(`${file}:3:19`),
  )
  assert.deepEqual(descendants(), [])
})

test("a missing config file rejects, naming the file", T, async () => {
  const file = path.join(path.dirname(tmpFile()), "no-such-mcp.json")
  const err = await rejection(listMcpTools(file))
  assert.ok(err instanceof Error)
  assert.ok(err.message.includes("no-such-mcp.json"), err.message)
})

test("a wrong-type field fails only that server; non-object entries are skipped", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      good: { command: nodeFixture("stdio-server", "--tools", "a") },
      bad: { command: 42 },
      junk: "not an object",
      numeric: 7,
      slowpoke: { command: nodeFixture("stdio-server", "--tools", "a"), timeout: "soon" },
    },
  })
  assert.deepEqual(Object.keys(inv.status), ["good", "bad", "slowpoke"])
  assert.deepEqual(inv.status, { good: "connected", bad: "failed", slowpoke: "failed" })
  assert.deepEqual(Object.keys(inv.tools), ["good"])
  assert.ok(inv.errors.bad.includes("mcpServers.bad.command"), inv.errors.bad)
  assert.ok(inv.errors.slowpoke.includes("mcpServers.slowpoke.timeout"), inv.errors.slowpoke)
})

test("variables expand in command, args, env values and url", T, async (t) => {
  const s = await startStreamableHttp({ tools: 1 })
  t.after(() => s.close())
  const port = new URL(s.url).port
  const inv = await withEnv(
    { TNX_NODE: process.execPath, TNX_TOOLS: "x,y", TNX_ENV_TOOLS: "e1", TNX_PORT: port, TNX_MISSING: undefined },
    () =>
      listMcpTools({
        mcpServers: {
          args: { command: ["${TNX_NODE}", fixture("stdio-server"), "--tools", "${TNX_TOOLS}"] },
          env: { command: "${env:TNX_NODE}", args: [fixture("stdio-server")], env: { FIXTURE_TOOLS: "${TNX_ENV_TOOLS}" } },
          dflt: { command: [process.execPath, fixture("stdio-server"), "--tools", "${TNX_MISSING:-d1,d2}"] },
          web: { url: "http://127.0.0.1:${TNX_PORT}/mcp" },
        },
      }),
  )
  assert.deepEqual(inv.status, { args: "connected", env: "connected", dflt: "connected", web: "connected" }, JSON.stringify(inv.errors))
  assert.deepEqual(names(inv.tools.args), ["x", "y"])
  assert.deepEqual(names(inv.tools.env), ["e1"])
  assert.deepEqual(names(inv.tools.dflt), ["d1", "d2"])
  assert.deepEqual(names(inv.tools.web), ["tool1"])
})

test("listMcpTools accepts parseMcpConfig's normalised output", T, async () => {
  const normalised = parseMcpConfig({
    mcpServers: { srv: { command: process.execPath, args: [fixture("stdio-server"), "--tools", "n1"] } },
  })
  const inv = await listMcpTools(normalised)
  assert.deepEqual(inv.status, { srv: "connected" })
  assert.deepEqual(names(inv.tools.srv), ["n1"])
})

// ---------------------------------------------------------------------------------------------
// parseMcpConfig (pure: nothing is spawned or expanded)

/** Drops properties whose value is undefined, so an absent optional field compares as absent. */
const plain = (value) => JSON.parse(JSON.stringify(value))

test("parseMcpConfig: Claude mcpServers with command + args + env", () => {
  const out = parseMcpConfig({
    mcpServers: {
      fs: { command: "npx", args: ["-y", "@scope/server", "${HOME}/data"], env: { TOKEN: "${TOKEN}" } },
      py: { command: "python", args: [], cwd: "${PROJECT}/srv", timeout: 1234, tools: { read: true, write: false } },
    },
  })
  assert.deepEqual(Object.keys(out), ["fs", "py"])
  assert.deepEqual(plain(out), {
    fs: {
      type: "local",
      command: ["npx", "-y", "@scope/server", "${HOME}/data"],
      environment: { TOKEN: "${TOKEN}" },
      enabled: true,
      timeout: 30000,
    },
    py: {
      type: "local",
      command: ["python"],
      environment: {},
      cwd: "${PROJECT}/srv",
      enabled: true,
      timeout: 1234,
      tools: { read: true, write: false },
    },
  })
})

test("parseMcpConfig: VS Code servers with type http / sse / stdio", () => {
  const out = parseMcpConfig({
    inputs: [{ type: "promptString", id: "token", password: true }],
    servers: {
      gh: { type: "http", url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: "Bearer ${input:token}" } },
      old: { type: "sse", url: "http://localhost:8080/sse" },
      local: { type: "stdio", command: "node", args: ["server.js"], env: { A: "1" } },
    },
  })
  assert.deepEqual(Object.keys(out), ["gh", "old", "local"])
  // VS Code's "http" means streamable HTTP (with SSE fallback in VS Code itself): either
  // "streamable-http" or "auto" is a faithful reading; SPEC §2 does not pin it.
  assert.ok(["streamable-http", "auto"].includes(out.gh.transport), out.gh.transport)
  assert.deepEqual(plain(out), {
    gh: {
      type: "remote",
      url: "https://api.githubcopilot.com/mcp/",
      transport: out.gh.transport,
      headers: { Authorization: "Bearer ${input:token}" },
      enabled: true,
      timeout: 30000,
    },
    old: { type: "remote", url: "http://localhost:8080/sse", transport: "sse", headers: {}, enabled: true, timeout: 30000 },
    local: { type: "local", command: ["node", "server.js"], environment: { A: "1" }, enabled: true, timeout: 30000 },
  })
})

test("parseMcpConfig: Windsurf serverUrl and Gemini httpUrl", () => {
  const out = parseMcpConfig({
    mcpServers: {
      wind: { serverUrl: "https://wind.example.com/mcp", headers: { "X-Key": "${WIND_KEY}" } },
      gem: { httpUrl: "https://gem.example.com/mcp", timeout: 5000 },
      streamy: { type: "streamableHttp", url: "https://s.example.com/mcp" },
      streamy2: { type: "streamable-http", url: "https://s2.example.com/mcp" },
      plainUrl: { url: "https://p.example.com/mcp" },
    },
  })
  assert.deepEqual(Object.keys(out), ["wind", "gem", "streamy", "streamy2", "plainUrl"])
  // Gemini's httpUrl is streamable HTTP in Gemini CLI; "auto" would also connect to it.
  assert.ok(["streamable-http", "auto"].includes(out.gem.transport), out.gem.transport)
  assert.deepEqual(plain(out), {
    wind: { type: "remote", url: "https://wind.example.com/mcp", transport: "auto", headers: { "X-Key": "${WIND_KEY}" }, enabled: true, timeout: 30000 },
    gem: { type: "remote", url: "https://gem.example.com/mcp", transport: out.gem.transport, headers: {}, enabled: true, timeout: 5000 },
    streamy: { type: "remote", url: "https://s.example.com/mcp", transport: "streamable-http", headers: {}, enabled: true, timeout: 30000 },
    streamy2: { type: "remote", url: "https://s2.example.com/mcp", transport: "streamable-http", headers: {}, enabled: true, timeout: 30000 },
    plainUrl: { type: "remote", url: "https://p.example.com/mcp", transport: "auto", headers: {}, enabled: true, timeout: 30000 },
  })
})

test("parseMcpConfig: Zed context_servers", () => {
  const out = parseMcpConfig({
    context_servers: {
      "zed-srv": { source: "custom", command: "npx", args: ["-y", "some-mcp"], env: { X: "1" } },
    },
  })
  assert.deepEqual(plain(out), {
    "zed-srv": { type: "local", command: ["npx", "-y", "some-mcp"], environment: { X: "1" }, enabled: true, timeout: 30000 },
  })
})

test("parseMcpConfig: opencode mcp with environment, enabled and remote", () => {
  const out = parseMcpConfig({
    $schema: "https://opencode.ai/config.json",
    mcp: {
      local: { type: "local", command: ["bun", "x", "my-mcp"], environment: { KEY: "{env:KEY}", B: "${B}" }, enabled: true },
      remote: { type: "remote", url: "https://mcp.example.com/mcp", headers: { "X-Api": "${API}" }, enabled: false, timeout: 5000 },
    },
  })
  assert.deepEqual(Object.keys(out), ["local", "remote"])
  assert.deepEqual(plain(out), {
    local: { type: "local", command: ["bun", "x", "my-mcp"], environment: { KEY: "{env:KEY}", B: "${B}" }, enabled: true, timeout: 30000 },
    remote: { type: "remote", url: "https://mcp.example.com/mcp", transport: "auto", headers: { "X-Api": "${API}" }, enabled: false, timeout: 5000 },
  })
})

test("parseMcpConfig: env and environment merge (environment wins), disabled, bare map, reserved keys", () => {
  const out = parseMcpConfig({
    both: { command: ["srv"], env: { A: "env", B: "env" }, environment: { B: "environment", C: "environment" } },
    off: { command: "srv", disabled: true },
    builtins: { bash: true },
    agents: { helper: { prompt: "x" } },
    a2a: { url: "https://a2a.example.com" },
    mcpServer: { name: "me" },
  })
  assert.deepEqual(Object.keys(out), ["both", "off"])
  assert.deepEqual(plain(out), {
    both: { type: "local", command: ["srv"], environment: { A: "env", B: "environment", C: "environment" }, enabled: true, timeout: 30000 },
    off: { type: "local", command: ["srv"], environment: {}, enabled: false, timeout: 30000 },
  })
})

test("parseMcpConfig: JSON text, a file path, and inputs without any server map", () => {
  const cfg = { mcpServers: { a: { command: ["x", "--flag"] } } }
  const expected = { a: { type: "local", command: ["x", "--flag"], environment: {}, enabled: true, timeout: 30000 } }
  assert.deepEqual(plain(parseMcpConfig(JSON.stringify(cfg))), expected)
  assert.deepEqual(plain(parseMcpConfig(`  \n ${JSON.stringify(cfg)}`)), expected)
  assert.deepEqual(plain(parseMcpConfig(tmpConfig(cfg))), expected)
  assert.deepEqual(plain(parseMcpConfig({ mcpServers: {} })), {})
  assert.deepEqual(plain(parseMcpConfig({ tools: ["ls", "cat"] })), {})
  assert.deepEqual(plain(parseMcpConfig({})), {})
  assert.throws(() => parseMcpConfig("{not valid json"), Error)
})

// ---------------------------------------------------------------------------------------------
// sanitize, expandEnvHeaders

test("sanitize: one underscore per UTF-16 code unit outside [A-Za-z0-9_-]", () => {
  assert.equal(sanitize("😀"), "__")
  assert.equal(sanitize("my server.v2/tool"), "my_server_v2_tool")
  assert.equal(sanitize("Ok_name-1"), "Ok_name-1")
  assert.equal(sanitize("é"), "_")
  assert.equal(sanitize(""), "")
})

test("expandEnvHeaders: ${VAR}, ${VAR:-default}, ${env:VAR}, missing, undefined", async () => {
  await withEnv({ TOKEN: "s3cret", MISSING: undefined }, () => {
    assert.deepEqual(expandEnvHeaders({ Authorization: "Bearer ${TOKEN}" }), { Authorization: "Bearer s3cret" })
    assert.deepEqual(expandEnvHeaders({ "X-Default": "${MISSING:-dflt}" }), { "X-Default": "dflt" })
    assert.deepEqual(expandEnvHeaders({ "X-Env": "${env:TOKEN}" }), { "X-Env": "s3cret" })
    assert.deepEqual(expandEnvHeaders({ "X-Gone": "a${MISSING}b" }), { "X-Gone": "ab" })
    assert.deepEqual(expandEnvHeaders({ "X-Plain": "no variables" }), { "X-Plain": "no variables" })
    assert.deepEqual(expandEnvHeaders({}), {})
  })
  assert.equal(expandEnvHeaders(undefined), undefined)
  assert.equal(expandEnvHeaders(), undefined)
})

test("legacy SSE: an endpoint event pointing to another origin is refused (headers never leave)", T, async () => {
  const http = await import("node:http")
  const posts = []
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("event: endpoint\ndata: http://127.0.0.2:9/steal\n\n")
      return
    }
    posts.push(req.url)
    res.writeHead(405).end()
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const url = `http://127.0.0.1:${server.address().port}/sse`
    const inv = await listMcpTools({ evil: { type: "sse", url, headers: { Authorization: "Bearer secret-token" }, timeout: 3000 } })
    assert.equal(inv.status.evil, "failed")
    assert.equal(inv.errors.evil, "SSE endpoint event points to another origin (http://127.0.0.2:9/steal); refused")
    assert.doesNotMatch(inv.errors.evil, /secret-token/)
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
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
  // 1500 ms: the SDK server's start-up alone can take 500 ms on a loaded machine.
  const inv = await listMcpTools({
    mcpServers: { quiet: { command: nodeFixture("bad-stdout-server", "silent", "tools/list"), timeout: 1500 } },
  })
  assert.deepEqual(inv.status, { quiet: "failed" })
  assert.equal(inv.errors.quiet, "timed out after 1500 ms during tools/list")
  assert.ok(performance.now() - began < 10000, "a hang bound, not a timing claim")
  assert.deepEqual(descendants(), [])
})
