// Serving as an OAuth 2.1 resource server (issue 22), against a real authorisation server
// (oidc-provider on 127.0.0.1, __test__/lib/idp.mjs): RFC 7662 introspection of opaque tokens,
// an issuer that cannot be discovered, and checks that cannot be made (500 server_error). No
// token or secret may appear in any output.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { tmpDir } from "./helpers.mjs"
import { assertNoSecret, mcpPost, startGateway } from "./lib/gateway.mjs"
import { startIdp } from "./lib/idp.mjs"
import { assertInvalidToken, assertServed, oauthHarness, prmUrl, secretsOf } from "./lib/serve-oauth.mjs"

const { defer, idp } = oauthHarness(afterEach)
const T = { timeout: 90_000 }

// loadMcp's token store lives in a temporary HOME, never the user's.
const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")

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
  const gatewayModule = JSON.stringify(path.join(import.meta.dirname, "lib", "gateway.mjs"))
  const code = `
    const { startIdp } = await import(${idpModule})
    const { startGateway, mcpPost } = await import(${gatewayModule})
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
