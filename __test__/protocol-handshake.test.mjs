// Protocol eras on the client side, against real servers over real pipes and loopback HTTP: the
// handshake offers 2025-11-25 and refuses versions it does not know; over streamable HTTP,
// `protocol: "auto"` (its default) falls back to the handshake for older servers, and for one
// that never answers the probe; legacy SSE shakes hands; `info` reports what each server said
// about itself. Wire-level claims are checked from the servers' own logs. (The 2026-07-28 era
// and stdio under "auto": protocol-auto.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import http from "node:http"
import { listMcpTools, loadMcp } from "toolnexus"
import { fixture, isAlive, serverEverything, leakCheck, startListening } from "./helpers.mjs"
import { startLegacySse, startStreamableHttp } from "./fixtures/http-servers.mjs"
import { ERA_INFO, eraServer, pidsIn, wireLog } from "./lib/protocol.mjs"

const T = { timeout: 30000 }

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

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
