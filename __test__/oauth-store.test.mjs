// OAuth end to end against an OAuth-protected streamable-HTTP MCP server on 127.0.0.1
// (__test__/fixtures/oauth-server.mjs): an app's tokenStore gets the record, and a static
// Authorization header skips OAuth. The token store lives in a temporary XDG_CONFIG_HOME / HOME,
// never the user's.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { createToolkit, listMcpTools } from "toolnexus"
import { deferredCleanup, tmpDir, waitFor } from "./helpers.mjs"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { fetchingAuthorize } from "./lib/oauth.mjs"

// After each test: no child process of this one is left (checked in /proc).
deferredCleanup(afterEach)

const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")
const credentialsFile = path.join(home, "config", "toolnexus", "credentials.json")

const T = { timeout: 60_000 }

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
