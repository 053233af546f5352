// Issue 43, step 1, "once per fleet": three replicas of one served toolkit share a state key and
// one real redis-server on loopback (`stateStore`), behind a real nginx round-robin with no
// affinity. The official Python client's calls that elicit and sample succeed in both eras; a
// replayed last retry of a `requestState` runs `run` once across the fleet (each replica refuses
// the replay, not only the one that took it); a session ended by DELETE on one replica is
// refused on every replica; `/readyz` reports the store. With Redis stopped, what needs it (a
// retry, a session's request, a DELETE) fails in words within the store's bound while the rest
// keeps working, and once Redis is back the same retry and session go on.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { startNginx } from "./lib/nginx.mjs"
import { startRedis } from "./lib/redis.mjs"
import { startServing, stopAll, until as untilDone } from "./lib/serving.mjs"
import { mcpPost } from "./lib/gateway.mjs"
import { PYTHON, deferredCleanup, fixture } from "./helpers.mjs"
import { createToolkit } from "toolnexus"

const here = path.dirname(fileURLToPath(import.meta.url))
const T = { timeout: 180000 }
const KEY = "fleet-SECRET-key-0123456789abcdef"
const CALLS = 6
/** The store's bound on one operation (crates/engine/src/bounds.rs SERVE_STORE_TIMEOUT), ms. */
const STORE_BOUND = 2000
/** How long recovery may take once Redis is back (reconnection is automatic). */
const RECOVERY = 20000
const REPLAYED = "requestState was already retried: its call went on from there (each state is answered once); make the call again"

const defer = deferredCleanup(afterEach)

/** A replica of __test__/fixtures/replica.mjs named `name`, sharing KEY and the store `store`. */
function startReplica(name, store) {
  const replica = startServing(defer, [fixture("replica.mjs")], { REPLICA_NAME: name, REPLICA_STATE_KEY: KEY, REPLICA_STATE_STORE: store, REPLICA_LOG_STARTS: "1" })
  /** How often `confirm`'s run started for `item` on this replica. */
  return { ...replica, starts: (item) => replica.count(`started confirm ${item}`) }
}

/** One Redis and three replicas sharing it and the key; resolves their URLs too. */
async function startFleet() {
  const redis = await startRedis(defer)
  const replicas = ["replica-1", "replica-2", "replica-3"].map((name) => startReplica(name, redis.url))
  const urls = await Promise.all(replicas.map((r) => r.url))
  return { redis, replicas, urls }
}

/** The Python driver (python/replica_client.py) against `url`; resolves its JSON report. */
function replicaClient(url, mode, calls) {
  const script = path.join(here, "python", "replica_client.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, url, mode, String(calls)], { timeout: 120000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python replica client (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve({ report: JSON.parse(stdout), stderr })
    })
  })
}

let rpcId = 0

/** A 2026-07-28 `tools/call` of `confirm` {item} at `mcp` (a `/mcp` URL), as its last message. */
async function confirmCall(mcp, item, extra = {}) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "fleet", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  }
  const response = await fetch(mcp, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "confirm",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "tools/call", params: { name: "confirm", arguments: { item }, _meta: meta, ...extra } }),
  })
  const text = await response.text()
  const data = text.split("\n").filter((l) => l.startsWith("data:") && l.length > 5).map((l) => JSON.parse(l.slice(5)))
  return data.length ? data.at(-1) : JSON.parse(text)
}

/** A first call of `confirm` {item} at `mcp`: its requestState and the retry's answer. */
async function firstRound(mcp, item) {
  const first = (await confirmCall(mcp, item)).result
  assert.equal(first?.resultType, "input_required", JSON.stringify(first))
  const [key] = Object.keys(first.inputRequests)
  return { requestState: first.requestState, inputResponses: { [key]: { action: "accept", content: { ok: true, by: "Eve" } } } }
}

/** A handshake-era session opened at `url`: its sealed id and the headers naming it. */
async function openSession(url) {
  const init = await mcpPost(url)
  assert.equal(init.status, 200, init.text)
  const session = init.headers.get("mcp-session-id")
  assert.match(session ?? "", /^[A-Za-z0-9_-]{100,}$/, "a portable (sealed) session id")
  return { "mcp-session-id": session, "mcp-protocol-version": init.json.result.protocolVersion }
}

const listTools = (url, headers) => mcpPost(url, { headers, body: { jsonrpc: "2.0", id: ++rpcId, method: "tools/list", params: {} } })
const deleteSession = (url, headers) => mcpPost(url, { headers, method: "DELETE" })

async function readyz(url) {
  const res = await fetch(`${url}/readyz`)
  return { status: res.status, body: await res.json() }
}

/** `until` of lib/serving.mjs, bounded by RECOVERY unless told. */
const until = (what, attempt, done, bound = RECOVERY) => untilDone(what, attempt, done, bound, 100)

test("three replicas sharing a state key and one Redis behind nginx: Python calls succeed in each era, and a replayed last retry runs `run` once across the fleet", T, async () => {
  const { replicas, urls } = await startFleet()
  const nginx = await startNginx(defer, urls)
  for (const mode of ["legacy", "2026-07-28"]) {
    const { report, stderr } = await replicaClient(nginx.front, mode, CALLS)
    assert.equal(report.fatal, undefined, stderr)
    assert.equal(report.successes, 2 * CALLS, `${mode}: ${JSON.stringify(report.outputs.filter((o) => "error" in o || o.isError))}`)
    assert.ok(report.replicas.length >= 2, `${mode}: answers came from ${report.replicas}`)
  }

  // The call's round on replica 1; its last retry taken by replica 2 (which runs it again with
  // the answer): two starts in all.
  const mcp = urls.map((u) => `${u}/mcp`)
  const retry = await firstRound(mcp[0], "replay")
  const done = await confirmCall(mcp[1], "replay", retry)
  assert.deepEqual(done.result?.content, [{ type: "text", text: "replay: ok=true by Eve (replica-2)" }], JSON.stringify(done))
  const starts = () => replicas.map((r) => r.starts("replay"))
  assert.deepEqual(starts(), [1, 1, 0])
  // The same retry replayed on every replica, and through the balancer: refused everywhere
  // (once per replica would have run it again on replicas 1 and 3).
  for (const url of [...mcp, nginx.front, nginx.front, nginx.front]) {
    const refused = await confirmCall(url, "replay", retry)
    assert.equal(refused.error?.code, -32602, `${url}: ${JSON.stringify(refused)}`)
    assert.equal(refused.error.message, REPLAYED)
  }
  assert.deepEqual(starts(), [1, 1, 0], "a replay never runs, on any replica")
  await nginx.stop()
  await stopAll(replicas)
})

test("a session ended by DELETE on one replica is refused on every replica; /readyz reports the store", T, async () => {
  const { redis, replicas, urls } = await startFleet()
  for (const url of urls) {
    const { status, body } = await readyz(url)
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(body.store?.url, redis.url)
    assert.equal(body.store.status, "ok")
    assert.equal(typeof body.store.ms, "number")
    assert.equal(body.store.error, undefined)
  }
  const session = await openSession(urls[0])
  const listed = await listTools(urls[1], session)
  assert.equal(listed.status, 200, listed.text)
  assert.deepEqual(listed.json.result.tools.map((t) => t.name).sort(), ["confirm", "summarize"])
  const deleted = await deleteSession(urls[2], session)
  assert.ok(deleted.status >= 200 && deleted.status < 300, `DELETE: ${deleted.status} ${deleted.text}`)
  for (const url of urls) {
    const refused = await listTools(url, session)
    assert.equal(refused.status, 404, `${url}: ${refused.status} ${refused.text}`)
  }
  // Another session is untouched.
  const other = await openSession(urls[1])
  assert.equal((await listTools(urls[0], other)).status, 200)
  await stopAll(replicas)
})

test("Redis stopped: what needs the store fails in words within its bound, the rest keeps working; Redis back: the same retry and session go on", T, async () => {
  const { redis, replicas, urls } = await startFleet()
  const mcp = urls.map((u) => `${u}/mcp`)
  const session = await openSession(urls[0])
  assert.equal((await listTools(urls[1], session)).status, 200)
  await redis.stop()
  const store = `${redis.url.replace(/\/$/, "")}`

  // Not needing the store: a first call (its round is sealed, not stored), a new session's
  // handshake, liveness, and readiness (still 200: the servers drive it), which names the outage.
  const retry = await firstRound(mcp[0], "outage")
  const fresh = await mcpPost(urls[2])
  assert.equal(fresh.status, 200, fresh.text)
  assert.equal((await fetch(`${urls[0]}/healthz`)).status, 200)
  const ready = await readyz(urls[0])
  assert.equal(ready.status, 200, JSON.stringify(ready.body))
  assert.equal(ready.body.store.url, store)
  assert.equal(ready.body.store.status, "unreachable")
  assert.equal(typeof ready.body.store.error, "string")
  assert.ok(!ready.body.store.error.includes("SECRET"))

  // A retry: -32603 in words within the bound, and not spent (tried twice, same words).
  const words = new RegExp(`^requestState could not be checked against the state store \\(${store.replace(/[.]/g, "\\.")}: .+\\); retry with the same requestState$`)
  for (const url of [mcp[1], mcp[2]]) {
    const started = Date.now()
    const failed = await confirmCall(url, "outage", retry)
    const took = Date.now() - started
    assert.equal(failed.error?.code, -32603, JSON.stringify(failed))
    assert.match(failed.error.message, words)
    assert.ok(took < STORE_BOUND + 1500, `the failure took ${took} ms`)
  }
  // A session's request and its DELETE: 503 with a JSON-RPC error in words; the session stays.
  const checked = await listTools(urls[1], session)
  assert.equal(checked.status, 503, checked.text)
  assert.match(checked.json?.error?.message ?? "", new RegExp(`^the session could not be checked: the state store failed \\(${store.replace(/[.]/g, "\\.")}: .+\\); retry in a moment$`))
  const notEnded = await deleteSession(urls[2], session)
  assert.equal(notEnded.status, 503, notEnded.text)
  assert.match(notEnded.json?.error?.message ?? "", /^the session could not be ended \(it stays open\): the state store failed/)
  assert.equal(replicas.reduce((n, r) => n + r.starts("outage"), 0), 1, "no retry ran during the outage")

  // Redis back (empty) on the same port: reconnection is automatic.
  await redis.start()
  const done = await until(
    "the retry went on",
    () => confirmCall(mcp[1], "outage", retry),
    (r) => r.error?.code !== -32603,
  )
  assert.deepEqual(done.result?.content, [{ type: "text", text: "outage: ok=true by Eve (replica-2)" }], JSON.stringify(done))
  const listed = await until(
    "the session answered",
    () => listTools(urls[2], session),
    (r) => r.status !== 503,
  )
  assert.equal(listed.status, 200, listed.text)
  const back = await until(
    "readiness saw the store",
    () => readyz(urls[0]),
    (r) => r.body.store?.status === "ok",
  )
  assert.equal(back.status, 200)
  // Once per fleet again: the replay is refused on another replica.
  const replayed = await confirmCall(mcp[0], "outage", retry)
  assert.equal(replayed.error?.message, REPLAYED, JSON.stringify(replayed))
  for (const r of replicas) assert.ok(!r.stderr().includes("SECRET"), "a replica's output named the key")
  await stopAll(replicas)
})

test("a store that wants a password the URL lacks, or gets a wrong one, is reported in words by /readyz, never with the password", T, async () => {
  const redis = await startRedis(defer, ["--requirepass", "right-SECRET-pw"])
  const toolkit = await createToolkit({ builtins: false })
  defer(() => toolkit.close())
  const cases = [
    [redis.url, "it needs a password, and the URL gives none (redis://:PASSWORD@host; from the environment with --state-store-env)"],
    [`redis://:wrong-SECRET-pw@127.0.0.1:${redis.port}`, "authentication failed (check the user name and password)"],
    [`redis://:right-SECRET-pw@127.0.0.1:${redis.port}`, undefined],
  ]
  for (const [stateStore, error] of cases) {
    const handle = await toolkit.serve("127.0.0.1:0", { stateKey: KEY, stateStore })
    const { status, body } = await readyz(handle.url)
    assert.equal(status, 200)
    assert.deepEqual(body.store && { url: body.store.url, status: body.store.status, error: body.store.error }, { url: redis.url, status: error === undefined ? "ok" : "unreachable", error })
    assert.ok(!JSON.stringify(body).includes("SECRET"))
    await handle.stop()
  }
})

test("a Redis that stops answering (frozen): a retry fails with \"no answer within 2 s\" within the bound, and goes on once it answers", T, async () => {
  const redis = await startRedis(defer)
  const replica = startReplica("frozen", redis.url)
  const mcp = `${await replica.url}/mcp`
  const retry = await firstRound(mcp, "frozen")
  redis.pause()
  defer(() => redis.resume())
  const started = Date.now()
  const failed = await confirmCall(mcp, "frozen", retry)
  const took = Date.now() - started
  assert.equal(failed.error?.code, -32603, JSON.stringify(failed))
  assert.equal(failed.error.message, `requestState could not be checked against the state store (${redis.url}: no answer within 2 s); retry with the same requestState`)
  assert.ok(took >= STORE_BOUND - 100 && took < STORE_BOUND + 1500, `the failure took ${took} ms`)
  const ready = await readyz(mcp.replace(/\/mcp$/, ""))
  assert.equal(ready.body.store.error, "no answer within 2 s")
  redis.resume()
  const done = await until(
    "the retry went on",
    () => confirmCall(mcp, "frozen", retry),
    (r) => r.error?.code !== -32603,
  )
  assert.deepEqual(done.result?.content, [{ type: "text", text: "frozen: ok=true by Eve (frozen)" }], JSON.stringify(done))
  await stopAll([replica])
})
