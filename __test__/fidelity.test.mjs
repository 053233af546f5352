// Tool calls carry everything, both ways and through the gateway: JavaScript tools answering in
// MCP content parts, ctx.progress / log / elicit / sample reaching the calling client, arguments
// checked before run, and a toolkit gateway over server-everything relaying listings, results,
// progress and elicitations. Clients: the TypeScript SDK client and loadMcp.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool, listMcpTools, loadMcp } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup, serverEverything, waitFor } from "./helpers.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)

const IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

async function serve(tools, opts = {}) {
  const toolkit = await createToolkit({ extraTools: tools, ...opts })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  return { toolkit, url: `${handle.url}/mcp` }
}

async function sdk(url, capabilities = {}) {
  const client = new Client({ name: "fidelity", version: "1.0.0" }, { capabilities })
  return client
}

async function connect(client, url) {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => client.close())
  return client
}

test("a JavaScript tool answers in MCP content parts, served as is; loadMcp keeps them and describes them in output", T, async () => {
  const parts = {
    image: [{ type: "image", data: IMAGE, mimeType: "image/png" }],
    audio: [{ type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" }],
    resource: [{ type: "resource", resource: { uri: "test://doc", mimeType: "text/plain", text: "the text" } }],
    mixed: [
      { type: "text", text: "look:" },
      { type: "image", data: IMAGE, mimeType: "image/png", annotations: { audience: ["user"], priority: 0.5 } },
      { type: "resource_link", uri: "test://file", name: "file" },
    ],
  }
  const tools = Object.entries(parts).map(([name, content]) => defineTool({ name, run: () => ({ content }) }))
  tools.push(defineTool({ name: "structured", run: () => ({ content: [{ type: "text", text: '{"t":21}' }], structuredContent: { t: 21 } }) }))
  const { url } = await serve(tools)
  const client = await connect(await sdk(url), url)
  for (const [name, content] of Object.entries(parts)) {
    const r = await client.callTool({ name, arguments: {} })
    assert.deepEqual(r.content, content, name)
    assert.equal(r.isError, false, name)
  }
  const s = await client.callTool({ name: "structured", arguments: {} })
  assert.deepEqual(s.structuredContent, { t: 21 })

  const source = await loadMcp({ js: { url } })
  defer(() => source.close())
  const by = Object.fromEntries(source.tools.map((t) => [t.name, t]))
  const image = await by.js_image.execute({})
  assert.deepEqual(image, { output: "[image image/png, 70 B]", isError: false, content: parts.image, metadata: { server: "js" } })
  assert.equal((await by.js_audio.execute({})).output, "[audio audio/wav, 12 B]")
  assert.equal((await by.js_resource.execute({})).output, "[resource test://doc]\nthe text")
  const mixed = await by.js_mixed.execute({})
  assert.equal(mixed.output, "look:")
  assert.deepEqual(mixed.content, parts.mixed)
  const structured = await by.js_structured.execute({})
  assert.deepEqual([structured.output, structured.structuredContent], ['{"t":21}', { t: 21 }])
  // A defineTool's own execute maps the same way.
  assert.deepEqual(await tools[0].execute({}), { output: "[image image/png, 70 B]", isError: false, content: parts.image })
})

test("ctx.progress is sent only when the client asked for progress; ctx.log honours logging/setLevel", T, async () => {
  const sent = []
  const tool = defineTool({
    name: "work",
    async run(_args, ctx) {
      for (let i = 1; i <= 3; i++) sent.push(await ctx.progress(i, 3, `step ${i}`))
      sent.push(await ctx.log("info", { note: "info" }))
      sent.push(await ctx.log("error", { note: "error" }, "worker"))
      return "done"
    },
  })
  const { url } = await serve([tool])
  const client = await sdk(url)
  const logs = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params))
  await connect(client, url)

  const progress = []
  const r = await client.callTool({ name: "work", arguments: {} }, undefined, { onprogress: (p) => progress.push(p) })
  assert.deepEqual(r.content, [{ type: "text", text: "done" }])
  assert.deepEqual(progress, [1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })))
  // rmcp 3.11 sends log messages of a handshake session on its GET stream (only progress rides
  // the request's own stream), so they may arrive just after the result.
  await waitFor(() => logs.length >= 2, { message: "both log messages" })
  assert.deepEqual(logs, [
    { level: "info", data: { note: "info" } },
    { level: "error", logger: "worker", data: { note: "error" } },
  ])
  assert.deepEqual(sent, [true, true, true, true, true])

  // No progress token: nothing is sent. After setLevel("warning"), info is dropped.
  sent.length = 0
  logs.length = 0
  await client.setLoggingLevel("warning")
  await client.callTool({ name: "work", arguments: {} })
  assert.deepEqual(sent, [false, false, false, false, true])
  await waitFor(() => logs.length >= 1, { message: "the error log message" })
  assert.deepEqual(logs, [{ level: "error", logger: "worker", data: { note: "error" } }])
})

test("ctx.elicit and ctx.sample ask the calling client; a client without the capability is refused with a reason", T, async () => {
  const ask = defineTool({
    name: "ask",
    async run(_args, ctx) {
      try {
        return JSON.stringify(await ctx.elicit({ message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } }))
      } catch (e) {
        return { output: e.message, isError: true }
      }
    },
  })
  const sample = defineTool({
    name: "sample",
    async run(_args, ctx) {
      try {
        const r = await ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 10 })
        return `${r.model}: ${r.content.text}`
      } catch (e) {
        return { output: e.message, isError: true }
      }
    },
  })
  const { url } = await serve([ask, sample])
  const capable = await sdk(url, { elicitation: {}, sampling: {} })
  const seen = []
  capable.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.push(req.params.message)
    return { action: "accept", content: { name: "Ada" } }
  })
  capable.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    role: "assistant",
    content: { type: "text", text: "4" },
    model: `model-for-${req.params.messages[0].content.text}`,
  }))
  await connect(capable, url)
  assert.deepEqual((await capable.callTool({ name: "ask", arguments: {} })).content, [
    { type: "text", text: '{"action":"accept","content":{"name":"Ada"}}' },
  ])
  assert.deepEqual(seen, ["Name?"])
  assert.deepEqual((await capable.callTool({ name: "sample", arguments: {} })).content, [{ type: "text", text: "model-for-2+2?: 4" }])

  const plain = await connect(await sdk(url), url)
  const refusedElicit = await plain.callTool({ name: "ask", arguments: {} })
  assert.equal(refusedElicit.isError, true)
  assert.deepEqual(refusedElicit.content, [{ type: "text", text: "toolnexus: the client did not declare the elicitation capability" }])
  const refusedSample = await plain.callTool({ name: "sample", arguments: {} })
  assert.deepEqual(refusedSample.content, [{ type: "text", text: "toolnexus: the client did not declare the sampling capability" }])
})

test("arguments are checked against inputSchema before run: a mismatch is an isError result naming the path", T, async () => {
  const runs = []
  const add = defineTool({
    name: "add",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    run: ({ a, b }) => {
      runs.push([a, b])
      return String(a + b)
    },
  })
  const { url } = await serve([add])
  const client = await connect(await sdk(url), url)
  const missing = await client.callTool({ name: "add", arguments: {} })
  assert.equal(missing.isError, true)
  assert.deepEqual(missing.content, [
    { type: "text", text: 'Invalid arguments for tool add: arguments: "a" is a required property; arguments: "b" is a required property' },
  ])
  const strings = await client.callTool({ name: "add", arguments: { a: "1", b: "2" } })
  assert.deepEqual(strings.content, [
    { type: "text", text: 'Invalid arguments for tool add: /a: "1" is not of type "number"; /b: "2" is not of type "number"' },
  ])
  assert.deepEqual(runs, [], "run is never called with bad arguments")
  assert.deepEqual((await client.callTool({ name: "add", arguments: { a: 1, b: 2 } })).content, [{ type: "text", text: "3" }])
  assert.deepEqual(runs, [[1, 2]])
})

const everything = { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 }

test("inventory in full: listMcpTools keeps title, annotations and outputSchema as server-everything lists them", T, async () => {
  const inv = await listMcpTools({ everything })
  const by = Object.fromEntries(inv.tools.everything.map((t) => [t.name, t]))
  assert.equal(by.echo.title, "Echo Tool")
  assert.deepEqual(by.echo.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
  assert.deepEqual(by["get-structured-content"].outputSchema.required, ["temperature", "conditions", "humidity"])
})

test("gateway relays, not re-types: server-everything through a toolkit keeps listings and results, and its progress and elicitation reach the front client", T, async () => {
  const direct = await listMcpTools({ everything })
  // waitFor makes toolnexus declare elicitation upstream; the front client still answers first.
  const fallback = []
  const { url } = await serve([], {
    mcpConfig: { everything },
    waitFor: async (req) => {
      fallback.push(req)
      return { ok: false, reason: "declined" }
    },
  })
  const front = await sdk(url, { elicitation: {} })
  const asked = []
  front.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message)
    return { action: "accept", content: { name: "Ada Lovelace", check: true } }
  })
  await connect(front, url)
  const { tools } = await front.listTools()
  const served = Object.fromEntries(tools.map((t) => [t.name, t]))
  for (const upstream of direct.tools.everything) {
    const relayed = served[`everything_${upstream.name}`]
    assert.ok(relayed, upstream.name)
    for (const key of ["title", "annotations", "outputSchema", "description"]) {
      assert.deepEqual(relayed[key], upstream[key], `${upstream.name}.${key}`)
    }
  }

  const image = await front.callTool({ name: "everything_get-tiny-image", arguments: {} })
  assert.equal(image.content.find((p) => p.type === "image")?.mimeType, "image/png")

  const progress = []
  const op = await front.callTool(
    { name: "everything_trigger-long-running-operation", arguments: { duration: 1, steps: 4 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  )
  assert.match(op.content[0].text, /Long running operation completed/)
  assert.deepEqual(progress, [1, 2, 3, 4], "the upstream's four progress notifications reached the front client")

  const elicit = await front.callTool({ name: "everything_trigger-elicitation-request", arguments: {} })
  assert.match(elicit.content.map((p) => p.text ?? "").join("\n"), /Name: Ada Lovelace/)
  assert.equal(asked.length, 1, "the upstream's elicitation reached the front client")
  assert.deepEqual(fallback, [], "the toolkit's own waitFor was not asked")
})
