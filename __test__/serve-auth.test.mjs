// Who may use a served toolkit (issue 22), without an authorisation server: static bearer
// tokens and a token-verifier function (library and `toolnexus serve --auth-token-env/-file,
// --auth-file, --no-auth`), ctx.principal and onCall's principal, sessions bound to their
// principal, /healthz and /readyz, the access log, W3C trace context forwarded upstream, the
// refusal to serve a non-loopback address without auth (in a network namespace of its own),
// the official Python client with a bearer token, and no token in any output.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { createToolkit, definePrompt, defineResource, defineResourceTemplate, defineTool } from "toolnexus"
import { PYTHON, deferredCleanup, nodeFixture, repoRoot, tmpConfig, tmpFile, waitFor } from "./helpers.mjs"
import { assertNoSecret, bearerSdkClient, bearerSession, challenge, mcpPost, startCli, startGateway, startIdp } from "./lib/idp.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 90_000 }

const TOKEN_A = "tn-static-a-7f3c9e1b2d4a6f80"
const TOKEN_B = "tn-static-b-0a1b2c3d4e5f6789"
const STATIC = [TOKEN_A, { token: TOKEN_B, subject: "bob", scopes: ["tools:read"] }]
const ALL = ["up_add", "up_read_a", "up_read_b", "up_write_a", "up_admin", "whoami"]

const call = (id, name, args = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" }

/** The principal `whoami` reports for `token` (over a fresh session). */
async function whoami(url, token) {
  const headers = await bearerSession(url, token)
  const res = await mcpPost(url, { token, headers, body: call(9, "whoami") })
  assert.equal(res.status, 200, res.text)
  return JSON.parse(res.json.result.content[0].text)
}

/** The challenge params and body of a 401, the description checked to be words. */
function refusal(res, what) {
  assert.equal(res.status, 401, `${what}: ${res.status} ${res.text}`)
  const c = challenge(res.headers.get("www-authenticate"))
  assert.equal(c?.scheme, "Bearer", what)
  if (c.params.error_description !== undefined) assert.match(c.params.error_description, /\S/, what)
  assert.match(res.json?.error_description ?? "", /\S/, `${what}: body ${res.text}`)
  return { params: c.params, body: res.json }
}

test("static tokens: none is 401 unauthorized, a wrong one 401 invalid_token, the right ones served as their principal", T, async () => {
  const calls = []
  const { url } = await startGateway(defer, { auth: { tokens: STATIC }, onCall: (c) => calls.push(c) })

  const NEEDS = { error: "unauthorized", error_description: "this server needs a bearer token (Authorization: Bearer <token>)" }
  const NOT_ACCEPTED = "the token is not one this server accepts"
  const NOT_BEARER = "the Authorization header is not Bearer <token>"
  const bare = await mcpPost(url)
  const none = refusal(bare, "no token")
  assert.equal(bare.headers.get("www-authenticate"), 'Bearer realm="toolnexus"')
  assert.deepEqual(none.body, NEEDS)

  const answers = []
  for (const wrong of ["wrong", TOKEN_A.slice(0, -1), `${TOKEN_A}x`, TOKEN_A.toUpperCase()]) {
    const res = await mcpPost(url, { token: wrong })
    const r = refusal(res, `token ${wrong}`)
    assert.equal(res.headers.get("www-authenticate"), `Bearer realm="toolnexus", error="invalid_token", error_description="${NOT_ACCEPTED}"`)
    assert.deepEqual(r.body, { error: "invalid_token", error_description: NOT_ACCEPTED })
    answers.push(res.text, res.headers.get("www-authenticate"))
  }
  for (const [what, authorization] of [
    ["Basic", `Basic ${Buffer.from(`u:${TOKEN_A}`).toString("base64")}`],
    ["a bare Bearer", "Bearer"],
    ["a token with no scheme", TOKEN_A],
  ]) {
    const res = await mcpPost(url, { authorization })
    assert.equal(res.status, 401, what)
    assert.equal(res.headers.get("www-authenticate"), `Bearer realm="toolnexus", error="invalid_request", error_description="${NOT_BEARER}"`, what)
    assert.deepEqual(res.json, { error: "invalid_request", error_description: NOT_BEARER }, what)
    answers.push(res.text, res.headers.get("www-authenticate"))
  }
  // Not read from the query string.
  const query = await mcpPost(url, { path: `/mcp?access_token=${TOKEN_A}` })
  assert.equal(query.status, 401)
  assert.deepEqual(query.json, NEEDS)
  // The scheme is case-insensitive (RFC 7235).
  assert.equal((await mcpPost(url, { authorization: `bearer ${TOKEN_A}` })).status, 200)

  assert.deepEqual(await whoami(url, TOKEN_A), { subject: "token-1", scopes: [], claims: {} })
  assert.deepEqual(await whoami(url, TOKEN_B), { subject: "bob", scopes: ["tools:read"], claims: {} })
  const headers = await bearerSession(url, TOKEN_B)
  const listed = await mcpPost(url, { token: TOKEN_B, headers, body: LIST })
  assert.deepEqual(listed.json.result.tools.map((t) => t.name), ALL, "no tools policy: every tool")
  const sum = await mcpPost(url, { token: TOKEN_B, headers, body: call(2, "up_add", { a: 2, b: 3 }) })
  assert.deepEqual(sum.json.result.content, [{ type: "text", text: "5" }])

  await waitFor(() => calls.length === 3, { message: "three onCall records" })
  assert.deepEqual(
    calls.map((c) => [c.name, c.principal]),
    [
      ["whoami", { subject: "token-1", scopes: [], claims: {} }],
      ["whoami", { subject: "bob", scopes: ["tools:read"], claims: {} }],
      ["up_add", { subject: "bob", scopes: ["tools:read"], claims: {} }],
    ],
  )
  assertNoSecret(answers.join("\n") + JSON.stringify(calls), [TOKEN_A, TOKEN_B], "refusals or onCall records")
})

test("without auth on loopback: served as today, ctx.principal undefined, no principal in onCall", T, async () => {
  const calls = []
  const { url } = await startGateway(defer, { onCall: (c) => calls.push(c) })
  const headers = await bearerSession(url, undefined)
  const res = await mcpPost(url, { headers, body: call(1, "whoami") })
  assert.equal(res.json.result.content[0].text, "null")
  await waitFor(() => calls.length === 1, { message: "an onCall record" })
  assert.equal(calls[0].principal, undefined)
  assert.equal("principal" in calls[0], false)
  // A token sent anyway is ignored.
  assert.equal((await mcpPost(url, { token: "whatever" })).status, 200)
  // auth: "none" is the same.
  const open = await startGateway(defer, { auth: "none" })
  assert.equal(await whoami(open.url, undefined), null)
})

test("a token verifier function (sync or async); static tokens win over it and over OAuth, then OAuth", T, async () => {
  const seen = []
  const verify = async (token) => {
    seen.push(token)
    if (token === "fn-carol") return { subject: "carol", scopes: ["tools:read", "x"], claims: { team: "blue" } }
    return null
  }
  const { url } = await startGateway(defer, { auth: { tokens: verify } })
  assert.deepEqual(await whoami(url, "fn-carol"), { subject: "carol", scopes: ["tools:read", "x"], claims: { team: "blue" } })
  assert.ok(seen.every((t) => t === "fn-carol"), "the function gets the presented token itself")
  const denied = refusal(await mcpPost(url, { token: "fn-mallory" }), "rejected by the function")
  assert.equal(denied.params.error, "invalid_token")
  assert.equal(seen.at(-1), "fn-mallory")

  // A synchronous function, with only a subject: scopes and claims default to empty.
  const sync = await startGateway(defer, { auth: { tokens: (t) => (t === "sync-dave" ? { subject: "dave" } : null) } })
  assert.deepEqual(await whoami(sync.url, "sync-dave"), { subject: "dave", scopes: [], claims: {} })
  assert.equal((await mcpPost(sync.url, { token: "nope" })).status, 401)

  // Static tokens and OAuth together: the static token is taken as such, a JWT as OAuth.
  const idp = await startIdp({ scopes: ["tools:read"] })
  defer(() => idp.close())
  const both = await startGateway(defer, { auth: { tokens: ["static-erin"], oauth: { issuer: idp.issuer } } })
  assert.deepEqual(await whoami(both.url, "static-erin"), { subject: "token-1", scopes: [], claims: {} })
  const jwt = await idp.clientCredentialsToken({ resource: `${both.url}/mcp` })
  assert.equal((await whoami(both.url, jwt)).subject, "service")
  const refused = refusal(await mcpPost(both.url, { token: "static-erin-not" }), "neither static nor a JWT")
  assert.equal(refused.params.resource_metadata, `${both.url}/.well-known/oauth-protected-resource/mcp`)
  assert.equal(refused.params.error, "invalid_token")
})

test("stateless serving checks every request; sessions do not exist to bind", T, async () => {
  const { url } = await startGateway(defer, { stateless: true, auth: { tokens: STATIC } })
  const init = await mcpPost(url, { token: TOKEN_A })
  assert.equal(init.status, 200)
  assert.equal(init.headers.get("mcp-session-id"), null)
  const headers = { "mcp-protocol-version": init.json.result.protocolVersion }
  assert.equal((await mcpPost(url, { headers, body: LIST })).status, 401)
  assert.equal((await mcpPost(url, { token: "wrong", headers, body: LIST })).status, 401)
  const a = await mcpPost(url, { token: TOKEN_A, headers, body: LIST })
  const b = await mcpPost(url, { token: TOKEN_B, headers, body: LIST })
  assert.deepEqual([a.status, b.status], [200, 200])
  const who = await mcpPost(url, { token: TOKEN_B, headers, body: call(3, "whoami") })
  assert.deepEqual(JSON.parse(who.json.result.content[0].text), { subject: "bob", scopes: ["tools:read"], claims: {} })
})

test("a session is bound to its principal: another token naming it is 403 forbidden, the owner goes on", T, async () => {
  const { url } = await startGateway(defer, { auth: { tokens: STATIC } })
  const headers = await bearerSession(url, TOKEN_A)
  const forbidden = { error: "forbidden", error_description: "this session belongs to another principal" }
  for (const [what, req] of [
    ["POST tools/list", { body: LIST }],
    ["POST tools/call", { body: call(2, "up_add", { a: 1, b: 1 }) }],
    ["GET", { method: "GET" }],
    ["DELETE", { method: "DELETE" }],
  ]) {
    const res = await mcpPost(url, { token: TOKEN_B, headers, ...req })
    assert.equal(res.status, 403, `${what}: ${res.status} ${res.text}`)
    assert.deepEqual(JSON.parse(res.text), forbidden, what)
  }
  const mine = await mcpPost(url, { token: TOKEN_A, headers, body: LIST })
  assert.equal(mine.status, 200)
  assert.deepEqual(mine.json.result.tools.map((t) => t.name), ALL)
  // No token at all on that session: 401, not 403 (who it is, is not known).
  assert.equal((await mcpPost(url, { headers, body: LIST })).status, 401)
  // The owner may end it.
  assert.equal((await mcpPost(url, { token: TOKEN_A, headers, method: "DELETE" })).status, 200)
})

test("a resource URI is checked as the server would read it: dot segments and escaped separators match no glob", T, async () => {
  const tk = await createToolkit({
    builtins: false,
    extraResources: [defineResourceTemplate({ uriTemplate: "docs://{+path}", name: "docs", read: (_uri, vars) => `path=${vars.path}` })],
  })
  defer(() => tk.close())
  const USER = "tn-user-9d8c7b6a"
  const handle = await tk.serve("127.0.0.1:0", { auth: { tokens: [{ token: USER, subject: "user" }], resources: { "*": ["docs://{+path}", "docs://public/*"] } } })
  defer(() => handle.stop())
  const headers = await bearerSession(handle.url, USER)
  const read = async (uri) => (await mcpPost(handle.url, { token: USER, headers, body: { jsonrpc: "2.0", id: 7, method: "resources/read", params: { uri } } })).json
  assert.equal((await read("docs://public/a.txt")).result.contents[0].text, "path=public/a.txt")
  assert.equal((await read("docs://public/%61.txt")).result.contents[0].text, "path=public/a.txt", "escaped letters match as themselves")
  // Dot segments match no glob: the server may resolve them above the prefix that was allowed.
  for (const uri of ["docs://public/./b/../c", "docs://public/../secret/x", "docs://public/%2e%2e/secret", "docs://public/%2E%2e/%2e/secret", "docs://public%2f..%2fsecret", "docs://public\\..\\secret", "docs://secret"]) {
    const answer = await read(uri)
    assert.deepEqual(answer.error, { code: -32002, message: `Resource not found: ${uri}`, data: { uri } }, uri)
  }
})

test("prompts and resources follow their own policies: hidden ones are absent from lists and answer exactly as unknown ones", T, async () => {
  const tk = await createToolkit({
    builtins: false,
    extraTools: [defineTool({ name: "t", description: "t", run: () => "t" })],
    extraPrompts: [definePrompt({ name: "greet", description: "g", get: () => "hello" }), definePrompt({ name: "secret_plan", description: "s", arguments: [{ name: "topic" }], complete: { topic: () => ["alpha", "beta"] }, get: () => "plan" })],
    extraResources: [
      defineResource({ uri: "notes://public", name: "public", read: () => "pub" }),
      defineResource({ uri: "notes://private", name: "private", read: () => "priv" }),
      defineResourceTemplate({ uriTemplate: "files://{name}", name: "files", read: (_uri, vars) => vars.name }),
    ],
  })
  defer(() => tk.close())
  const USER = "tn-user-1a2b3c4d"
  const ADMIN = "tn-admin-5e6f7a8b"
  const log = []
  const handle = await tk.serve("127.0.0.1:0", {
    accessLog: (e) => log.push(e),
    auth: {
      tokens: [{ token: USER, subject: "user" }, { token: ADMIN, subject: "admin", scopes: ["admin"] }],
      prompts: { "*": ["greet"], admin: ["*"] },
      resources: { "*": ["notes://public"], admin: ["*"] },
    },
  })
  defer(() => handle.stop())
  const url = handle.url
  const ask = async (token, method, params = {}) => {
    const headers = await bearerSession(url, token)
    const res = await mcpPost(url, { token, headers, body: { jsonrpc: "2.0", id: 5, method, params } })
    assert.equal(res.status, 200, res.text)
    return res.json
  }
  const names = async (token, method, key, field) => (await ask(token, method)).result[key].map((x) => x[field])
  assert.deepEqual(await names(USER, "tools/list", "tools", "name"), ["t"], "no tools policy: every tool")
  assert.deepEqual(await names(USER, "prompts/list", "prompts", "name"), ["greet"])
  assert.deepEqual(await names(ADMIN, "prompts/list", "prompts", "name"), ["greet", "secret_plan"])
  assert.deepEqual(await names(USER, "resources/list", "resources", "uri"), ["notes://public"])
  assert.deepEqual(await names(ADMIN, "resources/list", "resources", "uri"), ["notes://public", "notes://private"])
  assert.deepEqual(await names(USER, "resources/templates/list", "resourceTemplates", "uriTemplate"), [])
  assert.deepEqual(await names(ADMIN, "resources/templates/list", "resourceTemplates", "uriTemplate"), ["files://{name}"])

  const same = (hidden, unknown, hiddenName, unknownName) => assert.deepEqual(JSON.parse(JSON.stringify(hidden).replaceAll(hiddenName, unknownName)), unknown)
  same(await ask(USER, "prompts/get", { name: "secret_plan" }), await ask(USER, "prompts/get", { name: "no_such_prompt" }), "secret_plan", "no_such_prompt")
  same(await ask(USER, "resources/read", { uri: "notes://private" }), await ask(USER, "resources/read", { uri: "notes://nothing" }), "notes://private", "notes://nothing")
  same(await ask(USER, "resources/read", { uri: "files://x" }), await ask(USER, "resources/read", { uri: "nofiles://x" }), "files://x", "nofiles://x")
  const completion = (name) => ({ ref: { type: "ref/prompt", name }, argument: { name: "topic", value: "a" } })
  same(await ask(USER, "completion/complete", completion("secret_plan")), await ask(USER, "completion/complete", completion("no_such_prompt")), "secret_plan", "no_such_prompt")
  same(await ask(USER, "resources/subscribe", { uri: "notes://private" }), await ask(USER, "resources/subscribe", { uri: "notes://nothing" }), "notes://private", "notes://nothing")
  assert.ok((await ask(USER, "prompts/get", { name: "secret_plan" })).error, "an error, as for an unknown prompt")
  assert.deepEqual((await ask(ADMIN, "completion/complete", completion("secret_plan"))).result.completion.values, ["alpha", "beta"])
  assert.deepEqual((await ask(ADMIN, "prompts/get", { name: "secret_plan" })).result.messages, [{ role: "user", content: { type: "text", text: "plan" } }])
  assert.equal((await ask(ADMIN, "resources/read", { uri: "files://x" })).result.contents[0].text, "x")
  assert.equal((await ask(USER, "resources/read", { uri: "notes://public" })).result.contents[0].text, "pub")

  // A 2026-07-28 subscriptions/listen is acknowledged with only the URIs the caller may see:
  // a hidden one is neither echoed back nor followed.
  const acknowledged = async (token) => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    }
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: ["notes://public", "notes://private", "files://x"] }, _meta: meta },
      }),
    })
    assert.equal(res.status, 200)
    let text = ""
    const decoder = new TextDecoder()
    const reader = res.body.getReader()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      const ack = text
        .split("\n")
        .filter((l) => l.startsWith("data:") && l.length > 5)
        .map((l) => JSON.parse(l.slice(5)))
        .find((m) => m.method === "notifications/subscriptions/acknowledged")
      if (ack) {
        await reader.cancel()
        return ack.params.notifications.resourceSubscriptions
      }
    }
    assert.fail(`the listen stream ended without an acknowledgement: ${text}`)
  }
  assert.deepEqual(await acknowledged(USER), ["notes://public"])
  assert.deepEqual(await acknowledged(ADMIN), ["notes://public", "notes://private", "files://x"])

  // The access log names the prompt or resource a request asked for (hidden or not).
  await waitFor(() => log.filter((e) => e.method === "resources/read").length === 6, { message: "the reads logged" })
  const named = log.filter((e) => e.method === "prompts/get" || e.method === "resources/read").map(({ time, ms, http, path: p, status, ...rest }) => rest)
  assert.deepEqual(named, [
    { principal: "user", method: "prompts/get", prompt: "secret_plan" },
    { principal: "user", method: "prompts/get", prompt: "no_such_prompt" },
    { principal: "user", method: "resources/read", resource: "notes://private" },
    { principal: "user", method: "resources/read", resource: "notes://nothing" },
    { principal: "user", method: "resources/read", resource: "files://x" },
    { principal: "user", method: "resources/read", resource: "nofiles://x" },
    { principal: "user", method: "prompts/get", prompt: "secret_plan" },
    { principal: "admin", method: "prompts/get", prompt: "secret_plan" },
    { principal: "admin", method: "resources/read", resource: "files://x" },
    { principal: "user", method: "resources/read", resource: "notes://public" },
  ])
})

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

const LOOPBACK_MESSAGE =
  'toolnexus: serving on 0.0.0.0:8080 (not a loopback address) needs auth: { tokens } or { oauth }, or auth: "none" to let anyone who can reach it use every tool (--no-auth on the CLI)'

/** Runs `node --input-type=module -e code` in a network namespace of its own (lo up only). */
function inNetns(code, env = {}) {
  return new Promise((resolve) => {
    execFile(
      "unshare",
      ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "x", process.execPath, "--input-type=module", "-e", code],
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }),
    )
  })
}

test("a non-loopback bind needs auth: refused without it, served with tokens or an explicit auth: \"none\" (in a network namespace)", T, async () => {
  const index = JSON.stringify(path.join(repoRoot, "index.mjs"))
  const code = `
    const { createToolkit, defineTool } = await import(${index})
    const tk = await createToolkit({ builtins: false, extraTools: [defineTool({ name: "t", description: "t", run: () => "t" })] })
    const out = {}
    const cases = { missing: { allowedHosts: ["*"] }, none: { allowedHosts: ["*"], auth: "none" }, tokens: { allowedHosts: ["*"], auth: { tokens: [process.env.TN_NS_TOKEN] } } }
    for (const [name, opts] of Object.entries(cases)) {
      try {
        const h = await tk.serve("0.0.0.0:8080", opts)
        const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ns", version: "1" } } }
        const post = (headers) => fetch("http://127.0.0.1:8080/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(init) }).then((r) => r.status)
        out[name] = { served: true, anonymous: await post({}), withToken: await post({ authorization: "Bearer " + process.env.TN_NS_TOKEN }) }
        await h.stop()
      } catch (e) {
        out[name] = { served: false, type: e.constructor.name, message: e.message }
      }
    }
    await tk.close()
    console.log(JSON.stringify(out))`
  const run = await inNetns(code, { TN_NS_TOKEN: TOKEN_A })
  assert.equal(run.code, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  assert.equal(out.missing.served, false)
  assert.equal(out.missing.message, LOOPBACK_MESSAGE)
  assert.deepEqual(out.none, { served: true, anonymous: 200, withToken: 200 })
  assert.deepEqual(out.tokens, { served: true, anonymous: 401, withToken: 200 })
  assertNoSecret(run.stdout + run.stderr, [TOKEN_A], "the namespaced run")

  // The CLI: refused (exit 1) with the same words; --no-auth serves.
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const prefix = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "x"]
  const refused = startCli(defer, ["serve", config, "--addr", "0.0.0.0:8080", "--allowed-hosts", "*"], { prefix })
  const end = await refused.exited
  assert.equal(end.code, 1, end.stderr)
  assert.ok(end.stderr.includes(LOOPBACK_MESSAGE), end.stderr)
  const open = startCli(defer, ["serve", config, "--addr", "0.0.0.0:8080", "--allowed-hosts", "*", "--no-auth"], { prefix })
  await open.serving
  open.child.kill("SIGTERM")
  assert.equal((await open.exited).code, 0)
})

test("toolnexus serve --auth-token-env / --auth-token-file: tokens never in argv or output; bad token sources are exit 2", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const file = tmpFile("tokens.txt")
  const FILE_X = "tn-file-x-93ab71c2e4d5"
  const FILE_Y = "tn-file-y-1d2e3f4a5b6c"
  fs.writeFileSync(file, `# the gateway's tokens\n${FILE_X}\n\n#${FILE_Y}-commented\n${FILE_Y}\n`)
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--auth-token-env", "TN_TOKEN_ONE", "--auth-token-env", "TN_TOKEN_TWO", "--auth-token-file", file, "--access-log"], {
    env: { TN_TOKEN_ONE: TOKEN_A, TN_TOKEN_TWO: TOKEN_B },
  })
  const url = await gw.serving
  // The servers it started never see its tokens in their environment (--auth-token-env
  // removes the variable once read).
  const tasks = fs.readdirSync(`/proc/${gw.child.pid}/task`)
  const children = tasks.flatMap((t) => fs.readFileSync(`/proc/${gw.child.pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
  assert.ok(children.length >= 1, "the config's server runs")
  for (const pid of children) assertNoSecret(fs.readFileSync(`/proc/${pid}/environ`, "utf8"), [TOKEN_A, TOKEN_B], `the environment of server ${pid}`)
  const cmdline = fs.readFileSync(`/proc/${gw.child.pid}/cmdline`, "utf8")
  assertNoSecret(cmdline, [TOKEN_A, TOKEN_B, FILE_X, FILE_Y], "argv")
  assert.equal((await mcpPost(url)).status, 401)
  for (const token of [TOKEN_A, TOKEN_B, FILE_X, FILE_Y]) assert.equal((await mcpPost(url, { token })).status, 200, token)
  for (const token of ["# the gateway's tokens", `#${FILE_Y}-commented`, "", "wrong"]) assert.equal((await mcpPost(url, { token })).status, 401, token)
  const { client } = await bearerSdkClient(defer, url, FILE_Y)
  assert.deepEqual((await client.callTool({ name: "up_add", arguments: { a: 20, b: 22 } })).content, [{ type: "text", text: "42" }])
  await client.close()
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  const log = end.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
  const keys = ["http", "method", "ms", "path", "principal", "status", "time"]
  assert.ok(log.length >= 10, end.stderr)
  for (const e of log) {
    const own = [...keys, ...(e.tool === undefined ? [] : ["tool"]), ...(e.error === undefined ? [] : ["error"])].sort()
    assert.deepEqual(Object.keys(e).sort(), own, JSON.stringify(e))
  }
  assert.ok(log.some((e) => e.method === "tools/call" && e.tool === "up_add" && e.status === 200 && typeof e.principal === "string"), end.stderr)
  assertNoSecret(end.stdout + end.stderr, [TOKEN_A, TOKEN_B, FILE_X, FILE_Y], "toolnexus serve's output")

  // Bad sources: exit 2 before serving, naming the problem, never the contents.
  const empty = tmpFile("empty.txt")
  fs.writeFileSync(empty, "# nothing here\n\n")
  const absent = tmpFile("absent.txt")
  const usage = "Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]\nRun `toolnexus serve --help` for details.\n"
  for (const [args, env, message] of [
    [["--auth-token-file", empty], {}, `toolnexus serve: --auth-token-file ${empty} holds no token (one per line; blank lines and # comments are ignored)\n`],
    [["--auth-token-file", absent], {}, `toolnexus serve: cannot read --auth-token-file ${absent}: no such file\n`],
    [["--no-auth", "--auth-token-env", "TN_TOKEN_ONE"], { TN_TOKEN_ONE: TOKEN_A }, `toolnexus serve: --no-auth cannot be combined with --auth-token-env\n${usage}`],
    [["--no-auth", "--oauth-issuer", "https://idp.example.com"], {}, `toolnexus serve: --no-auth cannot be combined with --oauth-issuer\n${usage}`],
  ]) {
    const bad = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", ...args], { env })
    const r = await bad.exited
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stdout, "")
    assert.equal(r.stderr, message)
  }
})

test("toolnexus serve --auth-file: tokens with subjects and scopes, and the per-scope tool policy", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add,read_a,write_a") } } })
  const OPS = "tn-ops-4c5d6e7f8a9b"
  const VIEWER = "tn-viewer-0f1e2d3c4b5a"
  const authFile = tmpConfig(
    { tokens: [{ token: OPS, subject: "ops", scopes: ["admin"] }, { token: VIEWER, subject: "viewer", scopes: ["read"] }], tools: { admin: ["*"], read: ["up_read_*"], "*": ["up_add"] } },
    { name: "auth.json" },
  )
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--auth-file", authFile])
  const url = await gw.serving
  const viewer = (await bearerSdkClient(defer, url, VIEWER)).client
  assert.deepEqual((await viewer.listTools()).tools.map((t) => t.name), ["up_add", "up_read_a"])
  await assert.rejects(viewer.callTool({ name: "up_write_a", arguments: {} }), (err) => err.code === -32602 && /Unknown tool: up_write_a/.test(err.message))
  const ops = (await bearerSdkClient(defer, url, OPS)).client
  assert.deepEqual((await ops.listTools()).tools.map((t) => t.name), ["up_add", "up_read_a", "up_write_a"])
  assert.deepEqual((await ops.callTool({ name: "up_write_a", arguments: {} })).content, [{ type: "text", text: "write_a" }])
  await viewer.close()
  await ops.close()
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  assertNoSecret(end.stdout + end.stderr, [OPS, VIEWER], "toolnexus serve's output")
})

test("the official Python client with a static bearer token; a wrong one cannot connect", T, async () => {
  const log = []
  const { url } = await startGateway(defer, { auth: { tokens: STATIC }, accessLog: (e) => log.push(e) })
  const script = path.join(import.meta.dirname, "python", "bearer_client.py")
  const run = (token, mode) =>
    new Promise((resolve) => {
      execFile(PYTHON, [script, `${url}/mcp`, mode, "up_add", JSON.stringify({ a: 40, b: 2 })], { timeout: 45_000, env: { ...process.env, BEARER_TOKEN: token } }, (error, stdout, stderr) => {
        let report = null
        try {
          report = JSON.parse(stdout)
        } catch {}
        resolve({ code: error ? error.code : 0, report, stdout, stderr })
      })
    })
  for (const [mode, version] of [["auto", "2026-07-28"], ["legacy", "2025-11-25"]]) {
    const ok = await run(TOKEN_B, mode)
    assert.equal(ok.code, 0, ok.stdout + ok.stderr)
    assert.equal(ok.report.protocolVersion, version)
    assert.deepEqual(ok.report.tools, ALL)
    assert.equal(ok.report.text, "42")
    assert.equal(ok.report.isError, false)
  }
  assert.ok(log.length > 0 && log.every((e) => e.principal === "bob" && e.status < 400), JSON.stringify(log))
  log.length = 0
  const wrong = await run("wrong-python-token", "auto")
  assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr)
  assert.match(wrong.report?.error ?? "", /\S/)
  // What it met: the gateway's 401s (the SDK's words for them are its own).
  assert.ok(log.length > 0 && log.every((e) => e.principal === null && e.status === 401), JSON.stringify(log))
  assertNoSecret(wrong.stdout + wrong.stderr, ["wrong-python-token"], "the Python client's report")
})

test("bad auth options are TypeErrors naming the option", T, async () => {
  const tk = await createToolkit({ builtins: false, extraTools: [defineTool({ name: "t", description: "t", run: () => "t" })] })
  defer(() => tk.close())
  for (const auth of [5, "open", { tokens: 5 }, { tokens: [42] }, { tokens: [{ subject: "x" }] }, { tokens: ["x"], tools: { s: "up_*" } }, { tokens: ["x"], tools: { s: [5] } }, { oauth: { issuer: 5 } }, { oauth: { issuer: "https://idp.example.com", requiredScopes: "a" } }]) {
    await assert.rejects(tk.serve("127.0.0.1:0", { auth }), (err) => {
      assert.ok(err instanceof TypeError, `${JSON.stringify(auth)}: ${err}`)
      assert.match(err.message, /^toolnexus: auth(\.\S+)? must be /, JSON.stringify(auth))
      return true
    })
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
