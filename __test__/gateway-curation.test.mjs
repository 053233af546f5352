// Curation of a toolkit's tools (issue 41: `createToolkit({ curation })`, `toolnexus serve
// --tools-config`): a renamed tool with a preset argument is listed without it and the upstream
// receives it on every call (its own log says so), through the official Python client in both
// eras and the TypeScript SDK client; defaults fill what a caller leaves out; hidden tools are
// gone; a server's prefix renames its tools; renames hold for call_tool, search and hooks; a
// tool no server has, a preset that does not fit, or two tools under one name stop the start.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { createToolkit } from "toolnexus"
import { deferredCleanup, tmpConfig, tmpFile } from "./helpers.mjs"
import { startCli } from "./lib/gateway.mjs"
import { cli } from "./lib/cli.mjs"
import { calls, opsClient, sdkClient as sharedSdkClient, upstream } from "./lib/policy.mjs"

const T = { timeout: 120_000 }
const defer = deferredCleanup(afterEach)
const MODES = ["2026-07-28", "legacy"]

const received = (log) => calls(log).map(({ params }) => [params.name, params.arguments])

const python = (url, mode, ops) => opsClient(`${url}/mcp`, mode, ops)

const sdkClient = (url) => sharedSdkClient(defer, `${url}/mcp`)

const CURATION = {
  servers: { up: { prefix: "team" } },
  tools: {
    up_add: { rename: "add_to_ten", title: "Add to ten", description: "Adds b to ten", preset: { a: 10 } },
    up_echo: { defaults: { text: "hello from the gateway" } },
    up_structured: { hide: true },
  },
}

test("a renamed tool with a preset argument: listed without it, the upstream receives it (Python both eras, TypeScript SDK)", T, async () => {
  const log = tmpFile("calls.log")
  const seen = []
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { up: upstream(log, "add", "echo", "structured") } },
    curation: CURATION,
    hooks: { beforeCall: (call) => void seen.push([call.tool, call.arguments]) },
  })
  defer(() => tk.close())
  // The agent sees the curated set too.
  assert.deepEqual(tk.tools().map((t) => t.name), ["add_to_ten", "team_echo"])
  assert.equal((await tk.execute("add_to_ten", { b: 1 })).output, "11")
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  fs.rmSync(log, { force: true })
  for (const mode of MODES) {
    const report = await python(handle.url, mode, [
      { list: "tools" },
      { call: "add_to_ten", args: { b: 5 } },
      { call: "team_echo", args: {} },
      { call: "team_echo", args: { text: "mine" } },
      { call: "up_structured", args: {} },
      { call: "up_add", args: { a: 1, b: 1 } },
    ])
    const [listed, added, defaulted, given, hidden, old] = report.answers
    assert.deepEqual(listed, { tools: ["add_to_ten", "team_echo"] }, mode)
    assert.deepEqual([added.text, added.isError], ["15", false], mode)
    assert.deepEqual([defaulted.text, given.text], ["hello from the gateway", "mine"], mode)
    for (const gone of [hidden, old]) assert.match(JSON.stringify(gone), /Unknown tool: (up_structured|up_add)/, mode)
  }
  assert.deepEqual(received(log), [
    ...[1, 2].flatMap(() => [
      ["add", { a: 10, b: 5 }],
      ["echo", { text: "hello from the gateway" }],
      ["echo", { text: "mine" }],
    ]),
  ])
  // The advertised schemas: the preset is gone, the default is listed and no longer required.
  const client = await sdkClient(handle.url)
  const { tools } = await client.listTools()
  const add = tools.find((t) => t.name === "add_to_ten")
  assert.deepEqual([add.title, add.description, Object.keys(add.inputSchema.properties), add.inputSchema.required], ["Add to ten", "Adds b to ten", ["b"], ["b"]])
  const echo = tools.find((t) => t.name === "team_echo")
  assert.deepEqual([echo.inputSchema.properties.text, echo.inputSchema.required], [{ type: "string", default: "hello from the gateway" }, undefined])
  // The caller cannot override the preset: whatever it sends as `a`, the upstream gets 10.
  const override = await client.callTool({ name: "add_to_ten", arguments: { a: 1, b: 5 } })
  assert.deepEqual([override.content[0].text, override.isError], ["15", undefined])
  assert.deepEqual(received(log).at(-1), ["add", { a: 10, b: 5 }])
  // Hooks see the curated name and the caller's arguments.
  assert.deepEqual(seen[0], ["add_to_ten", { b: 5 }])
})

test("renames hold for served search and call_tool, and for the toolkit's own search", T, async () => {
  const log = tmpFile("calls.log")
  const tk = await createToolkit({ mcpConfig: { mcpServers: { up: upstream(log, "add", "echo", "structured") } }, curation: CURATION, toolSearch: true })
  defer(() => tk.close())
  const own = tk.searchTools("adds b to ten")
  assert.deepEqual([own[0].name, own[0].description], ["add_to_ten", "Adds b to ten"])
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const client = await sdkClient(handle.url)
  const found = await client.callTool({ name: "search_tools", arguments: { query: "adds b to ten" } })
  assert.equal(found.structuredContent.tools[0].name, "add_to_ten")
  assert.deepEqual(Object.keys(found.structuredContent.tools[0].inputSchema.properties), ["b"])
  const called = await client.callTool({ name: "call_tool", arguments: { name: "add_to_ten", arguments: { b: 32 } } })
  assert.equal(called.content[0].text, "42")
  assert.deepEqual(received(log), [["add", { a: 10, b: 32 }]])
})

test("a curation is checked at start: a tool no server has, a preset that does not fit, two tools under one name", T, async () => {
  const log = tmpFile("calls.log")
  const mcpConfig = { mcpServers: { up: upstream(log, "add", "echo") } }
  const refused = (curation, message) => assert.rejects(createToolkit({ mcpConfig, curation }), { message })
  await refused({ tools: { up_nope: { hide: true } } }, 'toolnexus: curation: no tool is named "up_nope" (tools are named as toolnexus list shows them, before any rename)')
  await refused({ tools: { up_add: { preset: { a: "ten" } } } }, 'toolnexus: curation: the preset of tool "up_add" does not fit its schema: /a: "ten" is not of type "number"')
  await refused({ tools: { up_add: { preset: { c: 1 } } } }, 'toolnexus: curation: the preset of tool "up_add" does not fit its schema: "c" is not one of the tool\'s arguments')
  await refused({ tools: { up_add: { rename: "up_echo" } } }, 'toolnexus: curation: "up_echo" and "up_add" would both be named "up_echo"')
  await refused({ servers: { down: { prefix: "d" } } }, "toolnexus: curation.servers.down: the config has no server of that name")
  await refused({ tools: { up_add: { rename: "two words" } } }, 'toolnexus: curation.tools.up_add.rename must be a tool name: 1 to 128 letters, digits, "_", "-" or "."')
  await refused({ tools: { up_add: { renmae: "x" } } }, "toolnexus: curation.tools.up_add.renmae is not a curation of a tool (they are rename, title, description, hide, preset, defaults)")
  await refused({ tools: { up_add: { preset: { a: 1 }, defaults: { a: 2 } } } }, 'toolnexus: curation.tools.up_add: "a" is both preset and defaulted')
  // A tool of a server that did not connect cannot be checked yet: it is not a mistake.
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { ...mcpConfig.mcpServers, gone: { command: ["/nonexistent-toolnexus-binary"], timeout: 5000 } } },
    curation: { tools: { gone_tool: { rename: "x" }, up_add: { preset: { a: 1 } } } },
  })
  defer(() => tk.close())
  assert.deepEqual(tk.tools().map((t) => t.name), ["up_add", "up_echo"])
})

test("toolnexus serve --tools-config: the file curates the gateway; a bad file is exit 2, a bad curation exit 1 in words", T, async () => {
  const log = tmpFile("calls.log")
  const config = tmpConfig({ mcpServers: { up: upstream(log, "add", "echo", "structured") } })
  const file = path.join(path.dirname(log), "tools.json")
  fs.writeFileSync(file, JSON.stringify(CURATION))
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--tools-config", file])
  const url = await gw.serving
  assert.match(gw.stdout(), /serving 2 tools at /)
  const client = await sdkClient(url)
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ["add_to_ten", "team_echo"])
  assert.equal((await client.callTool({ name: "add_to_ten", arguments: { b: 1 } })).content[0].text, "11")

  fs.writeFileSync(file, "{ not json")
  const bad = await cli(["serve", config, "--addr", "127.0.0.1:0", "--tools-config", file])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /^toolnexus serve: --tools-config .*tools\.json is not JSON: /)
  fs.writeFileSync(file, JSON.stringify({ tools: { up_add: { hide: "yes" } } }))
  const malformed = await cli(["serve", config, "--addr", "127.0.0.1:0", "--tools-config", file])
  assert.equal(malformed.code, 2)
  assert.match(malformed.stderr, /^toolnexus serve: --tools-config .*tools\.json: tools\.up_add\.hide must be a boolean\n/)
  fs.writeFileSync(file, JSON.stringify({ tools: { up_nope: { hide: true } } }))
  const unknown = await cli(["serve", config, "--addr", "127.0.0.1:0", "--tools-config", file])
  assert.equal(unknown.code, 1)
  assert.match(unknown.stderr, /toolnexus: --tools-config: no tool is named "up_nope"/)
})
