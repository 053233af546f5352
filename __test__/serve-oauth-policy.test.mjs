// Serving as an OAuth 2.1 resource server (issue 22), against a real authorisation server
// (oidc-provider on 127.0.0.1, __test__/lib/idp.mjs): RFC 9728 metadata; insufficient scope;
// per-scope tool policy over a real stdio MCP server; sessions bound to their principal.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import { tmpDir, waitFor } from "./helpers.mjs"
import { assertNoSecret, bearerSdkClient, bearerSession, challenge, mcpPost, startGateway } from "./lib/gateway.mjs"
import { assertInvalidToken, assertServed, oauthHarness, prmUrl } from "./lib/serve-oauth.mjs"

const { defer, idp } = oauthHarness(afterEach)
const T = { timeout: 90_000 }

// loadMcp's token store lives in a temporary HOME, never the user's.
const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")

test("RFC 9728 metadata at both well-known paths, outside auth, with CORS; an explicit audience is its resource", T, async () => {
  const server = await idp({ scopes: ["tools:read", "tools:admin"] })
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer, requiredScopes: ["tools:read"] } } })
  for (const p of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/anything/else"]) {
    const res = await fetch(`${url}${p}`)
    assert.equal(res.status, 200, p)
    assert.equal(res.headers.get("access-control-allow-origin"), "*", p)
    assert.match(res.headers.get("content-type"), /^application\/json/, p)
    const doc = await res.json()
    assert.deepEqual(Object.keys(doc).sort(), ["authorization_servers", "bearer_methods_supported", "resource", "resource_name", "scopes_supported"], p)
    assert.equal(doc.resource, `${url}/mcp`)
    assert.deepEqual(doc.authorization_servers, [server.issuer])
    assert.deepEqual(doc.bearer_methods_supported, ["header"])
    assert.ok(doc.scopes_supported.includes("tools:read"), JSON.stringify(doc.scopes_supported))
    assert.equal(typeof doc.resource_name, "string")
  }
  // Not a metadata path (nor /mcp): not found, as before.
  assert.equal((await fetch(`${url}/.well-known/oauth-protected-resourcex`)).status, 404)

  // An explicit audience: the PRM names it, and its path decides the PRM URL in challenges.
  const audience = "https://mcp.example.com/tenant/a"
  const other = await startGateway(defer, { auth: { oauth: { issuer: server.issuer, audience } } })
  const doc = await (await fetch(`${other.url}/.well-known/oauth-protected-resource/tenant/a`)).json()
  assert.equal(doc.resource, audience)
  const refused = await mcpPost(other.url)
  assert.equal(challenge(refused.headers.get("www-authenticate")).params.resource_metadata, "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/a")
  assert.equal(refused.status, 401)
  assertServed(await mcpPost(other.url, { token: await server.sign({ aud: audience }) }), "a token for the explicit audience")
  const prm = "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/a"
  assertInvalidToken(await mcpPost(other.url, { token: await server.sign({ aud: `${other.url}/mcp` }) }), prm, "the endpoint's URL is not the audience then")
})

test("requiredScopes: a token without them is 403 insufficient_scope; the 401 challenge names them", T, async () => {
  const server = await idp({ scopes: ["tools:read", "tools:admin", "other"] })
  const log = []
  const { url } = await startGateway(defer, { accessLog: (e) => log.push(e), auth: { oauth: { issuer: server.issuer, requiredScopes: ["tools:read", "tools:admin"] } } })
  const aud = `${url}/mcp`
  const bare = await mcpPost(url)
  assert.equal(bare.status, 401)
  assert.deepEqual(challenge(bare.headers.get("www-authenticate")).params, { realm: "toolnexus", resource_metadata: prmUrl(url), scope: "tools:read tools:admin" })
  assertInvalidToken(await mcpPost(url, { token: await server.foreignSign({ aud }) }), prmUrl(url), "foreign key with required scopes", { scope: "tools:read tools:admin" })

  const lacks = { other: "the token lacks the scopes tools:read, tools:admin", "tools:read": "the token lacks the scope tools:admin", "tools:admin": "the token lacks the scope tools:read" }
  for (const scope of ["other", "tools:read", "tools:admin"]) {
    const token = await server.clientCredentialsToken({ scope, resource: aud })
    const res = await mcpPost(url, { token })
    assert.equal(res.status, 403, `${scope}: ${res.text}`)
    const c = challenge(res.headers.get("www-authenticate"))
    assert.equal(c.scheme, "Bearer")
    const { realm, error_description: _d, ...params } = c.params
    assert.ok(realm === undefined || realm === "toolnexus", realm)
    assert.deepEqual(params, { error: "insufficient_scope", scope: "tools:read tools:admin", resource_metadata: prmUrl(url) })
    assert.deepEqual(res.json, { error: "insufficient_scope", error_description: lacks[scope] })
    assertNoSecret(res.text + res.headers.get("www-authenticate"), [token], "a 403 answer")
  }
  assertServed(await mcpPost(url, { token: await server.clientCredentialsToken({ scope: "tools:admin other tools:read", resource: aud }) }), "both scopes (and one more)")
  // The access log names who a 403 refused (the token proved it), as it names who was served.
  await waitFor(() => log.filter((e) => e.status === 403).length === 3 && log.some((e) => e.status === 200), { message: "the 403s and the served request logged" })
  const served = log.find((e) => e.status === 200).principal
  assert.equal(typeof served, "string")
  assert.ok(served.length > 0)
  assert.deepEqual(
    log.filter((e) => e.status === 403).map((e) => [e.principal, e.error]),
    [
      [served, lacks.other],
      [served, lacks["tools:read"]],
      [served, lacks["tools:admin"]],
    ],
  )
})

test("per-scope tool policy over a real stdio server: tools/list shows, and tools/call reaches, only what a token's scopes allow", T, async () => {
  const server = await idp({ scopes: ["tools:read", "tools:write", "tools:admin"] })
  const calls = []
  const tools = { "*": ["up_add", "whoami"], "tools:read": ["up_read_?"], "tools:write": ["up_write_*", "up_read_a"], "tools:admin": ["*"] }
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer }, tools }, onCall: (c) => calls.push(c) })
  const aud = `${url}/mcp`
  const as = async (scope) => (await bearerSdkClient(defer, url, await server.clientCredentialsToken({ scope, resource: aud }))).client
  const expect = {
    "": ["up_add", "whoami"],
    "tools:read": ["up_add", "up_read_a", "up_read_b", "whoami"],
    "tools:write": ["up_add", "up_read_a", "up_write_a", "whoami"],
    "tools:read tools:write": ["up_add", "up_read_a", "up_read_b", "up_write_a", "whoami"],
    "tools:admin": ["up_add", "up_read_a", "up_read_b", "up_write_a", "up_admin", "whoami"],
  }
  for (const [scope, names] of Object.entries(expect)) {
    const client = await as(scope)
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), names, `scope "${scope}"`)
  }

  // A hidden tool answers exactly as a tool that does not exist.
  const reader = await as("tools:read")
  const sum = await reader.callTool({ name: "up_add", arguments: { a: 2, b: 3 } })
  assert.deepEqual(sum.content, [{ type: "text", text: "5" }])
  assert.deepEqual((await reader.callTool({ name: "up_read_b", arguments: {} })).content, [{ type: "text", text: "read_b" }])
  const readToken = await server.clientCredentialsToken({ scope: "tools:read", resource: aud })
  const readSession = await bearerSession(url, readToken)
  const raw = (name) => mcpPost(url, { token: readToken, headers: readSession, body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: {} } } })
  const hidden = await raw("up_write_a")
  const missing = await raw("up_nope")
  assert.equal(hidden.status, 200)
  assert.deepEqual(hidden.json, { jsonrpc: "2.0", id: 7, error: { code: -32602, message: "Unknown tool: up_write_a" } })
  assert.deepEqual(missing.json, { jsonrpc: "2.0", id: 7, error: { code: -32602, message: "Unknown tool: up_nope" } })
  const adminCall = await reader.callTool({ name: "up_admin", arguments: {} }).then(
    (r) => ({ result: r }),
    (err) => ({ code: err.code, message: err.message }),
  )
  assert.equal(adminCall.code, -32602, JSON.stringify(adminCall))
  assert.match(adminCall.message, /Unknown tool: up_admin/)

  // Only the calls that went through reached onCall (the refused ones never ran).
  assert.deepEqual(calls.map((c) => c.name).sort(), ["up_add", "up_read_b"])
})

test("a session is bound to the principal that opened it: another subject's token naming it is 403", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer } } })
  const aud = `${url}/mcp`
  const ada = await server.sign({ aud, sub: "ada" })
  const bob = await server.sign({ aud, sub: "bob" })
  const adaAgain = await server.sign({ aud, sub: "ada" })
  const init = await mcpPost(url, { token: ada })
  assertServed(init, "ada opens a session")
  const headers = { "mcp-session-id": init.headers.get("mcp-session-id"), "mcp-protocol-version": init.json.result.protocolVersion }
  assert.equal((await mcpPost(url, { token: ada, headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } })).status, 202)
  const forbidden = { error: "forbidden", error_description: "this session belongs to another principal" }
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
  for (const [what, req] of [
    ["POST", { token: bob, headers, body: list }],
    ["GET", { token: bob, headers, method: "GET" }],
    ["DELETE", { token: bob, headers, method: "DELETE" }],
  ]) {
    const res = await mcpPost(url, req)
    assert.equal(res.status, 403, `${what}: ${res.text}`)
    assert.deepEqual(JSON.parse(res.text), forbidden, what)
  }
  // Ada's session survived the attempts, and another token of hers names it too.
  const mine = await mcpPost(url, { token: adaAgain, headers, body: list })
  assert.equal(mine.status, 200)
  assert.equal(mine.json.result.tools.length, 6)
  // "ada" of another issuer is not this ada: such a token is refused outright (one issuer is trusted).
  assertInvalidToken(await mcpPost(url, { token: await server.sign({ aud, sub: "ada", iss: "http://127.0.0.1:1" }), headers, body: list }), prmUrl(url), "ada of another issuer")
})
