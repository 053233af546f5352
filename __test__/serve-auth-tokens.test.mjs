// Who may use a served toolkit (issue 22), without an authorisation server: static bearer
// tokens and a token-verifier function, ctx.principal and onCall's principal, stateless serving
// checking every request, sessions bound to their principal, bad auth options, and the official
// Python client with a bearer token. (Prompt and resource policies: serve-auth-policies.test.mjs;
// /healthz, the access log and trace context: serve-auth-ops.test.mjs; a non-loopback bind and
// `toolnexus serve`'s auth flags: serve-auth-cli.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { createToolkit, defineTool } from "toolnexus"
import { PYTHON, deferredCleanup, waitFor } from "./helpers.mjs"
import { assertNoSecret, bearerSession, challenge, mcpPost, startGateway } from "./lib/gateway.mjs"
import { startIdp } from "./lib/idp.mjs"
import { ALL, LIST, STATIC, TOKEN_A, TOKEN_B, call } from "./lib/serve-auth.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 90_000 }

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
