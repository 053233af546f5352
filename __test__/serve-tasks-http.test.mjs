// Served task tools in the 2025-11-25 era (the `tasks` capability) over streamable HTTP, with
// the TypeScript SDK's experimental tasks client: a task-augmented call, tasks/get, tasks/result,
// tasks/list, tasks/cancel, a session's DELETE ending its tasks, each session seeing only its own
// tasks, none over a stateless endpoint, and a task staying on the replica that made it.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { gated, stream, tasksHarness } from "./lib/serve-tasks.mjs"

const T = { timeout: 60000 }
const { defer, serve } = tasksHarness(afterEach)

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
