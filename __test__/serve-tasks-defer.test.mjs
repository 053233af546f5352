// Served deferTask tools (defineTool({ task, deferTask: true })) in the 2026-07-28 era's tasks
// extension, on the wire over loopback HTTP: the run asks in the call, then ctx.startTask() turns
// the call into a task whose later asks are the task's; tasks/cancel fires its ctx.signal; where
// the call cannot become a task, ctx.startTask() resolves false.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { wire, until } from "./lib/tasks-wire.mjs"
import { tasksHarness } from "./lib/serve-tasks.mjs"

const T = { timeout: 60000 }
const { defer, serve } = tasksHarness(afterEach)

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
