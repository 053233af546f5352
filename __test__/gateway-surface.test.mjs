// A served toolkit relays its MCP servers' resources, resource templates and prompts: the
// official Python client (both eras) sees through the gateway what it sees connected to
// server-everything directly (prompts named `everything_<prompt>`), reads, gets and completes
// the same, and hears subscription updates and list changes through it. Two servers listing the
// same URIs: the first wins with a warning. An upstream's ttlMs is honoured.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { createToolkit } from "toolnexus"
import { PYTHON, deferredCleanup, fixture, repoRoot, serverEverything, waitFor } from "./helpers.mjs"
import { captureWarnings } from "./lib/load.mjs"
import { parseBody, post, rawSession } from "./lib/serve.mjs"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"

const T = { timeout: 90000 }
const defer = deferredCleanup(afterEach)
const everything = () => ({ command: [process.execPath, serverEverything, "stdio"], timeout: 20000 })
const STATIC = "demo://resource/static/document/features.md"
const TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"

function python(target, mode, plan) {
  const script = path.join(repoRoot, "__test__", "python", "surface.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, target, mode, JSON.stringify(plan)], { timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`surface.py (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout))
    })
  })
}

async function gateway(mcpServers, mcp = {}) {
  const tk = await createToolkit({ mcpConfig: { mcpServers } })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", { mcp })
  defer(() => handle.stop())
  return { tk, url: `${handle.url}/mcp`, base: handle.url }
}

// What both connections are asked: the lists, a static read, two prompts, three completions.
const COMMON = (prefix) => [
  { op: "lists" },
  { op: "read", uri: STATIC },
  { op: "prompt", name: `${prefix}simple-prompt` },
  { op: "prompt", name: `${prefix}args-prompt`, args: { city: "Paris", state: "TX" } },
  { op: "complete", ref: { type: "ref/prompt", name: `${prefix}completable-prompt` }, argument: { name: "department", value: "E" } },
  {
    op: "complete",
    ref: { type: "ref/prompt", name: `${prefix}completable-prompt` },
    argument: { name: "name", value: "" },
    context: { arguments: { department: "Sales" } },
  },
  { op: "complete", ref: { type: "ref/resource", uri: TEXT_TEMPLATE }, argument: { name: "resourceId", value: "7" } },
]

/** The gateway's answers with the `everything_` prefix taken off its prompt names. */
function unprefixed(results) {
  const [lists, ...rest] = structuredClone(results)
  lists.prompts = lists.prompts.map((p) => ({ ...p, name: p.name.replace(/^everything_/, "") }))
  return [lists, ...rest]
}

let direct
async function directRun() {
  direct ??= python(`stdio:${process.execPath} ${serverEverything} stdio`, "legacy", { actions: COMMON("") })
  return direct
}

for (const mode of ["legacy", "2026-07-28"]) {
  test(`through the gateway (${mode}) the Python client sees what a direct connection sees; updates and list changes come through`, T, async () => {
    const { url } = await gateway({ everything: everything() })
    const toggle = "everything_toggle-subscriber-updates"
    const gzip = { name: "hello.txt.gz", data: "data:text/plain;base64,aGVsbG8=" }
    const [through, straight] = await Promise.all([
      python(url, mode, {
        actions: [
          ...COMMON("everything_"),
          { op: "subscribe", uri: STATIC, tool: toggle, timeout: 5 },
          { op: "list_changed", tool: "everything_gzip-file-as-resource", args: gzip, timeout: 5 },
          { op: "lists" },
        ],
      }),
      directRun(),
    ])
    assert.equal(through.protocolVersion, mode === "legacy" ? "2025-11-25" : "2026-07-28")
    const results = through.results
    const [lists] = straight.results
    assert.equal(lists.resources.length, 7)
    assert.equal(lists.resourceTemplates.length, 2)
    assert.deepEqual(
      lists.prompts.map((p) => p.name),
      ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"],
    )
    assert.deepEqual(unprefixed(results.slice(0, COMMON("").length)), straight.results)
    assert.deepEqual(results[COMMON("").length], { updated: STATIC })
    assert.deepEqual(results[COMMON("").length + 1], { listChanged: true })
    const after = results[COMMON("").length + 2]
    assert.equal(after.resources.length, 8)
    assert.ok(after.resources.some((r) => r.uri === "demo://resource/session/hello.txt.gz"), JSON.stringify(after.resources))
  })
}

test("two servers listing the same URIs: the first wins with one warning naming the other; prompts are named per server", T, async () => {
  const warnings = captureWarnings()
  const { url } = await gateway({ a: everything(), b: everything() })
  const out = await python(url, "legacy", {
    actions: [{ op: "lists" }, { op: "read", uri: STATIC }, { op: "prompt", name: "b_simple-prompt" }],
  })
  const seen = await warnings.stop()
  const [lists, read, prompt] = out.results
  assert.equal(lists.resources.length, 7)
  assert.equal(lists.resourceTemplates.length, 2)
  assert.deepEqual(
    lists.prompts.map((p) => p.name),
    ["a", "b"].flatMap((s) => ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"].map((p) => `${s}_${p}`)),
  )
  const about = seen.filter((w) => w.includes(STATIC))
  assert.equal(about.length, 1, seen.join("\n"))
  assert.match(about[0], /"b"/)
  assert.match(about[0], /"a"/)
  assert.equal(read.contents[0].uri, STATIC)
  assert.equal(read.contents[0].mimeType, "text/markdown")
  assert.deepEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "This is a simple prompt without arguments." } }])
})

test("a subscription held through the gateway follows its server across a reload that restarts it", T, async () => {
  // The upstream sends an update right after each resources/subscribe it answers: an update
  // heard after the reload proves the gateway subscribed again at the restarted server.
  const upstream = (generation) => ({ command: [process.execPath, fixture("eager-update-server")], env: { GENERATION: generation }, timeout: 20000 })
  const tk = await createToolkit({ mcpConfig: { mcpServers: { eager: upstream("1") } } })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const client = new Client({ name: "follower", version: "1.0.0" })
  defer(() => client.close())
  const updates = []
  let heard
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri)
    heard?.()
  })
  const next = () => new Promise((resolve) => (heard = resolve))
  await client.connect(new StreamableHTTPClientTransport(new URL(`${handle.url}/mcp`)))
  let first = next()
  await client.subscribeResource({ uri: "eager://note" })
  await first
  assert.deepEqual(updates, ["eager://note"])
  const second = next()
  assert.deepEqual(await tk.reload({ mcpServers: { eager: upstream("2") } }), { added: [], removed: [], restarted: ["eager"] })
  // A hang bound only: without the new subscription no update ever comes.
  const bound = new AbortController()
  const late = delay(15000, undefined, { signal: bound.signal }).then(() => assert.fail("no update from the restarted server within 15 s"), () => {})
  await Promise.race([second, late]).finally(() => bound.abort())
  assert.deepEqual(updates, ["eager://note", "eager://note"])
  // An unchanged surface (a reload that restarts nothing) subscribes nowhere again.
  assert.deepEqual(await tk.reload({ mcpServers: { eager: upstream("2") } }), { added: [], removed: [], restarted: [] })
  const counted = await client.callTool({ name: "eager_subscribes", arguments: {} })
  assert.deepEqual(counted.content, [{ type: "text", text: "1" }])
  assert.deepEqual(updates, ["eager://note", "eager://note"])
})

/** A raw legacy session's request; resolves the JSON-RPC result. */
async function rawCall(base, headers, method, params = {}) {
  const r = await post(base, { jsonrpc: "2.0", id: 1, method, params }, { headers })
  const body = parseBody(r.type, r.text)
  assert.ok(body.result, r.text)
  return body.result
}

/** A gateway over the TTL fixture listing with `ttlMs`; `listings()` is how many resources/list it got. */
async function ttlGateway(ttlMs) {
  const { base } = await gateway({ ttl: { command: [process.execPath, fixture("surface-ttl-server"), String(ttlMs)], timeout: 20000 } })
  const headers = await rawSession(base)
  const listings = async () => {
    const result = await rawCall(base, headers, "tools/call", { name: "ttl_listings", arguments: {} })
    return Number(result.content[0].text)
  }
  return { base, headers, listings }
}

test("the gateway honours an upstream's ttlMs: within it the list says so and asks the upstream nothing", T, async () => {
  // 5 s: start-up, a session, two lists and a tool call fit well inside it on a loaded machine.
  const { base, headers, listings } = await ttlGateway(5000)
  const first = await rawCall(base, headers, "resources/list")
  assert.deepEqual([first.ttlMs, first.cacheScope], [5000, "public"])
  assert.deepEqual(first.resources.map((r) => r.uri), ["ttl://one"])
  const before = await listings()
  await rawCall(base, headers, "resources/list")
  assert.equal(await listings(), before, "a list within the TTL asks the upstream nothing")
})

test("after an upstream's ttlMs the gateway's list says ttlMs 0 and re-lists in the background", T, async () => {
  const { base, headers, listings } = await ttlGateway(200)
  const before = await listings()
  // Waiting out the TTL is what is under test: the upstream was listed before createToolkit
  // resolved, so 300 ms from here it is stale however slow the machine is.
  await delay(300)
  const stale = await rawCall(base, headers, "resources/list")
  assert.equal(stale.ttlMs, 0)
  assert.deepEqual(stale.resources.map((r) => r.uri), ["ttl://one"])
  await waitFor(async () => (await listings()) > before, { timeout: 10000, interval: 50, message: "a re-list of the upstream" })
})

test("completion/complete for an upstream that declares no completions is answered with no values", T, async () => {
  // everything declares completions, so the gateway does; surface-server declares none.
  const { base } = await gateway({ everything: everything(), s: { command: [process.execPath, fixture("surface-server")], timeout: 20000 } })
  const headers = await rawSession(base)
  const answer = await rawCall(base, headers, "completion/complete", {
    ref: { type: "ref/prompt", name: "s_greet" },
    argument: { name: "name", value: "A" },
  })
  assert.deepEqual(answer.completion.values, [])
})
