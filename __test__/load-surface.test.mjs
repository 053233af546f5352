// A loadMcp source's resources, resource templates, prompts, completions and subscriptions,
// against the MCP reference server (server-everything over stdio): listed on the source with
// their methods, read and got as the server answers, refused in words, followed when the
// server announces a change; and the Python `mcp` fixture over HTTP in both eras, whose log
// shows which subscription road was taken.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { loadMcp } from "toolnexus"
import { PYTHON, fixture, leakCheck, repoRoot, serverEverything, startListening, tmpFile, waitFor } from "./helpers.mjs"

const T = { timeout: 30000 }
const everything = { command: "node", args: [serverEverything, "stdio"], timeout: 20000 }
const notes = { type: "local", command: ["node", path.join(repoRoot, "examples", "servers", "notes.mjs")] }
const docs = path.join(path.dirname(serverEverything), "docs")
const DOCS = ["architecture", "extension", "features", "how-it-works", "instructions", "startup", "structure"]
const doc = (name) => `demo://resource/static/document/${name}.md`
const TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
const BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}"

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

/** A source over server-everything (and notes, which declares no resources), closed after `fn`. */
async function withSource(fn, opts, servers = { everything }) {
  const source = await loadMcp({ mcpServers: servers }, opts)
  try {
    assert.equal(source.status.everything, "connected", source.errors.everything)
    return await fn(source)
  } finally {
    await source.close()
  }
}

test("resources: every listed one, with its server, read() equal to readResource and to the file", T, () =>
  withSource(async (source) => {
    assert.equal(source.resources.length, 7)
    assert.deepEqual(new Set(source.resources.map((r) => r.uri)), new Set(DOCS.map(doc)))
    for (const resource of source.resources) {
      assert.equal(resource.server, "everything")
      assert.equal(resource.mimeType, "text/markdown")
      assert.equal(typeof resource.read, "function")
    }
    const features = source.resources.find((r) => r.uri === doc("features"))
    assert.equal(features.description, "Static document file exposed from /docs: features.md")
    const read = await features.read()
    assert.equal(read.contents[0].uri, doc("features"))
    assert.equal(read.contents[0].text, fs.readFileSync(path.join(docs, "features.md"), "utf8"))
    assert.deepEqual(await source.readResource("everything", doc("features")), read)
  }),
)

test("resource templates: read(vars) expands the template, read(uri) reads it; blobs come base64", T, () =>
  withSource(async (source) => {
    assert.deepEqual(
      source.resourceTemplates.map((t) => [t.server, t.uriTemplate]),
      [
        ["everything", TEXT_TEMPLATE],
        ["everything", BLOB_TEMPLATE],
      ],
    )
    const [text, blob] = source.resourceTemplates
    const five = await text.read({ resourceId: 5 })
    assert.equal(five.contents[0].uri, "demo://resource/dynamic/text/5")
    assert.match(five.contents[0].text, /^Resource 5: This is a plaintext resource/)
    const byUri = await text.read("demo://resource/dynamic/text/6")
    assert.match(byUri.contents[0].text, /^Resource 6: This is a plaintext resource/)
    const bytes = (await blob.read({ resourceId: 5 })).contents[0]
    assert.equal(bytes.uri, "demo://resource/dynamic/blob/5")
    assert.match(Buffer.from(bytes.blob, "base64").toString("utf8"), /^Resource 5: This is a base64 blob/)
    await assert.rejects(text.read(5), {
      name: "TypeError",
      message: "toolnexus: read takes the template's variables (an object) or a URI (a string)",
    })
    await assert.rejects(text.read({}), { name: "TypeError", message: 'toolnexus: read is missing the template\'s variable "resourceId"' })
    for (const bad of [null, { x: 1 }, true, Number.NaN]) {
      await assert.rejects(text.read({ resourceId: bad }), {
        name: "TypeError",
        message: 'toolnexus: the template\'s variable "resourceId" must be a string or a number',
      })
    }
  }),
)

test("prompts: listed with their arguments; get(args) fills them in, as getPrompt does", T, () =>
  withSource(async (source) => {
    assert.deepEqual(source.prompts.map((p) => p.name), ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"])
    const args = source.prompts.find((p) => p.name === "args-prompt")
    assert.equal(args.server, "everything")
    assert.deepEqual(
      args.arguments.map((a) => [a.name, a.required]),
      [
        ["city", true],
        ["state", false],
      ],
    )
    const simple = await source.prompts[0].get()
    assert.deepEqual(simple, { messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt without arguments." } }] })
    const weather = await args.get({ city: "Paris", state: "TX" })
    assert.equal(weather.messages[0].content.text, "What's weather in Paris, TX?")
    assert.deepEqual(await source.getPrompt("everything", "args-prompt", { city: "Paris", state: "TX" }), weather)
    const embedded = await source.getPrompt("everything", "resource-prompt", { resourceType: "Text", resourceId: "2" })
    assert.equal(embedded.messages.length, 2)
    assert.equal(embedded.messages[1].content.type, "resource")
    assert.equal(embedded.messages[1].content.resource.uri, "demo://resource/dynamic/text/2")
  }),
)

test("completion: a prompt's argument (with context) and a template's variable", T, () =>
  withSource(async (source) => {
    const prompt = { type: "ref/prompt", name: "completable-prompt" }
    assert.deepEqual((await source.complete("everything", prompt, { name: "department", value: "E" })).values, ["Engineering"])
    const sales = await source.complete("everything", prompt, { name: "name", value: "" }, { arguments: { department: "Sales" } })
    assert.deepEqual(sales.values, ["David", "Eve", "Frank"])
    const completable = source.prompts.find((p) => p.name === "completable-prompt")
    assert.deepEqual((await completable.complete("name", "", { arguments: { department: "Sales" } })).values, ["David", "Eve", "Frank"])
    const [text] = source.resourceTemplates
    assert.deepEqual((await text.complete("resourceId", "7")).values, ["7"])
    assert.deepEqual((await text.complete("resourceId", "x")).values, [])
    const byRef = await source.complete("everything", { type: "ref/resource", uri: TEXT_TEMPLATE }, { name: "resourceId", value: "7" })
    assert.deepEqual(byRef.values, ["7"])
  }),
)

test("errors: unknown servers and bad arguments in words, the server's JSON-RPC error with its code, aborts with signal.reason", T, () =>
  withSource(
    async (source) => {
      const noServer = { name: "TypeError", message: 'toolnexus: no connected server "nope" (servers: everything, notes)' }
      await assert.rejects(source.readResource("nope", doc("features")), noServer)
      await assert.rejects(source.getPrompt("nope", "simple-prompt"), noServer)
      await assert.rejects(source.complete("nope", { type: "ref/prompt", name: "x" }, { name: "a", value: "" }), noServer)
      await assert.rejects(source.subscribe("nope", doc("features"), () => {}), noServer)
      await assert.rejects(source.readResource("everything", 5), { name: "TypeError", message: "toolnexus: uri must be a string, got number" })
      await assert.rejects(source.getPrompt("everything", "args-prompt", { city: 5 }), {
        name: "TypeError",
        message: 'toolnexus: prompt argument "city" must be a string, got number',
      })
      await assert.rejects(source.complete("everything", { type: "ref/tool", name: "x" }, { name: "a", value: "" }), {
        name: "TypeError",
        message: 'toolnexus: ref must be { type: "ref/prompt", name } or { type: "ref/resource", uri }',
      })
      await assert.rejects(source.readResource("everything", doc("features"), { timeout: -1 }), {
        name: "TypeError",
        message: "toolnexus: opts.timeout must be a non-negative number of milliseconds",
      })
      await assert.rejects(source.subscribe("everything", doc("features"), "cb"), { name: "TypeError", message: "toolnexus: onUpdated must be a function" })

      const missing = await source.getPrompt("everything", "nope").catch((e) => e)
      assert.ok(missing instanceof Error)
      assert.equal(missing.code, -32602)
      assert.match(missing.message, /nope/)

      const reason = new Error("stop")
      const already = AbortSignal.abort(reason)
      assert.equal(await source.readResource("everything", doc("features"), { signal: already }).catch((e) => e), reason)
      const controller = new AbortController()
      const started = performance.now()
      const pending = source.getPrompt("everything", "simple-prompt", {}, { signal: controller.signal }).catch((e) => e)
      controller.abort(reason)
      assert.equal(await pending, reason)
      assert.ok(performance.now() - started < 2000, "the abort settles at once (a generous hang bound)")
      // The source is still usable afterwards.
      assert.equal((await source.getPrompt("everything", "simple-prompt")).messages.length, 1)
    },
    undefined,
    { everything, notes },
  ),
)

test("subscribe: updates reach onUpdated (a throw in it is a warning); the unsubscribe function is idempotent; a server without subscriptions refuses", T, () =>
  withSource(
    async (source) => {
      const uri = doc("features")
      const heard = []
      const warnings = []
      const onWarning = (w) => w.name === "ToolnexusWarning" && warnings.push(w.message)
      process.on("warning", onWarning)
      const off = await source.subscribe("everything", uri, (u) => {
        heard.push(u)
        throw new Error("callback broke")
      })
      assert.equal(typeof off, "function")
      const toggle = source.tools.find((t) => t.name === "everything_toggle-subscriber-updates")
      // The server sends one update at once when toggled on, then one every 5 s.
      assert.equal((await toggle.execute({})).isError, false)
      await waitFor(() => heard.length > 0, { timeout: 10000, message: "an update" })
      assert.equal(heard[0], uri)
      await waitFor(() => warnings.includes("toolnexus: onUpdated threw: callback broke"), { timeout: 10000, message: "the warning" })
      process.off("warning", onWarning)
      await off()
      await off()
      await toggle.execute({})
      await assert.rejects(source.subscribe("notes", uri, () => {}), /does not support resource subscriptions/)
    },
    undefined,
    { everything, notes },
  ),
)

test("list_changed: a new resource shows on source.resources, and onResourcesChanged hears it once", T, async () => {
  const changes = []
  await withSource(
    async (source) => {
      const gzip = source.tools.find((t) => t.name === "everything_gzip-file-as-resource")
      const result = await gzip.execute({ name: "hello.txt.gz", data: "data:text/plain;base64,aGVsbG8=" })
      assert.equal(result.isError, false, result.output)
      await waitFor(() => source.resources.length === 8, { timeout: 10000, message: "8 resources" })
      const added = source.resources.find((r) => r.name === "hello.txt.gz")
      assert.equal(added.server, "everything")
      assert.equal(added.mimeType, "application/gzip")
      await waitFor(() => changes.length > 0, { timeout: 10000, message: "onResourcesChanged" })
      assert.equal(changes.length, 1)
      assert.equal(changes[0].server, "everything")
      assert.equal(changes[0].resources.length, 8)
      assert.equal(changes[0].resourceTemplates.length, 2)
      assert.equal("server" in changes[0].resources[0], false)
      const read = await added.read()
      assert.equal(read.contents[0].mimeType, "application/gzip")
    },
    { onResourcesChanged: (change) => changes.push(change) },
  )
})

test("a server that declares no resources or prompts gives none; bad listeners are refused in words", T, async () => {
  const source = await loadMcp({ mcpServers: { notes } })
  try {
    assert.equal(source.status.notes, "connected")
    assert.deepEqual([source.resources, source.resourceTemplates, source.prompts], [[], [], []])
  } finally {
    await source.close()
  }
  await assert.rejects(loadMcp({ mcpServers: { notes } }, { onResourcesChanged: 5 }), {
    name: "TypeError",
    message: "toolnexus: opts.onResourcesChanged must be a function",
  })
})

/** The Python fixture over streamable HTTP, logging every method it receives: { url, methods(), close() }. */
async function pythonFixture() {
  const log = tmpFile("py-era.log")
  fs.writeFileSync(log, "")
  const script = path.join(path.dirname(fixture("era-server")), "py-era-server.py")
  const server = await startListening(PYTHON, [script, "http", "--surface", "--log", log])
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    methods: () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).method),
    reset: () => fs.writeFileSync(log, ""),
    close: () => server.close(),
  }
}

test("the Python fixture in both eras: reads, prompts, completions; subscriptions/listen at 2026-07-28, resources/subscribe and unsubscribe before", T, async () => {
  const py = await pythonFixture()
  try {
    for (const protocol of ["2026-07-28", "2025-11-25"]) {
      py.reset()
      const source = await loadMcp({ mcpServers: { py: { url: py.url, protocol, timeout: 20000 } } })
      try {
        assert.equal(source.status.py, "connected", source.errors.py)
        assert.deepEqual(source.resources.map((r) => r.uri), ["era://note"], protocol)
        assert.equal((await source.resources[0].read()).contents[0].text, "a note", protocol)
        assert.equal((await source.resourceTemplates[0].read({ id: "7" })).contents[0].text, "item 7", protocol)
        assert.equal((await source.prompts[0].get({ name: "Ada" })).messages[0].content.text, "Hello, Ada!", protocol)
        assert.deepEqual((await source.prompts[0].complete("name", "A")).values, ["Ada", "Alan"], protocol)

        const heard = []
        const off = await source.subscribe("py", "era://note", (uri) => heard.push(uri))
        const touch = source.tools.find((t) => t.name === "py_touch")
        assert.equal((await touch.execute({ uri: "era://note" })).isError, false, protocol)
        await waitFor(() => heard.length > 0, { timeout: 10000, message: `an update (${protocol})` })
        assert.deepEqual(heard, ["era://note"], protocol)
        if (protocol === "2026-07-28") {
          assert.ok(py.methods().includes("subscriptions/listen"), py.methods().join(", "))
          assert.equal(py.methods().includes("resources/subscribe"), false)
          await off()
        } else {
          assert.ok(py.methods().includes("resources/subscribe"), py.methods().join(", "))
          await off()
          await waitFor(() => py.methods().includes("resources/unsubscribe"), { timeout: 10000, message: "resources/unsubscribe" })
        }
      } finally {
        await source.close()
      }
    }
  } finally {
    await py.close()
  }
})

// A server whose tool adds a prompt (the SDK's McpServer then sends prompts/list_changed).
const PROMPTING = `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
const server = new McpServer({ name: "prompting", version: "1.0.0" })
server.registerPrompt("first", { description: "The first" }, () => ({ messages: [{ role: "user", content: { type: "text", text: "one" } }] }))
server.registerTool("add-prompt", { description: "Adds a prompt" }, async () => {
  server.registerPrompt("second", { description: "The second" }, () => ({ messages: [{ role: "user", content: { type: "text", text: "two" } }] }))
  return { content: [{ type: "text", text: "added" }] }
})
server.registerResource("note", "note://x", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, text: "x" }] }))
await server.connect(new StdioServerTransport())
`

test("onPromptsChanged hears a new prompt (a throw in it is a warning); after close() requests are refused in words", T, async () => {
  const prompting = { command: ["node", "--input-type=module", "-e", PROMPTING], cwd: repoRoot }
  const heard = []
  const warnings = []
  const onWarning = (w) => w.name === "ToolnexusWarning" && warnings.push(w.message)
  process.on("warning", onWarning)
  const source = await loadMcp(
    { mcpServers: { p: prompting } },
    {
      onPromptsChanged: (change) => {
        heard.push(change)
        throw new Error("listener broke")
      },
    },
  )
  try {
    assert.equal(source.status.p, "connected", source.errors.p)
    assert.deepEqual(source.prompts.map((p) => p.name), ["first"])
    assert.equal((await source.tools.find((t) => t.name === "p_add-prompt").execute({})).output, "added")
    await waitFor(() => heard.length > 0, { timeout: 10000, message: "onPromptsChanged" })
    assert.deepEqual(heard, [
      {
        server: "p",
        prompts: [
          { name: "first", description: "The first" },
          { name: "second", description: "The second" },
        ],
      },
    ])
    assert.deepEqual(source.prompts.map((p) => [p.server, p.name]), [["p", "first"], ["p", "second"]])
    assert.equal((await source.prompts[1].get()).messages[0].content.text, "two")
    await waitFor(() => warnings.includes("toolnexus: onPromptsChanged threw: listener broke"), { timeout: 10000, message: "the warning" })
  } finally {
    await source.close()
    process.off("warning", onWarning)
  }
  const closed = { name: "Error", message: "not connected (source closed)" }
  await assert.rejects(source.getPrompt("p", "first"), closed)
  await assert.rejects(source.subscribe("p", "note://x", () => {}), closed)
})
