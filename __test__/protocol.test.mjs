// Protocol eras on the client side, against real servers over real pipes and loopback HTTP:
// the handshake offers 2025-11-25 and refuses versions it does not know; `protocol: "auto"`
// (streamable HTTP's default) speaks 2026-07-28 to a Python `mcp` 2.x server without any
// `initialize` on the wire and falls back to the handshake for older servers; stdio probes only
// when asked and spawns a server again when it exits on the probe; `info` reports what each
// server said about itself. Wire-level claims are checked from the servers' own logs.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { listMcpTools, loadMcp } from "toolnexus"
import { PYTHON, fixture, isAlive, nodeFixture, serverEverything, tmpFile, leakCheck, startListening } from "./helpers.mjs"
import http from "node:http"
import { startLegacySse, startStreamableHttp } from "./fixtures/http-servers.mjs"

const T = { timeout: 30000 }
const PY_FIXTURE = path.join(path.dirname(fixture("era-server")), "py-era-server.py")

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

/** The JSON lines a fixture logged: [{ method, protocolVersion }]. */
function wireLog(file) {
  if (!fs.existsSync(file)) return []
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}
const methods = (file) => wireLog(file).map((m) => m.method)
/** The listings beside tools/list, made concurrently with it when a server declares resources and prompts (as Python's MCPServer does). */
const SURFACE_LISTS = ["resources/list", "resources/templates/list", "prompts/list"]
const withoutSurface = (list) => list.filter((m) => !SURFACE_LISTS.includes(m))

/** Every pid a fixture appended to `file`, one per process it was started as. */
const pidsIn = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : [])

/**
 * Runs `body({ url, log })` against the Python `mcp` 2.x fixture over streamable HTTP (logging
 * every JSON-RPC method it receives), which has exited when this resolves.
 */
async function withPython(body) {
  const log = tmpFile("py-http.log")
  const server = await startListening(PYTHON, [PY_FIXTURE, "http", "--log", log])
  try {
    return await body({ url: `http://127.0.0.1:${server.port}/mcp`, log })
  } finally {
    await server.close()
  }
}

const PY_INFO = {
  name: "py-era-fixture",
  version: "2.3.4",
  title: "Python era fixture",
  instructions: "Call era to see which protocol revision a request came in",
}
const ERA_INFO = { name: "era-fixture", version: "1.2.3", title: "Era fixture", instructions: "Ask era for the revision" }

/** The era-server fixture (an SDK v1 stdio server) with a wire log and a pid file. */
function eraServer(...flags) {
  const log = tmpFile("era.log")
  const pids = tmpFile("era.pids")
  return { log, pids, spec: { command: nodeFixture("era-server", "--log", log, ...flags), env: { PID_FILE: pids } } }
}

// ---------------------------------------------------------------------------------------------
// The handshake era

test("stdio handshake: initialize offers 2025-11-25 on the wire; info is the server's own", T, async () => {
  const era = eraServer()
  const inv = await listMcpTools({ mcpServers: { era: era.spec } })
  assert.equal(inv.status.era, "connected", inv.errors.era)
  assert.deepEqual(wireLog(era.log), [
    { method: "initialize", protocolVersion: "2025-11-25" },
    { method: "notifications/initialized", protocolVersion: null },
    { method: "tools/list", protocolVersion: null },
  ])
  assert.deepEqual(inv.info, { era: { protocolVersion: "2025-11-25", ...ERA_INFO } })
})

test("stdio handshake: a pinned older revision is what initialize offers", T, async () => {
  const era = eraServer()
  const inv = await listMcpTools({ mcpServers: { era: { ...era.spec, protocol: "2024-11-05" } } })
  assert.equal(inv.status.era, "connected", inv.errors.era)
  assert.deepEqual(wireLog(era.log)[0], { method: "initialize", protocolVersion: "2024-11-05" })
  assert.equal(inv.info.era.protocolVersion, "2024-11-05")
})

test("a server answering initialize with 2099-01-01 fails with the exact reason, and is gone", T, async () => {
  const liar = eraServer("--answer-version", "2099-01-01")
  const good = eraServer()
  const inv = await listMcpTools({ mcpServers: { liar: liar.spec, good: good.spec } })
  assert.deepEqual(inv.status, { liar: "failed", good: "connected" })
  assert.deepEqual(inv.errors, { liar: "server chose protocol version 2099-01-01, which toolnexus does not support" })
  assert.deepEqual(Object.keys(inv.tools), ["good"])
  assert.deepEqual(Object.keys(inv.info), ["good"])
  for (const pid of pidsIn(liar.pids)) assert.equal(isAlive(pid), false, `liar ${pid} still running`)

  const source = await loadMcp({ mcpServers: { liar: liar.spec } })
  try {
    assert.deepEqual(source.status, { liar: "failed" })
    assert.equal(source.errors.liar, "server chose protocol version 2099-01-01, which toolnexus does not support")
    assert.deepEqual(source.tools, [])
    assert.deepEqual(source.info, {})
  } finally {
    await source.close()
  }
})

test("server-everything over stdio: the handshake, with its serverInfo in info", T, async () => {
  const inv = await listMcpTools({ mcpServers: { everything: { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 } } })
  assert.equal(inv.status.everything, "connected", inv.errors.everything)
  const { instructions, ...rest } = inv.info.everything
  assert.deepEqual(rest, {
    protocolVersion: "2025-11-25",
    name: "mcp-servers/everything",
    version: "2.0.0",
    title: "Everything Reference Server",
  })
  assert.equal(typeof instructions, "string")
  assert.ok(instructions.length > 0)
})

test("server-everything over streamable HTTP: auto falls back to the 2025-11-25 handshake", T, async () => {
  const everything = await startListening(process.execPath, ["--import", fixture("loopback-only"), serverEverything, "streamableHttp"], {
    env: { PORT: "0" },
    stream: "stderr",
  })
  try {
    const url = `http://127.0.0.1:${everything.port}/mcp`
    const inv = await listMcpTools({ mcpServers: { everything: { url, timeout: 20000 } } })
    assert.equal(inv.status.everything, "connected", inv.errors.everything)
    assert.ok(inv.tools.everything.some((t) => t.name === "echo"))
    assert.equal(inv.info.everything.protocolVersion, "2025-11-25")
    assert.equal(inv.info.everything.name, "mcp-servers/everything")
    assert.equal(inv.info.everything.title, "Everything Reference Server")

    const source = await loadMcp({ mcpServers: { everything: { type: "http", url, timeout: 20000 } } })
    try {
      assert.equal(source.info.everything.protocolVersion, "2025-11-25")
      const echo = source.tools.find((t) => t.name === "everything_echo")
      assert.equal((await echo.execute({ message: "hi" })).output, "Echo: hi")
    } finally {
      await source.close()
    }
  } finally {
    await everything.close()
  }
})

test("server-everything: its stdio listing (each page read from its text) is its HTTP listing (rmcp's typed path), key order included", T, async () => {
  const everything = await startListening(process.execPath, ["--import", fixture("loopback-only"), serverEverything, "streamableHttp"], {
    env: { PORT: "0" },
    stream: "stderr",
  })
  try {
    const url = `http://127.0.0.1:${everything.port}/mcp`
    const inv = await listMcpTools({
      mcpServers: {
        web: { url, timeout: 20000 },
        pipe: { command: process.execPath, args: [serverEverything], timeout: 20000 },
      },
    })
    assert.deepEqual(inv.status, { web: "connected", pipe: "connected" }, JSON.stringify(inv.errors))
    assert.ok(inv.tools.pipe.length > 10)
    assert.ok(inv.tools.pipe.some((t) => t.annotations && t.outputSchema), "a tool with annotations and an output schema")
    assert.equal(JSON.stringify(inv.tools.pipe), JSON.stringify(inv.tools.web))
  } finally {
    await everything.close()
  }
})

test("streamable HTTP auto against an SDK v1 server: server/discover refused, then the handshake", T, async (t) => {
  const s = await startStreamableHttp({ tools: 2 })
  t.after(() => s.close())
  const inv = await listMcpTools({ mcpServers: { web: { url: s.url } } })
  assert.equal(inv.status.web, "connected", inv.errors.web)
  assert.deepEqual(
    s.stats.requests.filter((r) => r.method === "POST").map((r) => r.rpc[0]),
    ["server/discover", "initialize", "notifications/initialized", "tools/list"],
  )
  assert.deepEqual(inv.info.web, { protocolVersion: "2025-11-25", name: "streamable-fixture", version: "1.0.0" })
})

/**
 * A loopback proxy in front of `target` that never answers a `server/discover` POST (it holds
 * the request open) and forwards everything else; resolves { url, close() }.
 */
async function discoverBlackHole(target) {
  const held = new Set()
  const server = http.createServer(async (req, res) => {
    const chunks = []
    for await (const c of req) chunks.push(c)
    const body = Buffer.concat(chunks)
    if (/"method"\s*:\s*"server\/discover"/.test(body.toString("utf8"))) {
      held.add(res)
      return
    }
    const upstream = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers)
      answer.pipe(res)
    })
    upstream.on("error", () => res.destroy())
    upstream.end(body)
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close() {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

test("streamable HTTP auto: a server that never answers the probe gets the handshake at half its timeout", T, async (t) => {
  const s = await startStreamableHttp({ tools: 2 })
  t.after(() => s.close())
  const proxy = await discoverBlackHole(s.url)
  t.after(() => proxy.close())
  const started = performance.now()
  const inv = await listMcpTools({ mcpServers: { web: { type: "http", url: proxy.url, timeout: 3000 } } })
  const elapsed = performance.now() - started
  assert.equal(inv.status.web, "connected", inv.errors.web)
  assert.equal(inv.info.web.protocolVersion, "2025-11-25")
  assert.ok(elapsed >= 1500 && elapsed < 3000, `connected after ${Math.round(elapsed)} ms (probe bound 1500 ms, timeout 3000 ms)`)
  assert.equal(s.stats.rpc["server/discover"], undefined, "the probe never reached the server")
  assert.equal(s.stats.rpc.initialize, 1)
})

test("legacy SSE shakes hands: 2025-11-25 by default and under auto, a pinned older revision when asked", T, async (t) => {
  const s = await startLegacySse({ tools: ["alpha"] })
  t.after(() => s.close())
  const inv = await listMcpTools({
    mcpServers: {
      plain: { type: "sse", url: s.url },
      auto: { type: "sse", url: s.url, protocol: "auto" },
      old: { type: "sse", url: s.url, protocol: "2024-11-05" },
    },
  })
  assert.deepEqual(inv.status, { plain: "connected", auto: "connected", old: "connected" }, JSON.stringify(inv.errors))
  assert.deepEqual(
    Object.values(inv.info).map((i) => [i.protocolVersion, i.name]),
    [
      ["2025-11-25", "legacy-sse-fixture"],
      ["2025-11-25", "legacy-sse-fixture"],
      ["2024-11-05", "legacy-sse-fixture"],
    ],
  )
  assert.equal(s.stats.rpc["server/discover"], undefined)
})

// ---------------------------------------------------------------------------------------------
// The 2026-07-28 era over streamable HTTP (Python `mcp` 2.x)

test("auto over streamable HTTP to Python mcp 2.x: 2026-07-28, no initialize on the wire, a call in that era", T, () =>
  withPython(async (py) => {
    const inv = await listMcpTools({ mcpServers: { py: { url: py.url } } })
    assert.equal(inv.status.py, "connected", inv.errors.py)
    assert.deepEqual(inv.tools.py.map((tool) => tool.name), ["era", "echo"])
    assert.deepEqual(inv.info, { py: { protocolVersion: "2026-07-28", ...PY_INFO } })

    const source = await loadMcp({ mcpServers: { py: { url: py.url } } })
    try {
      assert.deepEqual(source.info, { py: { protocolVersion: "2026-07-28", ...PY_INFO } })
      const era = source.tools.find((tool) => tool.name === "py_era")
      const result = await era.execute({})
      assert.equal(result.isError, false, result.output)
      assert.equal(JSON.parse(result.output).result, "2026-07-28", "the server saw the call in the 2026-07-28 era")
      const echo = source.tools.find((tool) => tool.name === "py_echo")
      assert.equal((await echo.execute({ text: "hello" })).isError, false)
    } finally {
      await source.close()
    }
    const log = wireLog(py.log)
    assert.deepEqual(
      log.filter((m) => m.method === "initialize" || m.method === "notifications/initialized"),
      [],
      "no handshake went over the wire",
    )
    // A loadMcp source also listens for tool changes (subscriptions/listen, in parallel).
    const seen = [...new Set(log.map((m) => m.method))]
    assert.deepEqual(withoutSurface(seen.filter((m) => m !== "subscriptions/listen")), ["server/discover", "tools/list", "tools/call"])
    for (const m of log) assert.equal(m.protocolVersion, "2026-07-28", `${m.method} carried its revision`)
  }),
)

test("streamable HTTP pinned: 2026-07-28 only discovers, 2025-11-25 only shakes hands (offering 2025-11-25)", T, () =>
  withPython(async (py) => {
    const modern = await listMcpTools({ mcpServers: { py: { url: py.url, protocol: "2026-07-28" } } })
    assert.equal(modern.status.py, "connected", modern.errors.py)
    assert.equal(modern.info.py.protocolVersion, "2026-07-28")
    assert.deepEqual(withoutSurface(methods(py.log)), ["server/discover", "tools/list"])
    assert.deepEqual(methods(py.log).filter((m) => SURFACE_LISTS.includes(m)).sort(), [...SURFACE_LISTS].sort())

    fs.rmSync(py.log)
    const legacy = await listMcpTools({ mcpServers: { py: { url: py.url, protocol: "2025-11-25" } } })
    assert.equal(legacy.status.py, "connected", legacy.errors.py)
    assert.deepEqual(legacy.info.py, { protocolVersion: "2025-11-25", ...PY_INFO })
    assert.deepEqual(wireLog(py.log).slice(0, 2), [
      { method: "initialize", protocolVersion: "2025-11-25" },
      { method: "notifications/initialized", protocolVersion: null },
    ])
    assert.ok(!methods(py.log).includes("server/discover"))
  }),
)

test("streamable HTTP pinned to 2026-07-28 against an SDK v1 server fails without falling back to SSE", T, async (t) => {
  const s = await startStreamableHttp({ tools: 2 })
  t.after(() => s.close())
  const inv = await listMcpTools({ mcpServers: { web: { url: s.url, protocol: "2026-07-28", timeout: 5000 } } })
  assert.equal(inv.status.web, "failed")
  assert.match(inv.errors.web, /^server does not speak protocol 2026-07-28 \(server\/discover answered error -?\d+: .+\)$/)
  assert.equal(s.stats.http.GET, 0, "no legacy SSE attempt")
  assert.equal(s.stats.rpc.initialize, undefined)
})

// ---------------------------------------------------------------------------------------------
// stdio under protocol "auto"

test("stdio auto against Python mcp 2.x: server/discover, the 2026-07-28 era, no initialize", T, async () => {
  const log = tmpFile("py-stdio.log")
  const spec = { command: [PYTHON, PY_FIXTURE, "stdio", "--log", log], protocol: "auto", timeout: 20000 }
  const source = await loadMcp({ mcpServers: { py: spec } })
  try {
    assert.equal(source.status.py, "connected", source.errors.py)
    assert.deepEqual(source.info, { py: { protocolVersion: "2026-07-28", ...PY_INFO } })
    const era = source.tools.find((tool) => tool.name === "py_era")
    assert.equal(JSON.parse((await era.execute({})).output).result, "2026-07-28")
  } finally {
    await source.close()
  }
  // A loadMcp source also listens for tool changes (subscriptions/listen, in parallel); closing
  // the source may cancel that request before its stdin ends (a race), and nothing else.
  const seen = withoutSurface(methods(log).filter((m) => m !== "subscriptions/listen"))
  assert.deepEqual(seen.slice(0, 3), ["server/discover", "tools/list", "tools/call"])
  assert.ok(["", "notifications/cancelled"].includes(seen.slice(3).join(",")), seen.join(","))
})

test("stdio without protocol: Python mcp 2.x is spoken to with the handshake", T, async () => {
  const log = tmpFile("py-stdio.log")
  const inv = await listMcpTools({ mcpServers: { py: { command: [PYTHON, PY_FIXTURE, "stdio", "--log", log], timeout: 20000 } } })
  assert.equal(inv.status.py, "connected", inv.errors.py)
  assert.equal(inv.info.py.protocolVersion, "2025-11-25")
  assert.deepEqual(wireLog(log)[0], { method: "initialize", protocolVersion: "2025-11-25" })
  assert.ok(!methods(log).includes("server/discover"))
})

test("stdio auto: a server that exits on the probe is spawned again and connected with the handshake", T, async () => {
  const era = eraServer("--exit-unless-initialize")
  const source = await loadMcp({ mcpServers: { era: { ...era.spec, protocol: "auto" } } })
  let pids
  try {
    assert.equal(source.status.era, "connected", source.errors.era)
    assert.deepEqual(source.info, { era: { protocolVersion: "2025-11-25", ...ERA_INFO } })
    const result = await source.tools.find((tool) => tool.name === "era_era").execute({})
    assert.deepEqual([result.output, result.isError], ["2025-11-25", false])
    pids = pidsIn(era.pids)
    assert.equal(pids.length, 2, "one process probed, a second one shook hands")
    assert.equal(isAlive(pids[0]), false, "the probed process is gone")
    assert.ok(isAlive(pids[1]), "the second process serves the session")
  } finally {
    await source.close()
  }
  assert.deepEqual(methods(era.log), ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"])
  for (const pid of pids) assert.equal(isAlive(pid), false, `${pid} outlived close()`)
})

test("stdio auto: an SDK v1 server that refuses the probe shakes hands on the same process", T, async () => {
  const era = eraServer()
  const inv = await listMcpTools({ mcpServers: { era: { ...era.spec, protocol: "auto" } } })
  assert.equal(inv.status.era, "connected", inv.errors.era)
  assert.equal(inv.info.era.protocolVersion, "2025-11-25")
  assert.deepEqual(methods(era.log), ["server/discover", "initialize", "notifications/initialized", "tools/list"])
  assert.equal(pidsIn(era.pids).length, 1, "no second process")
})

test("stdio auto: a server that never answers the probe is spawned again at half its timeout", T, async () => {
  const era = eraServer("--ignore-until-initialize")
  const started = performance.now()
  const inv = await listMcpTools({ mcpServers: { era: { ...era.spec, protocol: "auto", timeout: 3000 } } })
  const elapsed = performance.now() - started
  assert.equal(inv.status.era, "connected", inv.errors.era)
  assert.equal(inv.info.era.protocolVersion, "2025-11-25")
  assert.ok(elapsed >= 1500 && elapsed < 3000, `connected after ${Math.round(elapsed)} ms (probe bound 1500 ms, timeout 3000 ms)`)
  assert.equal(pidsIn(era.pids).length, 2)
})

test("stdio auto: the server timeout bounds probe and handshake together", T, async () => {
  const pidFile = tmpFile("hang.pid")
  const started = performance.now()
  const inv = await listMcpTools({
    mcpServers: { hang: { command: nodeFixture("hang-server"), env: { PID_FILE: pidFile }, protocol: "auto", timeout: 3000 } },
  })
  const elapsed = performance.now() - started
  assert.deepEqual(inv.status, { hang: "failed" })
  assert.equal(inv.errors.hang, "timed out after 3000 ms during initialize")
  // One timeout for both: a probe and a handshake timed separately would take 6 s.
  assert.ok(elapsed < 3000 + 2500, `failed after ${Math.round(elapsed)} ms`)
})

test("stdio pinned to 2026-07-28 against a handshake-only server fails saying so", T, async () => {
  const era = eraServer()
  const inv = await listMcpTools({ mcpServers: { era: { ...era.spec, protocol: "2026-07-28" } } })
  assert.equal(inv.status.era, "failed")
  assert.match(inv.errors.era, /^server does not speak protocol 2026-07-28 \(server\/discover answered error -32601: Method not found\)/)
  assert.deepEqual(methods(era.log), ["server/discover"])
})

test("a protocol the config cannot name fails that server alone, naming the field", T, async () => {
  const inv = await listMcpTools({
    mcpServers: { bad: { command: nodeFixture("era-server"), protocol: "2099-01-01" }, good: eraServer().spec },
  })
  assert.deepEqual(inv.status, { bad: "failed", good: "connected" })
  assert.equal(
    inv.errors.bad,
    'mcpServers.bad.protocol "2099-01-01" is not supported (expected auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)',
  )
})
