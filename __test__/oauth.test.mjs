// OAuth end to end: an OAuth-protected streamable-HTTP MCP server on 127.0.0.1 (the TypeScript
// SDK's authorisation-server router and bearer middleware, __test__/fixtures/oauth-server.mjs),
// authorised through `opts.authorize` (fetching the URL follows the server's redirect to the
// loopback listener, as a browser would), then reused from the store, refreshed, forgotten;
// and the `toolnexus auth` command as a real subprocess. The token store lives in a temporary
// XDG_CONFIG_HOME / HOME, never the user's.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { spawn } from "node:child_process"
import { createToolkit, forgetCredentials, listMcpTools, loadMcp, storedCredentials } from "toolnexus"
import { deferredCleanup, fixture, repoRoot, runNode, tmpConfig, tmpDir, waitFor } from "./helpers.mjs"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"

// After each test: no child process of this one is left (checked in /proc).
deferredCleanup(afterEach)

const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")
const credentialsFile = path.join(home, "config", "toolnexus", "credentials.json")

const T = { timeout: 60_000 }

/** What a browser does with the URL: follow the redirects, here back to toolnexus's listener. */
function fetchingAuthorize() {
  const urls = []
  const authorize = async (url) => {
    urls.push(url)
    const answer = await fetch(url)
    assert.equal(answer.status, 200, `the redirect listener answered ${answer.status}`)
  }
  return { authorize, urls }
}

/** Captures ToolnexusWarnings emitted while `work` runs. */
async function withWarnings(work) {
  const warnings = []
  const onWarning = (w) => warnings.push(String(w.message))
  process.on("warning", onWarning)
  try {
    return { result: await work(), warnings }
  } finally {
    process.off("warning", onWarning)
  }
}

function assertNoToken(text, server) {
  for (const token of server.tokens) assert.ok(!text.includes(token), `a token leaked into: ${text}`)
}

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

test("OAuth: an app's tokenStore gets the record, and a static Authorization header skips OAuth", T, async () => {
  const server = await startOAuthServer()
  try {
    const records = new Map()
    const calls = []
    // A class-based store: its methods use `this`.
    class Keychain {
      items = records
      async get(key) {
        calls.push(`get ${key}`)
        return this.items.get(key)
      }
      async set(key, record) {
        calls.push(`set ${key}`)
        this.items.set(key, record)
      }
      async delete(key) {
        calls.push(`delete ${key}`)
        this.items.delete(key)
      }
    }
    const tokenStore = new Keychain()
    const config = { mcpServers: { secure: { url: server.url, timeout: 10_000 } } }
    const { authorize } = fetchingAuthorize()
    const inv = await listMcpTools(config, { authorize, tokenStore })
    assert.equal(inv.status.secure, "connected", inv.errors.secure)
    assert.deepEqual([...records.keys()], [server.url])
    assert.equal(records.get(server.url).server, "secure")
    assert.ok(calls.includes(`set ${server.url}`))
    const inFile = fs.existsSync(credentialsFile) ? Object.keys(JSON.parse(fs.readFileSync(credentialsFile, "utf8")).servers) : []
    assert.deepEqual(inFile, [], "the app's store is used instead of the file")

    // The record reused through the app's store, with no authorisation.
    const again = await listMcpTools(config, { tokenStore })
    assert.equal(again.status.secure, "connected", again.errors.secure)
    assert.equal(server.stats.authorizations, 1)

    // createToolkit passes authorize and tokenStore on to its servers.
    const toolkit = await createToolkit({ mcpConfig: config, tokenStore })
    try {
      assert.deepEqual(toolkit.tools().map((t) => t.name), ["secure_whoami", "secure_admin"])
    } finally {
      await toolkit.close()
    }

    // A static Authorization header is the credential: toolnexus neither refreshes nor asks.
    const unauthorizedBefore = server.stats.unauthorized
    const headers = { Authorization: "Bearer not-a-token" }
    const fixed = await listMcpTools({ mcpServers: { secure: { url: server.url, headers, timeout: 10_000 } } }, { authorize, tokenStore })
    assert.equal(fixed.status.secure, "failed")
    assert.equal(fixed.errors.secure, `HTTP 401 Unauthorized at ${server.url}`)
    assert.equal(server.stats.authorizations, 1)
    assert.equal(server.stats.unauthorized, unauthorizedBefore + 1, "one request, no legacy SSE retry")

    // The user says no: the authorisation server redirects with an error, reported in words.
    const empty = new Map()
    const fresh = { get: async (k) => empty.get(k), set: async (k, v) => void empty.set(k, v), delete: async (k) => void empty.delete(k) }
    const refuse = async (url) => {
      const asked = new URL(url)
      const back = new URL(asked.searchParams.get("redirect_uri"))
      back.search = new URLSearchParams({ error: "access_denied", error_description: "the user said no", state: asked.searchParams.get("state") })
      await fetch(back)
    }
    // A redirect that is not for this authorisation (another state) is refused and the wait goes on.
    let stray
    const strayFirst = async (url) => {
      const back = new URL(new URL(url).searchParams.get("redirect_uri"))
      back.search = new URLSearchParams({ code: "forged", state: "not-this-one" })
      stray = (await fetch(back)).status
      await fetch(url)
    }
    const patient = await listMcpTools(config, { authorize: strayFirst, tokenStore: fresh })
    assert.equal(stray, 400)
    assert.equal(patient.status.secure, "connected", patient.errors.secure)
    empty.clear()

    // Aborted while waiting for the user: rejects with the reason, and the listener is gone.
    const controller = new AbortController()
    let listener
    const goAway = async (url) => {
      listener = new URL(url).searchParams.get("redirect_uri")
      controller.abort(new Error("the user went away"))
    }
    await assert.rejects(listMcpTools(config, { authorize: goAway, tokenStore: fresh, signal: controller.signal }), { message: "the user went away" })
    const closed = async () => {
      try {
        await fetch(listener)
        return false
      } catch {
        return true
      }
    }
    await waitFor(closed, { timeout: 5000, message: "the redirect listener closed" })

    // A user slower than the server's timeout: the wait for them is not part of it.
    const slowUser = async (url) => {
      await new Promise((resolve) => setTimeout(resolve, 1500))
      await fetch(url)
    }
    const quick = { mcpServers: { secure: { url: server.url, timeout: 1000 } } }
    const slow = await listMcpTools(quick, { authorize: slowUser, tokenStore: fresh })
    assert.equal(slow.status.secure, "connected", slow.errors.secure)
    empty.clear()

    const refused = await listMcpTools(config, { authorize: refuse, tokenStore: fresh })
    assert.equal(refused.errors.secure, "the authorisation server refused (access_denied: the user said no)")
    const throwing = await listMcpTools(config, { authorize: () => Promise.reject(new Error("no browser here")), tokenStore: fresh })
    assert.equal(throwing.errors.secure, "opts.authorize failed: no browser here")
    assert.equal(empty.size, 0)

    // A store that throws fails the server with its message, not a crash.
    const broken = { get: async () => { throw new Error("keychain locked") }, set: async () => {}, delete: async () => {} }
    const failed = await listMcpTools(config, { tokenStore: broken })
    assert.equal(failed.status.secure, "failed")
    console.log(failed.errors.secure)
    await assert.rejects(listMcpTools(config, { tokenStore: { get: 1 } }), {
      name: "TypeError",
      message: "toolnexus: opts.tokenStore.get must be a function",
    })
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

/** Runs the CLI with the temporary home; `onLine` sees stdout lines as they come. */
function cli(args, { onLine } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, "bin", "toolnexus.mjs"), ...args], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    let pending = ""
    child.stdout.setEncoding("utf8").on("data", (d) => {
      stdout += d
      pending += d
      const lines = pending.split("\n")
      pending = lines.pop()
      for (const line of lines) onLine?.(line)
    })
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

test("toolnexus auth --no-browser, auth --list, list marks the server, auth --logout", T, async () => {
  const server = await startOAuthServer()
  try {
    const config = tmpConfig({ mcpServers: { secure: { url: server.url, timeout: 10_000 } } })

    const needs = await cli(["list", config])
    assert.equal(needs.code, 1)
    assert.match(needs.stdout, new RegExp(`secure +authorization required: run "toolnexus auth ${config.replaceAll("/", "\\/")} secure" \\(no token is stored for this server\\)`))

    // The printed URL is "opened" by fetching it, as the user's browser would.
    let opened
    const authorised = await cli(["auth", config, "secure", "--no-browser"], {
      onLine: (line) => {
        if (line.startsWith("http")) opened = fetch(line)
      },
    })
    assert.equal(authorised.code, 0, authorised.stderr)
    assert.equal((await opened).status, 200)
    const issuer = new URL("/", server.url).href
    assert.match(authorised.stdout, /Open this URL to authorise secure:\nhttp:\/\/127\.0\.0\.1:\d+\/authorize\?/)
    assert.match(authorised.stdout, /authorised secure as ada@example\.com \(2 tools\)\n$/)
    assertNoToken(authorised.stdout + authorised.stderr, server)

    const listed = await cli(["auth", "--list"])
    assert.equal(listed.code, 0)
    assert.match(listed.stdout, new RegExp(`^secure  ${server.url}  as ada@example\\.com\\n  issuer ${issuer} · client `))
    assert.match(listed.stdout, /refreshable/)
    assertNoToken(listed.stdout, server)

    const connected = await cli(["list", config])
    assert.equal(connected.code, 0, connected.stdout + connected.stderr)
    assert.equal(server.stats.authorizations, 1)

    const out = await cli(["auth", "--logout", "secure"])
    assert.equal(out.code, 0)
    assert.equal(out.stdout, "forgot the credentials of secure\n")
    const none = await cli(["auth", "--list"])
    assert.match(none.stdout, /^no stored credentials/)
    const again = await cli(["auth", "--logout", "secure"])
    assert.equal(again.code, 1)

    const usage = await cli(["auth", config])
    assert.equal(usage.code, 2)
    assert.match(usage.stderr, /expected <config> <name>/)
  } finally {
    await server.close()
  }
})
