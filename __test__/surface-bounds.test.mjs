// Bounds of the served surface against a hostile client or a careless completer: a completion
// is cut to the protocol's 100 values (with `total` and `hasMore`) however many a completer
// gives, and a resource read whose URI would make template matching backtrack for minutes is
// answered "not found" at once. Clients: the TypeScript SDK, and a loadMcp source over the same
// endpoint.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, definePrompt, defineResourceTemplate, loadMcp } from "toolnexus"
import { T, serveHarness } from "./lib/serve.mjs"

const { defer, sdkClient } = serveHarness(afterEach)

const MANY = Array.from({ length: 1_000_000 }, (_, i) => `v${i}`)

async function served() {
  const tk = await createToolkit({
    extraResources: [
      defineResourceTemplate({ uriTemplate: "x://{a}.{b}.{c}/z", name: "dotted", read: (uri) => `read ${uri}` }),
    ],
    extraPrompts: [
      definePrompt({ name: "many", description: "A million completions", arguments: [{ name: "v" }], get: () => "hi", complete: { v: () => MANY } }),
    ],
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  return handle.url
}

test("a completer's million values reach a client as the first 100, total and hasMore", T, async () => {
  const url = await served()
  const client = await sdkClient(url)
  const { completion } = await client.complete({ ref: { type: "ref/prompt", name: "many" }, argument: { name: "v", value: "" } })
  assert.deepEqual(completion.values, MANY.slice(0, 100))
  assert.equal(completion.total, 1_000_000)
  assert.equal(completion.hasMore, true)

  const source = await loadMcp({ app: { url: `${url}/mcp` } })
  defer(() => source.close())
  assert.deepEqual(source.status, { app: "connected" }, source.errors.app)
  const loaded = await source.complete("app", { type: "ref/prompt", name: "many" }, { name: "v", value: "" })
  assert.deepEqual(loaded, { values: MANY.slice(0, 100), total: 1_000_000, hasMore: true })
})

test("a hostile URI against a many-variable template is answered at once, a fair one is read", T, async () => {
  const url = await served()
  const client = await sdkClient(url)
  const fair = await client.readResource({ uri: "x://one.two.three/z" })
  assert.equal(fair.contents[0].text, "read x://one.two.three/z")
  const began = performance.now()
  await assert.rejects(client.readResource({ uri: `x://${"a.".repeat(1000)}` }), (e) => {
    assert.match(String(e.message), /Resource not found/)
    return true
  })
  const ms = performance.now() - began
  assert.ok(ms < 10_000, `a hostile read took ${ms.toFixed(0)} ms`)
})
