// Tool calls run as tasks (issue 23, the client side), against real servers: server-everything's
// task-required simulate-research-query, an SDK-built task server (experimental tasks API) over
// stdio and streamable HTTP, and a hostile stdio server whose tasks go wrong. The 2026-07-28
// extension is covered by the Rust test in crates/engine/src/connect/session/tests_tasks.rs (an rmcp server
// with rmcp's TaskManager).
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { loadMcp } from "toolnexus"
import { nodeFixture, leakCheck, serverEverything } from "./helpers.mjs"
import { startTaskHttp } from "./fixtures/sdk-task-server.mjs"

const T = { timeout: 60000 }
// The sources a test opened are closed after it, before the leak check (registered after).
const opened = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()))
})
leakCheck(afterEach)

/** `source`, closed when the test ends. */
function closing(source) {
  opened.push(source)
  return source
}

const STAGES = ["Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report"]

/** server-everything's report for `topic` (simulate-research-query.js's generateResearchReport). */
function report(topicArg, clarification) {
  const topic = clarification ? `${topicArg} (${clarification})` : topicArg
  return `# Research Report: ${topic}

## Research Parameters
- **Topic**: ${topicArg}
${clarification ? `- **Clarification**: ${clarification}` : ""}

## Synthesis
This research query was processed through ${STAGES.length} stages:
${STAGES.map((s, i) => `- Stage ${i + 1}: ${s} ✓`).join("\n")}

---

## About This Demo (SEP-1686: Tasks)

This tool demonstrates MCP's task-based execution pattern for long-running operations:

**Task Lifecycle Demonstrated:**
1. \`tools/call\` with \`task\` parameter → Server returns \`CreateTaskResult\` (not the final result)
2. Client polls \`tasks/get\` → Server returns current status and \`statusMessage\`
3. Status progressed: \`working\` → ${clarification ? `\`input_required\` → \`working\` → ` : ""}\`completed\`
4. Client calls \`tasks/result\` → Server returns this final result

${
  clarification
    ? `**Elicitation Flow:**
When the query was ambiguous, the server sent an \`elicitation/create\` request
to the client. The task status changed to \`input_required\` while awaiting user input.
After receiving clarification ("${clarification}"), the task resumed processing and completed.
`
    : ""
}
**Key Concepts:**
- Tasks enable "call now, fetch later" patterns
- \`statusMessage\` provides human-readable progress updates
- Tasks have TTL (time-to-live) for automatic cleanup
- \`pollInterval\` suggests how often to check status
- Elicitation requests use \`relatedTask\` to queue via tasks/result (works on all transports)

*This is a simulated research report from the Everything MCP Server.*
`
}

/** The distinct statuses (with messages) heard, without the task id, checking it is one task's. */
/**
 * The statuses heard are `expected` in order, from its first to its last, each once: a poll may
 * miss a state that lasted less than its interval (the intermediate ones), never invent one or
 * reorder them.
 */
function assertHeardInOrder(heard, expected) {
  const got = statusesOf(heard)
  assert.deepEqual(got.at(0), expected.at(0), JSON.stringify(got))
  assert.deepEqual(got.at(-1), expected.at(-1), JSON.stringify(got))
  let at = 0
  for (const status of got) {
    while (at < expected.length && JSON.stringify(expected[at]) !== JSON.stringify(status)) at++
    assert.ok(at < expected.length, `${JSON.stringify(got)} is not in the order of ${JSON.stringify(expected)}`)
    at++
  }
}

function statusesOf(heard) {
  assert.ok(heard.length > 0, "onStatus was called")
  const ids = new Set(heard.map((s) => s.taskId))
  assert.equal(ids.size, 1, `one task: ${[...ids]}`)
  const [id] = ids
  assert.ok(typeof id === "string" && id.length > 0)
  return heard.map(({ taskId, ...rest }) => rest)
}

test("server-everything: simulate-research-query (task-required) runs as a task through loadMcp over stdio", T, async () => {
  const source = closing(await loadMcp({ mcpServers: { ev: { command: process.execPath, args: [serverEverything, "stdio"] } } }))
  const tool = source.tools.find((t) => t.name === "ev_simulate-research-query")
  assert.deepEqual(tool.execution, { taskSupport: "required" })
  const heard = []
  const result = await tool.execute({ topic: "tasks" }, { onStatus: (s) => heard.push(s) })
  assert.equal(result.isError, false)
  assert.equal(result.output, report("tasks"))
  assert.deepEqual(result.content, [{ type: "text", text: report("tasks") }])
  assert.deepEqual(result.metadata, { server: "ev" })
  // Polled at the server's 1 s interval: each stage is heard, then the end.
  assert.deepEqual(statusesOf(heard), [
    ...STAGES.map((s) => ({ status: "working", statusMessage: `${s}...` })),
    { status: "completed", statusMessage: "Generating report..." },
  ])
})

test("server-everything: an ambiguous research query asks waitFor for clarification while input_required", T, async () => {
  const asked = []
  const source = closing(
    await loadMcp(
      { mcpServers: { ev: { command: process.execPath, args: [serverEverything, "stdio"] } } },
      {
        waitFor: async (request) => {
          asked.push(request.message)
          return { ok: true, data: { interpretation: "programming" } }
        },
      },
    ),
  )
  const tool = source.tools.find((t) => t.name === "ev_simulate-research-query")
  const heard = []
  const result = await tool.execute({ topic: "python", ambiguous: true }, { onStatus: (s) => heard.push(s) })
  assert.equal(result.isError, false)
  assert.equal(result.output, report("python", "programming"))
  assert.deepEqual(asked, ['The research query "python" could have multiple interpretations. Please clarify what you\'re looking for:'])
  const statuses = statusesOf(heard).map((s) => s.status)
  assert.ok(statuses.includes("input_required"), JSON.stringify(statuses))
  assert.equal(statuses.at(-1), "completed")
})

/** The task fixture over stdio, and over streamable HTTP (in-process, 127.0.0.1:0). */
const transports = {
  stdio: async () => ({ config: { command: nodeFixture("sdk-task-server") }, seen: null, close: async () => {} }),
  http: async () => {
    const s = await startTaskHttp()
    const { seen } = await import("./fixtures/sdk-task-server.mjs")
    return { config: { url: s.url }, seen, close: () => s.close() }
  },
}

/** What the fixture server received: `{ methods, cancelled }`. */
async function seenBy(source, server) {
  if (server.seen) return server.seen
  const result = await source.tools.find((t) => t.name === "t_seen").execute({})
  return JSON.parse(result.output)
}

for (const [kind, start] of Object.entries(transports)) {
  test(`task fixture over ${kind}: optional with and without task, required, an isError result, a failed task`, T, async () => {
    const server = await start()
    const source = await loadMcp({ mcpServers: { t: server.config } })
    try {
      const tool = (name) => source.tools.find((t) => t.name === `t_${name}`)
      assert.deepEqual(tool("optional-sleep").execution, { taskSupport: "optional" })
      assert.deepEqual(tool("required-steps").execution, { taskSupport: "required" })

      const before = (await seenBy(source, server)).methods.length
      // Optional without `task`: an ordinary call (the server runs its task itself).
      const plainHeard = []
      const plain = await tool("optional-sleep").execute({ ms: 10, text: "plain" }, { onStatus: (s) => plainHeard.push(s) })
      assert.deepEqual([plain.output, plain.isError], ["slept 10 ms: plain", false])
      assert.deepEqual(plainHeard, [])
      let methods = (await seenBy(source, server)).methods.slice(before)
      assert.deepEqual(methods.filter((m) => m.startsWith("tasks/")), [])

      // Optional with `task: true`: a task, followed to its result.
      const heard = []
      const asTask = await tool("optional-sleep").execute({ ms: 60, text: "task" }, { task: true, onStatus: (s) => heard.push(s) })
      assert.deepEqual([asTask.output, asTask.isError], ["slept 60 ms: task", false])
      assert.deepEqual(statusesOf(heard).at(0), { status: "working" })
      assert.deepEqual(statusesOf(heard).at(-1), { status: "completed" })
      methods = (await seenBy(source, server)).methods.slice(before)
      assert.ok(methods.includes("tasks/get") && methods.includes("tasks/result"), JSON.stringify(methods))

      // Required: always a task; the status messages heard once each, in order.
      const steps = []
      const stepped = await tool("required-steps").execute({ text: "hi" }, { onStatus: (s) => steps.push(s) })
      assert.deepEqual([stepped.output, stepped.isError], ["done: hi", false])
      assertHeardInOrder(steps, [
        { status: "working" },
        { status: "working", statusMessage: "step 1" },
        { status: "working", statusMessage: "step 2" },
        { status: "completed", statusMessage: "step 2" },
      ])

      // A completed task whose result is an error, and a failed task: both isError results.
      const errorHeard = []
      const broke = await tool("required-error").execute({}, { onStatus: (s) => errorHeard.push(s) })
      assert.deepEqual({ output: broke.output, isError: broke.isError }, { output: "it broke", isError: true })
      assert.equal(statusesOf(errorHeard).at(-1).status, "completed")
      const failHeard = []
      const failed = await tool("required-fails").execute({}, { onStatus: (s) => failHeard.push(s) })
      assert.deepEqual({ output: failed.output, isError: failed.isError }, { output: "gave up", isError: true })
      assert.equal(statusesOf(failHeard).at(-1).status, "failed")
    } finally {
      await source.close()
      await server.close()
    }
  })

  test(`task fixture over ${kind}: an abort and a timeout cancel the task (tasks/cancel); the connection lives on`, T, async () => {
    const server = await start()
    const source = await loadMcp({ mcpServers: { t: server.config } })
    try {
      const forever = source.tools.find((t) => t.name === "t_required-forever")
      const ac = new AbortController()
      const heard = []
      const pending = forever.execute({}, { signal: ac.signal, onStatus: (s) => { heard.push(s); ac.abort() } })
      const aborted = await pending
      assert.deepEqual(aborted, { output: "MCP tool call aborted", isError: true, metadata: { server: "t" } })
      const [{ taskId }] = heard
      let seen = await seenBy(source, server)
      assert.ok(seen.methods.includes("tasks/cancel"), JSON.stringify(seen.methods))
      assert.ok(seen.cancelled.includes(taskId), `task ${taskId} cancelled: ${JSON.stringify(seen.cancelled)}`)

      const timedHeard = []
      const timedOut = await forever.execute({}, { timeout: 300, onStatus: (s) => timedHeard.push(s) })
      assert.deepEqual(timedOut, { output: "MCP tool call timed out after 300 ms", isError: true, metadata: { server: "t" } })
      seen = await seenBy(source, server)
      assert.ok(seen.cancelled.includes(timedHeard[0].taskId), JSON.stringify(seen.cancelled))

      // An already-aborted signal: nothing is sent.
      const count = seen.methods.length
      const pre = new AbortController()
      pre.abort()
      assert.deepEqual(await forever.execute({}, { signal: pre.signal }), { output: "MCP tool call aborted", isError: true, metadata: { server: "t" } })
      const after = (await seenBy(source, server)).methods.slice(count)
      assert.deepEqual(after.filter((m) => m !== "tools/call"), [])
      assert.ok(after.filter((m) => m === "tools/call").length <= 1)

      const still = await source.tools.find((t) => t.name === "t_required-steps").execute({ text: "again" })
      assert.equal(still.output, "done: again")
    } finally {
      await source.close()
      await server.close()
    }
  })
}

test("task fixture over stdio: an elicitation inside a task reaches waitFor", T, async () => {
  const asked = []
  const source = closing(
    await loadMcp(
      { mcpServers: { t: { command: nodeFixture("sdk-task-server") } } },
      {
        waitFor: async (request) => {
          asked.push(request)
          return { ok: true, data: { answer: "yes" } }
        },
      },
    ),
  )
  const heard = []
  const result = await source.tools.find((t) => t.name === "t_required-ask").execute({}, { onStatus: (s) => heard.push(s) })
  assert.deepEqual([result.output, result.isError], ["you said: yes", false])
  assert.equal(asked.length, 1)
  assert.equal(asked[0].kind, "input")
  assert.equal(asked[0].message, "What do you say?")
  assertHeardInOrder(heard, [
    { status: "input_required", statusMessage: "waiting for an answer" },
    { status: "working", statusMessage: "answered" },
    { status: "completed", statusMessage: "answered" },
  ])
})

// A task's progress reaches onProgress and restarts the call's timeout: 4 × 150 ms is longer than
// the 400 ms timeout, each progress restarts it; without progress in time, the timeout ends it.
// The SDK task server, and toolnexus's own served task in both eras (a 2026-07-28 extension
// task's progress comes under the token of the call that made the task; its end is heard only
// by polling, so a last tasks/get at the deadline finds a task that ended between polls).
const progressServers = [
  ["task fixture over stdio", { command: nodeFixture("sdk-task-server") }, "t_required-progress"],
  ...["2025-11-25", "2026-07-28"].map((protocol) => [`toolnexus-served task over stdio (${protocol})`, { command: nodeFixture("task-server"), protocol }, "t_ticks"]),
]
for (const [label, server, name] of progressServers) {
  test(`${label}: the task's progress reaches onProgress and restarts the timeout`, T, async () => {
    const source = closing(await loadMcp({ mcpServers: { t: server } }))
    const tool = source.tools.find((t) => t.name === name)
    const heard = []
    const result = await tool.execute({ steps: 4, ms: 150 }, { timeout: 400, onProgress: (p) => heard.push(p) })
    assert.deepEqual({ output: result.output, isError: result.isError }, { output: "4 steps", isError: false })
    assert.deepEqual(heard, [1, 2, 3, 4].map((progress) => ({ progress, total: 4 })))
    const late = await tool.execute({ steps: 1, ms: 600 }, { timeout: 300 })
    assert.deepEqual({ output: late.output, isError: late.isError }, { output: "MCP tool call timed out after 300 ms", isError: true })
  })
}

test("a bad ctx.task is the call's error, in words", T, async () => {
  const source = closing(await loadMcp({ mcpServers: { t: { command: nodeFixture("sdk-task-server") } } }))
  const result = await source.tools.find((t) => t.name === "t_optional-sleep").execute({ ms: 1, text: "x" }, { task: "yes" })
  assert.deepEqual(result, { output: "toolnexus: ctx.task must be a boolean, got string", isError: true, metadata: { server: "t" } })
})

/** The hostile task server in `mode`, its `job` called once: the result and what it saw. */
async function hostile(mode, ctx = {}) {
  const source = await loadMcp({ mcpServers: { h: { command: nodeFixture("task-hostile", mode) } } })
  const heard = []
  const result = await source.tools.find((t) => t.name === "h_job").execute({}, { ...ctx, onStatus: (s) => heard.push(s) })
  const seen = JSON.parse((await source.tools.find((t) => t.name === "h_seen").execute({})).output)
  await source.close()
  return { result: { output: result.output, isError: result.isError }, heard, seen }
}

test("hostile task servers: garbage task ids, statuses and intervals are failures in words", T, async () => {
  assert.deepEqual((await hostile("garbage-id")).result, {
    output: "MCP tool call failed: the server's task id is 42, not a non-empty string",
    isError: true,
  })
  assert.deepEqual((await hostile("garbage-status")).result, {
    output: 'MCP tool call failed: the server gave task "job-1" the status "sleeping", which is not a task status',
    isError: true,
  })
  assert.deepEqual((await hostile("bad-interval")).result, {
    output: 'MCP tool call failed: the server gave task "job-1" a pollInterval of "soon", not a number of milliseconds',
    isError: true,
  })
})

test("hostile task servers: a huge pollInterval is capped at 5 s, a zero one floored at 10 ms and backed off while nothing changes", T, async () => {
  const huge = await hostile("huge-interval")
  assert.deepEqual(huge.result, { output: "job done", isError: false })
  assert.equal(huge.seen.gets.length, 1)
  const zero = await hostile("zero-interval")
  assert.deepEqual(zero.result, { output: "job done", isError: false })
  const gets = zero.seen.gets
  const gaps = gets.slice(1).map((t, i) => t - gets[i])
  assert.ok(gaps.every((g) => g >= 9), `tasks/get gaps (ms): ${gaps}`)
  // The task says the same each time: after a second at the 10 ms floor the waits double
  // (20, 40, … up to 5 s), where the 0 ms suggestion alone would have the call poll a hundred
  // times a second for as long as it lives (about 150 polls in these 2.5 s).
  assert.ok(gets.length <= 110, `${gets.length} tasks/get`)
  const late = gets.filter((t) => t - gets[0] >= 1500)
  assert.ok(late.length <= 5, `${late.length} tasks/get after 1.5 s: ${late.map((t) => t - gets[0])}`)
})

test("a task's tasks/result waits as long as progress keeps the call alive (it has no timeout of its own)", T, async () => {
  // The result comes 800 ms after it is asked for, with progress every 100 ms: a 400 ms timeout
  // restarted by each progress never runs out.
  const slow = await hostile("slow-result", { timeout: 400 })
  assert.deepEqual(slow.result, { output: "job done", isError: false })
  assert.ok(slow.seen.methods.includes("tasks/result"), JSON.stringify(slow.seen.methods))
  assert.ok(!slow.seen.methods.includes("tasks/cancel"), JSON.stringify(slow.seen.methods))
})

test("hostile task servers: a status notification storm is followed (no poll needed), bounded; a task that never ends times out and is cancelled", T, async () => {
  const storm = await hostile("storm")
  assert.deepEqual(storm.result, { output: "job done", isError: false })
  // The last notification said completed: the result was asked for without waiting for a
  // tasks/get (the task's pollInterval is 5 s), unless the storm outran the bounded queue of
  // notifications and that one was dropped: then one poll found the task completed.
  assert.ok(storm.seen.gets.length <= 1, `${storm.seen.gets.length} tasks/get`)
  assert.ok(storm.heard.length <= 2002, `${storm.heard.length} statuses heard`)
  assert.deepEqual(storm.heard.at(-1), { taskId: "job-1", status: "completed" })

  const never = await hostile("never", { timeout: 400 })
  assert.deepEqual(never.result, { output: "MCP tool call timed out after 400 ms", isError: true })
  assert.ok(never.seen.methods.includes("tasks/cancel"), JSON.stringify(never.seen.methods))
})
