// Issue 25, "any replica serves any request": replicas of one served toolkit share a state key,
// so behind a plain round-robin balancer (a real nginx on loopback, no affinity) a tool whose
// `run` asks for input (ctx.elicit, ctx.sample) still answers every call, in both eras, driven by
// the official Python client. In the 2026-07-28 era the sealed `requestState` lets a retry that
// reaches another replica run `run` again with the answers it carries; in the handshake era the
// sealed `Mcp-Session-Id` is accepted by any replica and an answer that reaches another replica
// is forwarded to the one that asked. A changed state, or one sealed with another key, is
// -32602; and without a key (as before) retries that reach another replica fail, which is why
// the key exists.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { startNginx as startNginxOn } from "./lib/nginx.mjs"
import { startServing as serving } from "./lib/serving.mjs"
import { PYTHON, deferredCleanup, descendants, describePids, fixture, isAlive, nodeFixture, repoRoot, tmpConfig, tmpFile } from "./helpers.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const T = { timeout: 180000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const KEY = "replicas-SECRET-key-0123456789abcdef"
const OTHER_KEY = "another-SECRET-key-fedcba9876543210"
const CALLS = 12
const ERAS = [
  ["legacy", "2025-11-25"],
  ["2026-07-28", "2026-07-28"],
]
const NOT_ISSUED = "requestState is not one this server issued, or its call waited too long and ended"

const defer = deferredCleanup(afterEach)

const startServing = (argv, env) => serving(defer, argv, env)

/** A replica of __test__/fixtures/replica.mjs named `name`, with `key` (none when undefined). */
const startReplica = (name, key) => startServing([fixture("replica.mjs")], { REPLICA_NAME: name, REPLICA_STATE_KEY: key ?? "" })

/**
 * nginx round-robin over `urls` (lib/nginx.mjs) with `hits(from)`: each replica's POSTs since
 * line `from` of the access log (asserting every POST succeeded and went to a replica).
 */
async function startNginx(urls) {
  const nginx = await startNginxOn(defer, urls)
  return {
    ...nginx,
    hits(from = 0) {
      const entries = nginx.log(from)
      const hits = new Map(nginx.upstreams.map((u) => [u, 0]))
      for (const { addr, status, method, line } of entries) {
        if (method !== "POST") continue
        assert.match(status, /^20[02]$/, `every proxied POST succeeded: ${line}`)
        assert.ok(hits.has(addr), `a POST went to ${addr}, not one of the replicas: ${line}`)
        hits.set(addr, hits.get(addr) + 1)
      }
      return { hits: Object.fromEntries(hits), lines: entries.length }
    },
  }
}

/** The Python driver (python/replica_client.py); resolves its JSON report. */
function replicaClient(url, mode, calls, tool, args) {
  const script = path.join(here, "python", "replica_client.py")
  const argv = [script, url, mode, String(calls), ...(tool === undefined ? [] : [tool, JSON.stringify(args)])]
  return new Promise((resolve, reject) => {
    execFile(PYTHON, argv, { timeout: 120000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python replica client (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve({ report: JSON.parse(stdout), stderr })
    })
  })
}

/** The report's outputs with the finishing replica's name cut off each text. */
const withoutReplica = (outputs) => outputs.map((o) => ("text" in o ? { ...o, text: o.text.replace(/ \([^()]*\)$/, "") } : o))

/** What the fixture's tools answer when every call succeeds (replica names cut off). */
const EXPECTED = Array.from({ length: CALLS }, (_, i) => [
  { tool: "confirm", i, text: `item-${i}: ok=true by Ada`, isError: false },
  { tool: "summarize", i, text: `summary of text-${i}: short`, isError: false },
]).flat()

/** Stops `servers` with SIGTERM: each exits 0 and leaves no process behind. */
async function stopAll(servers) {
  const trees = servers.flatMap((s) => [s.child.pid, ...descendants(s.child.pid)])
  for (const s of servers) s.child.kill("SIGTERM")
  for (const s of servers) {
    const end = await s.exited
    assert.equal(end.code, 0, end.stderr)
  }
  const left = trees.filter(isAlive)
  assert.deepEqual(left, [], `left running: ${describePids(left)}`)
}

test("three replicas sharing a state key behind nginx round-robin: 24 of 24 calls that elicit and sample succeed in each era, on all three replicas", T, async () => {
  const names = ["replica-1", "replica-2", "replica-3"]
  const replicas = names.map((name) => startReplica(name, KEY))
  const nginx = await startNginx(await Promise.all(replicas.map((r) => r.url)))
  let logged = 0
  for (const [mode, version] of ERAS) {
    const { report, stderr } = await replicaClient(nginx.front, mode, CALLS)
    assert.equal(report.fatal, undefined, `${mode}: ${stderr}`)
    assert.equal(report.protocolVersion, version)
    assert.deepEqual(withoutReplica(report.outputs), EXPECTED, mode)
    assert.equal(report.successes, 2 * CALLS, mode)
    assert.equal(report.failures, 0, mode)
    // Each input was asked for once, even when the retry ran `run` again on another replica.
    assert.deepEqual(report.elicitations, Array.from({ length: CALLS }, (_, i) => `Confirm item-${i}?`), mode)
    assert.deepEqual(report.samplings, Array.from({ length: CALLS }, (_, i) => `Summarise: text-${i}`), mode)
    // Round-robin with an even number of requests a call: calls end on every replica.
    assert.deepEqual(report.replicas, names, mode)
    const { hits, lines } = nginx.hits(logged)
    logged += lines
    for (const [upstream, n] of Object.entries(hits)) assert.ok(n > 0, `${mode}: replica ${upstream} got no POST: ${JSON.stringify(hits)}`)
  }
  await nginx.stop()
  await stopAll(replicas)
})

test("three `toolnexus serve --stateless --state-key-file` gateways over an upstream that elicits, behind nginx: every Python-client call succeeds in each era", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("elicit-server") } } })
  const keys = tmpFile("state-keys.txt")
  fs.writeFileSync(keys, `# sealing key first\n${KEY}\n${OTHER_KEY}\n`)
  const gateways = [1, 2, 3].map(() => startServing([BIN, "serve", config, "--addr", "127.0.0.1:0", "--stateless", "--state-key-file", keys, "--name", "gw"]))
  const nginx = await startNginx(await Promise.all(gateways.map((g) => g.url)))
  const answered = JSON.stringify({ action: "accept", content: { ok: true, by: "Ada", name: "Ada Lovelace" } })
  let logged = 0
  for (const [mode, version] of ERAS) {
    const { report, stderr } = await replicaClient(nginx.front, mode, CALLS, "up_raw-elicit", { mode: "form" })
    assert.equal(report.fatal, undefined, `${mode}: ${stderr}`)
    assert.equal(report.protocolVersion, version)
    assert.deepEqual(report.outputs, Array.from({ length: CALLS }, (_, i) => ({ tool: "up_raw-elicit", i, text: answered, isError: false })), mode)
    assert.equal(report.successes, CALLS, mode)
    assert.equal(report.failures, 0, mode)
    assert.deepEqual(report.elicitations, Array(CALLS).fill("Name?"), mode)
    const { hits, lines } = nginx.hits(logged)
    logged += lines
    for (const [upstream, n] of Object.entries(hits)) assert.ok(n > 0, `${mode}: gateway ${upstream} got no POST: ${JSON.stringify(hits)}`)
  }
  await nginx.stop()
  await stopAll(gateways)
})

test("three gateways over one 2026-07-28 upstream, behind nginx: a round whose retry reaches another gateway resumes the upstream's own round, so each call runs upstream once", T, async () => {
  const upstream = startServing([fixture("replica.mjs")], { REPLICA_NAME: "upstream", REPLICA_STATE_KEY: "", REPLICA_LOG_STARTS: "1" })
  const config = tmpConfig({ mcpServers: { up: { type: "streamable-http", url: `${await upstream.url}/mcp`, protocol: "2026-07-28" } } })
  const keys = tmpFile("state-keys.txt")
  fs.writeFileSync(keys, `${KEY}\n`)
  const gateways = [1, 2, 3].map(() => startServing([BIN, "serve", config, "--addr", "127.0.0.1:0", "--stateless", "--state-key-file", keys, "--name", "gw"]))
  const nginx = await startNginx(await Promise.all(gateways.map((g) => g.url)))
  let logged = 0
  for (const [mode, version] of ERAS) {
    const { report, stderr } = await replicaClient(nginx.front, mode, CALLS, "up_confirm", { item: "x" })
    assert.equal(report.fatal, undefined, `${mode}: ${stderr}`)
    assert.equal(report.protocolVersion, version)
    assert.deepEqual(report.outputs, Array.from({ length: CALLS }, (_, i) => ({ tool: "up_confirm", i, text: "x: ok=true by Ada (upstream)", isError: false })), mode)
    assert.deepEqual(report.elicitations, Array(CALLS).fill("Confirm x?"), mode)
    const { hits, lines } = nginx.hits(logged)
    logged += lines
    for (const [addr, n] of Object.entries(hits)) assert.ok(n > 0, `${mode}: gateway ${addr} got no POST: ${JSON.stringify(hits)}`)
  }
  await nginx.stop()
  await stopAll(gateways)
  upstream.child.kill("SIGTERM")
  const end = await upstream.exited
  assert.equal(end.code, 0, end.stderr)
  // One run upstream for each call: none was made afresh by the gateway its retry reached.
  const starts = end.stderr.split("\n").filter((l) => l === "started confirm x").length
  assert.equal(starts, CALLS * ERAS.length, end.stderr)
})

/** A 2026-07-28 `tools/call` of `confirm` POSTed to `url` + "/mcp" (`extra` joins its params); resolves the JSON-RPC message. */
let rpcId = 0
async function confirmCall(url, extra = {}) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  }
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "confirm",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "tools/call", params: { name: "confirm", arguments: { item: "wire" }, _meta: meta, ...extra } }),
  })
  const text = await response.text()
  const data = text.split("\n").filter((l) => l.startsWith("data:") && l.length > 5).map((l) => JSON.parse(l.slice(5)))
  return data.length ? data.at(-1) : JSON.parse(text)
}

/** `state` with one character in its middle changed (to another of the same alphabet). */
function flipped(state) {
  const at = Math.floor(state.length / 2)
  const c = state[at]
  const other = /[0-9]/.test(c) ? (c === "0" ? "1" : "0") : c === "A" || c === "a" ? (c === "A" ? "B" : "b") : c === c.toUpperCase() ? "A" : "a"
  return `${state.slice(0, at)}${other}${state.slice(at + 1)}`
}

test("2026-07-28 on the wire: a sealed requestState is taken by a replica sharing the key; changed, or sealed with another key, it is -32602", T, async () => {
  const [one, same, other] = [startReplica("one", KEY), startReplica("same-key", KEY), startReplica("other-key", OTHER_KEY)]
  const [oneUrl, sameUrl, otherUrl] = await Promise.all([one.url, same.url, other.url])

  const first = (await confirmCall(oneUrl)).result
  assert.equal(first.resultType, "input_required")
  const keys = Object.keys(first.inputRequests)
  assert.equal(keys.length, 1)
  assert.deepEqual(first.inputRequests[keys[0]], {
    method: "elicitation/create",
    params: { mode: "form", message: "Confirm wire?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" }, by: { type: "string" } }, required: ["ok", "by"] } },
  })
  assert.equal(typeof first.requestState, "string")
  const state = first.requestState
  const foreign = (await confirmCall(otherUrl)).result.requestState
  assert.equal(typeof foreign, "string")
  assert.notEqual(flipped(state), state)
  const inputResponses = { [keys[0]]: { action: "accept", content: { ok: true, by: "Eve" } } }

  // Refused, on the replica that parked the run and on one that did not (where only the seal can
  // tell): a changed state, and a state sealed with another key (both directions).
  for (const [where, url, requestState] of [
    ["flipped, at the replica that asked", oneUrl, flipped(state)],
    ["flipped, at another replica with the key", sameUrl, flipped(state)],
    ["another key's, at the replica that asked", oneUrl, foreign],
    ["another key's, at another replica with the key", sameUrl, foreign],
    ["ours, at the replica with another key", otherUrl, state],
  ]) {
    const refused = await confirmCall(url, { inputResponses, requestState })
    assert.equal(refused.result, undefined, `${where}: ${JSON.stringify(refused)}`)
    assert.equal(refused.error?.code, -32602, `${where}: ${JSON.stringify(refused)}`)
  }

  // Unchanged, at the replica that asked (a second call of its own): the parked run carries on.
  const second = (await confirmCall(oneUrl)).result
  assert.equal(second.resultType, "input_required")
  const resumed = await confirmCall(oneUrl, { inputResponses, requestState: second.requestState })
  assert.deepEqual(resumed.result?.content, [{ type: "text", text: "wire: ok=true by Eve (one)" }], JSON.stringify(resumed))

  // Unchanged, at another replica sharing the key: it runs `run` again with the answer, at once.
  const done = await confirmCall(sameUrl, { inputResponses, requestState: state })
  assert.deepEqual(done.result?.content, [{ type: "text", text: "wire: ok=true by Eve (same-key)" }], JSON.stringify(done))
  assert.equal(done.result.resultType, "complete")
  await stopAll([one, same, other])
})

test("without a state key (as before), behind nginx the 2026-07-28 retries that reach another replica fail: requestState names nothing there", T, async () => {
  const replicas = ["replica-1", "replica-2", "replica-3"].map((name) => startReplica(name, undefined))
  const nginx = await startNginx(await Promise.all(replicas.map((r) => r.url)))
  const { report, stderr } = await replicaClient(nginx.front, "2026-07-28", CALLS)
  assert.equal(report.fatal, undefined, stderr)
  assert.equal(report.protocolVersion, "2026-07-28")
  assert.equal(report.outputs.length, 2 * CALLS)
  assert.equal(report.successes + report.failures, 2 * CALLS)
  const failed = report.outputs.filter((o) => "error" in o || o.isError)
  assert.ok(failed.length >= 1, `every call succeeded without a key: ${JSON.stringify(report)}`)
  assert.ok(
    failed.some((o) => (o.error ?? o.text).includes(NOT_ISSUED)),
    `no failure says "${NOT_ISSUED}": ${JSON.stringify(failed)}`,
  )
  await nginx.stop()
  await stopAll(replicas)
})
