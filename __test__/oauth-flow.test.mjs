// OAuth end to end: an OAuth-protected streamable-HTTP MCP server on 127.0.0.1 (the TypeScript
// SDK's authorisation-server router and bearer middleware, __test__/fixtures/oauth-server.mjs),
// authorised through `opts.authorize` (fetching the URL follows the server's redirect to the
// loopback listener, as a browser would), then reused from the store, refreshed, forgotten; and
// authorised again on a 403 insufficient_scope (step-up). The token store lives in a temporary
// XDG_CONFIG_HOME / HOME, never the user's. (An app's tokenStore: oauth-store.test.mjs; the
// `toolnexus auth` command: oauth-cli.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { forgetCredentials, listMcpTools, loadMcp, storedCredentials } from "toolnexus"
import { deferredCleanup, fixture, runNode, tmpConfig, tmpDir } from "./helpers.mjs"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { assertNoToken, fetchingAuthorize, withWarnings } from "./lib/oauth.mjs"

// After each test: no child process of this one is left (checked in /proc).
deferredCleanup(afterEach)

const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")
const credentialsFile = path.join(home, "config", "toolnexus", "credentials.json")

const T = { timeout: 60_000 }

test("OAuth: authorise once, reuse from the store, refresh after expiry, fail in words, logout", T, async () => {
  const server = await startOAuthServer()
  try {
    const config = { mcpServers: { secure: { type: "http", url: server.url, timeout: 10_000 } } }

    // Without authorize and without a token: failed, saying how to authorise and why.
    const before = await listMcpTools(config)
    assert.equal(before.status.secure, "failed")
    assert.equal(before.errors.secure, 'authorization required: run "toolnexus auth <config> secure" (no token is stored for this server)')
    assert.equal(server.stats.authorizations, 0)

    // First authorisation: authorize is called once, with the server's authorisation endpoint.
    const first = fetchingAuthorize()
    const { result: authorised, warnings } = await withWarnings(() => listMcpTools(config, { authorize: first.authorize }))
    assert.equal(authorised.status.secure, "connected", authorised.errors.secure)
    assert.deepEqual(authorised.tools.secure.map((t) => t.name), ["whoami", "admin"])
    assert.equal(first.urls.length, 1)
    const asked = new URL(first.urls[0])
    assert.equal(`${asked.origin}${asked.pathname}`, new URL("/authorize", server.url).href)
    assert.equal(asked.searchParams.get("code_challenge_method"), "S256")
    assert.equal(asked.searchParams.get("resource"), server.url)
    assert.match(asked.searchParams.get("redirect_uri"), /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
    assert.equal(server.stats.codeExchanges, 1)

    // Stored in a file only its owner can read, keyed by the server URL; never shown in full.
    assert.equal(fs.statSync(credentialsFile).mode & 0o777, 0o600)
    const file = JSON.parse(fs.readFileSync(credentialsFile, "utf8"))
    assert.deepEqual(Object.keys(file.servers), [server.url])
    const [listed] = storedCredentials()
    assert.equal(listed.server, "secure")
    assert.equal(listed.url, server.url)
    assert.equal(listed.issuer, new URL("/", server.url).href)
    assert.equal(listed.refreshable, true)
    assert.equal(listed.subject, "ada@example.com", "from the userinfo endpoint")
    assertNoToken(JSON.stringify(storedCredentials()), server)
    assertNoToken(JSON.stringify(authorised) + warnings.join("\n"), server)

    // Reuse: a second call (a fresh connection) needs no authorisation.
    let askedAgain = 0
    const reused = await listMcpTools(config, { authorize: async () => void askedAgain++ })
    assert.equal(reused.status.secure, "connected", reused.errors.secure)
    assert.equal(askedAgain, 0)
    assert.equal(server.stats.authorizations, 1)

    // The server forgets its access tokens (they expired): one refresh, no user, and the tool works.
    server.expireAccessTokens()
    const source = await loadMcp(config)
    try {
      assert.equal(source.status.secure, "connected", source.errors.secure)
      assert.equal(server.stats.refreshes, 1)
      const result = await source.tools.find((t) => t.name === "secure_whoami").execute({})
      assert.equal(result.output, "you are ada@example.com")
      assert.equal(result.isError, false)
      assertNoToken(JSON.stringify(result), server)
    } finally {
      await source.close()
    }
    assert.equal(server.stats.authorizations, 1)

    // Expired by toolnexus's own clock (received two hours ago, valid for one): refreshed before
    // it is sent (the server would still have taken it, so only that clock can ask for this).
    const stored = JSON.parse(fs.readFileSync(credentialsFile, "utf8"))
    stored.servers[server.url].credentials.token_received_at -= 7200
    fs.writeFileSync(credentialsFile, JSON.stringify(stored))
    const early = await listMcpTools(config)
    assert.equal(early.status.secure, "connected", early.errors.secure)
    assert.equal(server.stats.refreshes, 2)
    assert.equal(storedCredentials()[0].subject, "ada@example.com", "a refresh keeps whom the grant is for")

    // Two agents (processes) find the token rejected at once. Refresh tokens rotate (each works
    // once): under the store's cross-process lock the second takes the first one's fresh token,
    // or refreshes with its successor, never with the spent one; both connect.
    server.expireAccessTokens()
    server.slowRefreshes(500)
    const refreshesBefore = server.stats.refreshes
    const shared = tmpConfig(config)
    const agents = await Promise.all([1, 2].map(() => runNode(fixture("oauth-lister.mjs"), { args: [shared], timeout: 30_000 })))
    for (const agent of agents) {
      assert.equal(agent.code, 0, agent.stderr)
      assert.deepEqual(JSON.parse(agent.stdout), { status: { secure: "connected" }, errors: {} })
      assertNoToken(agent.stdout + agent.stderr, server)
    }
    server.slowRefreshes(0)
    assert.equal(server.stats.spentRefreshes, 0)
    assert.ok([1, 2].includes(server.stats.refreshes - refreshesBefore), `${server.stats.refreshes - refreshesBefore} refreshes`)
    assert.equal(server.stats.authorizations, 1)

    // Expired and not refreshable (the refresh token revoked too): failed, saying so.
    server.expireAccessTokens()
    server.revokeRefreshTokens()
    const expired = await listMcpTools(config)
    assert.equal(expired.status.secure, "failed")
    assert.equal(
      expired.errors.secure,
      'authorization required: run "toolnexus auth <config> secure" (the stored token expired and cannot be refreshed)',
    )
    assertNoToken(JSON.stringify(expired), server)

    // Logout: forgotten, and the next call is back to "no token".
    assert.equal(forgetCredentials("secure"), 1)
    assert.deepEqual(storedCredentials(), [])
    const after = await listMcpTools(config)
    assert.equal(after.errors.secure, 'authorization required: run "toolnexus auth <config> secure" (no token is stored for this server)')
  } finally {
    await server.close()
  }
})

test("OAuth step-up: a 403 insufficient_scope in the middle of a call authorises again with the union of scopes, or says so", T, async () => {
  const server = await startOAuthServer()
  try {
    const records = new Map()
    const tokenStore = { get: async (k) => records.get(k), set: async (k, v) => void records.set(k, v), delete: async (k) => void records.delete(k) }
    const config = { mcpServers: { secure: { url: server.url, timeout: 10_000 } } }
    const { authorize, urls } = fetchingAuthorize()

    const first = await loadMcp(config, { authorize, tokenStore })
    try {
      assert.equal(first.status.secure, "connected", first.errors.secure)
      assert.deepEqual(server.stats.requestedScopes, [["mcp:tools"]])
      const whoami = await first.tools.find((t) => t.name === "secure_whoami").execute({})
      assert.equal(whoami.isError, false)
      // With authorize, the same connection steps up: asked again, the call retried and answered.
      const admin = await first.tools.find((t) => t.name === "secure_admin").execute({})
      assert.equal(admin.output, "granted mcp:tools mcp:admin")
      assert.equal(admin.isError, false)
      assert.equal(urls.length, 2)
      assert.deepEqual(server.stats.requestedScopes, [["mcp:tools"], ["mcp:tools", "mcp:admin"]])
    } finally {
      await first.close()
    }

    // A fresh token store with only the first grant, and no authorize: the call says the scope was refused.
    server.expireAccessTokens()
    records.clear()
    const narrow = await loadMcp(config, { authorize: fetchingAuthorize().authorize, tokenStore })
    await narrow.close()
    const plain = await loadMcp(config, { tokenStore })
    try {
      const admin = await plain.tools.find((t) => t.name === "secure_admin").execute({})
      assert.equal(admin.isError, true)
      assert.match(
        admin.output,
        /authorization required: run "toolnexus auth <config> secure" \(the server refused the granted scope; it asks for "mcp:admin"\)/,
      )
      assertNoToken(JSON.stringify(admin), server)
      // The connection stays usable for what the grant does allow.
      const whoami = await plain.tools.find((t) => t.name === "secure_whoami").execute({})
      assert.equal(whoami.output, "you are ada@example.com")
    } finally {
      await plain.close()
    }
  } finally {
    await server.close()
  }
})
