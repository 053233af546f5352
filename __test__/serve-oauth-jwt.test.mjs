// Serving as an OAuth 2.1 resource server (issue 22), against a real authorisation server
// (oidc-provider on 127.0.0.1, __test__/lib/idp.mjs): JWT access tokens it mints (client
// credentials) or that are signed with its keys for the cases it will not mint (expired, not yet
// valid, another audience or issuer), foreign keys, `alg: none`, garbage; the clock skew; key
// rotation; keys from jwksUri. No token or secret may appear in any output. (Metadata, scopes and
// policies: serve-oauth-policy.test.mjs; introspection and the checks that cannot be made:
// serve-oauth-introspection.test.mjs; the clients: serve-oauth-clients.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import http from "node:http"
import path from "node:path"
import { SignJWT, decodeJwt } from "jose"
import { tmpDir, waitFor } from "./helpers.mjs"
import { assertNoSecret, challenge, mcpPost, startGateway } from "./lib/gateway.mjs"
import { assertInvalidToken, assertServed, now, oauthHarness, prmUrl, secretsOf } from "./lib/serve-oauth.mjs"

const { defer, idp } = oauthHarness(afterEach)
const T = { timeout: 90_000 }

// loadMcp's token store lives in a temporary HOME, never the user's.
const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")

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
