// Tasks through a served gateway (createToolkit({ mcpConfig }).serve): a relayed tool keeps its
// `execution`; a front client's task-augmented call becomes a gateway task whose run calls the
// upstream as a task too; tasks/get follows it to its end, tasks/result (2025-11-25) or the
// inlined result (2026-07-28) is the upstream's; a front's tasks/cancel reaches the upstream as
// tasks/cancel; the gateway's task ids are its own and its session's alone; an upstream task
// that fails fails the gateway's task. Upstreams: server-everything (stdio) and an SDK task
// server over streamable HTTP (fixtures/sdk-task-server.mjs, in this process, so what it
// received can be read).
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import { createRequire } from "node:module"
import { createToolkit } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup } from "./helpers.mjs"
import { wire, until } from "./lib/tasks-wire.mjs"
import { seen, startTaskHttp } from "./fixtures/sdk-task-server.mjs"

const T = { timeout: 90000 }
const defer = deferredCleanup(afterEach)
const require = createRequire(import.meta.url)
const serverEverything = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist", "index.js")
const everything = { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 }

async function gateway(mcpConfig) {
  const toolkit = await createToolkit({ mcpConfig })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  return `${handle.url}/mcp`
}

async function upstream() {
  const server = await startTaskHttp()
  defer(() => server.close())
  return { type: "streamable-http", url: server.url }
}

/** A TypeScript SDK front client (2025-11-25, declaring tasks) in a session of `url`. */
async function front(url, capabilities = {}) {
  const client = new Client({ name: "front", version: "1" }, { capabilities: { tasks: {}, ...capabilities } })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  defer(() => client.close())
  return client
}

function taskCall(client, name, args) {
  return client.request({ method: "tools/call", params: { name, arguments: args, task: { ttl: 60000 } } }, CreateTaskResultSchema)
}

/** tasks/get until the task ends; resolves every status seen, in order, repeats folded. */
async function follow(client, taskId) {
  const statuses = []
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId)
    if (statuses.at(-1) !== task.status) statuses.push(task.status)
    if (["completed", "failed", "cancelled"].includes(task.status)) return statuses
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Waits (bounded by the test's timeout) until `check()` holds. */
async function eventually(check) {
  while (!check()) await new Promise((r) => setTimeout(r, 20))
}

test("2025-11-25 front: server-everything's task-required tool keeps execution, and a task-augmented call through the gateway is followed by tasks/get to completion, then tasks/result", T, async () => {
  const url = await gateway({ everything })
  const client = await front(url)
  const { tools } = await client.listTools()
  assert.deepEqual(tools.find((t) => t.name === "everything_simulate-research-query").execution, { taskSupport: "required" })

  const created = await taskCall(client, "everything_simulate-research-query", { topic: "gateways" })
  assert.match(created.task.taskId, /^[A-Za-z0-9_-]{16,}$/)
  assert.equal(created.task.status, "working")
  assert.deepEqual(await follow(client, created.task.taskId), ["working", "completed"])
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)
  assert.equal(result.isError ?? false, false)
  assert.match(result.content[0].text, /^# Research Report: gateways\n/)
  assert.match(result.content[0].text, /Stage 4: Generating report ✓/)
  assert.deepEqual(result._meta["io.modelcontextprotocol/related-task"], { taskId: created.task.taskId })

  // The task is this session's: another front client of the same gateway does not see it.
  const other = await front(url)
  await assert.rejects(other.experimental.tasks.getTask(created.task.taskId), { code: -32602 })
  assert.deepEqual((await other.experimental.tasks.listTasks()).tasks, [])
})

test("2025-11-25 front: the gateway's task mirrors the upstream task's statusMessage", T, async () => {
  const url = await gateway({ t: await upstream() })
  const client = await front(url)
  const created = await taskCall(client, "t_required-steps", { text: "mirrored" })
  assert.equal(created.task.statusMessage, undefined)
  assert.deepEqual(await follow(client, created.task.taskId), ["working", "completed"])
  const done = await client.experimental.tasks.getTask(created.task.taskId)
  assert.equal(done.statusMessage, "step 2")
})

test("2025-11-25 front: the upstream task's elicitation reaches the front client while the gateway's task runs, and its answer shapes the result", T, async () => {
  const url = await gateway({ everything })
  const client = await front(url, { elicitation: {} })
  const asked = []
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message)
    return { action: "accept", content: { interpretation: "programming" } }
  })
  const created = await taskCall(client, "everything_simulate-research-query", { topic: "python", ambiguous: true })
  assert.equal((await follow(client, created.task.taskId)).at(-1), "completed")
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)
  assert.match(result.content[0].text, /^# Research Report: python \(programming\)\n/)
  assert.equal(asked.length, 1)
  assert.match(asked[0], /could have multiple interpretations/)
})

test("a gateway task runs as a task upstream; the front's tasks/cancel cancels the upstream task", T, async () => {
  const url = await gateway({ t: await upstream() })
  const client = await front(url)
  seen.methods.length = 0
  seen.cancelled.length = 0

  // An optional upstream tool, called as a task at the front, is a task upstream too.
  const sleep = await taskCall(client, "t_optional-sleep", { ms: 50, text: "zzz" })
  assert.equal((await follow(client, sleep.task.taskId)).at(-1), "completed")
  const slept = await client.experimental.tasks.getTaskResult(sleep.task.taskId, CallToolResultSchema)
  assert.deepEqual(slept.content, [{ type: "text", text: "slept 50 ms: zzz" }])
  assert.ok(seen.methods.includes("tasks/result") || seen.methods.includes("tasks/get"), JSON.stringify(seen.methods))

  // A task that works until cancelled: the front cancels the gateway's task, the gateway
  // cancels the upstream's.
  const forever = await taskCall(client, "t_required-forever", {})
  await eventually(() => seen.methods.filter((m) => m === "tools/call").length === 2)
  const cancelled = await client.experimental.tasks.cancelTask(forever.task.taskId)
  assert.equal(cancelled.status, "cancelled")
  await eventually(() => seen.cancelled.length === 1)
  assert.ok(seen.methods.includes("tasks/cancel"), JSON.stringify(seen.methods))
  assert.equal((await client.experimental.tasks.getTask(forever.task.taskId)).status, "cancelled")
})

test("2026-07-28 front: a gateway task over an upstream task, tasks/get to completion with the result inlined; an upstream task that fails fails the gateway's", T, async () => {
  const url = await gateway({ t: await upstream() })
  const request = wire(url)
  const listed = (await request("tools/list")).result.tools
  assert.deepEqual(listed.find((t) => t.name === "t_required-steps").execution, { taskSupport: "required" })

  const created = (await request("tools/call", { name: "t_required-steps", arguments: { text: "relayed" } })).result
  assert.equal(created.resultType, "task")
  assert.equal(created.status, "working")
  const done = await until(request, created.taskId, ["completed", "failed", "cancelled"])
  assert.equal(done.status, "completed")
  assert.deepEqual(done.result.content, [{ type: "text", text: "done: relayed" }])
  // The gateway's task says what the upstream's said last.
  assert.equal(done.statusMessage, "step 2")

  const failing = (await request("tools/call", { name: "t_required-fails", arguments: {} })).result
  const failed = await until(request, failing.taskId, ["completed", "failed", "cancelled"])
  assert.equal(failed.status, "failed")
  assert.match(failed.error.message, /gave up/)
})
