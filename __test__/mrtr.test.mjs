// Input from the client in the middle of a call, in both eras and through the gateway: in the
// 2026-07-28 era ctx.elicit / ctx.sample go out as input-required results (SEP-2322) and the
// retried call resumes the same run; loadMcp drives such rounds of its upstreams; a toolkit
// gateway turns an upstream's elicitation and sampling requests into what its front client's
// era allows. Front clients: the official Python client (mcp 2.x) and the TypeScript SDK client.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { createToolkit, defineTool, listMcpTools, loadMcp } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, CreateMessageRequestSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { PYTHON, deferredCleanup, serverEverything } from "./helpers.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const T = { timeout: 90000 }
const defer = deferredCleanup(afterEach)

async function serve(opts) {
  const toolkit = await createToolkit(opts)
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  return `${handle.url}/mcp`
}

/** The Python client (`python/front.py`) calling `tool` once; resolves its JSON report. */
function pythonFront(url, mode, tool, args = {}) {
  const script = path.join(here, "python", "front.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, url, mode, tool, JSON.stringify(args)], { timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python front client (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout))
    })
  })
}

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
const question = (text) => ({ messages: [{ role: "user", content: { type: "text", text } }], maxTokens: 20 })

/** A tool that asks the user, then the model, counting how many times its run started. */
function interviewer() {
  const started = []
  const tool = defineTool({
    name: "interview",
    async run(_args, ctx) {
      started.push(Date.now())
      const who = await ctx.elicit({ message: "Who are you?", requestedSchema: NAME_SCHEMA })
      const answer = await ctx.sample(question("Capital of France?"))
      return `${who.content?.name} says ${answer.content?.text}`
    },
  })
  return { tool, started }
}

for (const mode of ["legacy", "2026-07-28"]) {
  test(`ctx.elicit and ctx.sample reach the Python client (${mode}), and one run answers the call`, T, async () => {
    const { tool, started } = interviewer()
    const url = await serve({ extraTools: [tool] })
    const report = await pythonFront(url, mode, "interview")
    assert.equal(report.protocolVersion, mode === "legacy" ? "2025-11-25" : "2026-07-28")
    assert.equal(report.text, "Ada Lovelace says Paris")
    assert.equal(report.isError, false)
    assert.deepEqual(report.elicitations, ["Who are you?"])
    assert.deepEqual(report.samplings, ["Capital of France?"])
    // In 2026-07-28 that took three requests (two input-required rounds); still one run.
    assert.equal(started.length, 1)
  })
}

test("2026-07-28 on the wire: the call answers input-required with the request under its key, and a changed requestState is refused", T, async () => {
  const tool = defineTool({
    name: "confirm",
    async run(_args, ctx) {
      const a = await ctx.elicit(
        { message: "Sure?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } },
        { key: "sure" },
      )
      return `ok=${a.content?.ok}`
    },
  })
  const other = defineTool({ name: "other", run: () => "other" })
  const url = await serve({ extraTools: [tool, other] })
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  }
  let id = 0
  const call = async (extra) => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": extra.name ?? "confirm",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "confirm", arguments: {}, _meta: meta, ...extra } }),
    })
    const text = await response.text()
    const data = text.split("\n").filter((l) => l.startsWith("data:") && l.length > 5).map((l) => JSON.parse(l.slice(5)))
    return data.length ? data.at(-1) : JSON.parse(text)
  }
  const first = (await call({})).result
  assert.equal(first.resultType, "input_required")
  assert.deepEqual(first.inputRequests, {
    sure: { method: "elicitation/create", params: { mode: "form", message: "Sure?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } } },
  })
  assert.match(first.requestState, /^[0-9a-f]{32}$/)
  const answer = { sure: { action: "accept", content: { ok: true } } }
  // A retry naming another tool is refused and leaves the call waiting.
  const misnamed = await call({ name: "other", inputResponses: answer, requestState: first.requestState })
  assert.equal(misnamed.error.code, -32602)
  assert.equal(misnamed.error.message, 'requestState belongs to a call of tool "confirm"')
  const tampered = await call({ inputResponses: answer, requestState: `${first.requestState}x` })
  assert.equal(tampered.error.code, -32602)
  assert.match(tampered.error.message, /requestState is not one this server issued/)
  const done = (await call({ inputResponses: answer, requestState: first.requestState })).result
  assert.deepEqual(done.content, [{ type: "text", text: "ok=true" }])
  assert.equal(done.resultType, "complete")
  // Answered: the state is spent.
  const again = await call({ inputResponses: answer, requestState: first.requestState })
  assert.equal(again.error.code, -32602)
})

test("loadMcp drives a 2026-07-28 server's input-required rounds: its elicitation goes to waitFor and the answer back; undeclared sampling fails with -32021's reason", T, async () => {
  const started = []
  const greet = defineTool({
    name: "greet",
    async run(_args, ctx) {
      started.push(1)
      const who = await ctx.elicit({ message: "Name?", requestedSchema: NAME_SCHEMA })
      return `hello ${who.content?.name}`
    },
  })
  const ask = defineTool({ name: "ask", run: async (_args, ctx) => (await ctx.sample(question("hi?"))).content.text })
  const url = await serve({ extraTools: [greet, ask] })
  const asked = []
  const source = await loadMcp(
    { mcpServers: { up: { type: "streamable-http", url, protocol: "2026-07-28" } } },
    {
      waitFor: async (request) => {
        asked.push(request.message)
        return { ok: true, data: { name: "Grace" } }
      },
    },
  )
  defer(() => source.close())
  assert.equal(source.info.up.protocolVersion, "2026-07-28")
  const tool = (name) => source.tools.find((t) => t.name === `up_${name}`)
  const greeted = await tool("greet").execute({})
  assert.equal(greeted.output, "hello Grace")
  assert.equal(greeted.isError, false)
  assert.deepEqual(asked, ["Name?"])
  assert.equal(started.length, 1)
  // loadMcp declares no sampling: the server's run is refused it, and the call fails with -32021.
  const sampled = await tool("ask").execute({})
  assert.equal(sampled.isError, true)
  assert.equal(sampled.output, "Missing required client capability")
})

const everything = { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 }

for (const mode of ["legacy", "2026-07-28"]) {
  test(`the Python client (${mode}) through a toolkit gateway over server-everything: progress, elicitation and sampling of the upstream reach it`, T, async () => {
    const url = await serve({ mcpConfig: { everything } })
    const op = await pythonFront(url, mode, "everything_trigger-long-running-operation", { duration: 1, steps: 4 })
    assert.match(op.text, /Long running operation completed/)
    assert.deepEqual(op.progress, [1, 2, 3, 4])

    const elicit = await pythonFront(url, mode, "everything_trigger-elicitation-request")
    assert.equal(elicit.isError, false)
    assert.match(elicit.text, /Name: Ada Lovelace/)
    assert.equal(elicit.elicitations.length, 1)

    const sample = await pythonFront(url, mode, "everything_trigger-sampling-request", { prompt: "Capital?" })
    assert.equal(sample.isError, false)
    assert.match(sample.text, /Paris/)
    assert.deepEqual(sample.samplings, ["Resource trigger-sampling-request context: Capital?"])
  })
}

test("sampling relay, handshake era: server-everything's sampling request reaches the TypeScript SDK front client and its answer goes back up", T, async () => {
  const url = await serve({ mcpConfig: { everything } })
  const front = new Client({ name: "front", version: "1.0.0" }, { capabilities: { sampling: {} } })
  const asked = []
  front.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push(req.params.messages[0].content.text)
    return { role: "assistant", content: { type: "text", text: "Paris, says the front" }, model: "front-model", stopReason: "endTurn" }
  })
  await front.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => front.close())
  const result = await front.callTool({ name: "everything_trigger-sampling-request", arguments: { prompt: "Capital?" } })
  assert.equal(result.isError ?? false, false)
  assert.match(result.content.map((p) => p.text ?? "").join("\n"), /Paris, says the front/)
  assert.deepEqual(asked, ["Resource trigger-sampling-request context: Capital?"])
})

test("task-required tools: server-everything's simulate-research-query keeps execution in ToolInfo and runs as a task, directly and through the gateway (which waits for the upstream task within the call)", T, async () => {
  const inv = await listMcpTools({ everything })
  const listed = inv.tools.everything.find((t) => t.name === "simulate-research-query")
  assert.deepEqual(listed.execution, { taskSupport: "required" })
  assert.deepEqual(inv.tools.everything.find((t) => t.name === "echo").execution, { taskSupport: "forbidden" })

  const source = await loadMcp({ everything })
  defer(() => source.close())
  const tool = source.tools.find((t) => t.name === "everything_simulate-research-query")
  assert.deepEqual(tool.execution, { taskSupport: "required" })
  const direct = await tool.execute({ topic: "tasks" })
  assert.equal(direct.isError, false)
  assert.match(direct.output, /^# Research Report: tasks\n/)

  // The gateway lists it as task-required and serves it both ways.
  const url = await serve({ mcpConfig: { everything } })
  const front = new Client({ name: "front", version: "1.0.0" }, { capabilities: { tasks: {} } })
  await front.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => front.close())
  // Called without a task, the gateway waits for the upstream task within the call.
  const relayed = await front.callTool({ name: "everything_simulate-research-query", arguments: { topic: "tasks" } })
  assert.equal(relayed.isError ?? false, false)
  assert.deepEqual(relayed.content, direct.content)
  // As a task (2025-11-25 tasks over the gateway's HTTP session), the task's result is the same.
  const created = await front.request(
    { method: "tools/call", params: { name: "everything_simulate-research-query", arguments: { topic: "tasks" }, task: {} } },
    CreateTaskResultSchema,
  )
  assert.equal(created.task.status, "working")
  const result = await front.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)
  assert.equal(result.isError ?? false, false)
  assert.deepEqual(result.content, direct.content)
})

test("2026-07-28 all the way: an upstream toolkit's ctx.elicit crosses a 2026-07-28 gateway to the Python client as input-required results, and both runs resume", T, async () => {
  const { tool, started } = interviewer()
  const upstream = await serve({ extraTools: [tool] })
  const gateway = await serve({ mcpConfig: { mcpServers: { up: { type: "streamable-http", url: upstream, protocol: "2026-07-28" } } } })
  const report = await pythonFront(gateway, "2026-07-28", "up_interview")
  assert.equal(report.text, "Ada Lovelace says Paris")
  assert.equal(report.isError, false)
  assert.deepEqual(report.elicitations, ["Who are you?"])
  assert.deepEqual(report.samplings, ["Capital of France?"])
  assert.equal(started.length, 1)
})
