// What the serve-tasks-*.test.mjs files share: a toolkit serving tools on 127.0.0.1:0 (closed
// after the test), a task tool held until the test releases it, a task tool that refuses and one
// that throws, and the TypeScript SDK's messages of one task-augmented call.
import { createToolkit, defineTool } from "toolnexus"
import { deferredCleanup } from "../helpers.mjs"

/**
 * The clean-up a tasks test file registers with `afterEach` (`defer(fn)` adds to it), and
 * `serve(tools)`: a fresh toolkit serving `tools`, resolving its endpoint's URL.
 */
export function tasksHarness(afterEach) {
  const defer = deferredCleanup(afterEach)
  async function serve(tools) {
    const toolkit = await createToolkit({ extraTools: tools })
    defer(() => toolkit.close())
    const handle = await toolkit.serve("127.0.0.1:0")
    return `${handle.url}/mcp`
  }
  return { defer, serve }
}

/** A task tool whose run waits until `release()`, noting whether its signal fired (and why). */
export function gated(name = "job") {
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

/** A task tool whose result is an error (`refuses`), and one that throws (`breaks`). */
export function refusingAndBreaking() {
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

/** The SDK's messages of one task-augmented call, in order. */
export async function stream(client, name, args, ttl = 60000) {
  const messages = []
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task: { ttl } })) messages.push(m)
  return messages
}
