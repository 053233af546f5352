// Served tools run as tasks (defineTool({ task })), in the 2026-07-28 era's tasks extension
// (io.modelcontextprotocol/tasks), on the wire over loopback HTTP: the call is answered with a
// task at once, tasks/get follows it to its end and inlines its result, tasks/update answers what
// it waits on, tasks/cancel ends it (its run's ctx.signal fires), a tool's isError result
// completes it and a throw fails it. No SDK client speaks this era's tasks yet, so the client is
// raw JSON-RPC over fetch(). And in the 2025-11-25 era (the `tasks` capability) over stdio and
// an SDK transport, with the TypeScript SDK's experimental tasks client: a task-augmented call,
// tasks/get, tasks/result, tasks/list, tasks/cancel, each session seeing only its own tasks, and
// a requested ttl that expires. (The Python client has no tasks client.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { buildMcpServer } from "toolnexus"
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup } from "./helpers.mjs"
import { TASKS, wire, until } from "./lib/tasks-wire.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)


async function serve(tools) {
  const toolkit = await createToolkit({ extraTools: tools })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  return `${handle.url}/mcp`
}

/** A task tool whose run waits until `release()`, noting whether its signal fired (and why). */
function gated(name = "job") {
  let release
  const gate = new Promise((r) => (release = r))
  const seen = { started: 0, aborted: null }
  let started
  const running = new Promise((r) => (started = r))
  const tool = defineTool({
    name,
    description: "waits for the test",
    inputSchema: { type: "object", properties: { n: { type: "number" } } },
    task: "optional",
    async run({ n = 0 }, ctx) {
      seen.started++
      ctx.signal.addEventListener("abort", () => (seen.aborted = String(ctx.signal.reason?.message ?? ctx.signal.reason)))
      started()
      await Promise.race([gate, new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)))])
      return `done ${n}`
    },
  })
  return { tool, release: () => release(), seen, running }
}

test("a task tool is listed with execution.taskSupport in both eras", T, async () => {
  const { tool } = gated()
  assert.deepEqual(tool.execution, { taskSupport: "optional" })
  const url = await serve([tool, defineTool({ name: "plain", run: () => "plain" })])
  const listed = (await wire(url)("tools/list")).result.tools
  assert.deepEqual(listed.find((t) => t.name === "job").execution, { taskSupport: "optional" })
  assert.equal(listed.find((t) => t.name === "plain").execution, undefined)
  // The handshake era's listing too (the TypeScript SDK client, 2025-11-25).
  const client = new Client({ name: "sdk", version: "1" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => client.close())
  const { tools } = await client.listTools()
  assert.deepEqual(tools.find((t) => t.name === "job").execution, { taskSupport: "optional" })
  // The extension is declared in server/discover.
  const discovered = (await wire(url)("server/discover")).result
  assert.deepEqual(discovered.capabilities.extensions[TASKS], {})
})

test("a task-augmented call: a task at once, tasks/get from working to completed with the result inlined", T, async () => {
  const { tool, release, seen, running } = gated()
  const request = wire(await serve([tool]))
  const created = (await request("tools/call", { name: "job", arguments: { n: 7 } })).result
  assert.equal(created.resultType, "task")
  assert.equal(created.status, "working")
  assert.match(created.taskId, /^[0-9a-f]{32}$/)
  assert.equal(created.ttlMs, 600000)
  assert.equal(created.pollIntervalMs, 500)
  assert.equal("requestState" in created, false)
  await running
  const working = (await request("tasks/get", { taskId: created.taskId })).result
  assert.equal(working.status, "working")
  assert.equal(working.result, undefined)
  release()
  const done = await until(request, created.taskId, ["completed", "failed", "cancelled"])
  assert.equal(done.status, "completed")
  assert.deepEqual(done.result.content, [{ type: "text", text: "done 7" }])
  assert.equal(seen.started, 1)
  assert.equal(seen.aborted, null)
})

test("tasks/cancel ends a running task cancelled, and its run's ctx.signal fires", T, async () => {
  const { tool, seen, running } = gated()
  const request = wire(await serve([tool]))
  const { taskId } = (await request("tools/call", { name: "job", arguments: {} })).result
  await running
  const ack = await request("tasks/cancel", { taskId })
  assert.deepEqual(ack.result, { resultType: "complete" })
  const after = (await request("tasks/get", { taskId })).result
  assert.equal(after.status, "cancelled")
  // The tool saw its own signal fire, with the reason served calls are aborted with.
  while (seen.aborted === null) await new Promise((r) => setTimeout(r, 10))
  assert.equal(seen.aborted, "toolnexus: the MCP client cancelled this call")
  // Cancelling again is acknowledged; an unknown task is -32602 in words.
  assert.deepEqual((await request("tasks/cancel", { taskId })).result, { resultType: "complete" })
  const unknown = await request("tasks/get", { taskId: "0".repeat(32) })
  assert.equal(unknown.error.code, -32602)
  assert.equal(unknown.error.message, `no task "${"0".repeat(32)}": it does not exist, or it expired`)
})

/** A task tool whose result is an error (`refuses`), and one that throws (`breaks`). */
function refusingAndBreaking() {
  const refuses = defineTool({ name: "refuses", task: "optional", run: () => ({ output: "no can do", isError: true }) })
  const breaks = defineTool({
    name: "breaks",
    task: "optional",
    run() {
      throw new Error("it broke")
    },
  })
  return { refuses, breaks }
}

test("a tool's isError result completes its task; a throw fails it with the error inlined", T, async () => {
  const { refuses, breaks } = refusingAndBreaking()
  const request = wire(await serve([refuses, breaks]))
  const first = (await request("tools/call", { name: "refuses", arguments: {} })).result
  const completed = await until(request, first.taskId, ["completed", "failed"])
  assert.equal(completed.status, "completed")
  assert.deepEqual(completed.result.content, [{ type: "text", text: "no can do" }])
  assert.equal(completed.result.isError, true)
  const second = (await request("tools/call", { name: "breaks", arguments: {} })).result
  const failed = await until(request, second.taskId, ["completed", "failed"])
  assert.equal(failed.status, "failed")
  assert.deepEqual(failed.error, { code: -32603, message: "it broke" })
  assert.equal(failed.result, undefined)
})

test("a task waiting on input is input_required with its requests; tasks/update answers it", T, async () => {
  const confirm = defineTool({
    name: "confirm",
    task: "optional",
    async run(_args, ctx) {
      const a = await ctx.elicit({ message: "Sure?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } }, { key: "sure" })
      return `ok=${a.content?.ok}`
    },
  })
  const request = wire(await serve([confirm]))
  const { taskId } = (await request("tools/call", { name: "confirm", arguments: {} })).result
  const waiting = await until(request, taskId, ["input_required"])
  assert.deepEqual(waiting.inputRequests, {
    sure: { method: "elicitation/create", params: { mode: "form", message: "Sure?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } } },
  })
  const ack = await request("tasks/update", { taskId, inputResponses: { sure: { action: "accept", content: { ok: true } } } })
  assert.deepEqual(ack.result, { resultType: "complete" })
  const done = await until(request, taskId, ["completed", "failed"])
  assert.deepEqual(done.result.content, [{ type: "text", text: "ok=true" }])
})

test("without the tasks extension: an optional task tool is an ordinary call, a required one is -32021", T, async () => {
  const { tool, release } = gated()
  const must = defineTool({ name: "must", task: "required", run: () => "ran" })
  const request = wire(await serve([tool, must]), { extensions: false })
  release()
  const plain = (await request("tools/call", { name: "job", arguments: { n: 1 } })).result
  assert.equal(plain.resultType, "complete")
  assert.deepEqual(plain.content, [{ type: "text", text: "done 1" }])
  const refused = (await request("tools/call", { name: "must", arguments: {} })).error
  assert.equal(refused.code, -32021)
  assert.deepEqual(refused.data.requiredCapabilities, { extensions: { [TASKS]: {} } })
  const gated_ = await request("tasks/get", { taskId: "x" })
  assert.equal(gated_.error.code, -32021)
})

test("defineTool refuses a task option that is neither optional nor required", () => {
  assert.throws(() => defineTool({ name: "x", task: "always", run: () => "" }), {
    name: "TypeError",
    message: 'toolnexus: defineTool "x": task must be "optional" or "required"',
  })
})

const nameSchema = { type: "object", properties: { name: { type: "string" } } }
const sureSchema = { type: "object", properties: { ok: { type: "boolean" } } }

/**
 * A deferTask tool: asks a name in the call, then `ctx.startTask()` (noting what it resolved and
 * what a second call resolves), then asks for a confirmation inside the task; `signal` notes a
 * cancel. `task` is its task support.
 */
function deferred(task = "required") {
  let ended
  const seen = { became: [], aborted: null, ended: new Promise((r) => (ended = r)) }
  let escalated
  const inTask = new Promise((r) => (escalated = r))
  const tool = defineTool({
    name: "book",
    description: "asks who, then books as a task",
    task,
    deferTask: true,
    async run(_args, ctx) {
      const who = await ctx.elicit({ message: "Who?", requestedSchema: nameSchema }, { key: "user_name" })
      seen.became.push(await ctx.startTask())
      seen.became.push(await ctx.startTask())
      ctx.signal.addEventListener("abort", () => (seen.aborted = String(ctx.signal.reason?.message ?? ctx.signal.reason)))
      escalated()
      const sure = await ctx.elicit({ message: "Sure?", requestedSchema: sureSchema }, { key: "sure" }).catch((error) => {
        ended(seen.aborted === null ? `rejected first: ${error.message}` : `aborted: ${seen.aborted}`)
        throw error
      })
      return `booked ${who.content?.name}: ${sure.content?.ok}`
    },
  })
  return { tool, seen, inTask }
}

test("a deferTask tool asks in the call, then ctx.startTask() answers CreateTaskResult and its later asks are the task's", T, async () => {
  const { tool, seen } = deferred()
  assert.equal(tool.deferTask, true)
  const request = wire(await serve([tool]))
  // Round 1: an ordinary input-required result, no task yet.
  const first = (await request("tools/call", { name: "book", arguments: {} })).result
  assert.equal(first.resultType, "input_required")
  assert.equal("taskId" in first, false)
  assert.deepEqual(first.inputRequests, {
    user_name: { method: "elicitation/create", params: { mode: "form", message: "Who?", requestedSchema: nameSchema } },
  })
  assert.equal(typeof first.requestState, "string")
  // Round 2: the retry with the answer; the run calls ctx.startTask(), so the call is a task.
  const created = (
    await request("tools/call", {
      name: "book",
      arguments: {},
      inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
      requestState: first.requestState,
    })
  ).result
  assert.equal(created.resultType, "task")
  assert.match(created.taskId, /^[0-9a-f]{32}$/)
  assert.equal(created.ttlMs, 600000)
  assert.equal("requestState" in created, false)
  assert.equal("inputRequests" in created, false)
  // Its next ask is the task's: input_required on tasks/get, answered by tasks/update.
  const waiting = await until(request, created.taskId, ["input_required", "completed", "failed"])
  assert.equal(waiting.status, "input_required")
  assert.deepEqual(waiting.inputRequests, {
    sure: { method: "elicitation/create", params: { mode: "form", message: "Sure?", requestedSchema: sureSchema } },
  })
  assert.deepEqual(seen.became, [true, false])
  const ack = await request("tasks/update", { taskId: created.taskId, inputResponses: { sure: { action: "accept", content: { ok: true } } } })
  assert.deepEqual(ack.result, { resultType: "complete" })
  const done = await until(request, created.taskId, ["completed", "failed", "cancelled"])
  assert.equal(done.status, "completed")
  assert.deepEqual(done.result.content, [{ type: "text", text: "booked Alice: true" }])
  assert.equal(seen.aborted, null)
  // The retry's requestState was used up: it names no call now.
  const again = await request("tools/call", {
    name: "book",
    arguments: {},
    inputResponses: { user_name: { action: "accept", content: { name: "Bob" } } },
    requestState: first.requestState,
  })
  assert.equal(again.error.code, -32602)
  assert.match(again.error.message, /requestState is not one this server issued/)
})

test("a run that became a task is cancelled by tasks/cancel: its ctx.signal fires", T, async () => {
  const { tool, seen, inTask } = deferred()
  const request = wire(await serve([tool]))
  const first = (await request("tools/call", { name: "book", arguments: {} })).result
  const inputResponses = { user_name: { action: "accept", content: { name: "Carol" } } }
  const created = (await request("tools/call", { name: "book", arguments: {}, inputResponses, requestState: first.requestState })).result
  await inTask
  assert.deepEqual((await request("tasks/cancel", { taskId: created.taskId })).result, { resultType: "complete" })
  const cancelled = (await request("tasks/get", { taskId: created.taskId })).result
  assert.equal(cancelled.status, "cancelled")
  // The tool saw its own signal fire (before its pending ask rejected), with the served calls' reason.
  assert.equal(await seen.ended, "aborted: toolnexus: the MCP client cancelled this call")
})

test("ctx.startTask() resolves false where the call cannot become a task, and the call answers as usual", T, async () => {
  // An optional deferTask tool, called by a client without the tasks extension: an ordinary call.
  const { tool, seen } = deferred("optional")
  const plainTask = defineTool({
    name: "already",
    task: "required",
    async run(_args, ctx) {
      return `startTask: ${await ctx.startTask()}`
    },
  })
  const url = await serve([tool, plainTask])
  const request = wire(url, { extensions: false })
  const first = (await request("tools/call", { name: "book", arguments: {} })).result
  assert.equal(first.resultType, "input_required")
  const inputResponses = { user_name: { action: "accept", content: { name: "Dan" } } }
  const second = (await request("tools/call", { name: "book", arguments: {}, inputResponses, requestState: first.requestState })).result
  assert.equal(second.resultType, "input_required")
  assert.equal("taskId" in second, false)
  assert.deepEqual(Object.keys(second.inputRequests), ["sure"])
  const third = (
    await request("tools/call", {
      name: "book",
      arguments: {},
      inputResponses: { sure: { action: "accept", content: { ok: false } } },
      requestState: second.requestState,
    })
  ).result
  assert.equal(third.resultType, "complete")
  assert.deepEqual(third.content, [{ type: "text", text: "booked Dan: false" }])
  assert.deepEqual(seen.became, [false, false])
  // A task from its first moment (no deferTask): startTask() changes nothing.
  const tasks = wire(url)
  const { taskId } = (await tasks("tools/call", { name: "already", arguments: {} })).result
  const done = await until(tasks, taskId, ["completed", "failed"])
  assert.deepEqual(done.result.content, [{ type: "text", text: "startTask: false" }])
  // The handshake era (the TypeScript SDK client, an ordinary call): the run goes on in the call.
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (r) =>
    r.params.message === "Who?" ? { action: "accept", content: { name: "Eve" } } : { action: "accept", content: { ok: true } },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => client.close())
  const handshake = await client.callTool({ name: "book", arguments: {} })
  assert.deepEqual(handshake.content, [{ type: "text", text: "booked Eve: true" }])
  assert.deepEqual(seen.became, [false, false, false, false])
})

test("defineTool refuses a deferTask that is not a boolean, or without task", () => {
  assert.throws(() => defineTool({ name: "x", deferTask: true, run: () => "" }), {
    name: "TypeError",
    message: 'toolnexus: defineTool "x": deferTask needs task ("optional" or "required")',
  })
  assert.throws(() => defineTool({ name: "x", task: "optional", deferTask: "yes", run: () => "" }), {
    name: "TypeError",
    message: 'toolnexus: defineTool "x": deferTask must be a boolean',
  })
  assert.equal(defineTool({ name: "x", task: "optional", run: () => "" }).deferTask, undefined)
})

// ---- 2025-11-25 ----

const here = path.dirname(fileURLToPath(import.meta.url))

/** The SDK's messages of one task-augmented call, in order. */
async function stream(client, name, args, ttl = 60000) {
  const messages = []
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task: { ttl } })) messages.push(m)
  return messages
}

/** An SDK client (declaring tasks) of a buildMcpServer over an in-memory transport. */
async function bridged(server) {
  const [front, back] = InMemoryTransport.createLinkedPair()
  await server.connect(back)
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { tasks: {} } })
  await client.connect(front)
  defer(() => client.close())
  return client
}

test("2025-11-25 over stdio: the tasks capability, a task-augmented call, tasks/get, tasks/result, tasks/list", T, async () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(here, "fixtures", "task-server.mjs")], stderr: "pipe" })
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { tasks: {} } })
  await client.connect(transport)
  const pid = transport.pid
  defer(() => client.close())
  assert.deepEqual(client.getServerCapabilities().tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } })
  assert.equal(client.getServerVersion().name, "toolnexus")
  const messages = await stream(client, "job", { ms: 50 })
  assert.equal(messages[0].type, "taskCreated")
  const { taskId } = messages[0].task
  assert.match(taskId, /^[0-9a-f]{32}$/)
  assert.equal(messages[0].task.status, "working")
  assert.equal(messages[0].task.ttl, 60000)
  assert.equal(messages[0].task.pollInterval, 500)
  const last = messages.at(-1)
  assert.equal(last.type, "result")
  assert.deepEqual(last.result.content, [{ type: "text", text: "done 50" }])
  assert.deepEqual(last.result._meta, { "io.modelcontextprotocol/related-task": { taskId } })
  const got = await client.experimental.tasks.getTask(taskId)
  assert.equal(got.status, "completed")
  assert.equal(got.taskId, taskId)
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
  assert.deepEqual(result.content, [{ type: "text", text: "done 50" }])
  const { tasks } = await client.experimental.tasks.listTasks()
  assert.deepEqual(tasks.map((t) => [t.taskId, t.status]), [[taskId, "completed"]])
  // A required task tool called without a task: -32601 in words.
  await assert.rejects(client.callTool({ name: "must", arguments: {} }), {
    code: -32601,
    message: "MCP error -32601: tool must requires task-based execution: call it with params.task",
  })
  await client.close()
  // The server process is gone once its input closed.
  for (let i = 0; fs.existsSync(`/proc/${pid}`) && i < 500; i++) await new Promise((r) => setTimeout(r, 20))
  assert.equal(fs.existsSync(`/proc/${pid}`), false)
})

test("2025-11-25 over stdio: notifications/tasks/status tells the client each status change of its task", T, async () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(here, "fixtures", "task-server.mjs")], stderr: "pipe" })
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { tasks: {} } })
  const heard = []
  const waiters = []
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    heard.push(n.params)
    for (const w of waiters.splice(0)) w()
  })
  /** Resolves once a notification says `taskId` is `status`. */
  const told = async (taskId, status) => {
    while (!heard.some((p) => p.taskId === taskId && p.status === status)) await new Promise((r) => waiters.push(r))
  }
  await client.connect(transport)
  defer(() => client.close())
  const call = (ms) =>
    client.request({ method: "tools/call", params: { name: "job", arguments: { ms }, task: { ttl: 60000 } } }, CreateTaskResultSchema)
  const done = (await call(50)).task
  await told(done.taskId, "completed")
  const [completed] = heard.filter((p) => p.taskId === done.taskId)
  assert.deepEqual(Object.keys(completed).sort(), ["createdAt", "lastUpdatedAt", "pollInterval", "status", "taskId", "ttl"])
  assert.equal(completed.ttl, 60000)
  assert.equal(completed.pollInterval, 500)
  assert.equal(completed.createdAt, done.createdAt)
  assert.equal(completed.lastUpdatedAt, (await client.experimental.tasks.getTask(done.taskId)).lastUpdatedAt)
  // A cancel is told too; each task's changes once each (working is the task's first status).
  const running = (await call(600000)).task
  await client.experimental.tasks.cancelTask(running.taskId)
  await told(running.taskId, "cancelled")
  assert.deepEqual(
    heard.map((p) => [p.taskId, p.status]),
    [
      [done.taskId, "completed"],
      [running.taskId, "cancelled"],
    ],
  )
})

test("2025-11-25 over stdio: tasks/cancel ends a running task cancelled and fires its tool's ctx.signal", T, async () => {
  const events = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tasks-")), "events")
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(here, "fixtures", "task-server.mjs")],
    env: { ...process.env, EVENT_FILE: events },
    stderr: "pipe",
  })
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { tasks: {} } })
  await client.connect(transport)
  defer(() => client.close())
  const created = await client.request(
    { method: "tools/call", params: { name: "job", arguments: { ms: 600000 }, task: { ttl: 60000 } } },
    CreateTaskResultSchema,
  )
  const { taskId } = created.task
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, "working")
  const cancelled = await client.experimental.tasks.cancelTask(taskId)
  assert.equal(cancelled.status, "cancelled")
  assert.equal(cancelled.taskId, taskId)
  for (let i = 0; !fs.existsSync(events) && i < 500; i++) await new Promise((r) => setTimeout(r, 20))
  assert.equal(fs.readFileSync(events, "utf8"), "aborted: toolnexus: the MCP client cancelled this call\n")
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled")
  // Cancelling a task that ended is -32602.
  await assert.rejects(client.experimental.tasks.cancelTask(taskId), {
    code: -32602,
    message: `MCP error -32602: task "${taskId}" has already ended (cancelled); it cannot be cancelled`,
  })
})

test("2025-11-25 over an SDK transport: a thrown tool's tasks/result is its error; an isError result is a result", T, async () => {
  const { refuses, breaks } = refusingAndBreaking()
  const mine = await bridged(buildMcpServer([refuses, breaks]))
  const [created] = await stream(mine, "refuses", {})
  const { taskId } = created.task
  const result = await mine.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
  assert.deepEqual(result.content, [{ type: "text", text: "no can do" }])
  assert.equal(result.isError, true)
  assert.equal((await mine.experimental.tasks.getTask(taskId)).status, "completed")
  // A throw: the task failed, and tasks/result is the call's JSON-RPC error.
  const messages = await stream(mine, "breaks", {})
  const failedId = messages[0].task.taskId
  assert.equal(messages.at(-1).type, "error")
  assert.equal((await mine.experimental.tasks.getTask(failedId)).status, "failed")
  await assert.rejects(mine.experimental.tasks.getTaskResult(failedId, CallToolResultSchema), { code: -32603, message: "MCP error -32603: it broke" })
})

test("2025-11-25: a task is gone once its ttl has passed (the ttl asked for, at least a second)", T, async () => {
  const quick = defineTool({ name: "quick", task: "optional", run: () => "quick" })
  const client = await bridged(buildMcpServer([quick]))
  // A ttl under a second is raised to one (a task of ttl 0 would be gone before it is read).
  const [created] = await stream(client, "quick", {}, 200)
  const { taskId } = created.task
  assert.equal(created.task.ttl, 1000)
  // Polled until gone (the test's timeout bounds it).
  for (;;) {
    const gone = await client.experimental.tasks.getTask(taskId).then(
      () => null,
      (e) => e,
    )
    if (gone) {
      assert.equal(gone.code, -32602)
      assert.equal(gone.message, `MCP error -32602: no task "${taskId}": it does not exist, or it expired`)
      break
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  assert.deepEqual((await client.experimental.tasks.listTasks()).tasks, [])
})

// ---- 2025-11-25 over streamable HTTP ----

/** An SDK client (declaring tasks) in a session of `url` over streamable HTTP. */
async function httpClient(url) {
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { tasks: {} } })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  defer(() => client.close())
  return { client, transport }
}

test("2025-11-25 over streamable HTTP: the tasks capability, a task-augmented call, tasks/get, tasks/result, tasks/list", T, async () => {
  const { tool, release, running } = gated()
  const add = defineTool({
    name: "add",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    task: "optional",
    run: ({ a, b }) => String(a + b),
  })
  const must = defineTool({ name: "must", task: "required", run: () => "ran" })
  const url = await serve([tool, add, must])
  const { client, transport } = await httpClient(url)
  assert.match(transport.sessionId, /\S/)
  assert.deepEqual(client.getServerCapabilities().tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } })
  // A call to completion (answered on the direct road, as JSON).
  const messages = await stream(client, "add", { a: 2, b: 3 })
  assert.deepEqual(
    messages.map((m) => m.type),
    ["taskCreated", ...messages.slice(1, -1).map(() => "taskStatus"), "result"],
  )
  const { taskId } = messages[0].task
  assert.match(taskId, /^[0-9a-f]{32}$/)
  assert.equal(messages[0].task.status, "working")
  assert.equal(messages[0].task.ttl, 60000)
  assert.equal(messages[0].task.pollInterval, 500)
  assert.deepEqual(messages.at(-1).result.content, [{ type: "text", text: "5" }])
  assert.deepEqual(messages.at(-1).result._meta, { "io.modelcontextprotocol/related-task": { taskId } })
  const got = await client.experimental.tasks.getTask(taskId)
  assert.equal(got.taskId, taskId)
  assert.equal(got.status, "completed")
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
  assert.deepEqual(result.content, [{ type: "text", text: "5" }])
  // A call whose client asked for progress (answered on rmcp's session stream): {task} too, and
  // tasks/result waits until the task ends.
  const created = await client.request(
    { method: "tools/call", params: { name: "job", arguments: { n: 4 }, task: { ttl: 30000 } } },
    CreateTaskResultSchema,
    { onprogress: () => {} },
  )
  const jobId = created.task.taskId
  assert.equal(created.task.status, "working")
  assert.equal(created.task.ttl, 30000)
  await running
  let settled = false
  const waiting = client.experimental.tasks.getTaskResult(jobId, CallToolResultSchema).finally(() => (settled = true))
  assert.equal((await client.experimental.tasks.getTask(jobId)).status, "working")
  assert.equal(settled, false)
  release()
  assert.deepEqual((await waiting).content, [{ type: "text", text: "done 4" }])
  assert.equal((await client.experimental.tasks.getTask(jobId)).status, "completed")
  const { tasks } = await client.experimental.tasks.listTasks()
  assert.deepEqual(tasks.map((t) => [t.taskId, t.status]).sort(), [[taskId, "completed"], [jobId, "completed"]].sort())
  // A required task tool called without a task: -32601 in words; an optional one, ordinarily.
  await assert.rejects(client.callTool({ name: "must", arguments: {} }), {
    code: -32601,
    message: "MCP error -32601: tool must requires task-based execution: call it with params.task",
  })
  assert.deepEqual((await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })).content, [{ type: "text", text: "2" }])
  // A task method with no taskId: -32602 in words.
  await assert.rejects(client.request({ method: "tasks/get", params: {} }, CreateTaskResultSchema), {
    code: -32602,
    message: "MCP error -32602: taskId is required: a string",
  })
})

test("2025-11-25 over streamable HTTP: a session ended by DELETE ends its tasks, and their runs' ctx.signal fires", T, async () => {
  const { tool, seen, running } = gated()
  const toolkit = await createToolkit({ extraTools: [tool] })
  defer(() => toolkit.close())
  // A short idle timeout makes the session sweep (which ends a closed session's tasks) frequent.
  const handle = await toolkit.serve("127.0.0.1:0", { sessionIdleTimeout: 4000 })
  const { client, transport } = await httpClient(`${handle.url}/mcp`)
  for await (const m of client.experimental.tasks.callToolStream({ name: "job", arguments: { n: 1 } }, undefined, { task: { ttl: 60000 } })) {
    assert.equal(m.type, "taskCreated")
    break
  }
  await running
  assert.equal(seen.aborted, null)
  await transport.terminateSession()
  // Bounded by the test's timeout: the next sweep ends the task, long before its 60 s ttl.
  while (seen.aborted === null) await new Promise((r) => setTimeout(r, 10))
  assert.equal(seen.aborted, "toolnexus: the MCP client cancelled this call")
})

test("2025-11-25 over streamable HTTP: tasks/cancel ends a running task cancelled and fires its tool's ctx.signal", T, async () => {
  const { tool, seen, running } = gated()
  const url = await serve([tool])
  const { client } = await httpClient(url)
  const [created] = await (async () => {
    const out = []
    for await (const m of client.experimental.tasks.callToolStream({ name: "job", arguments: { n: 1 } }, undefined, { task: { ttl: 60000 } })) {
      out.push(m)
      break
    }
    return out
  })()
  assert.equal(created.type, "taskCreated")
  const { taskId } = created.task
  await running
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, "working")
  const cancelled = await client.experimental.tasks.cancelTask(taskId)
  assert.equal(cancelled.taskId, taskId)
  assert.equal(cancelled.status, "cancelled")
  // The abort reaches the run's signal on the JavaScript side soon after (bounded by the test's
  // timeout).
  while (seen.aborted === null) await new Promise((r) => setTimeout(r, 10))
  assert.equal(seen.aborted, "toolnexus: the MCP client cancelled this call")
  assert.equal(seen.started, 1)
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled")
  await assert.rejects(client.experimental.tasks.cancelTask(taskId), {
    code: -32602,
    message: `MCP error -32602: task "${taskId}" has already ended (cancelled); it cannot be cancelled`,
  })
  await assert.rejects(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), {
    code: -32603,
    message: `MCP error -32603: task "${taskId}" was cancelled`,
  })
})

test("2025-11-25 over streamable HTTP: another session cannot see, wait on or cancel a session's task", T, async () => {
  const { tool, release, running } = gated()
  const url = await serve([tool])
  const { client: mine } = await httpClient(url)
  const { client: theirs } = await httpClient(url)
  const created = await mine.request(
    { method: "tools/call", params: { name: "job", arguments: { n: 2 }, task: {} } },
    CreateTaskResultSchema,
  )
  const { taskId } = created.task
  await running
  const missing = { code: -32602, message: `MCP error -32602: no task "${taskId}": it does not exist, or it expired` }
  await assert.rejects(theirs.experimental.tasks.getTask(taskId), missing)
  await assert.rejects(theirs.experimental.tasks.cancelTask(taskId), missing)
  await assert.rejects(theirs.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), missing)
  assert.deepEqual((await theirs.experimental.tasks.listTasks()).tasks, [])
  // Still the first session's, and still running.
  assert.equal((await mine.experimental.tasks.getTask(taskId)).status, "working")
  release()
  assert.deepEqual((await mine.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).content, [{ type: "text", text: "done 2" }])
  assert.deepEqual((await mine.experimental.tasks.listTasks()).tasks.map((t) => t.taskId), [taskId])
})

test("2025-11-25 over a stateless endpoint: no tasks capability, and a task tool is an ordinary call", T, async () => {
  const add = defineTool({ name: "add", task: "optional", run: () => "added" })
  const toolkit = await createToolkit({ extraTools: [add] })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0", { stateless: true })
  const { client } = await httpClient(`${handle.url}/mcp`)
  assert.equal(client.getServerCapabilities().tasks, undefined)
  assert.deepEqual((await client.callTool({ name: "add", arguments: {} })).content, [{ type: "text", text: "added" }])
})

test("2025-11-25 over portable sessions (a state key): a task stays on the replica that made it", T, async () => {
  const KEY = "tasks-test-state-key-of-32-bytes"
  const { tool, release, running } = gated()
  const urls = []
  for (let i = 0; i < 2; i++) {
    const toolkit = await createToolkit({ extraTools: [tool] })
    defer(() => toolkit.close())
    urls.push(`${(await toolkit.serve("127.0.0.1:0", { stateKey: KEY })).url}/mcp`)
  }
  // Every request goes to replica `at`, the session's sealed id and all.
  let at = 0
  const routed = (url, init) => fetch(urls[at], init)
  const client = new Client({ name: "sdk", version: "1" }, { capabilities: { tasks: {} } })
  await client.connect(new StreamableHTTPClientTransport(new URL(urls[0]), { fetch: routed }))
  defer(() => client.close())
  assert.deepEqual(client.getServerCapabilities().tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } })
  const created = await client.request(
    { method: "tools/call", params: { name: "job", arguments: { n: 3 }, task: {} } },
    CreateTaskResultSchema,
  )
  const { taskId } = created.task
  await running
  // The other replica carries the session on, but not its tasks: not found, in words.
  at = 1
  await assert.rejects(client.experimental.tasks.getTask(taskId), {
    code: -32602,
    message: `MCP error -32602: no task "${taskId}": it does not exist, or it expired`,
  })
  assert.deepEqual((await client.experimental.tasks.listTasks()).tasks, [])
  at = 0
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, "working")
  release()
  assert.deepEqual((await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).content, [{ type: "text", text: "done 3" }])
})
