// Serving (docs/serving.md), part 5: stop() with a call in flight, a process that exits after
// stop(), a client's cancellation reaching run() and a gateway's upstream, and
// toolkit.mcpStatus()/mcpErrors().
// Every server is real, every socket a real loopback socket on 127.0.0.1:0; the shared
// set-up and clean-up are in lib/serve.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import { createToolkit, defineTool } from "toolnexus"
import { fixture, runNode, tmpFile, waitFor, within } from "./helpers.mjs"
import { deferred, mk, names, parseBody, post, rawSession, serveHarness, T, tryConnect } from "./lib/serve.mjs"

const { defer, sdkClient } = serveHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// stop()

test("stop() waits for an in-flight call; afterwards the port refuses connections", T, async () => {
  const entered = deferred()
  const stopCalled = deferred()
  const order = []
  let url
  const hold = defineTool({
    name: "hold",
    run: async () => {
      entered.resolve()
      await stopCalled.promise
      // Return only once the server has stopped accepting: stop() is then under way for sure,
      // and this call is still in flight.
      await waitFor(async () => (await tryConnect(url)) === "ECONNREFUSED", { timeout: 10000, message: "listener closed by stop()" })
      order.push("run returned")
      return "held to the end"
    },
  })
  const tk = await createToolkit({ extraTools: [hold, mk("quick")], builtins: false })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  url = handle.url
  const headers = await rawSession(handle.url)
  assert.equal(await tryConnect(handle.url), "connected")

  const inFlight = post(handle.url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hold", arguments: {} } }, { headers })
  await within(entered.promise, 10000, "the held call reaching run")

  const stopping = handle.stop().then(() => order.push("stop resolved"))
  stopCalled.resolve()
  await within(stopping, 15000, "stop()")
  assert.deepEqual(order, ["run returned", "stop resolved"], "stop() resolved only after the in-flight call finished")

  // the in-flight request was answered in full, not cut off
  const r = await inFlight
  assert.equal(r.status, 200)
  assert.deepEqual(parseBody(r.type, r.text), {
    jsonrpc: "2.0",
    id: 1,
    result: { content: [{ type: "text", text: "held to the end" }], isError: false },
  })

  assert.equal(await tryConnect(handle.url), "ECONNREFUSED")
  await handle.close() // same as stop(), and harmless a second time
  await tk.close()
  assert.equal(await tryConnect(handle.url), "ECONNREFUSED")
})

test("a process with a served toolkit exits on its own after stop()", T, async () => {
  // --parked: a 2026-07-28 run left waiting for its retry is ended by stop(), not kept alive.
  for (const [args, called] of [[[], "hello"], [["--close-toolkit"], "hello"], [["--parked"], "input_required"]]) {
    const r = await runNode(fixture("serve-and-stop"), { args, timeout: 20000 })
    assert.equal(r.signal, null, `killed by the test timeout (${args}): the process did not exit by itself\n${r.stderr}`)
    assert.equal(r.code, 0, `${args}: ${r.stderr}`)
    assert.match(r.stdout, new RegExp(`^served http://127\\.0\\.0\\.1:\\d+\\ncalled ${called}\\nstopped\\n$`), args.join(" "))
  }
})

test("a client's cancellation reaches a served run() as ctx.signal, and the server keeps serving", T, async () => {
  let started
  const running = new Promise((resolve) => (started = resolve))
  let sawAbort
  const aborted = new Promise((resolve) => (sawAbort = resolve))
  const wait = defineTool({
    name: "wait",
    run: (_args, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          sawAbort(ctx.signal.reason.message)
          resolve("stopped")
        })
        started()
      }),
  })
  const echo = defineTool({ name: "echo", run: ({ text }) => text })
  const tk = await createToolkit({ extraTools: [wait, echo] })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  const client = await sdkClient(handle.url, "cancel-test")

  const ac = new AbortController()
  const call = client.callTool({ name: "wait", arguments: {} }, undefined, { signal: ac.signal })
  await running
  ac.abort(new Error("user gave up"))
  await assert.rejects(call)
  assert.equal(await aborted, "toolnexus: the MCP client cancelled this call")
  const after = await client.callTool({ name: "echo", arguments: { text: "still serving" } })
  assert.deepEqual(after.content, [{ type: "text", text: "still serving" }])
})

test("a gateway passes a client's cancellation on to the upstream server", T, async () => {
  const events = tmpFile("events")
  fs.writeFileSync(events, "")
  const tk = await createToolkit({
    mcpConfig: {
      up: {
        command: ["node", fixture("stdio-server.mjs"), "--tools", "sleep,echo"],
        environment: { FIXTURE_EVENT_FILE: events },
      },
    },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  const client = await sdkClient(handle.url, "cancel-test")

  const ac = new AbortController()
  const call = client.callTool({ name: "up_sleep", arguments: { ms: 20000 } }, undefined, { signal: ac.signal })
  // The upstream call is in flight once a later call on the same connection has come back.
  const echoed = await client.callTool({ name: "up_echo", arguments: { text: "x" } })
  assert.deepEqual(echoed.content, [{ type: "text", text: "x" }])
  ac.abort()
  await assert.rejects(call)
  await waitFor(() => fs.readFileSync(events, "utf8").includes("cancelled sleep"), {
    timeout: 5000,
    message: "the upstream server saw notifications/cancelled",
  })
})

test("toolkit.mcpStatus() and mcpErrors() report every configured server, in config order", T, async () => {
  const tk = await createToolkit({
    mcpConfig: {
      ok: { command: ["node", fixture("stdio-server.mjs"), "--tools", "echo"] },
      gone: { command: ["toolnexus-test-no-such-binary"] },
      off: { command: ["node"], enabled: false },
    },
  })
  defer(() => tk.close())
  assert.deepEqual(tk.mcpStatus(), { ok: "connected", gone: "failed", off: "disabled" })
  assert.deepEqual(Object.keys(tk.mcpErrors()), ["gone"])
  assert.match(tk.mcpErrors().gone, /^cannot start "toolnexus-test-no-such-binary": No such file or directory/)
  assert.deepEqual(names(tk.tools()), ["ok_echo"])
})
