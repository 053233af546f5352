// Issue 43, step 3, "tasks on any replica": three replicas of one served toolkit
// (__test__/fixtures/replica.mjs with its task tools `job` and `ask`, and portable handshake-era
// sessions) share a state key and one real redis-server on loopback (`stateStore`), behind a
// real nginx round-robin with no affinity. A task started through one replica is read, waited
// on, listed, answered and cancelled through any other, in both eras: 2025-11-25 (the
// TypeScript SDK's tasks client in a portable session, its requests sent to one replica's URL or
// another's, or through nginx) and 2026-07-28 (the tasks extension on the raw wire, sessionless).
// A cancel through another replica fires the run's ctx.signal on the replica running it; a
// replica killed mid-task leaves its task `failed` in words once its lease lapses; a session
// does not see another's tasks. With Redis stopped a task that cannot be recorded is refused
// (not started), and one that cannot be read fails in words; once Redis is back (empty) new
// tasks work again. Which replica runs a task is read from its stderr ("started job <n>").
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { once } from "node:events"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { startNginx } from "./lib/nginx.mjs"
import { startRedis } from "./lib/redis.mjs"
import { sseMessages } from "./lib/serve.mjs"
import { startServing, stopAll, until as untilDone } from "./lib/serving.mjs"
import { wire } from "./lib/tasks-wire.mjs"
import { deferredCleanup, fixture } from "./helpers.mjs"

const T = { timeout: 180000 }
const KEY = "fleet-tasks-SECRET-key-0123456789"
const NAMES = ["replica-1", "replica-2", "replica-3"]
/** The store's bound on one operation (crates/engine/src/bounds.rs SERVE_STORE_TIMEOUT), ms. */
const STORE_BOUND = 2000
/** A runner's lease on its task (bounds.rs SERVE_TASK_LEASE), ms, and the slack past it. */
const LEASE = 6000
const LEASE_SLACK = 4000
/** How long a status change (or a run's signal) may take to cross the fleet, ms. */
const SPREAD = 10000
/** How long recovery may take once Redis is back (reconnection is automatic), ms. */
const RECOVERY = 20000
const LOST = "the replica running this task stopped renewing its lease (it stopped, or lost the state store): the task's run is lost"
/** A task's status message when the replica running it stopped gracefully (fleet/link.rs RUNNER_STOPPED). */
const STOPPED = "the replica running this task stopped: the task's run is lost"
/** What a 2025-11-25 server announces of tasks. */
const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } }

const defer = deferredCleanup(afterEach)

/** A replica of __test__/fixtures/replica.mjs named `name` with its task tools and sessions, sharing KEY and the store `store`. */
function startReplica(name, store) {
  const env = { REPLICA_NAME: name, REPLICA_STATE_KEY: KEY, REPLICA_STATE_STORE: store, REPLICA_TASKS: "1", REPLICA_SESSIONS: "1" }
  return { name, ...startServing(defer, [fixture("replica.mjs")], env) }
}

/** One Redis, three replicas sharing it and the key, and nginx over them; resolves their `/mcp` URLs too. */
async function startFleet() {
  const redis = await startRedis(defer)
  const replicas = NAMES.map((name) => startReplica(name, redis.url))
  const urls = await Promise.all(replicas.map((r) => r.url))
  const nginx = await startNginx(defer, urls)
  return { redis, replicas, mcp: urls.map((u) => `${u}/mcp`), nginx }
}

/** `until` of lib/serving.mjs, bounded by SPREAD unless told. */
const until = (what, attempt, done, bound = SPREAD) => untilDone(what, attempt, done, bound, 50)

/** The index of the one replica whose stderr shows `started job <n>` (waited for, bounded). */
async function runnerOf(replicas, n) {
  const line = `started job ${n}`
  const counts = await until(`a replica started job ${n}`, () => replicas.map((r) => r.count(line)), (c) => c.some((k) => k > 0))
  assert.equal(counts.reduce((a, b) => a + b, 0), 1, `job ${n} started once in the fleet: ${counts}`)
  return counts.indexOf(1)
}

/** Waits (bounded) until `replica`'s stderr has the line `line`. */
const sawLine = (replica, line) => until(`${replica.name} wrote "${line}"`, () => replica.count(line), (k) => k > 0)

/**
 * A TypeScript SDK client declaring tasks, in a portable session opened at `first`; each of its
 * HTTP requests goes where `to(url)` last pointed it (a replica's `/mcp` URL or nginx's), and is
 * noted in `sent` ({ rpc, to }: the JSON-RPC method, or the HTTP method when there is none).
 */
async function sdkClient(first) {
  let target = first
  const sent = []
  const routed = (url, init) => {
    const to = target
    let rpc = init?.method ?? "GET"
    try {
      rpc = JSON.parse(init.body).method ?? rpc
    } catch {}
    sent.push({ rpc, to })
    return fetch(to, init)
  }
  const client = new Client({ name: "fleet-tasks", version: "1" }, { capabilities: { tasks: {} } })
  // Reconnections of the standalone stream to a replica stopped or killed are expected.
  client.onerror = () => {}
  const transport = new StreamableHTTPClientTransport(new URL(first), { fetch: routed })
  defer(() => client.close())
  await client.connect(transport)
  assert.match(transport.sessionId ?? "", /^[A-Za-z0-9_-]{100,}$/, "a portable (sealed) session id")
  assert.deepEqual(client.getServerCapabilities().tasks, TASKS_CAPABILITY)
  /** The tasks client, its requests sent to `url` from now on. */
  const to = (url) => {
    target = url
    return client.experimental.tasks
  }
  /** A task-augmented 2025-11-25 `tools/call` of `job` {n, ms} sent to `url`: its `{task}`. */
  const startJob = async (url, n, ms) => {
    target = url
    const created = await client.request({ method: "tools/call", params: { name: "job", arguments: { n, ms }, task: {} } }, CreateTaskResultSchema)
    assert.equal(created.task.status, "working", JSON.stringify(created))
    assert.match(created.task.taskId, /^[0-9a-f]{32}$/)
    return created.task
  }
  return { client, transport, sent, to, startJob }
}

/** A 2026-07-28 `tools/call` of `name` declaring the tasks extension at `url`: the task it answers. */
async function startTask(url, name, args) {
  const answer = await wire(url)("tools/call", { name, arguments: args })
  const created = answer.result
  assert.equal(created?.resultType, "task", JSON.stringify(answer))
  assert.equal(created.status, "working")
  assert.match(created.taskId, /^[0-9a-f]{32}$/)
  return created
}

/** 2026-07-28 `tasks/get` of `taskId` at `url`: its result (failing on an error). */
async function getTask(url, taskId) {
  const answer = await wire(url)("tasks/get", { taskId })
  assert.equal(answer.error, undefined, `${url}: ${JSON.stringify(answer)}`)
  return answer.result
}

/** Waits (bounded) until `sent` has, from index `from` on, a `tasks/result`; resolves where it went. */
async function resultSent(sent, from) {
  const found = await until("tasks/result was sent", () => sent.slice(from).find((s) => s.rpc === "tasks/result"), (s) => s !== undefined)
  return found.to
}

/** nginx's access log entries so far. */
const logged = (nginx) => nginx.log().filter((e) => e.line)

/** Polls 2026-07-28 `tasks/get` at `url` until the task's status is `status` (bounded). */
const reaches = (url, taskId, status, bound = SPREAD) =>
  until(`task ${taskId} ${status} at ${url}`, () => getTask(url, taskId), (t) => t.status === status, bound)

test("2025-11-25: a task started through one replica is read, waited on and listed through every other, directly and through nginx", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const { client, sent, to, startJob } = await sdkClient(mcp[0])
  const task = await startJob(mcp[0], 1, 6000)
  assert.equal(await runnerOf(replicas, 1), 0, "the replica the call reached runs it")

  // Read through the other replicas directly, and three times through nginx (one per upstream).
  for (const url of [mcp[1], mcp[2]]) {
    const got = await to(url).getTask(task.taskId)
    assert.equal(got.taskId, task.taskId)
    assert.equal(got.status, "working", `${url}: ${JSON.stringify(got)}`)
  }
  const mark = logged(nginx).length
  for (let i = 0; i < 3; i++) {
    const got = await to(nginx.front).getTask(task.taskId)
    assert.equal(got.taskId, task.taskId)
    assert.equal(got.status, "working", JSON.stringify(got))
  }
  const posts = await until("nginx logged the three tasks/get", () => logged(nginx).slice(mark).filter((e) => e.method === "POST"), (l) => l.length >= 3)
  assert.deepEqual(posts.map((e) => e.addr).sort(), [...nginx.upstreams].sort(), "round-robin: one tasks/get per replica")

  // Listed through replica 3 (this session's only task).
  const listed = await to(mcp[2]).listTasks()
  assert.deepEqual(listed.tasks.map((t) => [t.taskId, t.status]), [[task.taskId, "working"]])

  // tasks/result through replica 2 waits for the run on replica 1.
  const from = sent.length
  const waiting = to(mcp[1]).getTaskResult(task.taskId, CallToolResultSchema)
  waiting.catch(() => {}) // handled below
  assert.equal(await resultSent(sent, from), mcp[1])
  assert.deepEqual((await waiting).content, [{ type: "text", text: "done 1 (replica-1)" }])

  // Ended: completed everywhere.
  for (const url of [...mcp, nginx.front, nginx.front, nginx.front]) {
    const got = await until(`completed at ${url}`, () => to(url).getTask(task.taskId), (t) => t.status === "completed")
    assert.equal(got.taskId, task.taskId)
  }
  const after = await to(nginx.front).listTasks()
  assert.deepEqual(after.tasks.map((t) => [t.taskId, t.status]), [[task.taskId, "completed"]])
  assert.deepEqual((await to(mcp[2]).getTaskResult(task.taskId, CallToolResultSchema)).content, [{ type: "text", text: "done 1 (replica-1)" }])
  assert.deepEqual(replicas.map((r) => r.count("started job 1")), [1, 0, 0], "ran once, where it was called")
  await client.close()
  await nginx.stop()
  await stopAll(replicas)
})

test("2025-11-25: tasks/cancel through another replica cancels the task, and its run's ctx.signal fires on the replica running it", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const { client, to, startJob } = await sdkClient(nginx.front)
  const task = await startJob(nginx.front, 2, 120000)
  const runner = await runnerOf(replicas, 2)
  const other = (runner + 1) % 3
  assert.equal((await to(mcp[other]).getTask(task.taskId)).status, "working")

  const cancelled = await to(mcp[other]).cancelTask(task.taskId)
  assert.equal(cancelled.taskId, task.taskId)
  assert.equal(cancelled.status, "cancelled")
  await sawLine(replicas[runner], "signal job 2")
  for (const url of [...mcp, nginx.front]) {
    const got = await to(url).getTask(task.taskId)
    assert.equal(got.status, "cancelled", `${url}: ${JSON.stringify(got)}`)
  }
  // As on one replica: its result is the cancellation, and it cannot be cancelled again.
  const third = (runner + 2) % 3
  await assert.rejects(to(mcp[third]).getTaskResult(task.taskId, CallToolResultSchema), {
    code: -32603,
    message: `MCP error -32603: task "${task.taskId}" was cancelled`,
  })
  await assert.rejects(to(mcp[third]).cancelTask(task.taskId), {
    code: -32602,
    message: `MCP error -32602: task "${task.taskId}" has already ended (cancelled); it cannot be cancelled`,
  })
  assert.deepEqual(
    replicas.map((r) => r.count("signal job 2")),
    replicas.map((_, i) => (i === runner ? 1 : 0)),
  )
  await client.close()
  await nginx.stop()
  await stopAll(replicas)
})

test("2025-11-25: a session's stream on one replica hears the status of its task running on another, and a DELETE through a third cancels its running task there", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const { client, transport, sent, to, startJob } = await sdkClient(mcp[0])
  const heard = []
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void heard.push(n.params))
  // The client's own stream (its GET) is on replica 1.
  await until("the session's stream was opened", () => sent.find((s) => s.rpc === "GET"), (s) => s !== undefined)
  assert.equal(sent.find((s) => s.rpc === "GET").to, mcp[0])
  const task = await startJob(mcp[1], 11, 1500)
  assert.equal(await runnerOf(replicas, 11), 1, "replica 2 runs it")
  const statuses = () => heard.filter((p) => p.taskId === task.taskId).map((p) => p.status)
  await until("replica 1's stream told of the task's end on replica 2", statuses, (s) => s.includes("completed"))
  assert.deepEqual(statuses(), ["completed"], "told once, with no news of its start")
  const told = heard.find((p) => p.taskId === task.taskId)
  assert.equal(told.ttl, task.ttl)
  assert.equal(told.createdAt, task.createdAt)

  // DELETE through replica 3: the task running on replica 2 is cancelled, its ctx.signal fires.
  const running = await startJob(mcp[1], 12, 120000)
  assert.equal(await runnerOf(replicas, 12), 1)
  to(mcp[2])
  await transport.terminateSession()
  await until("replica 2's run saw its signal", () => replicas[1].count("signal job 12"), (n) => n === 1)
  // The session is gone everywhere; a fresh one cannot see the task either.
  const other = await sdkClient(mcp[1])
  await assert.rejects(other.to(mcp[1]).getTask(running.taskId), /no task .* it does not exist, or it expired/)
  await other.client.close()
  await nginx.stop()
  await stopAll(replicas)
})

test("2025-11-25: a session's stream opened after its task ended on another replica (a client back from away) is told of that end at once", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const { transport, to, startJob } = await sdkClient(mcp[0])
  const task = await startJob(mcp[1], 13, 200)
  assert.equal(await runnerOf(replicas, 13), 1, "replica 2 runs it")
  await until("the task completed", () => to(mcp[2]).getTask(task.taskId), (t) => t.status === "completed")
  // The session's stream, opened on replica 3 only now, as a client's reconnection would be.
  const stream = new AbortController()
  defer(() => stream.abort())
  const res = await fetch(mcp[2], {
    headers: { accept: "text/event-stream", "mcp-session-id": transport.sessionId, "mcp-protocol-version": "2025-11-25" },
    signal: stream.signal,
  })
  assert.equal(res.status, 200)
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/)
  const told = []
  const bound = setTimeout(() => stream.abort(), SPREAD)
  try {
    for await (const message of sseMessages(res.body)) {
      if (message.method === "notifications/tasks/status" && message.params.taskId === task.taskId) {
        told.push(message.params)
        break
      }
    }
  } catch (err) {
    if (!stream.signal.aborted) throw err
  } finally {
    clearTimeout(bound)
  }
  assert.equal(told.length, 1, `the stream told of the ended task within ${SPREAD} ms`)
  assert.equal(told[0].status, "completed")
  assert.equal(told[0].createdAt, task.createdAt)
  stream.abort()
  await nginx.stop()
  await stopAll(replicas)
})

test("2025-11-25: another session sees none of a session's tasks, on any replica", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const mine = await sdkClient(nginx.front)
  const theirs = await sdkClient(nginx.front)
  const task = await mine.startJob(nginx.front, 3, 120000)
  const runner = await runnerOf(replicas, 3)
  const missing = { code: -32602, message: /no task .* it does not exist, or it expired/ }
  for (const url of [...mcp, nginx.front]) {
    await assert.rejects(theirs.to(url).getTask(task.taskId), missing, url)
    await assert.rejects(theirs.to(url).getTaskResult(task.taskId, CallToolResultSchema), missing, url)
    await assert.rejects(theirs.to(url).cancelTask(task.taskId), missing, url)
    assert.deepEqual((await theirs.to(url).listTasks()).tasks, [], url)
  }
  // Still the first session's, and still running.
  assert.equal((await mine.to(mcp[(runner + 1) % 3]).getTask(task.taskId)).status, "working")
  assert.equal(replicas[runner].count("signal job 3"), 0)
  assert.equal((await mine.to(mcp[(runner + 2) % 3]).cancelTask(task.taskId)).status, "cancelled")
  await sawLine(replicas[runner], "signal job 3")
  await mine.client.close()
  await theirs.client.close()
  await nginx.stop()
  await stopAll(replicas)
})

test("a replica killed mid-task: once its lease lapses the task is failed in words through the survivors, in both eras", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const { client, sent, to, startJob } = await sdkClient(nginx.front)
  const task = await startJob(nginx.front, 4, 120000)
  const runner = await runnerOf(replicas, 4)
  const survivors = [0, 1, 2].filter((i) => i !== runner).map((i) => mcp[i])
  // Another task of the session on the same replica, which only tasks/list will read.
  const listed = await startJob(mcp[runner], 13, 120000)
  // A 2026-07-28 task on the same replica.
  const wired = await startTask(mcp[runner], "job", { n: 5, ms: 120000 })
  await sawLine(replicas[runner], "started job 5")
  for (const url of survivors) {
    assert.equal((await to(url).getTask(task.taskId)).status, "working")
    assert.equal((await getTask(url, wired.taskId)).status, "working")
  }
  // A tasks/result waiting through a survivor when the runner dies.
  const from = sent.length
  let waitSettled = false
  const waiting = to(survivors[0])
    .getTaskResult(task.taskId, CallToolResultSchema)
    .finally(() => (waitSettled = true))
  waiting.catch(() => {}) // handled below
  assert.equal(await resultSent(sent, from), survivors[0])
  assert.equal(waitSettled, false)

  const killedAt = Date.now()
  replicas[runner].child.kill("SIGKILL")
  const end = await replicas[runner].exited
  assert.equal(end.signal, "SIGKILL")
  // Through the survivors' own URLs (nginx retries a dead upstream only for idempotent requests).
  let turn = 0
  const failed = await until(
    "the task failed through a survivor",
    () => to(survivors[turn++ % 2]).getTask(task.taskId),
    (t) => t.status !== "working",
    LEASE + LEASE_SLACK - (Date.now() - killedAt),
  )
  assert.equal(failed.status, "failed", JSON.stringify(failed))
  assert.equal(failed.statusMessage, LOST)
  for (const url of survivors) {
    const got = await to(url).getTask(task.taskId)
    assert.equal(got.status, "failed", `${url}: ${JSON.stringify(got)}`)
    assert.equal(got.statusMessage, LOST)
    await assert.rejects(to(url).getTaskResult(task.taskId, CallToolResultSchema), { code: -32603, message: `MCP error -32603: ${LOST}` })
  }
  await assert.rejects(waiting, { code: -32603, message: `MCP error -32603: ${LOST}` })
  assert.equal(waitSettled, true)
  // tasks/list finds the lapsed lease too: the task only it reads is failed, in the same words.
  // (That task's lease was renewed on a phase of its own, so it may lapse up to a renewal
  // period after the first one's: waited for within the same bound from the kill.)
  const list = await until(
    "tasks/list shows the other task's lease lapsed",
    async () => (await to(survivors[1]).listTasks()).tasks,
    (tasks) => tasks.find((t) => t.taskId === listed.taskId)?.status !== "working",
    Math.max(LEASE + LEASE_SLACK - (Date.now() - killedAt), 1),
  )
  assert.deepEqual(list.map((t) => t.taskId).sort(), [task.taskId, listed.taskId].sort())
  for (const t of list) assert.deepEqual([t.status, t.statusMessage], ["failed", LOST], JSON.stringify(t))
  // The 2026-07-28 task too, within the same bound from the kill.
  for (const url of survivors) {
    const got = await reaches(url, wired.taskId, "failed", Math.max(LEASE + LEASE_SLACK - (Date.now() - killedAt), 1))
    assert.equal(got.statusMessage, LOST, JSON.stringify(got))
  }
  await client.close()
  await nginx.stop()
  await stopAll(replicas.filter((_, i) => i !== runner))
})

test("a replica stopped gracefully mid-task (SIGTERM: handle.stop(), toolkit.close()) ends its task failed in words, not by its lease", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const { to, startJob } = await sdkClient(mcp[0])
  const task = await startJob(mcp[1], 21, 120000)
  assert.equal(await runnerOf(replicas, 21), 1, "replica 2 runs it")
  const runner = replicas[1]
  runner.child.kill("SIGTERM")
  const [code] = await once(runner.child, "exit")
  assert.equal(code, 0)
  // Its stop wrote the end: read at once through a survivor, with the stop's words, not the lease's.
  const ended = await to(mcp[2]).getTask(task.taskId)
  assert.equal(ended.status, "failed", JSON.stringify(ended))
  assert.equal(ended.statusMessage, STOPPED)
  await nginx.stop()
  await stopAll(replicas)
})

test("2026-07-28: a task is followed to its result, and cancelled, through other replicas and nginx", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  // Started through nginx: whichever replica took it runs it.
  const first = await startTask(nginx.front, "job", { n: 6, ms: 4000 })
  const runner = await runnerOf(replicas, 6)
  for (const i of [0, 1, 2].filter((i) => i !== runner)) {
    const got = await getTask(mcp[i], first.taskId)
    assert.equal(got.taskId, first.taskId)
    assert.equal(got.status, "working", JSON.stringify(got))
    assert.equal(got.result, undefined)
  }
  const done = await reaches(nginx.front, first.taskId, "completed", 4000 + SPREAD)
  assert.deepEqual(done.result.content, [{ type: "text", text: `done 6 (${NAMES[runner]})` }])
  for (const url of mcp) {
    const got = await getTask(url, first.taskId)
    assert.equal(got.status, "completed")
    assert.deepEqual(got.result.content, [{ type: "text", text: `done 6 (${NAMES[runner]})` }])
  }

  // Started on replica 1, cancelled through replica 2: replica 1's run sees its signal.
  const second = await startTask(mcp[0], "job", { n: 7, ms: 120000 })
  assert.equal(await runnerOf(replicas, 7), 0)
  assert.equal((await getTask(mcp[2], second.taskId)).status, "working")
  const ack = await wire(mcp[1])("tasks/cancel", { taskId: second.taskId })
  assert.deepEqual(ack.result, { resultType: "complete" }, JSON.stringify(ack))
  await sawLine(replicas[0], "signal job 7")
  for (const url of [mcp[2], nginx.front, ...mcp]) assert.equal((await getTask(url, second.taskId)).status, "cancelled", url)
  assert.deepEqual(replicas.map((r) => r.count("signal job 7")), [1, 0, 0])
  await nginx.stop()
  await stopAll(replicas)
})

test("2026-07-28: a task waiting on input is input_required through another replica, and tasks/update through a third answers it", T, async () => {
  const { replicas, mcp, nginx } = await startFleet()
  const task = await startTask(mcp[0], "ask", { item: "deploy" })
  await sawLine(replicas[0], "started ask deploy")
  // The status change reaches the store asynchronously.
  const waiting = await reaches(mcp[1], task.taskId, "input_required")
  const keys = Object.keys(waiting.inputRequests ?? {})
  assert.equal(keys.length, 1, JSON.stringify(waiting))
  assert.deepEqual(waiting.inputRequests[keys[0]], {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: "Confirm deploy?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" }, by: { type: "string" } }, required: ["ok", "by"] },
    },
  })
  const ack = await wire(mcp[2])("tasks/update", { taskId: task.taskId, inputResponses: { [keys[0]]: { action: "accept", content: { ok: true, by: "Eve" } } } })
  assert.deepEqual(ack.result, { resultType: "complete" }, JSON.stringify(ack))
  const done = await reaches(nginx.front, task.taskId, "completed")
  assert.deepEqual(done.result.content, [{ type: "text", text: "deploy: ok=true by Eve (replica-1)" }])
  for (const url of mcp) assert.deepEqual((await getTask(url, task.taskId)).result.content, done.result.content)
  assert.deepEqual(replicas.map((r) => r.count("started ask deploy")), [1, 0, 0], "ran once, on the replica it was called on")
  await nginx.stop()
  await stopAll(replicas)
})

test("Redis stopped: a task that cannot be recorded is refused, not started, and one that cannot be read fails in words; Redis back: new tasks work", T, async () => {
  const { redis, replicas, mcp, nginx } = await startFleet()
  const earlier = await startTask(mcp[0], "job", { n: 8, ms: 100 })
  await reaches(mcp[1], earlier.taskId, "completed")
  await redis.stop()

  // A call as a task: an ordinary isError result in words, within the store's bound, its run not started.
  let started = Date.now()
  const refused = await wire(mcp[1])("tools/call", { name: "job", arguments: { n: 9, ms: 100 } })
  let took = Date.now() - started
  assert.equal(refused.error, undefined, JSON.stringify(refused))
  assert.equal(refused.result.resultType, "complete", JSON.stringify(refused))
  assert.equal(refused.result.isError, true)
  assert.equal(refused.result.content.length, 1)
  assert.equal(refused.result.content[0].type, "text")
  const words = refused.result.content[0].text
  assert.ok(words.startsWith(`the task could not be recorded in the state store (${redis.url}`), words)
  assert.ok(words.includes("so its call was not started"), words)
  assert.ok(!words.includes("SECRET"))
  assert.ok(took < STORE_BOUND + 1500, `the refusal took ${took} ms`)
  assert.deepEqual(replicas.map((r) => r.count("started job 9")), [0, 0, 0])

  // tasks/get of an existing task: -32603 in words (a 2025-11-25 session's requests would be
  // refused earlier, its session being checked against the store: see fleet-store.test.mjs).
  started = Date.now()
  const unread = await wire(mcp[2])("tasks/get", { taskId: earlier.taskId })
  took = Date.now() - started
  assert.equal(unread.error?.code, -32603, JSON.stringify(unread))
  assert.ok(unread.error.message.startsWith("task "), unread.error.message)
  assert.ok(unread.error.message.includes(`could not be read from the state store (${redis.url}`), unread.error.message)
  assert.ok(took < STORE_BOUND + 1500, `the failure took ${took} ms`)

  // Redis back (empty) on the same port: a new task is recorded and runs (the same call until
  // it is taken: a refused attempt never starts).
  await redis.start()
  const task = await until(
    "a task was recorded again",
    () => wire(mcp[0])("tools/call", { name: "job", arguments: { n: 10, ms: 100 } }),
    (a) => a.result?.resultType === "task",
    RECOVERY,
  )
  assert.equal(task.result.status, "working")
  const done = await reaches(mcp[1], task.result.taskId, "completed")
  assert.deepEqual(done.result.content, [{ type: "text", text: "done 10 (replica-1)" }])
  assert.deepEqual(replicas.map((r) => r.count("started job 10")), [1, 0, 0])
  assert.deepEqual(replicas.map((r) => r.count("started job 9")), [0, 0, 0], "the refused call never ran")
  // The earlier task was in the Redis that restarted empty: gone.
  const gone = await wire(mcp[2])("tasks/get", { taskId: earlier.taskId })
  assert.deepEqual(gone.error, { code: -32602, message: `no task "${earlier.taskId}": it does not exist, or it expired` }, JSON.stringify(gone))
  for (const r of replicas) assert.ok(!r.stderr().includes("SECRET"), "a replica's output named the key")
  await nginx.stop()
  await stopAll(replicas)
})
