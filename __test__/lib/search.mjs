// What the search-*.test.mjs files share: the real servers searched (server-filesystem,
// server-memory, server-everything and the stdio fixture, as config entries), a toolkit served on
// 127.0.0.1:0 and an SDK client of it (closed after the test), and search_tools / call_tool
// through that client.
import assert from "node:assert/strict"
import path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup, nodeFixture, repoRoot, serverEverything, tmpDir } from "../helpers.mjs"

/** A published server's entry point (a devDependency: its absence fails the test, never skips it). */
export const published = (pkg) => path.join(repoRoot, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
export const FILESYSTEM = published("server-filesystem")
export const MEMORY = published("server-memory")

/** server-filesystem over a fresh folder, as a config entry. */
export const filesystem = () => ({ command: [process.execPath, FILESYSTEM, tmpDir()] })
export const everything = { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 }
/** __test__/fixtures/stdio-server.mjs with these tools. */
export const fixtureServer = (...tools) => ({ command: nodeFixture("stdio-server", "--tools", tools.join(",")) })

export const names = (matches) => matches.map((m) => m.name)

/**
 * The clean-up a search test file registers with `afterEach` (`defer(fn)` adds to it), and what
 * opens things under it: `serveAndDefer(tk, opts)` and `sdkClient(url, { token })`.
 */
export function searchHarness(afterEach) {
  const defer = deferredCleanup(afterEach)
  /** Serves `tk` on 127.0.0.1:0 (stopped by `defer`); resolves { url }. */
  async function serveAndDefer(tk, opts = {}) {
    const handle = await tk.serve("127.0.0.1:0", opts)
    defer(() => handle.stop())
    return { url: handle.url }
  }

  /** An SDK client of `url/mcp` (closed by `defer`), answering elicitations with { name: "Ada" }. */
  async function sdkClient(url, { token } = {}) {
    const client = new Client({ name: "search-test", version: "1.0.0" }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` }
    defer(() => client.close())
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }))
    return client
  }
  return { defer, serveAndDefer, sdkClient }
}

/** The result of a tools/call, or its JSON-RPC error as { error: { code, message } }. */
export const outcome = (promise) => promise.then((result) => ({ result }), (err) => ({ error: { code: err.code, message: err.message } }))
/** search_tools' answer: structuredContent.tools, checked to be the JSON of its text part too. */
export async function search(client, args) {
  const r = await client.callTool({ name: "search_tools", arguments: args })
  assert.ok(!r.isError, JSON.stringify(r))
  assert.equal(r.content.length, 1)
  assert.equal(r.content[0].type, "text")
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, "the text part is the same JSON")
  return /** @type {any} */ (r.structuredContent).tools
}
export const via = (client, name, args) => client.callTool({ name: "call_tool", arguments: args === undefined ? { name } : { name, arguments: args } }, undefined, {})

export const UPSTREAM = ["add", "echo", "structured", "fail", "slow", "elicit", "meta"]
