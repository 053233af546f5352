// Rate and concurrency limits of a served endpoint (issue 41: `serve(addr, { limits })`): a
// caller over its bucket is answered 429 with Retry-After in words while other callers pass
// (the official Python client in both eras, the TypeScript SDK client); without auth each
// address is a caller of its own; a concurrency place is held by a call's run; a tool's own
// limit is a tool error, and a task holds its places until it ends; refusals are in the access
// log; bad limits are refused in words.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import http from "node:http"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { deferredCleanup } from "./helpers.mjs"
import { until } from "./lib/tasks-wire.mjs"
import { gated } from "./lib/serve-tasks.mjs"
import { opsClient } from "./lib/policy.mjs"

const T = { timeout: 120_000 }
const defer = deferredCleanup(afterEach)
const MODES = ["2026-07-28", "legacy"]
const TOKENS = [
  { token: "alice-token-0123456789", subject: "alice" },
  { token: "bob-token-0123456789", subject: "bob" },
]
const echo = defineTool({
  name: "echo",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  run: ({ text }) => String(text),
})

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
}
let ids = 0

/**
 * One stateless 2026-07-28 request over node:http (from `localAddress`, with `token`, declaring
 * the tasks extension unless `plain`); resolves
 * { status, retryAfter, body } with the body's JSON-RPC message.
 */
function post(url, method, params, { token, localAddress, plain } = {}) {
  // `plain`: the client declares no tasks extension, so a task tool's call is answered plainly.
  const meta = plain ? { ...META, "io.modelcontextprotocol/clientCapabilities": {} } : META
  const body = JSON.stringify({ jsonrpc: "2.0", id: ++ids, method, params: { ...params, _meta: meta } })
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(params.name ? { "mcp-name": params.name } : params.taskId ? { "mcp-name": params.taskId } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  }
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/mcp`, { method: "POST", headers, localAddress }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (d) => (text += d))
      res.on("end", () => {
        const data = text.split("\n").filter((l) => l.startsWith("data:") && l.length > 5).map((l) => JSON.parse(l.slice(5)))
        resolve({ status: res.statusCode, retryAfter: res.headers["retry-after"], body: data.length ? data.at(-1) : JSON.parse(text) })
      })
    })
    req.on("error", reject)
    req.end(body)
  })
}

const call = (url, name, args, opts) => post(url, "tools/call", { name, arguments: args }, opts)

/** ops_client.py against `url`'s /mcp as `token`; resolves its report. */
const python = (url, mode, ops, token) => opsClient(`${url}/mcp`, mode, ops, token)

async function served(serveOpts, toolkitOpts = {}) {
  const tk = await createToolkit({ extraTools: [echo], ...toolkitOpts })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", serveOpts)
  defer(() => handle.stop())
  return handle.url
}

const FLOODED = "Too many requests: the limit for each caller allows 1 call a minute (bursts of 20); retry in "

test("a flood from one principal is answered 429 with Retry-After, while the other principals still pass (Python both eras, TypeScript SDK)", T, async () => {
  const log = []
  const url = await served({ auth: { tokens: TOKENS }, limits: { callsPerMinute: 1, burst: 20 }, accessLog: (entry) => log.push(entry) })
  const alice = { token: TOKENS[0].token }
  const answers = []
  for (let i = 0; i < 23; i++) answers.push(await call(url, "echo", { text: `flood ${i}` }, alice))
  const passed = answers.slice(0, 20)
  assert.deepEqual(passed.map((a) => [a.status, a.body.result.content[0].text]), passed.map((_, i) => [200, `flood ${i}`]))
  for (const refused of answers.slice(20)) {
    assert.equal(refused.status, 429)
    // The bucket refills one call a minute: the next is a minute (less what has passed) away.
    assert.ok(Number(refused.retryAfter) >= 55 && Number(refused.retryAfter) <= 60, refused.retryAfter)
    assert.equal(refused.body.error.code, -32000)
    assert.equal(refused.body.error.message, `${FLOODED}${refused.retryAfter} s`)
  }
  // Bob has a bucket of his own: the official Python client in both eras, and the SDK's.
  for (const mode of MODES) {
    const report = await python(url, mode, [{ call: "echo", args: { text: `bob ${mode}` } }], TOKENS[1].token)
    assert.deepEqual(report.answers, [{ text: `bob ${mode}`, isError: false, structuredContent: null }], mode)
  }
  const bob = new Client({ name: "limits-test", version: "1.0.0" })
  defer(() => bob.close())
  await bob.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS[1].token}` } } }))
  assert.equal((await bob.callTool({ name: "echo", arguments: { text: "sdk" } })).content[0].text, "sdk")
  // Alice's own clients are refused in the limit's words.
  const aliceSdk = new Client({ name: "limits-test", version: "1.0.0" })
  defer(() => aliceSdk.close())
  await assert.rejects(
    aliceSdk.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice.token}` } } })),
    (err) => err.message.includes(FLOODED),
  )
  const alicePython = await python(url, "2026-07-28", [{ call: "echo", args: { text: "x" } }], alice.token).catch((err) => err.stderr)
  assert.ok(JSON.stringify(alicePython).includes(FLOODED), JSON.stringify(alicePython))
  // The access log names each refusal.
  const refusedEntries = log.filter((e) => e.status === 429)
  assert.ok(refusedEntries.length >= 4, JSON.stringify(log.map((e) => e.status)))
  assert.ok(refusedEntries.every((e) => e.principal === "alice" && e.error.startsWith("the limit for each caller allows 1 call a minute")), JSON.stringify(refusedEntries[0]))
  assert.ok(log.filter((e) => e.principal === "bob").every((e) => e.status === 200 || e.status === 202), JSON.stringify(log.filter((e) => e.principal === "bob")))
})

test("without auth each client address is a caller of its own; the overall limit covers them all", T, async () => {
  const url = await served({ limits: { callsPerMinute: 1, burst: 2, overall: { callsPerMinute: 1, burst: 3 } }, metrics: true })
  const from = (localAddress) => ({ localAddress })
  assert.equal((await call(url, "echo", { text: "a" }, from("127.0.0.1"))).status, 200)
  assert.equal((await call(url, "echo", { text: "b" }, from("127.0.0.1"))).status, 200)
  const flooded = await call(url, "echo", { text: "c" }, from("127.0.0.1"))
  assert.equal(flooded.status, 429)
  assert.match(flooded.body.error.message, /^Too many requests: the limit for each caller allows 1 call a minute \(bursts of 2\)/)
  // Another address still passes, until the endpoint's own bucket (3) is spent.
  assert.equal((await call(url, "echo", { text: "d" }, from("127.0.0.2"))).status, 200)
  const overall = await call(url, "echo", { text: "e" }, from("127.0.0.3"))
  assert.equal(overall.status, 429)
  assert.match(overall.body.error.message, /^Too many requests: the server's overall limit allows 1 call a minute \(bursts of 3\); retry in \d+ s$/)
  // Each refusal is counted in /metrics, by limit.
  const metrics = await (await fetch(`${url}/metrics`)).text()
  assert.match(metrics, /^toolnexus_limit_refusals_total\{limit="caller"\} 1$/m)
  assert.match(metrics, /^toolnexus_limit_refusals_total\{limit="overall"\} 1$/m)
})

test("concurrency: a caller's place is held by its call's run; a tool's limit is a tool error, and a task holds its places until it ends", T, async () => {
  const slow = gated("slow")
  const job = gated("job")
  const url = await served(
    { auth: { tokens: TOKENS }, limits: { concurrent: 1, tools: { "jo*": { concurrent: 1 }, echo: { callsPerMinute: 1, burst: 1 } } } },
    { extraTools: [echo, slow.tool, job.tool] },
  )
  const alice = { token: TOKENS[0].token }
  const bob = { token: TOKENS[1].token }
  // A tool's rate: echo once a minute, for everyone.
  assert.equal((await call(url, "echo", { text: "one" }, alice)).body.result.content[0].text, "one")
  const second = (await call(url, "echo", { text: "two" }, bob)).body.result
  assert.deepEqual([second.isError, second.content[0].text], [true, "Too many calls: the limit of tool echo allows 1 call a minute (bursts of 1); retry in 60 s"])

  // A caller's concurrency counts calls, not requests: alice's plain call of `slow` (no tasks
  // extension declared) holds her one place until its run ends; her other requests go on.
  const held = call(url, "slow", {}, { ...alice, plain: true })
  await slow.running
  const refused = (await call(url, "echo", { text: "three" }, alice)).body.result
  assert.deepEqual([refused.isError, refused.content[0].text], [true, "Too many calls: the limit for each caller allows 1 call at once; retry when one has finished"])
  assert.equal((await post(url, "tools/list", {}, alice)).status, 200)
  assert.equal((await post(url, "tools/list", {}, bob)).status, 200)
  slow.release()
  assert.equal((await held).body.result.content[0].text, "done 0")

  // A task of `job` holds the tool's one slot until it ends, for every caller.
  const created = (await call(url, "job", { n: 1 }, alice)).body.result
  assert.equal(created.resultType, "task")
  await job.running
  const busy = (await call(url, "job", { n: 2 }, bob)).body.result
  assert.deepEqual([busy.isError, busy.content[0].text], [true, "Too many calls: the limit of tool job allows 1 call at once; retry when one has finished"])
  job.release()
  const request = (method, params) => post(url, method, params, alice).then((r) => r.body)
  const done = await until(request, created.taskId, ["completed", "failed", "cancelled"])
  assert.equal(done.status, "completed")
  const again = (await call(url, "job", { n: 3 }, bob)).body.result
  assert.equal(again.resultType, "task", JSON.stringify(again))
})

test("limits are checked when given, in words", async () => {
  const tk = await createToolkit({ extraTools: [echo] })
  defer(() => tk.close())
  const refused = async (limits, message) => assert.rejects(tk.serve("127.0.0.1:0", { limits }), { message })
  await refused(5, "toolnexus: limits must be an object like { callsPerMinute, burst, concurrent }")
  await refused({ callsPerMinutes: 5 }, "toolnexus: limits.callsPerMinutes is not a limit (they are callsPerMinute, burst, concurrent, overall, tools)")
  await refused({ callsPerMinute: -1 }, "toolnexus: limits.callsPerMinute must be a number of calls from 0.001 to 1e9, got -1")
  await refused({ concurrent: 1.5 }, "toolnexus: limits.concurrent must be a whole number of calls from 1 to 1e6, got 1.5")
  await refused({ burst: 3 }, "toolnexus: limits.burst needs callsPerMinute (the rate its bucket refills at)")
  await refused({ overall: { tools: {} } }, "toolnexus: limits.overall.tools is not a limit (they are callsPerMinute, burst, concurrent)")
  await refused({ tools: { "a*": { burst: 2 } } }, 'toolnexus: limits.tools["a*"].burst needs callsPerMinute (the rate its bucket refills at)')
})
