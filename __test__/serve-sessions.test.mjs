// How long sessions of a served toolkit live and how many may (crates/engine/src/serve/http/sessions.rs): a
// session no request names for `sessionIdleTimeout` is answered 404, as after DELETE; opening
// one beyond `maxSessions` ends the idlest; and a client that never DELETEs cannot grow the
// serving process without bound. The server runs in a process of its own
// (fixtures/session-server.mjs, or `toolnexus serve`) so its memory is read from /proc; the
// clients are raw HTTP over a keep-alive agent on loopback.
import { test, after } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import http from "node:http"
import path from "node:path"
import { createToolkit } from "toolnexus"
import { fixture, isAlive, repoRoot, rejection, tmpConfig, waitFor } from "./helpers.mjs"

const T = { timeout: 120000 }
const VERSION = "2025-11-25"
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
after(() => agent.destroy())

/** Starts `node ...args` and resolves once it printed its URL; `stop()` ends it and waits. */
async function start(args, pattern) {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)))
  const url = await new Promise((resolve, reject) => {
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d) => {
      out += d
      const m = pattern.exec(out)
      if (m) resolve(new URL(`${m[1]}/mcp`))
    })
    child.on("close", (code) => reject(new Error(`exited (${code}) before serving; stderr:\n${stderr}`)))
  })
  const stop = async (signal) => {
    if (signal) child.kill(signal)
    else child.stdin.end()
    const code = await exited
    assert.equal(isAlive(child.pid), false)
    return code
  }
  return { pid: child.pid, url, stop }
}

/** A toolkit served in its own process with these `serve` options. */
const served = (options = {}) => start([fixture("session-server.mjs"), JSON.stringify(options)], /served (\S+)/)

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024

function post(url, body, headers = {}, method = "POST") {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (d) => (text += d))
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }))
      },
    )
    req.on("error", reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "sessions-test", version: "1" } },
}

/** An `initialize` (and `notifications/initialized` unless `bare`); the session's headers. */
async function open(url, { bare = false } = {}) {
  const res = await post(url, INITIALIZE)
  assert.equal(res.status, 200, res.text)
  const headers = { "mcp-session-id": res.headers["mcp-session-id"], "mcp-protocol-version": VERSION }
  if (!bare) assert.equal((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status, 202)
  return headers
}

let ids = 1
/** A `tools/call` in the session: its HTTP status (and the tool's text when 200). */
async function call(url, session, name = "hello", args = {}) {
  const res = await post(url, { jsonrpc: "2.0", id: ids++, method: "tools/call", params: { name, arguments: args } }, session)
  if (res.status !== 200) return { status: res.status, text: res.text }
  return { status: 200, text: JSON.parse(res.text).result.content[0].text }
}

/** `n` bare initializes, 16 at a time. */
async function burst(url, n) {
  let left = n
  const worker = async () => {
    while (left > 0) {
      left--
      await open(url, { bare: true })
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
}

test("20 000 sessions never DELETEd grow the serving process by less than 150 MB (default bounds)", T, async () => {
  const server = await served()
  try {
    await burst(server.url, 300) // the allocator's and the runtime's first growth
    const first = await open(server.url)
    assert.equal((await call(server.url, first)).status, 200)
    const before = rssMb(server.pid)
    await burst(server.url, 20000)
    const grown = rssMb(server.pid) - before
    console.log(`20000 sessions: RSS ${before.toFixed(1)} MB before, grew by ${grown.toFixed(1)} MB`)
    assert.ok(grown < 150, `grew by ${grown.toFixed(1)} MB`)
    // The cap (500 by default) ended the idlest sessions, the first among them.
    assert.deepEqual(await call(server.url, first), { status: 404, text: "Not Found: Session not found" })
    const last = await open(server.url)
    assert.deepEqual(await call(server.url, last), { status: 200, text: "hello" })
  } finally {
    await server.stop()
  }
})

test("sessions that expire hand their memory back", T, async () => {
  const server = await served({ sessionIdleTimeout: 5000, maxSessions: 100000 })
  try {
    await burst(server.url, 300)
    const before = rssMb(server.pid)
    await burst(server.url, 4000)
    const peak = rssMb(server.pid)
    assert.ok(peak - before > 50, `4000 live sessions took ${(peak - before).toFixed(1)} MB`)
    // Every session of the burst is idle now; once they have expired the memory comes back.
    const settled = await waitFor(
      () => {
        const now = rssMb(server.pid)
        return now - before < (peak - before) / 4 && now
      },
      { timeout: 30000, interval: 100, message: "memory of expired sessions returned" },
    )
    console.log(`4000 sessions: RSS ${before.toFixed(1)} MB, ${peak.toFixed(1)} MB after the burst, ${settled.toFixed(1)} MB once expired`)
  } finally {
    await server.stop()
  }
})

test("an idle session expires (404, like a deleted one) while a used one and one in a long call live on", T, async () => {
  const server = await served({ sessionIdleTimeout: 1500 })
  try {
    const idle = await open(server.url)
    const used = await open(server.url)
    const calling = await open(server.url)
    const streaming = await open(server.url)
    // A call that runs past the timeout keeps its session: idle time counts from its end.
    const long = call(server.url, calling, "sleep", { ms: 2500 })
    // So does an open GET stream (rmcp's road).
    const stream = new AbortController()
    const opened = await fetch(server.url, { headers: { accept: "text/event-stream", ...streaming }, signal: stream.signal })
    assert.equal(opened.status, 200)
    const started = performance.now()
    while (performance.now() - started < 2600) {
      assert.deepEqual(await call(server.url, used), { status: 200, text: "hello" })
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.deepEqual(await long, { status: 200, text: "slept 2500" })
    assert.deepEqual(await call(server.url, calling), { status: 200, text: "hello" })
    stream.abort()
    assert.deepEqual(await call(server.url, streaming), { status: 200, text: "hello" })
    assert.deepEqual(await call(server.url, idle), { status: 404, text: "Not Found: Session not found" })
    // Gone for every method, as after DELETE (and a DELETE now is acknowledged, as a second
    // DELETE is).
    assert.equal((await post(server.url, undefined, idle, "GET")).status, 404)
    assert.equal((await post(server.url, undefined, idle, "DELETE")).status, 200)
    assert.equal((await call(server.url, idle)).status, 404)
    assert.deepEqual(await call(server.url, used), { status: 200, text: "hello" })
  } finally {
    await server.stop()
  }
})

test("beyond maxSessions the idlest session is ended; recently used ones answer", T, async () => {
  const server = await served({ maxSessions: 3 })
  try {
    const a = await open(server.url)
    const b = await open(server.url)
    const c = await open(server.url)
    assert.equal((await call(server.url, a)).status, 200) // b is now the idlest
    const d = await open(server.url)
    assert.deepEqual(await call(server.url, b), { status: 404, text: "Not Found: Session not found" })
    for (const session of [a, c, d]) assert.deepEqual(await call(server.url, session), { status: 200, text: "hello" })
    const e = await open(server.url) // now a is the idlest
    assert.equal((await call(server.url, a)).status, 404)
    for (const session of [c, d, e]) assert.equal((await call(server.url, session)).status, 200)
  } finally {
    await server.stop()
  }
})

test("toolnexus serve --max-sessions / --session-idle-timeout bound the sessions; bad values are usage errors", T, async () => {
  const bin = path.join(repoRoot, "bin", "toolnexus.mjs")
  const config = tmpConfig({ mcpServers: {} })
  const gw = await start([bin, "serve", config, "--addr", "127.0.0.1:0", "--max-sessions", "2", "--session-idle-timeout", "60000"], /serving \d+ tools at (\S+)\/mcp/)
  try {
    const a = await open(gw.url)
    const b = await open(gw.url)
    await open(gw.url)
    const list = (session) => post(gw.url, { jsonrpc: "2.0", id: ids++, method: "tools/list" }, session)
    assert.equal((await list(a)).status, 404)
    assert.equal((await list(b)).status, 200)
  } finally {
    assert.equal(await gw.stop("SIGTERM"), 0)
  }
  for (const [flag, value, what] of [
    ["--max-sessions", "0", "a positive whole number"],
    ["--max-sessions", "many", "a positive whole number"],
    ["--session-idle-timeout", "soon", "a positive number of milliseconds"],
    ["--session-idle-timeout", "1.5", "a positive number of milliseconds"],
  ]) {
    const child = spawn(process.execPath, [bin, "serve", config, flag, value], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    const code = await new Promise((resolve) => child.on("close", resolve))
    assert.equal(code, 2, stderr)
    assert.ok(stderr.startsWith(`toolnexus serve: ${flag} must be ${what}, got "${value}"\n`), stderr)
  }
})

test("serve rejects session bounds that are not positive numbers, in words", T, async () => {
  const toolkit = await createToolkit({ builtins: false })
  try {
    const cases = [
      [{ sessionIdleTimeout: 0 }, "toolnexus: sessionIdleTimeout must be a number of milliseconds from 1 to 1e12, got 0"],
      [{ sessionIdleTimeout: Infinity }, "toolnexus: sessionIdleTimeout must be a number of milliseconds from 1 to 1e12, got Infinity"],
      [{ sessionIdleTimeout: "5000" }, "toolnexus: sessionIdleTimeout must be a number, got string"],
      [{ maxSessions: 2.5 }, "toolnexus: maxSessions must be a whole number from 1 to 1e9, got 2.5"],
      [{ maxSessions: -1 }, "toolnexus: maxSessions must be a whole number from 1 to 1e9, got -1"],
    ]
    for (const [options, message] of cases) {
      const error = await rejection(toolkit.serve("127.0.0.1:0", options))
      assert.equal(error.message, message, JSON.stringify(options))
    }
  } finally {
    await toolkit.close()
  }
})
