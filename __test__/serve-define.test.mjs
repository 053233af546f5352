// Serving (docs/serving.md, issue 4, seed 003), part 1: defineTool's result mapping, fields and
// argument checks; exposedMcpTools; seed 003's examples end to end (loadMcp and the SDK client
// against a served toolkit, mcp.tools filtering over the wire).
// Every server is real, every socket a real loopback socket on 127.0.0.1:0; the shared
// set-up and clean-up are in lib/serve.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool, exposedMcpTools, loadMcp } from "toolnexus"
import { addTool, explodeTool, mk, names, parseBody, post, rawSession, serveHarness, T } from "./lib/serve.mjs"

const { defer, serveTools, sdkClient } = serveHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// defineTool

test("defineTool: run results map exactly as docs/serving.md describes", T, async () => {
  const cases = [
    ["a string is kept", () => "plain text", { output: "plain text", isError: false }],
    ["an empty string is kept", () => "", { output: "", isError: false }],
    ["an async string is kept", async () => "later", { output: "later", isError: false }],
    ["a ToolResult is kept", () => ({ output: "bad input", isError: true }), { output: "bad input", isError: true }],
    [
      "a ToolResult with metadata is kept",
      async () => ({ output: "ok", isError: false, metadata: { rows: 2 } }),
      { output: "ok", isError: false, metadata: { rows: 2 } },
    ],
    ["undefined gives an empty output", () => undefined, { output: "", isError: false }],
    ["a resolved undefined gives an empty output", async () => {}, { output: "", isError: false }],
    ["null is JSON-stringified", () => null, { output: "null", isError: false }],
    ["a number is JSON-stringified", () => 42, { output: "42", isError: false }],
    ["false is JSON-stringified", () => false, { output: "false", isError: false }],
    ["an object is JSON-stringified", () => ({ a: 1, b: [true, "x"] }), { output: '{"a":1,"b":[true,"x"]}', isError: false }],
    ["an array is JSON-stringified", async () => [1, "two"], { output: '[1,"two"]', isError: false }],
    ["an object with output but no isError is not a ToolResult", () => ({ output: "x" }), { output: '{"output":"x"}', isError: false }],
    [
      "a synchronous throw is an isError result",
      () => {
        throw new Error("sync failure")
      },
      { output: "sync failure", isError: true },
    ],
    [
      "a rejection is an isError result",
      async () => {
        throw new Error("async failure")
      },
      { output: "async failure", isError: true },
    ],
    ["a rejected promise is an isError result", () => Promise.reject(new Error("rejected")), { output: "rejected", isError: true }],
    [
      "a thrown non-Error is stringified",
      () => {
        throw "not an Error" // eslint-disable-line no-throw-literal
      },
      { output: "not an Error", isError: true },
    ],
  ]
  for (const [what, run, expected] of cases) {
    const tool = defineTool({ name: "t", description: what, run })
    assert.deepEqual(await tool.execute({}), expected, what)
  }
})

test("defineTool: fields, defaults and the args handed to run", T, async () => {
  const seen = []
  const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] }
  const custom = defineTool({
    name: "search",
    description: "Search the docs",
    inputSchema: schema,
    source: "custom",
    run: (args, ctx) => {
      seen.push({ args, ctxType: typeof ctx })
      return `results for ${args.q}`
    },
  })
  assert.equal(custom.name, "search")
  assert.equal(custom.description, "Search the docs")
  assert.deepEqual(custom.inputSchema, schema)
  assert.equal(custom.source, "custom")
  assert.equal(typeof custom.execute, "function")
  assert.deepEqual(await custom.execute({ q: "mcp" }), { output: "results for mcp", isError: false })
  assert.deepEqual(seen, [{ args: { q: "mcp" }, ctxType: "object" }])

  const bare = defineTool({ name: "bare", run: () => "b" })
  assert.equal(bare.source, "native")
  assert.equal(bare.description, "")
  assert.deepEqual(bare.inputSchema, { type: "object", properties: {} })
})

test("defineTool: a missing or invalid name or run is a TypeError", T, () => {
  const run = () => "x"
  for (const [what, opts, message] of [
    ["no options", undefined, /options/],
    ["missing name", { description: "d", run }, /name/],
    ["empty name", { name: "", run }, /name/],
    ["non-string name", { name: 5, run }, /name/],
    ["missing run", { name: "x", description: "d" }, /run/],
    ["non-function run", { name: "x", run: "x" }, /run/],
  ]) {
    assert.throws(() => defineTool(opts), (err) => err instanceof TypeError && message.test(err.message), what)
  }
})

// ---------------------------------------------------------------------------------------------
// Seed 003, in JavaScript

test("seed 003 example 1: exposedMcpTools filters by name, unknown names silently dropped", T, async () => {
  const tools = [mk("add"), mk("explode")]
  for (const cfg of [undefined, {}]) {
    const all = exposedMcpTools(tools, cfg)
    assert.equal(all.length, 2, JSON.stringify(cfg))
    assert.equal(all[0], tools[0], "the same tool objects come back")
    assert.equal(all[1], tools[1], "the same tool objects come back")
  }
  assert.deepEqual(names(exposedMcpTools(tools)), ["add", "explode"])
  const subset = exposedMcpTools(tools, { tools: ["explode"] })
  assert.deepEqual(names(subset), ["explode"])
  assert.equal(subset[0], tools[1])
  assert.deepEqual(exposedMcpTools(tools, { tools: ["nope"] }), [])
  assert.deepEqual(names(exposedMcpTools(tools, { tools: ["explode", "add"] })), ["add", "explode"], "toolkit order is kept")
  assert.deepEqual(await exposedMcpTools(tools, { tools: ["add"] })[0].execute({}), { output: "add", isError: false })
})

test("seed 003 example 2: our own loadMcp against our own served toolkit", T, async () => {
  const tk = await createToolkit({ extraTools: [addTool(), explodeTool()], builtins: false })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", { mcp: { name: "gateway", version: "9.9.9" } })
  defer(() => handle.stop())
  assert.match(handle.url, /^http:\/\/127\.0\.0\.1:\d+$/, "no trailing slash")
  assert.notEqual(new URL(handle.url).port, "0")

  const source = await loadMcp({ mcpServers: { gw: { url: handle.url + "/mcp", timeout: 10000 } } })
  defer(() => source.close())
  assert.deepEqual(source.status, { gw: "connected" })
  assert.deepEqual(source.errors, {})
  assert.deepEqual(names(source.tools), ["gw_add", "gw_explode"])

  const add = source.tools.find((t) => t.name === "gw_add")
  assert.equal(add.source, "mcp")
  assert.equal(add.description, "Add two numbers")
  assert.deepEqual(add.inputSchema.properties, { a: { type: "number" }, b: { type: "number" } })
  const result = await add.execute({ a: 2, b: 3 })
  assert.equal(result.isError, false)
  assert.equal(result.output, "5")

  // isError propagates end to end (run throws -> MCP isError -> client error)
  const explode = source.tools.find((t) => t.name === "gw_explode")
  const er = await explode.execute({})
  assert.equal(er.isError, true)
  assert.equal(er.output, "kaboom")

  // initialize's serverInfo, as the SDK client sees it
  const client = await sdkClient(handle.url)
  assert.deepEqual(client.getServerVersion(), { name: "gateway", version: "9.9.9" })
  assert.ok(client.getServerCapabilities()?.tools, "the tools capability is advertised")

  await source.close()
  await handle.stop()
})

test("seed 003 example 3: mcp.tools filters the exposed subset over the real wire", T, async () => {
  const { handle } = await serveTools([mk("add"), mk("explode")], { mcp: { tools: ["add", "does-not-exist"] } })
  const source = await loadMcp({ mcpServers: { gw: { url: handle.url + "/mcp", timeout: 10000 } } })
  defer(() => source.close())
  assert.deepEqual(source.status, { gw: "connected" })
  // only "add" survives: "explode" is filtered out, "does-not-exist" is silently ignored
  assert.deepEqual(names(source.tools), ["gw_add"])
  assert.deepEqual(await source.tools[0].execute({}), { output: "add", isError: false, content: [{ type: "text", text: "add" }], metadata: { server: "gw" } })

  // the filtered-out tool cannot be called either
  const headers = await rawSession(handle.url)
  const r = await post(handle.url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "explode", arguments: {} } }, { headers })
  assert.deepEqual(parseBody(r.type, r.text), { jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Unknown tool: explode" } })
  await source.close()
})
