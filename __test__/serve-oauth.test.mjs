// Serving as an OAuth 2.1 resource server (issue 22), against a real authorisation server
// (oidc-provider on 127.0.0.1, __test__/lib/idp.mjs): JWT access tokens it mints (client
// credentials, authorisation code + PKCE through toolnexus's own loadMcp client) or that are
// signed with its keys for the cases it will not mint (expired, not yet valid, another audience
// or issuer), foreign keys, `alg: none`, garbage; RFC 9728 metadata; insufficient scope; per-scope
// tool policy over a real stdio MCP server; sessions bound to their principal; key rotation;
// RFC 7662 introspection of opaque tokens; the official Python client with a bearer token; the
// `toolnexus serve --oauth-*` flags. No token or secret may appear in any output.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import http from "node:http"
import path from "node:path"
import { SignJWT, decodeJwt } from "jose"
import { loadMcp } from "toolnexus"
import { PYTHON, deferredCleanup, tmpConfig, tmpDir, waitFor } from "./helpers.mjs"
import { assertNoSecret, bearerSdkClient, bearerSession, challenge, mcpPost, startCli, startGateway, startIdp } from "./lib/idp.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 90_000 }

// loadMcp's token store lives in a temporary HOME, never the user's.
const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")

const now = () => Math.floor(Date.now() / 1000)
const prmUrl = (url) => `${url}/.well-known/oauth-protected-resource/mcp`

async function idp(opts) {
  const server = await startIdp(opts)
  defer(() => server.close())
  return server
}

/** Every secret a test must not find in output: the IdP's tokens and client secrets. */
const secretsOf = (server, extra = []) => [...server.minted, ...server.secrets, ...extra]

/** An initialize answered 200 (a session opened, or a stateless answer). */
function assertServed(res, what) {
  assert.equal(res.status, 200, `${what}: ${res.status} ${res.text}`)
  assert.equal(res.json?.result?.serverInfo?.name, "toolnexus", what)
}

/** A 401 invalid_token with the whole challenge and a body that says the same. */
function assertInvalidToken(res, prm, what, { scope } = {}) {
  assert.equal(res.status, 401, `${what}: ${res.status} ${res.text}`)
  const c = challenge(res.headers.get("www-authenticate"))
  assert.equal(c?.scheme, "Bearer", what)
  const { error_description: description, ...rest } = c.params
  assert.deepEqual(rest, { realm: "toolnexus", resource_metadata: prm, error: "invalid_token", ...(scope ? { scope } : {}) }, what)
  assert.match(description ?? "", /\S/, `${what}: an error_description`)
  assert.deepEqual(res.json, { error: "invalid_token", error_description: description }, what)
}

test("JWT access tokens: good ones are served; expired, not yet valid, wrong audience or issuer, foreign key, alg none, HS256, garbage are 401", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const calls = []
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer } }, onCall: (c) => calls.push(c) })
  const aud = `${url}/mcp`
  server.audiences.add(aud)

  // No token: 401 without error (nothing was presented), naming the metadata.
  const bare = await mcpPost(url)
  assert.equal(bare.status, 401)
  assert.deepEqual(challenge(bare.headers.get("www-authenticate")), { scheme: "Bearer", params: { realm: "toolnexus", resource_metadata: prmUrl(url) } })
  assert.deepEqual(bare.json, { error: "unauthorized", error_description: "this server needs a bearer token (Authorization: Bearer <token>)" })

  // Minted by the authorisation server itself (client credentials, resource = this gateway).
  const minted = await server.clientCredentialsToken({ scope: "tools:read", resource: aud })
  assertServed(await mcpPost(url, { token: minted }), "client-credentials JWT")
  assert.equal(decodeJwt(minted).aud, aud)

  // Signed with the IdP's own keys: both algorithms, both typ spellings, scp instead of scope.
  const good = [
    ["ES256", await server.sign({ aud })],
    ["RS256", await server.sign({ aud }, { alg: "RS256" })],
    ["typ JWT", await server.sign({ aud }, { header: { typ: "JWT" } })],
    ["no typ", await server.sign({ aud }, { header: { typ: undefined } })],
    ["typ application/at+jwt", await server.sign({ aud }, { header: { typ: "application/at+jwt" } })],
    ["aud array", await server.sign({ aud: ["https://other.example/api", aud] })],
    ["scp array", await server.sign({ aud, scope: undefined, scp: ["tools:read"] })],
    ["expired within the default 60 s skew", await server.sign({ aud, exp: now() - 20 })],
    ["nbf within the skew", await server.sign({ aud, nbf: now() + 20 })],
  ]
  for (const [what, token] of good) assertServed(await mcpPost(url, { token }), what)

  const fresh = { aud }
  const bad = [
    ["expired", await server.sign({ ...fresh, exp: now() - 3600 })],
    ["not yet valid", await server.sign({ ...fresh, nbf: now() + 3600 })],
    ["issued in the future", await server.sign({ ...fresh, iat: now() + 3600 })],
    ["no exp", await server.sign({ ...fresh, exp: undefined })],
    ["no sub", await server.sign({ ...fresh, sub: undefined })],
    ["wrong audience", await server.sign({ aud: "http://127.0.0.1:1/mcp" })],
    ["no audience", await server.sign({ aud: undefined })],
    ["wrong issuer", await server.sign({ ...fresh, iss: "http://127.0.0.1:1" })],
    ["issuer with a trailing slash", await server.sign({ ...fresh, iss: `${server.issuer}/` })],
    ["foreign key, unknown kid", await server.foreignSign(fresh)],
    ["foreign key under the IdP's kid", await server.foreignSign(fresh, { kid: server.kid() })],
    ["IdP's ES256 key under its RS256 key's kid", await server.sign(fresh, { header: { kid: server.kid("RS256") } })],
    ["typ dpop+jwt (not an access token)", await server.sign(fresh, { header: { typ: "dpop+jwt" } })],
    ["alg none", await server.sign(fresh, { alg: "none" })],
    ["HS256 keyed with the public JWK", await new SignJWT({ iss: server.issuer, aud, sub: "alice", exp: now() + 600 }).setProtectedHeader({ alg: "HS256", kid: server.kid() }).sign(new TextEncoder().encode(JSON.stringify(server.jwks.keys[0])))],
    ["garbage", "garbage"],
    ["three dots of garbage", "a.b.c"],
    ["a JWT with its signature cut", (await server.sign(fresh)).split(".").slice(0, 2).join(".") + "."],
    ["a JWT with one payload byte changed", await (async () => {
      const [h, p, s] = (await server.sign(fresh)).split(".")
      const claims = JSON.parse(Buffer.from(p, "base64url"))
      claims.sub = "mallory"
      return `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`
    })()],
  ]
  const notSigned = "the token is not signed by a key of the issuer"
  const described = {
    expired: "the token has expired",
    "not yet valid": "the token is not valid yet (nbf)",
    "issued in the future": "the token was issued in the future (iat)",
    "no exp": "the token has no expiry (exp)",
    "no sub": "the token names no subject (sub)",
    "wrong audience": "the token is for another audience",
    "no audience": "the token names no audience (aud)",
    "wrong issuer": `the token's issuer is not ${server.issuer}`,
    "issuer with a trailing slash": `the token's issuer is not ${server.issuer}`,
    "foreign key, unknown kid": notSigned,
    "foreign key under the IdP's kid": notSigned,
    "IdP's ES256 key under its RS256 key's kid": `the token's algorithm ES256 does not fit the issuer's key ${server.kid("RS256")}`,
    "typ dpop+jwt (not an access token)": "the token's type (typ) is not an access token",
    "alg none": "the token's algorithm none is not accepted",
    "HS256 keyed with the public JWK": "the token's algorithm HS256 is not accepted",
    garbage: "the token is not a valid JWT",
    "three dots of garbage": "the token is not a valid JWT",
    "a JWT with its signature cut": notSigned,
    "a JWT with one payload byte changed": notSigned,
  }
  const seen = []
  for (const [what, token] of bad) {
    const res = await mcpPost(url, { token })
    assertInvalidToken(res, prmUrl(url), what)
    assert.equal(res.json.error_description, described[what], what)
    seen.push(res.text, res.headers.get("www-authenticate"))
  }
  // Longer than 16 KiB: refused without being parsed.
  const huge = `${"A".repeat(17 * 1024)}.${"B".repeat(10)}.${"C".repeat(10)}`
  const tooLong = await mcpPost(url, { token: huge })
  assertInvalidToken(tooLong, prmUrl(url), "a 17 KiB token")
  assert.equal(tooLong.json.error_description, "the token is longer than 16 KiB")

  // Not a bearer credential: invalid_request; a token in the query string is not read.
  const basic = await mcpPost(url, { authorization: `Basic ${Buffer.from(`alice:${minted}`).toString("base64")}` })
  assert.equal(basic.status, 401)
  assert.deepEqual(challenge(basic.headers.get("www-authenticate")).params, {
    realm: "toolnexus",
    resource_metadata: prmUrl(url),
    error: "invalid_request",
    error_description: "the Authorization header is not Bearer <token>",
  })
  assert.deepEqual(basic.json, { error: "invalid_request", error_description: "the Authorization header is not Bearer <token>" })
  const query = await mcpPost(url, { path: `/mcp?access_token=${encodeURIComponent(minted)}` })
  assert.equal(query.status, 401)
  assert.equal(challenge(query.headers.get("www-authenticate")).params.error, undefined)

  // Every request is checked, not only the one that opened the session.
  const init = await mcpPost(url, { token: minted })
  const session = init.headers.get("mcp-session-id")
  assert.ok(session, "a session was opened")
  const headers = { "mcp-session-id": session, "mcp-protocol-version": init.json.result.protocolVersion }
  assert.equal((await mcpPost(url, { token: minted, headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } })).status, 202)
  const anonymous = await mcpPost(url, { headers, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } })
  assert.equal(anonymous.status, 401)
  const expired = await mcpPost(url, { token: bad[0][1], headers, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } })
  assertInvalidToken(expired, prmUrl(url), "an expired token on an open session")
  const listed = await mcpPost(url, { token: minted, headers, body: { jsonrpc: "2.0", id: 2, method: "tools/list" } })
  assert.equal(listed.status, 200)
  assert.deepEqual(listed.json.result.tools.map((t) => t.name), ["up_add", "up_read_a", "up_read_b", "up_write_a", "up_admin", "whoami"])

  // The principal a JS tool sees: subject, scopes and the token's claims.
  const who = await mcpPost(url, { token: minted, headers, body: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "whoami", arguments: {} } } })
  assert.deepEqual(JSON.parse(who.json.result.content[0].text), { subject: "service", scopes: ["tools:read"], claims: decodeJwt(minted) })
  await waitFor(() => calls.length === 1, { message: "one onCall record" })
  assert.deepEqual(calls[0].principal, { subject: "service", scopes: ["tools:read"], claims: decodeJwt(minted) })

  assertNoSecret(seen.join("\n") + JSON.stringify(calls), [...secretsOf(server), ...bad.map(([, t]) => t)], "401 answers or onCall records")
  assert.deepEqual(server.errors, [])
})

test("the clock skew is configurable (0 s refuses a token expired 20 s ago) and bounded to 0..600", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const { tk, url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer, clockSkew: 0 } } })
  const aud = `${url}/mcp`
  assertInvalidToken(await mcpPost(url, { token: await server.sign({ aud, exp: now() - 20 }) }), prmUrl(url), "expired 20 s ago, no skew")
  assertServed(await mcpPost(url, { token: await server.sign({ aud, exp: now() + 60 }) }), "valid for a minute")

  for (const clockSkew of [-1, 601, "60"]) {
    await assert.rejects(tk.serve("127.0.0.1:0", { auth: { oauth: { issuer: server.issuer, clockSkew } } }), (err) => {
      assert.ok(err instanceof TypeError, String(err))
      assert.match(err.message, /^toolnexus: auth\.oauth\.clockSkew must be /)
      return true
    })
  }
})

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

test("key rotation: a token signed by a newly rotated key is accepted after one JWKS refetch; unknown kids do not make it fetch again", T, async (t) => {
  const server = await idp({ scopes: ["tools:read"] })
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer } } })
  const aud = `${url}/mcp`
  const before = await server.clientCredentialsToken({ resource: aud })
  assertServed(await mcpPost(url, { token: before }), "a token of the first key")
  const fetches = server.stats.jwksFetches
  assert.ok(fetches >= 1, "the gateway fetched the JWKS")

  const oldKid = server.kid()
  const newKid = await server.rotate()
  assert.notEqual(newKid, oldKid)
  const after = await server.clientCredentialsToken({ resource: aud })
  assert.equal(JSON.parse(Buffer.from(after.split(".")[0], "base64url")).kid, newKid)
  // The refetch may wait out the 10 s bound since the start-up fetch: poll for the answer.
  const began = performance.now()
  await waitFor(async () => (await mcpPost(url, { token: after })).status === 200, { timeout: 15_000, interval: 250, message: "the rotated key's token accepted" })
  t.diagnostic(`accepted ${(performance.now() - began).toFixed(0)} ms after the rotation`)
  assert.equal(server.stats.jwksFetches, fetches + 1, "one refetch")
  assertServed(await mcpPost(url, { token: before }), "the old key still verifies")

  // Tokens with unknown kids right after: refused, and no further fetch (at most one per 10 s).
  const strangers = await Promise.all([1, 2, 3, 4, 5].map((n) => server.foreignSign({ aud }, { kid: `stranger-${n}` })))
  const answers = await Promise.all(strangers.map((token) => mcpPost(url, { token })))
  for (const res of answers) assertInvalidToken(res, prmUrl(url), "an unknown kid")
  assert.equal(server.stats.jwksFetches, fetches + 1, "no refetch for unknown kids within 10 s")
})

test("jwksUri: keys come from there instead of the issuer's metadata", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const keyServer = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify(server.foreignJwks))
  })
  await new Promise((resolve) => keyServer.listen(0, "127.0.0.1", resolve))
  defer(() => new Promise((resolve) => keyServer.close(resolve)))
  const jwksUri = `http://127.0.0.1:${keyServer.address().port}/keys.json`
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer, jwksUri } } })
  const aud = `${url}/mcp`
  assertServed(await mcpPost(url, { token: await server.foreignSign({ aud }) }), "signed by a key of jwksUri")
  assertInvalidToken(await mcpPost(url, { token: await server.sign({ aud }) }), prmUrl(url), "signed by a key of the issuer's own JWKS")
  assert.equal(server.stats.jwksFetches, 0, "the issuer's own /jwks is never fetched")
})

test("opaque tokens through RFC 7662 introspection: active ones served and cached, unknown ones 401, the secret never shown", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer, introspection: { clientId: server.introspection.clientId, clientSecret: server.introspection.clientSecret } } } })
  const aud = `${url}/mcp`
  const opaque = await server.clientCredentialsToken({ scope: "tools:read", resource: aud, format: "opaque" })
  assert.equal(opaque.split(".").length, 1, "not a JWT")
  const init = await mcpPost(url, { token: opaque })
  assertServed(init, "an active opaque token")
  assert.equal(server.stats.introspections, 1)
  const headers = { "mcp-session-id": init.headers.get("mcp-session-id"), "mcp-protocol-version": init.json.result.protocolVersion }
  await mcpPost(url, { token: opaque, headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } })
  const who = await mcpPost(url, { token: opaque, headers, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } } })
  const principal = JSON.parse(who.json.result.content[0].text)
  assert.equal(principal.subject, "service-opaque")
  assert.deepEqual(principal.scopes, ["tools:read"])
  assert.equal(principal.claims.client_id, "service-opaque")
  assert.equal(principal.claims.aud, aud)
  assert.equal(server.stats.introspections, 1, "the answer is cached")

  const unknown = await mcpPost(url, { token: "not-a-token-this-server-issued" })
  assertInvalidToken(unknown, prmUrl(url), "an unknown opaque token")
  assert.equal(server.stats.introspections, 2)
  // For another resource: introspection says active, but the audience does not fit.
  const elsewhere = await server.clientCredentialsToken({ scope: "tools:read", resource: "http://127.0.0.1:1/mcp", format: "opaque" })
  assertInvalidToken(await mcpPost(url, { token: elsewhere }), prmUrl(url), "an opaque token for another resource")

  // JWTs are still verified locally, without introspection.
  assertServed(await mcpPost(url, { token: await server.clientCredentialsToken({ resource: aud }) }), "a JWT beside introspection")
  assert.equal(server.stats.introspections, 3)
  assertNoSecret(unknown.text + JSON.stringify(principal), secretsOf(server), "introspection answers")
})

for (const registered of [true, false]) {
  test(`loadMcp's OAuth client authorises against the IdP (code + PKCE through the loopback redirect, ${registered ? "pre-registered client" : "dynamic registration"}) and calls through the gateway`, T, async () => {
    const server = await idp({ scopes: ["tools:read", "tools:admin"] })
    const onCall = []
    const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer, requiredScopes: ["tools:read"] } }, onCall: (c) => onCall.push(c) })
    const asked = []
    const pages = []
    const authorize = async (u) => {
      asked.push(u)
      pages.push(await server.browse(u, { user: "ada" }))
    }
    const warnings = []
    const onWarning = (w) => warnings.push(String(w.message))
    process.on("warning", onWarning)
    defer(() => process.off("warning", onWarning))
    const entry = { url: `${url}/mcp`, timeout: 15_000, ...(registered ? { auth: { clientId: "toolnexus-cli" } } : {}) }
    const source = await loadMcp({ mcpServers: { gw: entry } }, { authorize })
    defer(() => source.close())
    assert.equal(source.status.gw, "connected", source.errors?.gw)
    assert.equal(asked.length, 1)
    const q = new URL(asked[0]).searchParams
    assert.equal(`${new URL(asked[0]).origin}${new URL(asked[0]).pathname}`, server.discovery.authorization_endpoint)
    assert.equal(q.get("resource"), `${url}/mcp`)
    assert.equal(q.get("code_challenge_method"), "S256")
    assert.ok(q.get("scope").split(" ").includes("tools:read"), q.get("scope"))
    assert.match(q.get("redirect_uri"), /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
    assert.equal(q.get("client_id") === "toolnexus-cli", registered)
    assert.equal(pages[0].status, 200)
    assert.equal(server.stats.registrations, registered ? 0 : 1)

    assert.deepEqual(source.tools.map((t) => t.name), ["gw_up_add", "gw_up_read_a", "gw_up_read_b", "gw_up_write_a", "gw_up_admin", "gw_whoami"])
    const sum = await source.tools.find((t) => t.name === "gw_up_add").execute({ a: 2, b: 3 })
    assert.equal(sum.output, "5")
    assert.equal(sum.isError, false)
    const who = JSON.parse((await source.tools.find((t) => t.name === "gw_whoami").execute({})).output)
    assert.equal(who.subject, "ada")
    assert.deepEqual(who.scopes, ["tools:read"])
    assert.equal(who.claims.iss, server.issuer)
    assert.equal(who.claims.aud, `${url}/mcp`)
    assert.equal(who.claims.client_id, registered ? "toolnexus-cli" : who.claims.client_id)
    await waitFor(() => onCall.length === 2, { message: "two onCall records" })
    assert.deepEqual(onCall.map((c) => [c.name, c.principal?.subject]), [["up_add", "ada"], ["whoami", "ada"]])
    assertNoSecret(JSON.stringify({ status: source.status, errors: source.errors, who, onCall }) + warnings.join("\n"), secretsOf(server), "loadMcp's results")
    assert.deepEqual(server.errors, [])
  })
}

/** Runs __test__/python/bearer_client.py with BEARER_TOKEN=token; resolves { code, report, stderr }. */
function pythonBearer(url, token, mode, tool, args = {}) {
  const script = path.join(import.meta.dirname, "python", "bearer_client.py")
  return new Promise((resolve) => {
    execFile(PYTHON, [script, `${url}/mcp`, mode, tool, JSON.stringify(args)], { timeout: 45_000, env: { ...process.env, BEARER_TOKEN: token } }, (error, stdout, stderr) => {
      let report = null
      try {
        report = JSON.parse(stdout)
      } catch {}
      resolve({ code: error ? error.code : 0, report, stdout, stderr })
    })
  })
}

test("the official Python client with a bearer token from the IdP, in both eras; without a good one it cannot connect", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const log = []
  const { url } = await startGateway(defer, { auth: { oauth: { issuer: server.issuer }, tools: { "tools:read": ["up_add", "whoami"] } }, accessLog: (e) => log.push(e) })
  const token = await server.clientCredentialsToken({ resource: `${url}/mcp` })
  for (const [mode, version] of [["auto", "2026-07-28"], ["legacy", "2025-11-25"]]) {
    const run = await pythonBearer(url, token, mode, "up_add", { a: 40, b: 2 })
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assert.deepEqual(run.report, { protocolVersion: version, serverInfo: { name: "toolnexus", version: run.report.serverInfo.version }, tools: ["up_add", "whoami"], text: "42", isError: false })
  }
  assert.ok(log.length > 0 && log.every((e) => e.principal === "service" && e.status < 400), JSON.stringify(log))
  for (const bad of [await server.foreignSign({ aud: `${url}/mcp` }), "garbage"]) {
    log.length = 0
    const run = await pythonBearer(url, bad, "auto", "up_add", { a: 1, b: 1 })
    assert.equal(run.code, 1, run.stdout + run.stderr)
    assert.match(run.report?.error ?? "", /\S/)
    assert.ok(log.length > 0 && log.every((e) => e.principal === null && e.status === 401), JSON.stringify(log))
    assertNoSecret(run.stdout + run.stderr, [bad], "the Python client's report")
  }
})

test("toolnexus serve --oauth-issuer --oauth-scopes: a gateway process that takes the IdP's tokens, and says nothing of them", T, async () => {
  const server = await idp({ scopes: ["tools:read", "tools:admin"] })
  const config = tmpConfig({ mcpServers: { up: { command: [process.execPath, path.join(import.meta.dirname, "fixtures", "stdio-server.mjs"), "--tools", "add"] } } })
  const audience = "http://127.0.0.1/gateway-audience"
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--oauth-issuer", server.issuer, "--oauth-audience", audience, "--oauth-scopes", "tools:read", "--access-log"])
  const url = await gw.serving
  const bare = await mcpPost(url)
  assert.equal(bare.status, 401)
  assert.deepEqual(challenge(bare.headers.get("www-authenticate")).params, { realm: "toolnexus", resource_metadata: "http://127.0.0.1/.well-known/oauth-protected-resource/gateway-audience", scope: "tools:read" })
  const token = await server.clientCredentialsToken({ scope: "tools:read", resource: audience })
  const { client } = await bearerSdkClient(defer, url, token)
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ["up_add"])
  assert.deepEqual((await client.callTool({ name: "up_add", arguments: { a: 1, b: 2 } })).content, [{ type: "text", text: "3" }])
  const narrow = await server.clientCredentialsToken({ scope: "tools:admin", resource: audience })
  assert.equal((await mcpPost(url, { token: narrow })).status, 403)
  await client.close()
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  const entries = end.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
  assert.ok(entries.some((e) => e.method === "tools/call" && e.tool === "up_add" && e.principal === "service" && e.status === 200), end.stderr)
  // The 403 (insufficient scope) is logged; whom (the token's subject) is not said: principal null.
  assert.ok(entries.some((e) => e.status === 403 && (e.principal === null || e.principal === "service")), end.stderr)
  assertNoSecret(end.stdout + end.stderr, secretsOf(server), "toolnexus serve's output")
})

test("an issuer that cannot be discovered: serve rejects in words naming it", T, async () => {
  const server = await idp({ scopes: ["tools:read"] })
  const gone = server.issuer
  await server.close()
  const { tk } = await startGateway(defer, {})
  const err = await tk.serve("127.0.0.1:0", { auth: { oauth: { issuer: gone } } }).then(
    () => assert.fail("serve resolved"),
    (e) => e,
  )
  assert.ok(err instanceof Error)
  assert.match(err.message, /^toolnexus: /)
  assert.ok(err.message.includes(gone), err.message)
  assert.doesNotMatch(err.message, /reqwest|hyper|Error\(|::/)
  // An http issuer off loopback is refused before any fetch.
  await assert.rejects(tk.serve("127.0.0.1:0", { auth: { oauth: { issuer: "http://idp.example.com" } } }), /https/)
})

test("checks that cannot be made (a verifier that throws, introspection with a wrong secret) are 500 server_error; the process's stderr and access log name no token or secret", T, async () => {
  const idpModule = JSON.stringify(path.join(import.meta.dirname, "lib", "idp.mjs"))
  const code = `
    const { startIdp, startGateway, mcpPost } = await import(${idpModule})
    const cleanups = []
    const defer = (f) => cleanups.push(f)
    const server = await startIdp({ scopes: ["tools:read"] })
    const out = { secrets: [...server.secrets, process.env.TN_WRONG_SECRET], answers: [] }
    const thrower = await startGateway(defer, { accessLog: true, auth: { tokens: () => { throw new Error("the directory is down") } } })
    const t1 = "tn-verifier-token-6a7b8c9d"
    out.secrets.push(t1)
    const introspecting = await startGateway(defer, { accessLog: true, auth: { oauth: { issuer: server.issuer, introspection: { clientId: server.introspection.clientId, clientSecret: process.env.TN_WRONG_SECRET } } } })
    const t2 = await server.clientCredentialsToken({ resource: introspecting.url + "/mcp", format: "opaque" })
    out.secrets.push(t2)
    for (const [url, token] of [[thrower.url, t1], [introspecting.url, t2]]) {
      const res = await mcpPost(url, { token })
      out.answers.push({ status: res.status, challenge: res.headers.get("www-authenticate"), body: res.json })
    }
    for (const f of cleanups.reverse()) await f()
    await server.close()
    console.log(JSON.stringify(out))`
  const run = await new Promise((resolve) => {
    execFile(process.execPath, ["--input-type=module", "-e", code], { cwd: path.join(import.meta.dirname, ".."), env: { ...process.env, TN_WRONG_SECRET: "tn-wrong-secret-31415926" }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    )
  })
  assert.equal(run.code, 0, run.stderr)
  const out = JSON.parse(run.stdout.trim().split("\n").at(-1))
  const unchecked = { status: 500, challenge: null, body: { error: "server_error", error_description: "the token could not be checked" } }
  assert.deepEqual(out.answers, [unchecked, unchecked])
  // accessLog: true is one JSON line per request on stderr.
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("{"))
  const logged = lines.map((l) => JSON.parse(l))
  assert.deepEqual(logged.map(({ http, path: p, principal, status }) => ({ http, path: p, principal, status })), [
    { http: "POST", path: "/mcp", principal: null, status: 500 },
    { http: "POST", path: "/mcp", principal: null, status: 500 },
  ])
  // The operator reads why in the log (never the token): the function threw; the issuer
  // refused the introspection.
  assert.equal(logged[0].error, "the token check failed: the token check threw")
  assert.match(logged[1].error, /^cannot introspect the token: http:\/\/127\.0\.0\.1:\d+\/token\/introspection answered HTTP 401 Unauthorized$/)
  assertNoSecret(run.stderr, out.secrets, "the serving process's stderr")
})
