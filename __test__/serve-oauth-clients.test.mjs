// Clients of a toolkit served as an OAuth 2.1 resource server (issue 22), against a real
// authorisation server (oidc-provider on 127.0.0.1, __test__/lib/idp.mjs): toolnexus's own
// loadMcp client (authorisation code + PKCE), the official Python client with a bearer token, and
// the `toolnexus serve --oauth-*` flags. No token or secret may appear in any output.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { loadMcp } from "toolnexus"
import { PYTHON, tmpConfig, tmpDir, waitFor } from "./helpers.mjs"
import { assertNoSecret, bearerSdkClient, challenge, mcpPost, startCli, startGateway } from "./lib/gateway.mjs"
import { oauthHarness, secretsOf } from "./lib/serve-oauth.mjs"

const { defer, idp } = oauthHarness(afterEach)
const T = { timeout: 90_000 }

// loadMcp's token store lives in a temporary HOME, never the user's.
const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")

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
