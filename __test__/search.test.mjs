// Tool search for big catalogs (issue 24), against real servers only: source.searchTools and
// toolkit.searchTools ranking server-filesystem's (and server-everything's) real tools, their
// options, the index following notifications/tools/list_changed, a big synthetic catalog; a
// toolkit served with `toolSearch` (tools/list shows search_tools and call_tool, call_tool
// forwards with full fidelity, auth policies apply), the official Python client through it, and
// `toolnexus serve --tool-search` as a subprocess.
//
// server-filesystem and server-memory are published packages, devDependencies of the repo.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { createToolkit, defineTool, loadMcp } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { PYTHON, deferredCleanup, nodeFixture, repoRoot, serverEverything, tmpConfig, tmpDir, waitFor } from "./helpers.mjs"
import { BIN, startCli } from "./lib/idp.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 120_000 }

/** A published server's entry point (a devDependency: its absence fails the test, never skips it). */
const published = (pkg) => path.join(repoRoot, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
const FILESYSTEM = published("server-filesystem")
const MEMORY = published("server-memory")

/** server-filesystem over a fresh folder, as a config entry. */
const filesystem = () => ({ command: [process.execPath, FILESYSTEM, tmpDir()] })
const everything = { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 }
/** __test__/fixtures/stdio-server.mjs with these tools. */
const fixtureServer = (...tools) => ({ command: nodeFixture("stdio-server", "--tools", tools.join(",")) })

const names = (matches) => matches.map((m) => m.name)

// ---------------------------------------------------------------------------------------------
// source.searchTools

test("source.searchTools ranks server-filesystem's real tools: clear requests find the right tool first", T, async () => {
  const source = await loadMcp({ fs: filesystem() })
  defer(() => source.close())
  assert.equal(source.status.fs, "connected", JSON.stringify(source.errors))
  const all = new Map(source.tools.map((t) => [t.name, t]))
  assert.ok(all.has("fs_list_directory") && all.has("fs_move_file"), [...all.keys()].join(", "))

  const first = {
    "create a new directory": "fs_create_directory",
    "move a file to another folder": "fs_move_file",
    "write a file": "fs_write_file",
    "edit a file": "fs_edit_file",
    "get file info": "fs_get_file_info",
    "directory tree": "fs_directory_tree",
  }
  for (const [query, expected] of Object.entries(first)) {
    const found = source.searchTools(query)
    assert.equal(found[0]?.name, expected, `${query}: ${names(found).join(", ")}`)
  }
  const top3 = {
    "list the entries of a directory": "fs_list_directory",
    "which directories am I allowed to access": "fs_list_allowed_directories",
    "search for files matching a pattern": "fs_search_files",
    "read several files at once": "fs_read_multiple_files",
  }
  for (const [query, expected] of Object.entries(top3)) {
    const found = source.searchTools(query, { limit: 3 })
    assert.ok(names(found).includes(expected), `${query}: ${names(found).join(", ")}`)
  }

  // Each match is the tool as source.tools has it, with its server and a score, best first.
  const found = source.searchTools("list the entries of a directory", { limit: 5 })
  assert.ok(found.length >= 1 && found.length <= 5, String(found.length))
  for (const m of found) {
    const tool = all.get(m.name)
    assert.ok(tool, m.name)
    assert.deepEqual(Object.keys(m).sort(), ["description", "inputSchema", "name", "score", "server"])
    assert.equal(m.server, "fs")
    assert.equal(m.description, tool.description)
    assert.deepEqual(m.inputSchema, tool.inputSchema)
    assert.ok(Number.isFinite(m.score) && m.score > 0, String(m.score))
  }
  for (let i = 1; i < found.length; i++) assert.ok(found[i - 1].score >= found[i].score, `ranked best first: ${found.map((m) => m.score)}`)
  // The same search answers the same.
  assert.deepEqual(source.searchTools("list the entries of a directory", { limit: 5 }), found)
  // Nothing to match: no matches (not the whole catalog).
  assert.deepEqual(source.searchTools("zyxwvut qqqq"), [])
  assert.deepEqual(source.searchTools(""), [])
})

test("source.searchTools: limit, the servers filter, and a TypeError for each bad argument", T, async () => {
  const source = await loadMcp({ fs: filesystem(), everything })
  defer(() => source.close())
  assert.deepEqual(source.status, { fs: "connected", everything: "connected" }, JSON.stringify(source.errors))

  // Default 5; `limit` caps it; 1000 is allowed.
  const wide = "file directory echo"
  assert.equal(source.searchTools(wide).length, 5)
  assert.equal(source.searchTools(wide, {}).length, 5)
  assert.equal(source.searchTools(wide, null).length, 5)
  assert.equal(source.searchTools(wide, { limit: 1 }).length, 1)
  assert.deepEqual(source.searchTools(wide, { limit: 1 }), source.searchTools(wide).slice(0, 1))
  const every = source.searchTools(wide, { limit: 1000 })
  assert.ok(every.length > 5 && every.length <= source.tools.length, `${every.length} of ${source.tools.length}`)
  assert.deepEqual(new Set(every.map((m) => m.server)), new Set(["fs", "everything"]))

  // `servers`: only those servers' tools, in the same order as without the filter.
  const onlyFs = source.searchTools(wide, { limit: 1000, servers: ["fs"] })
  assert.ok(onlyFs.length > 0 && onlyFs.every((m) => m.server === "fs"), JSON.stringify(onlyFs.map((m) => [m.name, m.server])))
  assert.deepEqual(names(onlyFs), names(every.filter((m) => m.server === "fs")))
  const onlyEverything = source.searchTools("echo a message back", { servers: ["everything"] })
  assert.equal(onlyEverything[0]?.name, "everything_echo", names(onlyEverything).join(", "))
  assert.ok(onlyEverything.every((m) => m.server === "everything"))
  assert.deepEqual(source.searchTools(wide, { servers: [] }), [])
  assert.deepEqual(source.searchTools(wide, { servers: ["nope"] }), [])
  assert.equal(source.searchTools(wide, { servers: ["fs", "everything"], limit: 1000 }).length, every.length)

  const bad = [
    [[], "toolnexus: searchTools needs a query (a string), got undefined"],
    [[1], "toolnexus: searchTools needs a query (a string), got number"],
    [[null], "toolnexus: searchTools needs a query (a string), got null"],
    [[{ query: "x" }], "toolnexus: searchTools needs a query (a string), got object"],
    [["x", "limit"], "toolnexus: searchTools options must be an object, got string"],
    [["x", 3], "toolnexus: searchTools options must be an object, got number"],
    [["x", { limit: 0 }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 0"],
    [["x", { limit: 1001 }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 1001"],
    [["x", { limit: 2.5 }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 2.5"],
    [["x", { limit: "3" }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 3"],
    [["x", { limit: NaN }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got NaN"],
    [["x", { servers: "fs" }], "toolnexus: searchTools servers must be an array of server names"],
    [["x", { servers: ["fs", 1] }], "toolnexus: searchTools servers must be an array of server names"],
  ]
  for (const [args, message] of bad) {
    assert.throws(() => /** @type {any} */ (source.searchTools)(...args), { name: "TypeError", message }, JSON.stringify(args))
  }
})

test("source.searchTools follows notifications/tools/list_changed: a grown tool is found, a shrunk one no longer", T, async () => {
  const source = await loadMcp({ up: fixtureServer("grow", "shrink", "echo") })
  defer(() => source.close())
  assert.deepEqual(names(source.tools), ["up_grow", "up_shrink", "up_echo"])
  assert.deepEqual(source.searchTools("zeppelin"), [])
  const before = source.searchTools("echo the text back")
  assert.equal(before[0]?.name, "up_echo")

  const grow = source.tools.find((t) => t.name === "up_grow")
  assert.equal((await grow.execute({ name: "zeppelin_hangar" })).output, "added zeppelin_hangar")
  await waitFor(() => source.tools.some((t) => t.name === "up_zeppelin_hangar"), { timeout: 10000, message: "the grown tool listed" })
  const grown = source.searchTools("zeppelin")
  assert.deepEqual(names(grown), ["up_zeppelin_hangar"])
  assert.equal(grown[0].server, "up")
  assert.equal(grown[0].description, "zeppelin_hangar")

  const shrink = source.tools.find((t) => t.name === "up_shrink")
  assert.equal((await shrink.execute({ name: "zeppelin_hangar" })).output, "removed zeppelin_hangar")
  await waitFor(() => !source.tools.some((t) => t.name === "up_zeppelin_hangar"), { timeout: 10000, message: "the shrunk tool gone" })
  assert.deepEqual(source.searchTools("zeppelin"), [])
  assert.deepEqual(source.searchTools("echo the text back"), before)
})

// ---------------------------------------------------------------------------------------------
// toolkit.searchTools

test("toolkit.searchTools ranks MCP and own tools together; an own tool has no server; the index follows list changes", T, async () => {
  const forecast = defineTool({
    name: "weather_forecast",
    description: "Forecast tomorrow's weather for a city",
    inputSchema: { type: "object", properties: { city: { type: "string", description: "The city" } }, required: ["city"] },
    run: ({ city }) => `sunny in ${city}`,
  })
  const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { up: fixtureServer("add", "echo", "grow") } }, extraTools: [forecast] })
  defer(() => tk.close())
  assert.deepEqual(names(tk.tools()), ["up_add", "up_echo", "up_grow", "weather_forecast"])

  const weather = tk.searchTools("weather forecast")
  assert.equal(weather[0]?.name, "weather_forecast", names(weather).join(", "))
  assert.equal("server" in weather[0], false)
  assert.equal(weather[0].description, "Forecast tomorrow's weather for a city")
  assert.deepEqual(weather[0].inputSchema, forecast.inputSchema)

  const add = tk.searchTools("add two numbers")
  assert.equal(add[0]?.name, "up_add", names(add).join(", "))
  assert.equal(add[0].server, "up")
  assert.deepEqual(add[0].inputSchema, tk.get("up_add")?.inputSchema)
  assert.deepEqual(tk.searchTools("add two numbers", { servers: ["up"] })[0]?.name, "up_add")
  // An own tool belongs to no server: a servers filter leaves it out.
  assert.deepEqual(tk.searchTools("weather forecast", { servers: ["up"] }).filter((m) => m.name === "weather_forecast"), [])
  assert.throws(() => tk.searchTools("x", { limit: 0 }), { name: "TypeError", message: "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 0" })

  assert.deepEqual(tk.searchTools("albatross"), [])
  await tk.execute("up_grow", { name: "albatross_watch" })
  await waitFor(() => tk.get("up_albatross_watch") !== undefined, { timeout: 10000, message: "the grown tool in the toolkit" })
  assert.deepEqual(names(tk.searchTools("albatross")), ["up_albatross_watch"])
})

test("a big catalog: 5 000 own tools and a 5 000-tool MCP server are searched quickly", T, async (t) => {
  const verbs = ["get", "list", "create", "delete", "update", "search", "export", "import", "sync", "archive"]
  const nouns = ["invoice", "customer", "order", "ticket", "report", "user", "project", "invoice_line", "shipment", "payment"]
  const own = []
  for (let i = 0; own.length < 4999; i++) {
    const verb = verbs[i % verbs.length]
    const noun = nouns[Math.floor(i / verbs.length) % nouns.length]
    const service = `svc${Math.floor(i / 100)}`
    own.push(defineTool({ name: `${service}_${verb}_${noun}_${i}`, description: `${verb} a ${noun.replace("_", " ")} in service ${service}`, run: () => "ok" }))
  }
  own.push(defineTool({ name: "launch_rocket", description: "Launch the rocket to orbit", run: () => "lift-off" }))
  const tk = await createToolkit({
    builtins: false,
    mcpConfig: { mcpServers: { raw: { command: [PYTHON, path.join(repoRoot, "bench", "servers", "raw_server.py"), "--tools", "5000", "--page-size", "1000"] } } },
    extraTools: own,
  })
  defer(() => tk.close())
  assert.equal(tk.tools().length, 10000)

  let started = performance.now()
  const rocket = tk.searchTools("launch the rocket")
  const firstMs = performance.now() - started
  assert.equal(rocket[0]?.name, "launch_rocket", names(rocket).join(", "))
  assert.equal(tk.searchTools("echo", { servers: ["raw"] })[0]?.name, "raw_echo")
  assert.equal(tk.searchTools("sleep for a while")[0]?.name, "raw_sleep")
  // Numbers are not words of the index ("add 17 and 25" is about adding): ties go by name.
  assert.deepEqual(names(tk.searchTools("tool 4321", { limit: 3, servers: ["raw"] })), ["raw_tool_10", "raw_tool_100", "raw_tool_1000"])

  const queries = ["delete a customer", "export the invoices", "archive shipment", "sync payments of svc7", "tool 77", "launch rocket"]
  const rounds = 50
  started = performance.now()
  for (let i = 0; i < rounds; i++) for (const q of queries) assert.ok(tk.searchTools(q).length > 0, q)
  const perQueryMs = (performance.now() - started) / (rounds * queries.length)
  t.diagnostic(`10 000 tools: first search (index built) ${firstMs.toFixed(1)} ms; then ${(perQueryMs * 1000).toFixed(0)} µs per query (debug or release build, through JS)`)
  // Generous hang bounds, not a benchmark (bench/search.mjs measures).
  assert.ok(firstMs < 10000, `first search took ${firstMs} ms`)
  assert.ok(perQueryMs < 100, `${perQueryMs} ms per query`)

  // The source's own index of the same server.
  const source = await loadMcp({ raw: { command: [PYTHON, path.join(repoRoot, "bench", "servers", "raw_server.py"), "--tools", "5000"] } })
  defer(() => source.close())
  assert.equal(source.searchTools("echo")[0]?.name, "raw_echo")
  assert.equal(source.searchTools("tool", { limit: 1000 }).length, 1000)
})

test("createToolkit's toolSearch option: a TypeError for each bad value", T, async () => {
  for (const [value, message] of [
    ["yes", "toolnexus: toolSearch must be true or { limit?, always? }, got string"],
    [1, "toolnexus: toolSearch must be true or { limit?, always? }, got number"],
    [[], "toolnexus: toolSearch must be true or { limit?, always? }, got an array"],
    [{ limit: 0 }, "toolnexus: toolSearch.limit must be a whole number from 1 to 50, got 0"],
    [{ limit: 51 }, "toolnexus: toolSearch.limit must be a whole number from 1 to 50, got 51"],
    [{ limit: 1.5 }, "toolnexus: toolSearch.limit must be a whole number from 1 to 50, got 1.5"],
    [{ always: "up_add" }, "toolnexus: toolSearch.always must be an array of tool names"],
    [{ always: [1] }, "toolnexus: toolSearch.always must be an array of tool names"],
    [{ max: 3 }, 'toolnexus: toolSearch has no option "max" (it takes limit and always)'],
  ]) {
    await assert.rejects(createToolkit({ builtins: false, toolSearch: /** @type {any} */ (value) }), { name: "TypeError", message }, JSON.stringify(value))
  }
  // false, null and undefined: served as a catalog.
  for (const toolSearch of [false, null, undefined]) {
    const tk = await createToolkit({ builtins: false, toolSearch: /** @type {any} */ (toolSearch), extraTools: [defineTool({ name: "a", run: () => "a" })] })
    defer(() => tk.close())
    const { url } = await serveAndDefer(tk)
    const client = await sdkClient(url)
    assert.deepEqual(names((await client.listTools()).tools), ["a"])
  }
})

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

/** Serves `tk` on 127.0.0.1:0 (stopped by `defer`); resolves { url }. */
async function serveAndDefer(tk, opts = {}) {
  const handle = await tk.serve("127.0.0.1:0", opts)
  defer(() => handle.stop())
  return { url: handle.url }
}

/** An SDK client of `url/mcp` (closed by `defer`), answering elicitations with { name: "Ada" }. */
async function sdkClient(url, { token } = {}) {
  const client = new Client({ name: "search-test", version: "1.0.0" }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` }
  defer(() => client.close())
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }))
  return client
}

/** The result of a tools/call, or its JSON-RPC error as { error: { code, message } }. */
const outcome = (promise) => promise.then((result) => ({ result }), (err) => ({ error: { code: err.code, message: err.message } }))
/** search_tools' answer: structuredContent.tools, checked to be the JSON of its text part too. */
async function search(client, args) {
  const r = await client.callTool({ name: "search_tools", arguments: args })
  assert.ok(!r.isError, JSON.stringify(r))
  assert.equal(r.content.length, 1)
  assert.equal(r.content[0].type, "text")
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, "the text part is the same JSON")
  return /** @type {any} */ (r.structuredContent).tools
}
const via = (client, name, args) => client.callTool({ name: "call_tool", arguments: args === undefined ? { name } : { name, arguments: args } }, undefined, {})

const UPSTREAM = ["add", "echo", "structured", "fail", "slow", "elicit", "meta"]

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

/** search_client.py against `url`; resolves its JSON report. */
function pythonSearch(url, mode, query, tool, args) {
  const script = path.join(repoRoot, "__test__", "python", "search_client.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, `${url}/mcp`, mode, query, tool, JSON.stringify(args)], { timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python search client (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout))
    })
  })
}

test("the official Python client lists, searches and calls through call_tool (progress and elicitation included)", T, async () => {
  const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { up: fixtureServer(...UPSTREAM) } }, toolSearch: { always: ["up_add"] } })
  defer(() => tk.close())
  const { url } = await serveAndDefer(tk)
  for (const mode of ["legacy", "2026-07-28"]) {
    const slow = await pythonSearch(url, mode, "a slow tool that reports progress", "up_slow", { steps: 2, intervalMs: 10 })
    assert.equal(slow.protocolVersion, mode === "legacy" ? slow.protocolVersion : mode)
    assert.deepEqual(slow.tools, ["search_tools", "call_tool", "up_add"], mode)
    assert.equal(slow.searchIsError, false)
    assert.ok(slow.found.includes("up_slow"), `${mode}: ${slow.found}`)
    assert.equal(slow.textIsStructured, true)
    assert.equal(slow.complete, true)
    assert.deepEqual([slow.text, slow.isError, slow.progress], ["slow done after 2 steps", false, [1, 2]], mode)

    const structured = await pythonSearch(url, mode, "structured content", "up_structured", {})
    assert.equal(structured.found[0], "up_structured", `${mode}: ${structured.found}`)
    assert.deepEqual([structured.text, structured.structuredContent], ["sum is 3", { sum: 3, items: ["x", "y"] }])

    const elicit = await pythonSearch(url, mode, "elicit a name from the client", "up_elicit", {})
    assert.ok(elicit.found.includes("up_elicit"), `${mode}: ${elicit.found}`)
    assert.deepEqual(elicit.elicitations, ["What is your name?"], mode)
    assert.deepEqual(JSON.parse(elicit.text), { action: "accept", content: { name: "Ada Lovelace" } }, mode)

    const bad = await pythonSearch(url, mode, "add", "up_add", { a: "two", b: 1 })
    assert.equal(bad.isError, true, `${mode}: ${JSON.stringify(bad)}`)
  }
})

// ---------------------------------------------------------------------------------------------
// toolnexus serve --tool-search

test("toolnexus serve --tool-search: served search over HTTP and stdio; bad flags are exit 2", T, async () => {
  const config = tmpConfig({ mcpServers: { up: fixtureServer("add", "echo", "slow") } })
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--tool-search", "--tool-search-limit", "1", "--tool-search-always", "up_echo,up_nope"])
  const url = await gw.serving
  assert.match(gw.stdout(), /^toolnexus: serving 3 tools at http:\/\/127\.0\.0\.1:\d+\/mcp\n$/)
  assert.match(gw.stderr(), /--tool-search-always: no tool named "up_nope" \(ignored\)/)
  assert.match(gw.stderr(), /toolnexus: --tool-search: tools\/list shows search_tools and call_tool and up_echo; 3 tools searched/)
  const client = await sdkClient(url)
  assert.deepEqual(names((await client.listTools()).tools), ["search_tools", "call_tool", "up_echo"])
  const add = await search(client, { query: "add two numbers" })
  assert.deepEqual(names(add), ["up_add"], "--tool-search-limit 1")
  assert.deepEqual((await via(client, "up_add", { a: 20, b: 22 })).content, [{ type: "text", text: "42" }])
  await client.close()

  // Over stdio, with the SDK's own stdio client.
  const stdio = new Client({ name: "search-test", version: "1.0.0" })
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", config, "--stdio", "--tool-search"], cwd: repoRoot, stderr: "ignore" })
  defer(() => stdio.close())
  await stdio.connect(transport)
  assert.deepEqual(names((await stdio.listTools()).tools), ["search_tools", "call_tool"])
  const echo = /** @type {any} */ ((await stdio.callTool({ name: "search_tools", arguments: { query: "echo the text back" } })).structuredContent).tools
  assert.equal(echo[0]?.name, "up_echo")
  assert.deepEqual((await via(stdio, "up_echo", { text: "over stdio" })).content, [{ type: "text", text: "over stdio" }])
  await stdio.close()

  const usage = "Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]\nRun `toolnexus serve --help` for details.\n"
  for (const [args, message] of [
    [["--tool-search-limit", "3"], "toolnexus serve: --tool-search-limit needs --tool-search"],
    [["--tool-search-always", "up_add"], "toolnexus serve: --tool-search-always needs --tool-search"],
    [["--tool-search", "--tool-search-limit", "0"], 'toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "0"'],
    [["--tool-search", "--tool-search-limit", "51"], 'toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "51"'],
    [["--tool-search", "--tool-search-limit", "two"], 'toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "two"'],
    [["--tool-search", "--tool-search-always", ","], "toolnexus serve: --tool-search-always must name at least one tool"],
  ]) {
    const bad = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", ...args])
    const r = await bad.exited
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stdout, "")
    assert.equal(r.stderr, `${message}\n${usage}`)
  }
  const help = startCli(defer, ["serve", "--help"])
  assert.match((await help.exited).stdout, /--tool-search-always a,b/)
})

// ---------------------------------------------------------------------------------------------
// The tokens saved (the README's numbers)

test("the demo config's tools/list is much smaller with toolSearch (the README's numbers)", T, async (t) => {
  const mcpServers = {
    everything,
    filesystem: filesystem(),
    memory: { command: [process.execPath, MEMORY], env: { MEMORY_FILE_PATH: path.join(tmpDir(), "memory.jsonl") } },
  }
  const sizes = {}
  for (const toolSearch of [false, true]) {
    const tk = await createToolkit({ builtins: false, mcpConfig: { mcpServers }, toolSearch })
    defer(() => tk.close())
    assert.deepEqual(Object.values(tk.mcpStatus()), ["connected", "connected", "connected"], JSON.stringify(tk.mcpErrors()))
    const client = await sdkClient((await serveAndDefer(tk)).url)
    const { tools } = await client.listTools()
    sizes[String(toolSearch)] = { tools: tools.length, bytes: Buffer.byteLength(JSON.stringify({ tools })), catalog: tk.tools().length }
    if (toolSearch) {
      const answer = await client.callTool({ name: "search_tools", arguments: { query: "list the entries of a directory" } })
      sizes.answer = Buffer.byteLength(JSON.stringify(answer.structuredContent))
    }
  }
  const [full, searched] = [sizes.false, sizes.true]
  t.diagnostic(`tools/list without toolSearch: ${full.tools} tools, ${full.bytes} bytes (~${Math.round(full.bytes / 4)} tokens); with: ${searched.tools} tools, ${searched.bytes} bytes (~${Math.round(searched.bytes / 4)} tokens); one search_tools answer (5 matches): ${sizes.answer} bytes (~${Math.round(sizes.answer / 4)} tokens)`)
  assert.equal(searched.tools, 2)
  assert.equal(full.tools, full.catalog)
  assert.ok(searched.bytes * 10 < full.bytes, JSON.stringify(sizes))
})
