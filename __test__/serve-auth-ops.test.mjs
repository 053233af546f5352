// A served toolkit under auth (issue 22), operated: /healthz and /readyz outside auth, the
// access log (never arguments or tokens; a throwing one is a warning), and W3C trace context
// forwarded upstream.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool } from "toolnexus"
import { deferredCleanup, nodeFixture, waitFor } from "./helpers.mjs"
import { assertNoSecret, bearerSession, mcpPost, startGateway } from "./lib/gateway.mjs"
import { LIST, STATIC, TOKEN_A, TOKEN_B, call } from "./lib/serve-auth.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 90_000 }

test("/healthz and /readyz answer outside auth; readyz is 503 while a server is not connected", T, async () => {
  const { url } = await startGateway(defer, { auth: { tokens: STATIC } })
  const get = async (p, headers = {}) => {
    const res = await fetch(`${url}${p}`, { headers })
    return { status: res.status, type: res.headers.get("content-type") ?? "", body: await res.json() }
  }
  for (const headers of [{}, { authorization: "Bearer wrong" }]) {
    const health = await get("/healthz", headers)
    assert.equal(health.status, 200)
    assert.match(health.type, /^application\/json/)
    assert.deepEqual(health.body, { status: "ok" })
    const ready = await get("/readyz", headers)
    assert.equal(ready.status, 200)
    assert.deepEqual(ready.body, { status: "ready", servers: { up: "connected" } })
  }

  const broken = await startGateway(defer, { auth: { tokens: STATIC } }, { extraServers: { bad: { command: [process.execPath, "-e", "process.exit(3)"] } } })
  const res = await fetch(`${broken.url}/readyz`)
  assert.equal(res.status, 503)
  const body = await res.json()
  assert.equal(body.status, "not ready")
  assert.deepEqual(body.servers, { up: "connected", bad: "failed" })
  assert.deepEqual((await (await fetch(`${broken.url}/healthz`)).json()), { status: "ok" })
})

test("the access log: one entry per request with exactly its keys, never arguments or tokens", T, async () => {
  const entries = []
  const began = new Date()
  const { url } = await startGateway(defer, { auth: { tokens: STATIC }, accessLog: (e) => entries.push(e) })
  const secretArgument = "argument-value-5b1e0c"
  await fetch(`${url}/healthz`).then((r) => r.text())
  const headers = await bearerSession(url, TOKEN_B)
  await mcpPost(url, { token: TOKEN_B, headers, body: LIST })
  await mcpPost(url, { token: TOKEN_B, headers, body: call(2, "up_add", { a: 1, b: 2, note: secretArgument }) })
  await mcpPost(url, { token: "wrong-token-c0ffee", body: call(3, "up_add", { a: 1, b: 2, note: secretArgument }) })
  await waitFor(() => entries.length === 6, { message: `six entries, got ${JSON.stringify(entries)}` })
  const ended = new Date()

  const base = ["http", "method", "ms", "path", "principal", "status", "time"]
  for (const e of entries) {
    const keys = [...base, ...(e.tool === undefined ? [] : ["tool"]), ...(e.error === undefined ? [] : ["error"])].sort()
    assert.deepEqual(Object.keys(e).sort(), keys, JSON.stringify(e))
    assert.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    assert.ok(new Date(e.time) >= new Date(began.getTime() - 1000) && new Date(e.time) <= ended, e.time)
    assert.equal(typeof e.ms, "number")
    assert.ok(e.ms >= 0)
  }
  const shape = entries.map(({ time, ms, ...rest }) => rest)
  assert.deepEqual(shape.slice(0, 5), [
    { principal: null, http: "GET", path: "/healthz", method: null, status: 200 },
    { principal: "bob", http: "POST", path: "/mcp", method: "initialize", status: 200 },
    { principal: "bob", http: "POST", path: "/mcp", method: "notifications/initialized", status: 202 },
    { principal: "bob", http: "POST", path: "/mcp", method: "tools/list", status: 200 },
    { principal: "bob", http: "POST", path: "/mcp", method: "tools/call", tool: "up_add", status: 200 },
  ])
  // The refused one: no principal; what it asked for may or may not be read before the refusal.
  const { method, tool, ...refused } = shape[5]
  assert.deepEqual(refused, { principal: null, http: "POST", path: "/mcp", status: 401, error: "the token is not one this server accepts" })
  assert.ok(method === null || method === "tools/call", method)
  assert.ok(tool === undefined || tool === "up_add", tool)
  assertNoSecret(JSON.stringify(entries), [TOKEN_A, TOKEN_B, "wrong-token-c0ffee", secretArgument], "the access log")

  await assert.rejects(
    (async () => {
      const tk = await createToolkit({ builtins: false, extraTools: [defineTool({ name: "t", description: "t", run: () => "t" })] })
      defer(() => tk.close())
      await tk.serve("127.0.0.1:0", { accessLog: 5 })
    })(),
    (err) => err instanceof TypeError && /^toolnexus: accessLog must be /.test(err.message),
  )
})

test("W3C trace context from the request headers or params._meta is forwarded on the upstream tools/call; invalid context is not", T, async () => {
  const { url } = await startGateway(defer, {}, { extraServers: { meta: { command: nodeFixture("meta-echo-server") } } })
  const headers = await bearerSession(url, undefined)
  const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  const TS = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
  let id = 10
  const upstreamMeta = async ({ extra = {}, meta } = {}) => {
    const body = call(id++, "meta_meta")
    if (meta) body.params._meta = meta
    const res = await mcpPost(url, { headers: { ...headers, ...extra }, body })
    assert.equal(res.status, 200, res.text)
    const got = JSON.parse(res.json.result.content[0].text) ?? {}
    return { traceparent: got.traceparent, tracestate: got.tracestate }
  }
  assert.deepEqual(await upstreamMeta(), { traceparent: undefined, tracestate: undefined })
  assert.deepEqual(await upstreamMeta({ extra: { traceparent: TP, tracestate: TS } }), { traceparent: TP, tracestate: TS })
  assert.deepEqual(await upstreamMeta({ extra: { traceparent: TP } }), { traceparent: TP, tracestate: undefined })
  assert.deepEqual(await upstreamMeta({ meta: { traceparent: TP, tracestate: TS } }), { traceparent: TP, tracestate: TS })
  for (const bad of ["garbage", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]) {
    assert.deepEqual(await upstreamMeta({ extra: { traceparent: bad, tracestate: TS } }), { traceparent: undefined, tracestate: undefined }, bad)
    assert.deepEqual(await upstreamMeta({ meta: { traceparent: bad, tracestate: TS } }), { traceparent: undefined, tracestate: undefined }, `_meta ${bad}`)
  }
  const long = `k=${"v".repeat(520)}`
  assert.deepEqual(await upstreamMeta({ extra: { traceparent: TP, tracestate: long } }), { traceparent: TP, tracestate: undefined }, "a tracestate over 512 characters")
})

test("the trace context goes on with a relayed resources/read and prompts/get too", T, async () => {
  const { url } = await startGateway(defer, {}, { extraServers: { m: { command: nodeFixture("meta-surface-server") } } })
  const headers = await bearerSession(url, undefined)
  const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  const send = async (id, method, params) => {
    const res = await mcpPost(url, { headers: { ...headers, traceparent: TP }, body: { jsonrpc: "2.0", id, method, params } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.json.error, undefined, res.text)
    return res.json.result
  }
  const read = await send(1, "resources/read", { uri: "meta://request" })
  assert.equal(JSON.parse(read.contents[0].text).traceparent, TP)
  const prompts = await send(2, "prompts/list", {})
  const name = prompts.prompts.find((p) => p.name.endsWith("meta")).name
  const prompt = await send(3, "prompts/get", { name, arguments: { word: "a" } })
  assert.equal(JSON.parse(prompt.messages[0].content.text).traceparent, TP)
})

test("the access log: once close() resolves, every request's entry has reached the function", T, async () => {
  // Entries are queued to the function without waiting; close() hands over the last of them
  // before it resolves. The calls here are in flight when close() is called, so their entries are
  // written while it drains, just before it resolves.
  for (let round = 0; round < 10; round++) {
    const entries = []
    let began = () => {}
    const running = new Promise((resolve) => { began = resolve })
    let runs = 0
    const toolkit = await createToolkit({
      extraTools: [defineTool({ name: "slow", run: async () => { if (++runs === 3) began(); await new Promise((r) => setTimeout(r, 50)); return "done" } })],
    })
    const handle = await toolkit.serve("127.0.0.1:0", { stateless: true, accessLog: (e) => entries.push(e) })
    const post = (id) => fetch(`${handle.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "slow", arguments: {} } }),
    }).then((r) => r.text(), (err) => `${err}`)
    const calls = [post(1), post(2), post(3)]
    await running
    await handle.close()
    const seen = entries.filter((e) => e.method === "tools/call").length
    const answers = await Promise.all(calls)
    await toolkit.close()
    assert.ok(answers.every((a) => a.includes('"text":"done"')), JSON.stringify(answers))
    assert.equal(seen, 3, `round ${round}: ${JSON.stringify(entries)}`)
  }
})

test("an accessLog that throws or rejects is a warning, never a failed request or a crash", T, async () => {
  const warnings = []
  const onWarning = (w) => warnings.push(String(w.message))
  process.on("warning", onWarning)
  defer(() => process.off("warning", onWarning))
  let n = 0
  const { url } = await startGateway(defer, {
    auth: { tokens: STATIC },
    accessLog: async () => {
      n += 1
      if (n % 2 === 0) throw new Error("the log database is down")
      await Promise.reject(new Error("the log database is away"))
    },
  })
  for (let i = 0; i < 2; i++) assert.equal((await fetch(`${url}/healthz`)).status, 200)
  await waitFor(() => warnings.length === 2, { message: `two warnings, got ${JSON.stringify(warnings)}` })
  assert.deepEqual(warnings.sort(), ["toolnexus: accessLog threw: the log database is away", "toolnexus: accessLog threw: the log database is down"])
})
