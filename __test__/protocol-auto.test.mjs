// Protocol eras on the client side, against real servers over real pipes and loopback HTTP:
// `protocol: "auto"` (streamable HTTP's default) speaks 2026-07-28 to a Python `mcp` 2.x server
// without any `initialize` on the wire; a pinned revision is what is spoken; stdio probes only
// when asked and spawns a server again when it exits on the probe; a protocol the config cannot
// name fails that server alone. Wire-level claims are checked from the servers' own logs. (The
// handshake era: protocol-handshake.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import { listMcpTools, loadMcp } from "toolnexus"
import { PYTHON, isAlive, nodeFixture, tmpFile, leakCheck } from "./helpers.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"
import { ERA_INFO, PY_FIXTURE, PY_INFO, SURFACE_LISTS, eraServer, methods, pidsIn, wireLog, withPython, withoutSurface } from "./lib/protocol.mjs"

const T = { timeout: 30000 }

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

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
