// A toolkit served with `toolSearch` (issue 24): tools/list shows search_tools and call_tool
// (and the always tools), call_tool forwards with full fidelity, auth policies apply, and a tool
// of either name refuses to be hidden.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool } from "toolnexus"
import { UPSTREAM, fixtureServer, names, outcome, search, searchHarness, via } from "./lib/search.mjs"

const { defer, serveAndDefer, sdkClient } = searchHarness(afterEach)
const T = { timeout: 120_000 }

// ---------------------------------------------------------------------------------------------
// Served toolSearch

test("served toolSearch refuses to start when a tool is named search_tools or call_tool (it would be hidden)", T, async () => {
  for (const name of ["search_tools", "call_tool"]) {
    const tk = await createToolkit({ builtins: false, toolSearch: true, extraTools: [defineTool({ name, run: () => "mine" }), defineTool({ name: "other", run: () => "o" })] })
    defer(() => tk.close())
    const message = `toolnexus: toolSearch serves its own "${name}", which would hide the tool of that name: rename the tool, or serve without toolSearch`
    await assert.rejects(tk.serve("127.0.0.1:0"), { name: "Error", message })
    await assert.rejects(tk.serveStdio(), { name: "Error", message })
    // Without toolSearch the tool is served as any other.
    const plain = await createToolkit({ builtins: false, extraTools: [defineTool({ name, run: () => "mine" })] })
    defer(() => plain.close())
    const client = await sdkClient((await serveAndDefer(plain)).url)
    assert.deepEqual((await client.callTool({ name, arguments: {} })).content, [{ type: "text", text: "mine" }])
  }
})

test("served toolSearch: tools/list is search_tools, call_tool and the always tools; search_tools answers listings", T, async () => {
  const tk = await createToolkit({
    builtins: false,
    mcpConfig: { mcpServers: { up: fixtureServer(...UPSTREAM) } },
    extraTools: [defineTool({ name: "weather_forecast", title: "Weather", description: "Forecast tomorrow's weather for a city", run: () => "sunny" })],
    toolSearch: { limit: 2, always: ["up_echo", "no_such_tool"] },
  })
  defer(() => tk.close())
  const { url } = await serveAndDefer(tk)
  const client = await sdkClient(url)
  const { tools } = await client.listTools()
  assert.deepEqual(names(tools), ["search_tools", "call_tool", "up_echo"])
  const [searchTool, callTool] = tools
  assert.deepEqual(searchTool.inputSchema.required, ["query"])
  assert.deepEqual(Object.keys(searchTool.inputSchema.properties ?? {}), ["query", "limit"])
  assert.deepEqual(callTool.inputSchema.required, ["name"])
  assert.deepEqual(Object.keys(callTool.inputSchema.properties ?? {}), ["name", "arguments"])
  assert.match(searchTool.description ?? "", /call_tool/)

  // The catalog as it would be listed without search, for comparison.
  const plain = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { up: fixtureServer(...UPSTREAM) } } })
  defer(() => plain.close())
  const listed = new Map((await (await sdkClient((await serveAndDefer(plain)).url)).listTools()).tools.map((t) => [t.name, t]))

  const add = await search(client, { query: "add two numbers", limit: 1 })
  assert.equal(add.length, 1)
  assert.deepEqual(add[0], { name: "up_add", description: "Add two numbers", inputSchema: listed.get("up_add")?.inputSchema })
  const echo = await search(client, { query: "echo the text back" })
  assert.equal(echo[0]?.name, "up_echo")
  assert.ok(echo.length <= 2, "toolSearch.limit is the default")
  assert.deepEqual(echo[0].inputSchema, listed.get("up_echo")?.inputSchema)
  const weather = await search(client, { query: "weather forecast" })
  assert.deepEqual(weather[0], { name: "weather_forecast", title: "Weather", description: "Forecast tomorrow's weather for a city", inputSchema: { type: "object", properties: {} } })
  assert.deepEqual(await search(client, { query: "zyxwvut" }), [])
  assert.ok((await search(client, { query: "the a of", limit: 50 })).length <= 50)

  // Bad arguments: an error result the model can read.
  const refusals = [
    [{}, "search_tools needs a query (a string)"],
    [{ query: 3 }, "search_tools needs a query (a string)"],
    [{ query: "add", limit: 0 }, "search_tools: limit must be a whole number from 1 to 50"],
    [{ query: "add", limit: 51 }, "search_tools: limit must be a whole number from 1 to 50"],
    [{ query: "add", limit: 1.5 }, "search_tools: limit must be a whole number from 1 to 50"],
    [{ query: "add", limit: "2" }, "search_tools: limit must be a whole number from 1 to 50"],
  ]
  for (const [args, text] of refusals) {
    const r = await client.callTool({ name: "search_tools", arguments: args })
    assert.deepEqual({ isError: r.isError, content: r.content }, { isError: true, content: [{ type: "text", text }] }, JSON.stringify(args))
  }
})

test("served toolSearch: call_tool forwards with full fidelity (content, structuredContent, _meta, errors, validation, progress, elicitation)", T, async () => {
  const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { up: fixtureServer(...UPSTREAM) } }, toolSearch: true })
  defer(() => tk.close())
  const { url } = await serveAndDefer(tk)
  const client = await sdkClient(url)
  assert.deepEqual(names((await client.listTools()).tools), ["search_tools", "call_tool"])

  // Same answer as a call by the tool's own name (still callable, though not listed).
  for (const [name, args, expected] of [
    ["up_add", { a: 2, b: 3 }, { content: [{ type: "text", text: "5" }] }],
    ["up_echo", { text: "hi there" }, { content: [{ type: "text", text: "hi there" }] }],
    ["up_structured", {}, { content: [{ type: "text", text: "sum is 3" }], structuredContent: { sum: 3, items: ["x", "y"] } }],
    ["up_meta", {}, { content: [{ type: "text", text: "with meta" }], structuredContent: { n: 1 }, _meta: { "example.com/trace": "t-1", nested: { ok: true } } }],
    ["up_fail", {}, { isError: true, content: [{ type: "text", text: "first problem" }, { type: "text", text: "   " }, { type: "text", text: "second problem" }] }],
  ]) {
    const direct = await client.callTool({ name, arguments: args })
    const forwarded = await via(client, name, args)
    assert.deepEqual(forwarded, direct, name)
    for (const [key, value] of Object.entries(expected)) assert.deepEqual(forwarded[key], value, `${name}.${key}`)
  }

  // Argument validation: the same refusal as a direct call.
  for (const args of [{ a: "two", b: 3 }, { a: 1 }]) {
    const direct = await outcome(client.callTool({ name: "up_add", arguments: args }))
    const forwarded = await outcome(via(client, "up_add", args))
    assert.deepEqual(forwarded, direct, JSON.stringify(args))
    const text = JSON.stringify(forwarded)
    assert.ok(direct.error !== undefined || direct.result?.isError === true, text)
  }
  // An unknown tool: the same as calling it by name.
  const unknown = await outcome(via(client, "up_nope", {}))
  assert.deepEqual(unknown, await outcome(client.callTool({ name: "up_nope", arguments: {} })))
  assert.match(JSON.stringify(unknown), /Unknown tool: up_nope/)

  // Progress notifications reach the client, as for a direct call.
  const progress = []
  const slow = await client.callTool(
    { name: "call_tool", arguments: { name: "up_slow", arguments: { steps: 3, intervalMs: 10 } } },
    undefined,
    { onprogress: (p) => progress.push([p.progress, p.total, p.message]) },
  )
  assert.deepEqual(slow.content, [{ type: "text", text: "slow done after 3 steps" }])
  assert.deepEqual(progress, [[1, 3, "step 1"], [2, 3, "step 2"], [3, 3, "step 3"]])

  // The upstream's elicitation is answered by this client.
  const elicit = await via(client, "up_elicit", {})
  assert.deepEqual(elicit.content, [{ type: "text", text: JSON.stringify({ action: "accept", content: { name: "Ada" } }) }])

  // call_tool without arguments calls with {}; and refuses what it cannot call.
  assert.deepEqual((await via(client, "up_structured")).structuredContent, { sum: 3, items: ["x", "y"] })
  for (const [args, text] of [
    [{}, "call_tool needs the name of a tool (a string), as search_tools gave it"],
    [{ name: 7 }, "call_tool needs the name of a tool (a string), as search_tools gave it"],
    [{ name: "search_tools", arguments: { query: "add" } }, "call_tool cannot call search_tools"],
    [{ name: "call_tool", arguments: { name: "up_add" } }, "call_tool cannot call call_tool"],
    [{ name: "up_add", arguments: [2, 3] }, "call_tool: arguments must be an object"],
    [{ name: "up_add", arguments: "a=2" }, "call_tool: arguments must be an object"],
  ]) {
    const r = await client.callTool({ name: "call_tool", arguments: args })
    assert.deepEqual({ isError: r.isError, content: r.content }, { isError: true, content: [{ type: "text", text }] }, JSON.stringify(args))
  }
})

test("served toolSearch under auth: a caller never finds nor calls a tool outside its scopes", T, async () => {
  const MATH = "tn-search-math-3b9d7f1a"
  const TEXT = "tn-search-text-8c2e6a4f"
  const NONE = "tn-search-none-5e1f9c3d"
  const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { up: fixtureServer("add", "echo", "structured") } }, toolSearch: { always: ["up_echo"] } })
  defer(() => tk.close())
  const auth = {
    tokens: [
      { token: MATH, subject: "mathematician", scopes: ["math"] },
      { token: TEXT, subject: "writer", scopes: ["text"] },
      { token: NONE, subject: "visitor", scopes: ["nothing"] },
    ],
    tools: { math: ["up_add"], text: ["up_echo", "up_struct*"] },
  }
  const { url } = await serveAndDefer(tk, { auth })
  const math = await sdkClient(url, { token: MATH })
  const text = await sdkClient(url, { token: TEXT })

  // A caller whose scopes allow no tool is not offered search: nothing listed, and the two
  // search tools are unknown to it like any tool it may not see.
  const visitor = await sdkClient(url, { token: NONE })
  assert.deepEqual(names((await visitor.listTools()).tools), [])
  for (const [name, args] of [
    ["search_tools", { query: "add" }],
    ["call_tool", { name: "up_add", arguments: { a: 1, b: 2 } }],
  ]) {
    const refused = await outcome(visitor.callTool({ name, arguments: args }))
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused))
    assert.match(refused.error?.message ?? "", new RegExp(`Unknown tool: ${name}`))
  }

  // The always tool only for whom it is visible.
  assert.deepEqual(names((await math.listTools()).tools), ["search_tools", "call_tool"])
  assert.deepEqual(names((await text.listTools()).tools), ["search_tools", "call_tool", "up_echo"])

  assert.deepEqual(names(await search(math, { query: "add two numbers", limit: 50 })), ["up_add"])
  assert.deepEqual(names(await search(math, { query: "echo the text back", limit: 50 })).filter((n) => n !== "up_add"), [])
  assert.deepEqual(names(await search(math, { query: "structured content", limit: 50 })).filter((n) => n !== "up_add"), [])
  const found = names(await search(text, { query: "echo the text back add two numbers structured content", limit: 50 }))
  assert.ok(found.includes("up_echo") && !found.includes("up_add"), found.join(", "))
  // Hidden tools do not take the places of visible ones: limit 1 still finds one.
  assert.deepEqual(names(await search(text, { query: "add two numbers echo", limit: 1 })), ["up_echo"])

  // Calling a hidden tool through call_tool is answered as an unknown tool, as by its name.
  for (const [client, hidden, args] of [
    [math, "up_echo", { text: "x" }],
    [math, "up_structured", {}],
    [text, "up_add", { a: 1, b: 2 }],
  ]) {
    const forwarded = await outcome(via(client, hidden, args))
    assert.deepEqual(forwarded, await outcome(client.callTool({ name: hidden, arguments: args })), hidden)
    assert.equal(forwarded.error?.code, -32602, JSON.stringify(forwarded))
    assert.match(forwarded.error?.message ?? "", new RegExp(`Unknown tool: ${hidden}`))
  }
  assert.deepEqual((await via(math, "up_add", { a: 1, b: 2 })).content, [{ type: "text", text: "3" }])
  assert.deepEqual((await via(text, "up_echo", { text: "x" })).content, [{ type: "text", text: "x" }])
})
