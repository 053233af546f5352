// Served tools run as tasks (defineTool({ task })), in the 2026-07-28 era's tasks extension
// (io.modelcontextprotocol/tasks), on the wire over loopback HTTP: the call is answered with a
// task at once, tasks/get follows it to its end and inlines its result, tasks/update answers what
// it waits on, tasks/cancel ends it (its run's ctx.signal fires), a tool's isError result
// completes it and a throw fails it. No SDK client speaks this era's tasks yet, so the client is
// raw JSON-RPC over fetch(). (deferTask: serve-tasks-defer.test.mjs; the 2025-11-25 era:
// serve-tasks-stdio.test.mjs and serve-tasks-http.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { TASKS, wire, until } from "./lib/tasks-wire.mjs"
import { gated, refusingAndBreaking, tasksHarness } from "./lib/serve-tasks.mjs"

const T = { timeout: 60000 }
const { defer, serve } = tasksHarness(afterEach)

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
