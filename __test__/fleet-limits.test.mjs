// Issue 43, step 2, "limits once per fleet": three replicas of one served toolkit
// (__test__/fixtures/replica.mjs with `limits` from REPLICA_LIMITS) share a state key and one
// real redis-server on loopback (`stateStore`), so their rate limits' token buckets are in the
// store and the fleet allows each rate once, not once per replica. A caller's rate (every MCP
// POST takes a token; without auth the caller is its address, 127.0.0.1 here) spent through
// one replica is spent on all: the request past the burst is HTTP 429 with Retry-After and a
// JSON-RPC error in words on whichever replica it reaches, where the same fleet without a store
// lets the burst through on each replica. A tool's rate is the fleet's too: its second call,
// through another replica, is a tool error in words and never runs. With Redis stopped, each
// replica's own buckets count (requests are answered, or refused 429, never 503). Requests go
// straight to each replica's URL (2026-07-28, sessionless), so which replica answers is known.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { startRedis } from "./lib/redis.mjs"
import { startServing, stopAll } from "./lib/serving.mjs"
import { wire } from "./lib/tasks-wire.mjs"
import { deferredCleanup, fixture } from "./helpers.mjs"

const T = { timeout: 180000 }
const KEY = "fleet-limits-SECRET-key-0123456789"
const NAMES = ["replica-1", "replica-2", "replica-3"]
/** The store's bound on one operation (crates/engine/src/bounds.rs SERVE_STORE_TIMEOUT), ms. */
const STORE_BOUND = 2000
/** Each caller: 1 call a minute, bursts of 4. */
const CALLER_LIMITS = { callsPerMinute: 1, burst: 4 }
const FLOODED = /^Too many requests: the limit for each caller allows 1 call a minute \(bursts of 4\); retry in (\d+) s$/
const TOOL_LIMITS = { tools: { job: { callsPerMinute: 1, burst: 1 } } }
const JOB_REFUSED = /^Too many calls: the limit of tool job allows 1 call a minute \(bursts of 1\); retry in (59|60) s$/

const defer = deferredCleanup(afterEach)

/**
 * Three replicas named NAMES sharing KEY, with `limits`, each with the store `store` (empty:
 * none, each replica keeps its own buckets); resolves them and their `/mcp` URLs.
 */
async function startFleet(store, limits, extra = {}) {
  const env = { REPLICA_STATE_KEY: KEY, REPLICA_STATE_STORE: store, REPLICA_LIMITS: JSON.stringify(limits), ...extra }
  const replicas = NAMES.map((name) => ({ name, ...startServing(defer, [fixture("replica.mjs")], { ...env, REPLICA_NAME: name }) }))
  const urls = await Promise.all(replicas.map((r) => r.url))
  return { replicas, mcp: urls.map((u) => `${u}/mcp`) }
}

let rpcId = 0

/** A sessionless 2026-07-28 `tools/list` at `mcp`: { status, retryAfter, body, ms }. */
async function listTools(mcp) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "fleet-limits", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {},
  }
  const started = Date.now()
  const response = await fetch(mcp, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "tools/list", params: { _meta: meta } }),
  })
  const text = await response.text()
  const data = text.split("\n").filter((l) => l.startsWith("data:") && l.length > 5).map((l) => JSON.parse(l.slice(5)))
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: data.length ? data.at(-1) : JSON.parse(text), ms: Date.now() - started }
}

/** Asserts `answer` is a tools/list answered with the replica's tools. */
function assertListed(answer, where) {
  assert.equal(answer.status, 200, `${where}: ${JSON.stringify(answer)}`)
  assert.deepEqual(answer.body.result?.tools?.map((t) => t.name).sort(), ["confirm", "summarize"], where)
}

/**
 * Asserts `answer` is the caller's limit's refusal: 429, Retry-After a whole number of seconds
 * (the bucket refills 1 a minute, so a minute less what has passed), and the JSON-RPC error in
 * the same words naming the same wait.
 */
function assertFlooded(answer, where) {
  assert.equal(answer.status, 429, `${where}: ${JSON.stringify(answer)}`)
  assert.match(answer.retryAfter ?? "", /^\d+$/, where)
  const retryAfter = Number(answer.retryAfter)
  assert.ok(retryAfter >= 55 && retryAfter <= 60, `${where}: Retry-After ${retryAfter}`)
  assert.equal(answer.body.jsonrpc, "2.0")
  assert.equal(answer.body.error?.code, -32000, where)
  const words = FLOODED.exec(answer.body.error.message)
  assert.ok(words, `${where}: ${answer.body.error.message}`)
  assert.equal(words[1], answer.retryAfter, `${where}: the words name the header's wait`)
}

test("a caller's rate is the fleet's: bursts of 4 across three replicas sharing Redis, the 5th request refused 429 on whichever replica it reaches (without a store: 4 on each replica)", T, async () => {
  const redis = await startRedis(defer)
  const shared = await startFleet(redis.url, CALLER_LIMITS)
  // Round-robin over the replicas: 1, 2, 3, 1, 2, 3.
  const answers = []
  for (let i = 0; i < 6; i++) answers.push(await listTools(shared.mcp[i % 3]))
  answers.slice(0, 4).forEach((a, i) => assertListed(a, `request ${i + 1} (${NAMES[i % 3]})`))
  // The 5th reaches replica 2 and the 6th replica 3, each of which answered one request only.
  answers.slice(4).forEach((a, i) => assertFlooded(a, `request ${i + 5} (${NAMES[(i + 4) % 3]})`))
  // Every replica refuses now, replica 1 (which took two of the four) included.
  for (const [i, mcp] of shared.mcp.entries()) assertFlooded(await listTools(mcp), `then ${NAMES[i]}`)
  await stopAll(shared.replicas)

  // The same fleet without a store: each replica has its bucket, 4 each (12 in all).
  const apart = await startFleet("", CALLER_LIMITS)
  const each = []
  for (let i = 0; i < 15; i++) each.push(await listTools(apart.mcp[i % 3]))
  each.slice(0, 12).forEach((a, i) => assertListed(a, `without a store, request ${i + 1} (${NAMES[i % 3]})`))
  each.slice(12).forEach((a, i) => assertFlooded(a, `without a store, request ${i + 13} (${NAMES[i % 3]})`))
  await stopAll(apart.replicas)
})

test("a tool's rate is the fleet's: `job` (1 a minute, bursts of 1) called through replica 1, then through replica 2 is a tool error in words and does not run (without a store, it runs)", T, async () => {
  const redis = await startRedis(defer)
  const shared = await startFleet(redis.url, TOOL_LIMITS, { REPLICA_TASKS: "1" })
  // Without the tasks extension a task tool's call is answered plainly.
  const call = (i, n) => wire(shared.mcp[i], { extensions: false })("tools/call", { name: "job", arguments: { n, ms: 0 } })
  const first = await call(0, 1)
  assert.deepEqual(first.result?.content, [{ type: "text", text: "done 1 (replica-1)" }], JSON.stringify(first))
  assert.notEqual(first.result.isError, true)
  for (const [i, n] of [
    [1, 2],
    [2, 3],
    [0, 4],
  ]) {
    const refused = await call(i, n)
    assert.equal(refused.error, undefined, JSON.stringify(refused))
    assert.equal(refused.result?.isError, true, `${NAMES[i]}: ${JSON.stringify(refused)}`)
    assert.equal(refused.result.content?.length, 1, JSON.stringify(refused))
    assert.match(refused.result.content[0].text, JOB_REFUSED, NAMES[i])
  }
  // Only job 1 ran, on replica 1.
  assert.deepEqual(
    shared.replicas.map((r) => [1, 2, 3, 4].map((n) => r.count(`started job ${n}`))),
    [
      [1, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ],
  )
  await stopAll(shared.replicas)

  // Without a store each replica has the tool's bucket: the second call, through replica 2, runs.
  const apart = await startFleet("", TOOL_LIMITS, { REPLICA_TASKS: "1" })
  const own = (i, n) => wire(apart.mcp[i], { extensions: false })("tools/call", { name: "job", arguments: { n, ms: 0 } })
  assert.deepEqual((await own(0, 1)).result?.content, [{ type: "text", text: "done 1 (replica-1)" }])
  assert.deepEqual((await own(1, 2)).result?.content, [{ type: "text", text: "done 2 (replica-2)" }])
  const again = await own(0, 3)
  assert.equal(again.result?.isError, true, JSON.stringify(again))
  assert.match(again.result.content[0].text, JOB_REFUSED)
  await stopAll(apart.replicas)
})

test("Redis stopped: each replica's own buckets count, its burst answered and the next refused 429, another replica still answering (never 503)", T, async () => {
  const redis = await startRedis(defer)
  const limits = { callsPerMinute: 1, burst: 2 }
  const { replicas, mcp } = await startFleet(redis.url, limits)
  await redis.stop()
  const timed = async (url, where) => {
    const answer = await listTools(url)
    // Each request waits for the store's failure first, within its bound.
    assert.ok(answer.ms < STORE_BOUND + 1500, `${where} took ${answer.ms} ms`)
    return answer
  }
  assertListed(await timed(mcp[0], "replica-1, request 1"), "replica-1, request 1")
  assertListed(await timed(mcp[0], "replica-1, request 2"), "replica-1, request 2")
  const flooded = await timed(mcp[0], "replica-1, request 3")
  assert.equal(flooded.status, 429, JSON.stringify(flooded))
  assert.match(flooded.retryAfter ?? "", /^\d+$/)
  assert.ok(Number(flooded.retryAfter) >= 55 && Number(flooded.retryAfter) <= 60, flooded.retryAfter)
  assert.equal(flooded.body.error?.code, -32000)
  assert.equal(flooded.body.error.message, `Too many requests: the limit for each caller allows 1 call a minute (bursts of 2); retry in ${flooded.retryAfter} s`)
  // Replica 2's own bucket is full: its burst passes, the next is refused.
  assertListed(await timed(mcp[1], "replica-2, request 1"), "replica-2, request 1")
  assertListed(await timed(mcp[1], "replica-2, request 2"), "replica-2, request 2")
  assert.equal((await timed(mcp[1], "replica-2, request 3")).status, 429)
  for (const r of replicas) assert.ok(!r.stderr().includes("SECRET"), `${r.name}'s output named the key`)
  await stopAll(replicas)
})
