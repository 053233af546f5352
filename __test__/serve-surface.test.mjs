// Serving the app's own resources, resource templates and prompts (defineResource,
// defineResourceTemplate, definePrompt): listed as defined, read and got with their results
// normalised, errors as JSON-RPC errors, caching hints on every list and read in both eras, and
// subscriptions. Clients: the TypeScript SDK (handshake era), raw HTTP (both eras) and the
// official Python client (both eras, subscriptions and input-required prompts).
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { buildMcpServer, createToolkit, definePrompt, defineResource, defineResourceTemplate, defineTool } from "toolnexus"
import { PYTHON, repoRoot, within } from "./helpers.mjs"
import { T, parseBody, post, rawSession, serveHarness } from "./lib/serve.mjs"

const { defer, sdkClient } = serveHarness(afterEach)

const note = () =>
  defineResource({ uri: "app://note", name: "note", title: "A note", description: "Some text", read: () => "hello note" })
const surface = () => {
  const doc = note()
  const resources = [
    doc,
    defineResource({ uri: "app://logo", name: "logo", mimeType: "image/png", size: 3, read: () => ({ blob: Buffer.from([1, 2, 3]) }) }),
    defineResource({
      uri: "app://coded",
      name: "coded",
      read() {
        throw Object.assign(new Error("not today"), { code: -32010, data: { why: "closed" } })
      },
    }),
    defineResourceTemplate({
      uriTemplate: "app://items/{id}",
      name: "item",
      mimeType: "application/json",
      read: (uri, vars) => JSON.stringify({ uri, vars }),
      complete: { id: (value) => ["123", "124", "200"].filter((v) => v.startsWith(value)) },
    }),
  ]
  const prompts = [
    definePrompt({
      name: "greet",
      description: "Greets someone",
      arguments: [
        { name: "who", description: "Whom", required: true },
        { name: "how", required: false },
      ],
      get: ({ who, how }) => `${how ?? "Hello"}, ${who}!`,
      complete: { who: (value) => ["Ada", "Alan", "Grace"].filter((v) => v.startsWith(value)) },
    }),
    definePrompt({
      name: "ask",
      description: "Asks for context first",
      async get(_args, ctx) {
        const answer = await ctx.elicit(
          { message: "Which context?", requestedSchema: { type: "object", properties: { context: { type: "string" } } } },
          { key: "ctx" },
        )
        return { description: "asked", messages: [{ role: "assistant", content: `context: ${answer.content.context}` }] }
      },
    }),
  ]
  const touch = defineTool({ name: "touch", run: () => (doc.notifyUpdated(), "touched") })
  return { doc, resources, prompts, touch }
}

async function served(mcp = {}) {
  const { resources, prompts, touch } = surface()
  const tk = await createToolkit({ extraTools: [touch], extraResources: resources, extraPrompts: prompts })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", { mcp })
  defer(() => handle.stop())
  return { tk, url: handle.url }
}

const META_2026 = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
}

/** One raw request in either era; resolves the JSON-RPC response. */
async function raw(url, era, method, params = {}, name) {
  if (era === "legacy") {
    const headers = await rawSession(url)
    const r = await post(url, { jsonrpc: "2.0", id: 1, method, params }, { headers })
    return parseBody(r.type, r.text)
  }
  const headers = { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}) }
  const r = await post(url, { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: META_2026 } }, { headers })
  return parseBody(r.type, r.text)
}

function python(url, mode, plan) {
  const script = path.join(repoRoot, "__test__", "python", "surface.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, url, mode, JSON.stringify(plan)], { timeout: 45000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`surface.py (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout))
    })
  })
}

test("define functions refuse bad definitions with a TypeError naming the field", () => {
  assert.throws(() => defineResource({ name: "x", read() {} }), { name: "TypeError", message: "toolnexus: defineResource: uri must be a non-empty string" })
  assert.throws(() => defineResource({ uri: "a://b", name: "x" }), { name: "TypeError", message: 'toolnexus: defineResource "a://b": read must be a function' })
  assert.throws(() => defineResource({ uri: "a://b", name: "x", size: -1, read() {} }), /size must be a non-negative integer/)
  assert.throws(() => defineResourceTemplate({ uriTemplate: "a://{x}", read() {} }), {
    message: 'toolnexus: defineResourceTemplate "a://{x}": name must be a non-empty string',
  })
  assert.throws(() => defineResourceTemplate({ uriTemplate: "a://{x}", name: "t", read() {}, complete: { x: 1 } }), {
    message: 'toolnexus: defineResourceTemplate "a://{x}": complete.x must be a function',
  })
  assert.throws(() => definePrompt({ name: "p", get() {}, arguments: [{ required: true }] }), {
    message: 'toolnexus: definePrompt "p": arguments[0].name must be a non-empty string',
  })
  assert.throws(() => definePrompt({ name: "p" }), { message: 'toolnexus: definePrompt "p": get must be a function' })
  assert.throws(() => buildMcpServer([], { resources: {} }), { message: "toolnexus: cfg.resources must be an array" })
  assert.throws(() => buildMcpServer([], { cache: { ttlMs: -5 } }), /cfg\.cache\.ttlMs must be a non-negative integer/)
  assert.throws(() => buildMcpServer([], { cache: { ttlMs: 1e20 } }), {
    message: "toolnexus: cfg.cache.ttlMs must be at most 2147483647 milliseconds (about 24.8 days)",
  })
  assert.throws(() => buildMcpServer([], { cache: { scope: "shared" } }), { message: 'toolnexus: cfg.cache.scope must be "public" or "private"' })
  return assert.rejects(createToolkit({ extraPrompts: [{ name: "p" }] }), { message: 'toolnexus: definePrompt "p": get must be a function' })
})

test("the SDK client lists, reads, gets and completes the served definitions as defined", T, async () => {
  const { url } = await served()
  const client = await sdkClient(url)
  const caps = client.getServerCapabilities()
  assert.ok(caps.resources && caps.prompts && caps.completions, JSON.stringify(caps))

  const { resources } = await client.listResources()
  assert.deepEqual(resources, [
    { uri: "app://note", name: "note", title: "A note", description: "Some text" },
    { uri: "app://logo", name: "logo", mimeType: "image/png", size: 3 },
    { uri: "app://coded", name: "coded" },
  ])
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, [
    { uriTemplate: "app://items/{id}", name: "item", mimeType: "application/json" },
  ])
  assert.deepEqual((await client.listPrompts()).prompts, [
    {
      name: "greet",
      description: "Greets someone",
      arguments: [
        { name: "who", description: "Whom", required: true },
        { name: "how", required: false },
      ],
    },
    { name: "ask", description: "Asks for context first" },
  ])

  const text = await client.readResource({ uri: "app://note" })
  assert.deepEqual(text.contents, [{ uri: "app://note", mimeType: "text/plain", text: "hello note" }])
  const blob = await client.readResource({ uri: "app://logo" })
  assert.deepEqual(blob.contents, [{ uri: "app://logo", mimeType: "image/png", blob: Buffer.from([1, 2, 3]).toString("base64") }])
  const item = await client.readResource({ uri: "app://items/123" })
  assert.deepEqual(item.contents, [
    { uri: "app://items/123", mimeType: "application/json", text: JSON.stringify({ uri: "app://items/123", vars: { id: "123" } }) },
  ])

  const greeting = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } })
  assert.deepEqual(greeting.messages, [{ role: "user", content: { type: "text", text: "Hello, Ada!" } }])

  const who = await client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "A" } })
  assert.deepEqual(who.completion.values, ["Ada", "Alan"])
  const id = await client.complete({ ref: { type: "ref/resource", uri: "app://items/{id}" }, argument: { name: "id", value: "12" } })
  assert.deepEqual(id.completion.values, ["123", "124"])
  const none = await client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "how", value: "" } })
  assert.deepEqual(none.completion.values, [])

  // Errors: unknown URI (-32002 with the URI), a missing required argument, a thrown code.
  await assert.rejects(client.readResource({ uri: "app://nope" }), (e) => e.code === -32002 && e.data?.uri === "app://nope")
  await assert.rejects(client.getPrompt({ name: "greet", arguments: {} }), (e) => e.code === -32602 && /who/.test(e.message))
  const typed = await client.getPrompt({ name: "greet", arguments: /** @type {any} */ ({ who: 5 }) }).catch((e) => e)
  assert.deepEqual([typed.code, typed.message], [-32602, 'MCP error -32602: Argument "who" for prompt "greet" must be a string'])
  await assert.rejects(client.readResource({ uri: "app://coded" }), (e) => e.code === -32010 && /not today/.test(e.message) && e.data?.why === "closed")
})

for (const era of ["legacy", "2026-07-28"]) {
  test(`every list and read carries integer ttlMs and a cacheScope (${era}); an unknown URI is ${era === "legacy" ? "-32002" : "-32602"} with data.uri`, T, async () => {
    const { url } = await served()
    for (const method of ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]) {
      const { result } = await raw(url, era, method)
      assert.ok(Number.isInteger(result.ttlMs), `${method}: ${JSON.stringify(result)}`)
      assert.ok(["public", "private"].includes(result.cacheScope), `${method}: ${JSON.stringify(result)}`)
    }
    const read = await raw(url, era, "resources/read", { uri: "app://note" }, "app://note")
    assert.ok(Number.isInteger(read.result.ttlMs) && typeof read.result.cacheScope === "string", JSON.stringify(read))
    const missing = await raw(url, era, "resources/read", { uri: "app://nope" }, "app://nope")
    assert.equal(missing.error?.code, era === "legacy" ? -32002 : -32602, JSON.stringify(missing))
    assert.deepEqual(missing.error.data, { uri: "app://nope" })
  })
}

test("cache: { ttlMs, scope } is what every list and read says, in both eras", T, async () => {
  const { url } = await served({ cache: { ttlMs: 5000, scope: "public" } })
  for (const era of ["legacy", "2026-07-28"]) {
    for (const method of ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]) {
      const { result } = await raw(url, era, method)
      assert.deepEqual([result.ttlMs, result.cacheScope], [5000, "public"], `${era} ${method}`)
    }
    const { result } = await raw(url, era, "resources/read", { uri: "app://note" }, "app://note")
    assert.deepEqual([result.ttlMs, result.cacheScope], [5000, "public"], `${era} read`)
  }
})

test("notifyUpdated() reaches a handshake-era subscriber and a 2026-07-28 listener (Python client)", T, async () => {
  const { url } = await served()
  const plan = { actions: [{ op: "subscribe", uri: "app://note", tool: "touch", timeout: 5 }] }
  const legacy = await python(`${url}/mcp`, "legacy", plan)
  assert.deepEqual(legacy.results, [{ updated: "app://note" }])
  const modern = await python(`${url}/mcp`, "2026-07-28", plan)
  assert.equal(modern.protocolVersion, "2026-07-28")
  assert.deepEqual(modern.results, [{ updated: "app://note" }])
})

test("a prompt that elicits is answered through input-required rounds at 2026-07-28 (Python client)", T, async () => {
  const { url } = await served()
  const out = await python(`${url}/mcp`, "2026-07-28", {
    elicit: { context: "the moon" },
    actions: [{ op: "prompt", name: "ask", args: {} }],
  })
  assert.deepEqual(out.results, [
    { description: "asked", messages: [{ role: "assistant", content: { type: "text", text: "context: the moon" } }] },
  ])
})

test("buildMcpServer serves resources and prompts over an SDK transport; resourceUpdated reaches a subscriber", T, async () => {
  const { resources, prompts } = surface()
  const server = buildMcpServer([], { resources, prompts, cache: { ttlMs: 1000 } })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "in-memory", version: "1" })
  await client.connect(clientSide)
  defer(() => server.close())
  defer(() => client.close())
  assert.deepEqual(
    (await client.listResources()).resources.map((r) => r.uri),
    ["app://note", "app://logo", "app://coded"],
  )
  const greeting = await client.getPrompt({ name: "greet", arguments: { who: "Grace", how: "Hi" } })
  assert.equal(greeting.messages[0].content.text, "Hi, Grace!")
  const updated = new Promise((resolve) =>
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
  )
  await client.subscribeResource({ uri: "app://note" })
  server.resourceUpdated("app://note")
  assert.equal(await within(updated, 5000, "the update"), "app://note")
  assert.throws(() => server.resourceUpdated(5), { name: "TypeError" })
})
