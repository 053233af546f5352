// Served task tools in the 2025-11-25 era (the `tasks` capability) over stdio and an SDK
// transport, with the TypeScript SDK's experimental tasks client: a task-augmented call,
// tasks/get, tasks/result, tasks/list, notifications/tasks/status, tasks/cancel, and a requested
// ttl that expires. (The Python client has no tasks client.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { buildMcpServer } from "toolnexus"
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup } from "./helpers.mjs"
import { refusingAndBreaking, stream } from "./lib/serve-tasks.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)

const here = path.dirname(fileURLToPath(import.meta.url))

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
