// The public options are checked once, in the package's JavaScript (lib/options.js), in the
// order the native side always checked them; no napi conversion message (which names Rust
// types) reaches an app, and a refused option is a rejected promise, never a throw.
import { test } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools, loadMcp } from "toolnexus"
import { nodeFixture } from "./helpers.mjs"

const T = { timeout: 30000 }
const TE = (message) => ({ name: "TypeError", message })

/** `run()` returns a promise (it does not throw) that rejects as `expected`. */
async function rejects(run, expected) {
  const promise = run()
  assert.ok(promise instanceof Promise)
  await assert.rejects(promise, expected)
}

test("options: refusals are rejected promises in words, checked in a fixed order", T, async () => {
  const aborted = AbortSignal.abort(new Error("stop"))
  const cases = [
    [() => listMcpTools({}, { timeout: "5" }), TE("toolnexus: opts.timeout must be a number of milliseconds")],
    [() => listMcpTools({}, { deadline: Infinity }), TE("toolnexus: opts.deadline must be a non-negative number of milliseconds")],
    [() => loadMcp({}, { timeout: 2147483648 }), TE("toolnexus: opts.timeout must be at most 2147483647 milliseconds (about 24.8 days)")],
    // The deadline first, then an aborted signal (its reason as it is), then the config's kind.
    [() => listMcpTools({}, { timeout: -1, signal: aborted }), TE("toolnexus: opts.timeout must be a non-negative number of milliseconds")],
    [() => loadMcp(5, { signal: aborted, waitFor: 5 }), { message: "stop" }],
    [() => loadMcp(null, { waitFor: 5 }), TE("toolnexus: MCP config must be a file path, JSON text or an object")],
    [() => loadMcp({}, { waitFor: 5 }), TE("toolnexus: opts.waitFor must be a function")],
    [() => loadMcp({}, { onToolsChanged: "x" }), TE("toolnexus: opts.onToolsChanged must be a function")],
    [() => listMcpTools({}, { authorize: {} }), TE("toolnexus: opts.authorize must be a function")],
    [() => listMcpTools({}, { tokenStore: 5 }), TE("toolnexus: opts.tokenStore must be an object { get, set, delete }")],
    [() => loadMcp({}, { tokenStore: { get() {}, set: 1 } }), TE("toolnexus: opts.tokenStore.set must be a function")],
    [() => loadMcp({}, { tokenStore: { get() {}, set() {} } }), TE("toolnexus: opts.tokenStore.delete must be a function")],
    // Was napi's "Object property 'addEventListener' type mismatch…".
    [() => listMcpTools({}, { signal: {} }), TE("toolnexus: opts.signal must be an AbortSignal")],
  ]
  for (const [run, expected] of cases) await rejects(run, expected)
})

test("options: absent, null and non-object options mean none; a fractional deadline is fine", T, async () => {
  const empty = { tools: {}, resources: {}, resourceTemplates: {}, prompts: {}, skills: {}, status: {}, errors: {}, info: {} }
  for (const opts of [undefined, null, 5, "x", true, {}, { timeout: null, signal: 5, waitFor: null }]) {
    assert.deepEqual(await listMcpTools({}, opts), empty)
  }
  assert.deepEqual(await listMcpTools({}, { deadline: 1.5, signal: new AbortController().signal }), empty)
  const source = await loadMcp({}, { timeout: 0.2, waitFor: undefined, onToolsChanged: null })
  assert.deepEqual(source.tools, [])
  await source.close()
})

test("options: a loadMcp tool's bad ctx is its error result, after bad arguments", T, async () => {
  const source = await loadMcp({ mcpServers: { s: { command: nodeFixture("stdio-server", "--tools", "echo") } } })
  try {
    const echo = source.tools.find((t) => t.name === "s_echo")
    const out = async (args, ctx) => {
      const r = await echo.execute(args, ctx)
      return [r.output, r.isError]
    }
    assert.deepEqual(await out({ text: "hi" }, { timeout: "1" }), ["toolnexus: ctx.timeout must be a number of milliseconds", true])
    assert.deepEqual(await out({ text: "hi" }, { signal: {} }), ["toolnexus: ctx.signal must be an AbortSignal", true])
    assert.deepEqual(await out({ text: "hi" }, { timeout: -1, onProgress: 5 }), ["toolnexus: ctx.timeout must be a non-negative number of milliseconds", true])
    assert.deepEqual(await out("hi", { timeout: -1 }), ["toolnexus: tool arguments must be an object", true])
    assert.deepEqual(await out({ text: "hi" }, { timeout: 5000.5, signal: new AbortController().signal, onProgress: () => {} }), ["hi", false])
    assert.deepEqual(await out({ text: "hi" }, 5), ["hi", false])
  } finally {
    await source.close()
  }
})

test("options: toolkit.serve's options are refused in words, never in napi's", T, async () => {
  const { createToolkit } = await import("toolnexus")
  const toolkit = await createToolkit({})
  try {
    const cases = [
      // Were "Failed to convert napi value into rust type `bool` …" and the like.
      [{ stateless: "x" }, TE("toolnexus: stateless must be a boolean, got string")],
      [{ allowedHosts: "x" }, TE("toolnexus: allowedHosts must be an array of strings")],
      [{ allowedOrigins: [1] }, TE("toolnexus: allowedOrigins must be an array of strings")],
      // A number as JavaScript prints it.
      [{ sessionIdleTimeout: 1e21 }, { name: "Error", message: "toolnexus: sessionIdleTimeout must be a number of milliseconds from 1 to 1e12, got 1e+21" }],
      [{ maxSessions: NaN }, { name: "Error", message: "toolnexus: maxSessions must be a whole number from 1 to 1e9, got NaN" }],
    ]
    for (const [options, expected] of cases) await rejects(() => toolkit.serve("127.0.0.1:0", options), expected)
    const served = await toolkit.serve("127.0.0.1:0", { stateless: true, allowedHosts: ["example.test"], allowedOrigins: [], maxSessions: 3, sessionIdleTimeout: 1000 })
    assert.match(served.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    await served.stop()
  } finally {
    await toolkit.close()
  }
})
