// loadMcp and Tool.execute (docs/loading.md; seed 002; issue 3), part 1: how results map (server-everything
// and the stdio fixture), tool objects, bad arguments, 200 concurrent calls, streamable HTTP,
// and the per-call overhead against the SDK Client.
// Real servers throughout (server-everything, the SDK-built fixtures in __test__/fixtures/, an
// in-process streamable-HTTP server); the shared set-up and clean-up are in lib/load.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { fixture, nodeFixture } from "./helpers.mjs"
import { byName, call, everything, loadHarness, names, T } from "./lib/load.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"

const load = loadHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// @modelcontextprotocol/server-everything over stdio

test("server-everything: echo, get-sum and get-structured-content map exactly", T, async () => {
  const source = await load({ mcpServers: { everything: everything() } })
  assert.deepEqual(source.status, { everything: "connected" }, JSON.stringify(source.errors))
  assert.deepEqual(source.errors, {})
  const tools = byName(source)
  for (const n of ["echo", "get-sum", "get-structured-content", "trigger-long-running-operation"]) {
    assert.ok(tools[`everything_${n}`], `everything_${n} in ${names(source).join(",")}`)
  }
  for (const tool of source.tools) {
    assert.equal(tool.source, "mcp")
    const extras = Object.keys(tool).filter((k) => !["description", "execute", "inputSchema", "name", "source"].includes(k))
    assert.deepEqual(extras.filter((k) => !["title", "annotations", "outputSchema", "icons", "execution", "_meta"].includes(k)), [], tool.name)
    assert.equal(tool.inputSchema.type, "object", tool.name)
    assert.equal(tool.inputSchema.additionalProperties, false, tool.name)
    assert.equal(typeof tool.inputSchema.properties, "object", tool.name)
  }
  assert.equal(tools.everything_echo.description, "Echoes back the input string")
  assert.deepEqual(tools.everything_echo.inputSchema.properties, { message: { type: "string", description: "Message to echo" } })
  assert.deepEqual(tools.everything_echo.inputSchema.required, ["message"])

  assert.deepEqual(await call(tools.everything_echo, { message: "hello, world" }), {
    output: "Echo: hello, world",
    isError: false,
    metadata: { server: "everything" },
  })
  assert.deepEqual(await call(tools["everything_get-sum"], { a: 2, b: 40 }), {
    output: "The sum of 2 and 40 is 42.",
    isError: false,
    metadata: { server: "everything" },
  })
  const structured = await call(tools["everything_get-structured-content"], { location: "Chicago" })
  assert.equal(structured.isError, false)
  assert.deepEqual(structured.metadata, { server: "everything" })
  assert.equal(structured.output, JSON.stringify({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 }))
  const parsed = JSON.parse(structured.output)
  assert.deepEqual(Object.keys(parsed).sort(), ["conditions", "humidity", "temperature"])
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// Result mapping and tool objects with the SDK stdio fixture

test("result mapping: isError join, empty error, mixed parts, structuredContent, plain text", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "fail,fail-empty,mixed,structured,add") } } })
  const tools = byName(source)
  const meta = { server: "fx" }
  assert.deepEqual(await call(tools.fx_fail, {}), { output: "first problem\n\nsecond problem", isError: true, metadata: meta })
  assert.deepEqual(await call(tools["fx_fail-empty"], {}), { output: "MCP tool returned an error", isError: true, metadata: meta })
  assert.deepEqual(await call(tools.fx_mixed, {}), { output: "one\ntwo", isError: false, metadata: meta })
  assert.deepEqual(await call(tools.fx_structured, {}), { output: JSON.stringify({ sum: 3, items: ["x", "y"] }), isError: false, metadata: meta })
  assert.deepEqual(await call(tools.fx_add, { a: 1.5, b: 2 }), { output: "3.5", isError: false, metadata: meta })
  await source.close()
})

test("tool objects: the server's schema plus additionalProperties false; bare tool defaults", T, async () => {
  const cfg = {
    mcpServers: {
      fx: { command: nodeFixture("stdio-server", "--tools", "add,echo,bare") },
      liar: { command: nodeFixture("liar-server", "minimal") },
    },
  }
  const inv = await listMcpTools(cfg)
  const source = await load(cfg)
  assert.deepEqual(names(source), ["fx_add", "fx_echo", "fx_bare", "liar_minimal"])
  const tools = byName(source)
  for (const [name, info] of [
    ["fx_add", inv.tools.fx[0]],
    ["fx_echo", inv.tools.fx[1]],
  ]) {
    assert.equal(tools[name].description, info.description)
    assert.deepEqual(tools[name].inputSchema, { ...info.inputSchema, additionalProperties: false })
    assert.equal(tools[name].source, "mcp")
  }
  for (const name of ["fx_bare", "liar_minimal"]) {
    assert.equal(tools[name].description, "")
    assert.deepEqual(tools[name].inputSchema, { type: "object", properties: {}, additionalProperties: false })
  }
  assert.deepEqual(await call(tools.fx_bare, {}), { output: "bare", isError: false, metadata: { server: "fx" } })
  assert.deepEqual(await call(tools.liar_minimal), { output: "minimal", isError: false, metadata: { server: "liar" } })
  await source.close()
})

test("execute never rejects on bad arguments", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "echo") } } })
  const echo = byName(source).fx_echo
  const notObject = await call(echo, "just a string")
  assert.equal(notObject.isError, true)
  assert.deepEqual(notObject.metadata, { server: "fx" })
  assert.ok(notObject.output.length > 0)
  const invalid = await call(echo, { text: 42 })
  assert.equal(invalid.isError, true)
  assert.match(invalid.output, /text/)
  assert.doesNotMatch(invalid.output, /ServiceError|McpError\s*\{|ErrorData/)
  assert.equal((await call(echo, { text: "fine" })).output, "fine")
  await source.close()
})

test("200 concurrent calls on one connection each get their own result", T, async (t) => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "echo,add") } } })
  const { fx_echo: echo, fx_add: add } = byName(source)
  const start = performance.now()
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => (i % 4 === 3 ? call(add, { a: i, b: 1000 }) : call(echo, { text: `call-${i}` }))),
  )
  t.diagnostic(`200 concurrent calls in ${(performance.now() - start).toFixed(1)} ms`)
  results.forEach((r, i) => {
    const expected = i % 4 === 3 ? String(i + 1000) : `call-${i}`
    assert.deepEqual(r, { output: expected, isError: false, metadata: { server: "fx" } }, `call ${i}`)
  })
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// Streamable HTTP

test("streamable HTTP: tools load and run; close() ends the session with DELETE", T, async (t) => {
  const s = await startStreamableHttp({ tools: 3 })
  t.after(() => s.close())
  const source = await load({ mcpServers: { web: { type: "streamable-http", url: s.url } } })
  assert.deepEqual(source.status, { web: "connected" }, JSON.stringify(source.errors))
  assert.deepEqual(names(source), ["web_tool1", "web_tool2", "web_tool3"])
  assert.deepEqual(byName(source).web_tool2.inputSchema, { type: "object", properties: {}, additionalProperties: false })
  assert.equal(byName(source).web_tool2.description, "tool tool2")
  const results = await Promise.all([call(byName(source).web_tool2, {}), call(byName(source).web_tool3, {})])
  assert.deepEqual(results, [
    { output: "tool2", isError: false, metadata: { server: "web" } },
    { output: "tool3", isError: false, metadata: { server: "web" } },
  ])
  assert.equal(s.stats.rpc["tools/call"], 2)
  assert.equal(s.stats.http.DELETE, 0, "the session stays open until close()")
  assert.equal(s.stats.sessions.opened, 1)
  await source.close()
  assert.equal(s.stats.http.DELETE, 1, "close() DELETEs the session before resolving")
  assert.equal(s.stats.sessions.closed, 1)
  assert.deepEqual(await call(byName(source).web_tool1, {}), { output: "not connected (source closed)", isError: true, metadata: { server: "web" } })
  await source.close()
  assert.equal(s.stats.http.DELETE, 1, "a second close() sends nothing")
})

// ---------------------------------------------------------------------------------------------
// Per-call overhead (measured and logged, not asserted)

test("per-call overhead: loadMcp execute vs the SDK Client's callTool on the same fixture", T, async (t) => {
  const N = 500
  const WARMUP = 50
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "echo") } } })
  const echo = byName(source).fx_echo
  const client = new Client({ name: "overhead-bench", version: "1.0.0" })
  const transport = new StdioClientTransport({ command: process.execPath, args: [fixture("stdio-server"), "--tools", "echo"], stderr: "ignore" })
  await client.connect(transport)
  try {
    const sdkCall = async (text) => (await client.callTool({ name: "echo", arguments: { text } })).content[0].text
    const tnxCall = async (text) => (await echo.execute({ text })).output
    for (let i = 0; i < WARMUP; i++) {
      assert.equal(await tnxCall(`w${i}`), `w${i}`)
      assert.equal(await sdkCall(`w${i}`), `w${i}`)
    }
    const measure = async (fn) => {
      const start = performance.now()
      for (let i = 0; i < N; i++) assert.equal(await fn(`m${i}`), `m${i}`)
      return (performance.now() - start) / N
    }
    // Interleave two rounds each to even out drift.
    const tnx = [await measure(tnxCall)]
    const sdk = [await measure(sdkCall)]
    tnx.push(await measure(tnxCall))
    sdk.push(await measure(sdkCall))
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
    const tnxMean = mean(tnx)
    const sdkMean = mean(sdk)
    t.diagnostic(
      `${N} sequential echo calls x2: loadMcp execute ${(tnxMean * 1000).toFixed(1)} µs/call, ` +
        `SDK callTool ${(sdkMean * 1000).toFixed(1)} µs/call, ratio ${(tnxMean / sdkMean).toFixed(2)}`,
    )
  } finally {
    await client.close()
    await source.close()
  }
})
