// Tool search for big catalogs (issue 24): toolkit.searchTools ranking MCP and own tools
// together and following list changes, a big synthetic catalog searched quickly, and
// createToolkit's toolSearch option.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { createToolkit, defineTool, loadMcp } from "toolnexus"
import { PYTHON, repoRoot, waitFor } from "./helpers.mjs"
import { fixtureServer, names, searchHarness } from "./lib/search.mjs"

const { defer, serveAndDefer, sdkClient } = searchHarness(afterEach)
const T = { timeout: 120_000 }

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
