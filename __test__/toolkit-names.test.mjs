// A toolkit names its servers' tools as one loadMcp of the same config does (docs/loading.md: colliding
// and over-long names are disambiguated deterministically, with a warning), although it holds
// one source per server; and a tool keeps its name while other servers restart or re-list.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import * as toolnexus from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { deferredCleanup, nodeFixture, waitFor } from "./helpers.mjs"

const T = { timeout: 30000 }
const { loadMcp } = toolnexus
const createToolkit = toolnexus.createToolkit ?? toolnexus.default?.createToolkit
const defer = deferredCleanup(afterEach)

const fixtureServer = (tools) => ({ command: nodeFixture("stdio-server", "--tools", tools.join(",")) })
const names = (tools) => tools.map((t) => t.name)
const LONG = "t".repeat(70)
// "a" + "b.echo" and "a_b" + "echo" are both a_b_echo; a_<70 t> is past 64 characters.
const CONFIG = { mcpServers: { a: fixtureServer(["b.echo", LONG]), a_b: fixtureServer(["echo"]) } }
const EXPECTED = ["a_b_echo", `a_${"t".repeat(53)}_bb19c169`, "a_b_echo_df0d1c3b"]
const EXPECTED_WARNINGS = [
  `toolnexus: tool name "a_${LONG}" is longer than 64 characters; using "${EXPECTED[1]}"`,
  `toolnexus: tool "echo" of server "a_b" collides with another tool named "a_b_echo"; using "${EXPECTED[2]}"`,
]

/** ToolnexusWarnings emitted while `fn` runs (and the tick after, when 'warning' fires). */
async function warningsOf(fn) {
  const warnings = []
  const listener = (w) => w.name === "ToolnexusWarning" && warnings.push(w.message)
  process.on("warning", listener)
  try {
    const value = await fn()
    await new Promise((resolve) => setImmediate(resolve))
    return { value, warnings }
  } finally {
    process.off("warning", listener)
  }
}

async function gatewayClient(toolkit) {
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const client = new Client({ name: "names-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${handle.url}/mcp`)))
  defer(() => client.close())
  return client
}

const textOf = (result) => result.content.map((part) => part.text).join("")

test("createToolkit names colliding and long tools exactly as loadMcp does, with the same warnings; the gateway serves those names", T, async () => {
  const loaded = await warningsOf(() => loadMcp(CONFIG))
  defer(() => loaded.value.close())
  const built = await warningsOf(() => createToolkit({ mcpConfig: CONFIG }))
  const toolkit = built.value
  defer(() => toolkit.close())

  assert.deepEqual(names(loaded.value.tools), EXPECTED)
  assert.deepEqual(names(toolkit.tools()), EXPECTED)
  assert.deepEqual(loaded.warnings, EXPECTED_WARNINGS)
  assert.deepEqual(built.warnings, EXPECTED_WARNINGS)

  // Each name reaches its own server: "a"'s plain tool answers its name, "a_b"'s echo echoes.
  assert.equal((await toolkit.execute("a_b_echo", {})).output, "b.echo")
  assert.deepEqual(await toolkit.execute(EXPECTED[2], { text: "hi" }).then((r) => [r.output, r.metadata.server]), ["hi", "a_b"])

  const client = await gatewayClient(toolkit)
  assert.deepEqual(names((await client.listTools()).tools), EXPECTED)
  assert.equal(textOf(await client.callTool({ name: "a_b_echo", arguments: {} })), "b.echo")
  assert.equal(textOf(await client.callTool({ name: EXPECTED[2], arguments: { text: "over the gateway" } })), "over the gateway")
  assert.equal(textOf(await client.callTool({ name: EXPECTED[1], arguments: {} })), LONG)
})

test("toolkit names stay put when another server is removed, restarted or re-lists; new names warn once", T, async () => {
  const toolkit = await createToolkit({ mcpConfig: CONFIG })
  defer(() => toolkit.close())
  const client = await gatewayClient(toolkit)

  // Without "a", a fresh loadMcp would call a_b's echo a_b_echo; the toolkit keeps its name.
  const removed = await warningsOf(() => toolkit.reload({ mcpServers: { a_b: CONFIG.mcpServers.a_b } }))
  assert.deepEqual(removed.value, { added: [], removed: ["a"], restarted: [] })
  assert.deepEqual(names(toolkit.tools()), [EXPECTED[2]])
  assert.deepEqual(removed.warnings, [])
  assert.deepEqual(names((await client.listTools()).tools), [EXPECTED[2]])

  // "a" comes back, changed: its tools take the names that are free, a_b's echo does not move.
  const back = { mcpServers: { a: fixtureServer(["b.echo", "grow"]), a_b: CONFIG.mcpServers.a_b } }
  const added = await warningsOf(() => toolkit.reload(back))
  assert.deepEqual(added.value, { added: ["a"], removed: [], restarted: [] })
  assert.deepEqual(names(toolkit.tools()), ["a_b_echo", "a_grow", EXPECTED[2]])
  assert.deepEqual(added.warnings, [])

  // "a" grows a tool named like one of a_b's (a_b_x, once "x" exists at a_b): the newcomer is
  // renamed, with a warning, and a_b's tool keeps its name through the re-listing.
  const restarted = await toolkit.reload({ mcpServers: { a: back.mcpServers.a, a_b: fixtureServer(["echo", "x"]) } })
  assert.deepEqual(restarted, { added: [], removed: [], restarted: ["a_b"] })
  assert.deepEqual(names(toolkit.tools()), ["a_b_echo", "a_grow", EXPECTED[2], "a_b_x"])
  const grown = await warningsOf(async () => {
    assert.equal((await toolkit.execute("a_grow", { name: "b_x" })).output, "added b_x")
    await waitFor(() => toolkit.tools().length === 5, { message: "a re-listed" })
  })
  const renamed = toolkit.tools()[2].name
  assert.equal(renamed, "a_b_x_94988936", "the name one loadMcp gives this newcomer too")
  assert.deepEqual(names(toolkit.tools()), ["a_b_echo", "a_grow", renamed, EXPECTED[2], "a_b_x"])
  assert.deepEqual(grown.warnings, [`toolnexus: tool "b_x" of server "a" collides with another tool named "a_b_x"; using "${renamed}"`])
  assert.equal((await toolkit.execute("a_b_x", {})).output, "x")
  assert.equal((await toolkit.execute(renamed, {})).output, "b_x")
  await waitFor(async () => (await client.listTools()).tools.length === 5, { message: "the gateway re-listed" })
  assert.deepEqual(names((await client.listTools()).tools), names(toolkit.tools()))
  assert.equal(textOf(await client.callTool({ name: "a_b_x", arguments: {} })), "x")
})

test("a server that re-lists a name another server's tool has renames its newcomer, in loadMcp as in a toolkit", T, async () => {
  const config = { mcpServers: { a: fixtureServer(["grow"]), a_b: fixtureServer(["x"]) } }
  const source = await loadMcp(config)
  defer(() => source.close())
  const toolkit = await createToolkit({ mcpConfig: config })
  defer(() => toolkit.close())
  const grow = async (tools, count) => {
    const { warnings } = await warningsOf(async () => {
      assert.equal((await tools().find((t) => t.name === "a_grow").execute({ name: "b_x" })).output, "added b_x")
      await waitFor(() => tools().length === count, { message: "a re-listed" })
    })
    return { names: names(tools()), warnings }
  }
  const loaded = await grow(() => source.tools, 3)
  const served = await grow(() => toolkit.tools(), 3)
  // a_b's x was a_b_x before a grew; it still is, and a's newcomer is the one renamed.
  assert.deepEqual(loaded.names, ["a_grow", "a_b_x_94988936", "a_b_x"])
  assert.deepEqual(served, { names: loaded.names, warnings: ['toolnexus: tool "b_x" of server "a" collides with another tool named "a_b_x"; using "a_b_x_94988936"'] })
  assert.deepEqual(loaded.warnings, [], "loadMcp warns at load only")
  assert.equal((await source.tools[2].execute({})).output, "x")
  assert.equal((await toolkit.execute("a_b_x", {})).output, "x")
})

test("an extra tool named like a server's tool is dropped with a warning; the server's tool keeps its name", T, async () => {
  const extra = toolnexus.defineTool({ name: "a_b_echo", run: () => "extra" })
  const built = await warningsOf(() => createToolkit({ mcpConfig: CONFIG, extraTools: [extra] }))
  defer(() => built.value.close())
  assert.deepEqual(names(built.value.tools()), EXPECTED)
  assert.deepEqual(built.warnings, [...EXPECTED_WARNINGS, 'toolnexus: duplicate tool name "a_b_echo" (source native); keeping the first'])
  assert.equal((await built.value.execute("a_b_echo", {})).output, "b.echo")
})
