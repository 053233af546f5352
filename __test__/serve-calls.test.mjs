// Serving (docs/serving.md), part 3: served calls (onCall records, concurrent run callbacks,
// throwing and rejecting runs) and the gateway that re-serves tools from loadMcp.
// Every server is real, every socket a real loopback socket on 127.0.0.1:0; the shared
// set-up and clean-up are in lib/serve.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool, loadMcp } from "toolnexus"
import { descendants, describePids, isAlive, nodeFixture, readPid, tmpFile, waitFor, within } from "./helpers.mjs"
import { addTool, deferred, explodeTool, mk, names, serveHarness, T } from "./lib/serve.mjs"

const { defer, serveTools, sdkClient } = serveHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// onCall, concurrency, failures

test("onCall: one record {name, source, ms, isError} per call; a throwing onCall is isolated", T, async () => {
  const calls = []
  const tools = [addTool(), explodeTool(), defineTool({ name: "custom", source: "skill", run: () => "c" })]
  const { handle } = await serveTools(tools, {
    onCall: (c) => {
      calls.push(c)
      throw new Error("onCall itself fails")
    },
  })
  const client = await sdkClient(handle.url)
  const r1 = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })
  assert.deepEqual(r1.content, [{ type: "text", text: "5" }])
  const r2 = await client.callTool({ name: "explode", arguments: {} })
  assert.equal(r2.isError, true)
  const r3 = await client.callTool({ name: "custom", arguments: {} })
  assert.deepEqual(r3.content, [{ type: "text", text: "c" }])
  await assert.rejects(client.callTool({ name: "nope", arguments: {} }), { code: -32602 })
  const r4 = await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })
  assert.deepEqual(r4.content, [{ type: "text", text: "2" }], "still serving after onCall threw")

  await waitFor(() => calls.length >= 4, { message: "four onCall records" })
  for (const c of calls) {
    assert.deepEqual(Object.keys(c).sort(), ["isError", "ms", "name", "source"])
    assert.equal(typeof c.ms, "number")
    assert.ok(Number.isFinite(c.ms) && c.ms >= 0, `ms = ${c.ms}`)
  }
  assert.deepEqual(
    calls.map(({ name, source, isError }) => ({ name, source, isError })),
    [
      { name: "add", source: "native", isError: false },
      { name: "explode", source: "native", isError: true },
      { name: "custom", source: "skill", isError: false },
      { name: "add", source: "native", isError: false },
    ],
  )
})

test("run callbacks run concurrently: 10 calls that each wait for all 10 to have started", T, async () => {
  const N = 10
  let started = 0
  const allStarted = deferred()
  const gate = defineTool({
    name: "gate",
    description: "Waits until every call has started",
    inputSchema: { type: "object", properties: { i: { type: "number" } } },
    run: async ({ i }) => {
      started++
      if (started === N) allStarted.resolve()
      await allStarted.promise
      return `done ${i}`
    },
  })
  const { handle } = await serveTools([gate])
  const client = await sdkClient(handle.url)
  const results = await within(
    Promise.all(Array.from({ length: N }, (_, i) => client.callTool({ name: "gate", arguments: { i } }))),
    20000,
    `${N} concurrent calls (started: ${started})`,
  )
  assert.equal(started, N)
  assert.deepEqual(
    results.map((r) => [r.content, r.isError]),
    Array.from({ length: N }, (_, i) => [[{ type: "text", text: `done ${i}` }], false]),
  )
})

test("run callbacks: a sync throw and a rejected promise are isError and the server keeps serving", T, async () => {
  const tools = [
    defineTool({
      name: "sync-throw",
      run: () => {
        throw new TypeError("thrown synchronously")
      },
    }),
    defineTool({ name: "rejects", run: () => Promise.reject(new Error("rejected later")) }),
    defineTool({ name: "ok", run: () => "fine" }),
  ]
  const { tk, handle } = await serveTools(tools)
  const client = await sdkClient(handle.url)
  for (let round = 0; round < 3; round++) {
    const a = await client.callTool({ name: "sync-throw", arguments: {} })
    assert.deepEqual([a.content, a.isError], [[{ type: "text", text: "thrown synchronously" }], true])
    const b = await client.callTool({ name: "rejects", arguments: {} })
    assert.deepEqual([b.content, b.isError], [[{ type: "text", text: "rejected later" }], true])
    const c = await client.callTool({ name: "ok", arguments: {} })
    assert.deepEqual([c.content, c.isError], [[{ type: "text", text: "fine" }], false])
  }
  // the toolkit's own execute agrees, and an unknown name is an isError result
  assert.deepEqual(await tk.execute("sync-throw", {}), { output: "thrown synchronously", isError: true })
  assert.deepEqual(await tk.execute("rejects", {}), { output: "rejected later", isError: true })
  assert.deepEqual(await tk.execute("nope", {}), { output: "Unknown tool: nope", isError: true })
})

// ---------------------------------------------------------------------------------------------
// Gateway

test("gateway: two stdio servers re-served as their union, calls forwarded, onCall source mcp", T, async () => {
  const pidA = tmpFile("a.pid")
  const pidB = tmpFile("b.pid")
  const tk = await createToolkit({
    mcpConfig: {
      a: { command: nodeFixture("stdio-server", "--tools", "x,y"), env: { PID_FILE: pidA } },
      b: { command: nodeFixture("stdio-server", "--tools", "z"), env: { PID_FILE: pidB } },
    },
  })
  defer(() => tk.close())
  assert.deepEqual(tk.mcpStatus(), { a: "connected", b: "connected" })
  assert.deepEqual(names(tk.tools()), ["a_x", "a_y", "b_z"])
  const servers = [readPid(pidA), readPid(pidB)]
  assert.ok(servers.every((pid) => pid && isAlive(pid)), `stdio servers running: ${servers}`)

  const calls = []
  const handle = await tk.serve("127.0.0.1:0", { mcp: { name: "gw" }, onCall: (c) => calls.push(c) })
  defer(() => handle.stop())
  const client = await sdkClient(handle.url)
  assert.equal(client.getServerVersion()?.name, "gw")
  const { tools } = await client.listTools()
  assert.deepEqual(names(tools), ["a_x", "a_y", "b_z"])
  assert.deepEqual(tools[0].description, "x")
  for (const name of ["a_x", "a_y", "b_z"]) {
    const r = await client.callTool({ name, arguments: {} })
    assert.deepEqual(r.content, [{ type: "text", text: name.slice(2) }], name)
    // forwarded as the upstream server answered it (the SDK fixture omits isError: false)
    assert.notEqual(r.isError, true, name)
  }
  await waitFor(() => calls.length >= 3, { message: "three onCall records" })
  assert.deepEqual(
    calls.map(({ name, source, isError }) => ({ name, source, isError })),
    ["a_x", "a_y", "b_z"].map((name) => ({ name, source: "mcp", isError: false })),
  )
  for (const c of calls) assert.ok(typeof c.ms === "number" && c.ms >= 0, `ms = ${c.ms}`)

  await client.close()
  const tree = descendants()
  await tk.close()
  await handle.stop()
  const left = [...new Set([...servers, ...tree])].filter(isAlive)
  assert.deepEqual(left, [], `left running after toolkit.close() and handle.stop(): ${describePids(left)}`)
  assert.deepEqual(descendants(), [])
})

test("gateway: forwarded isError results and the toolkit's own loadMcp tools re-served", T, async () => {
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { s: { command: nodeFixture("stdio-server", "--tools", "add,fail,echo") } } },
    extraTools: [mk("local")],
  })
  defer(() => tk.close())
  const calls = []
  const handle = await tk.serve("127.0.0.1:0", { onCall: (c) => calls.push(c) })
  defer(() => handle.stop())

  const source = await loadMcp({ mcpServers: { gw: { url: handle.url + "/mcp", timeout: 10000 } } })
  defer(() => source.close())
  assert.deepEqual(names(source.tools), ["gw_s_add", "gw_s_fail", "gw_s_echo", "gw_local"])
  const byName = Object.fromEntries(source.tools.map((t) => [t.name, t]))
  assert.deepEqual(await byName.gw_s_add.execute({ a: 2, b: 3 }), { output: "5", isError: false, content: [{ type: "text", text: "5" }], metadata: { server: "gw" } })
  assert.deepEqual(await byName.gw_s_echo.execute({ text: "héllo\nworld" }), {
    output: "héllo\nworld",
    isError: false,
    content: [{ type: "text", text: "héllo\nworld" }],
    metadata: { server: "gw" },
  })
  const fail = await byName.gw_s_fail.execute({})
  assert.equal(fail.isError, true)
  assert.equal(fail.output, "first problem\n\nsecond problem")
  assert.deepEqual(await byName.gw_local.execute({}), { output: "local", isError: false, content: [{ type: "text", text: "local" }], metadata: { server: "gw" } })

  await waitFor(() => calls.length >= 4, { message: "four onCall records" })
  assert.deepEqual(
    calls.map(({ name, source: src, isError }) => [name, src, isError]),
    [
      ["s_add", "mcp", false],
      ["s_echo", "mcp", false],
      ["s_fail", "mcp", true],
      ["local", "native", false],
    ],
  )
  await source.close()
})
