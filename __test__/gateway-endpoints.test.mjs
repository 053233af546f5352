// Endpoints per audience (issue 41: `serve(addr, { endpoints })`): one port serves the whole set
// at /mcp and named subsets at /mcp/<name>, each with its own listing, sessions, auth, hooks
// and limits; met by the official Python client in both eras and the TypeScript SDK client.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { createToolkit } from "toolnexus"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { deferredCleanup, tmpConfig, tmpFile } from "./helpers.mjs"
import { startCli } from "./lib/gateway.mjs"
import { calls, opsClient, sdkClient as sharedSdkClient, upstream } from "./lib/policy.mjs"

const T = { timeout: 120_000 }
const defer = deferredCleanup(afterEach)
const MODES = ["2026-07-28", "legacy"]
const READER = "reader-token-0123456789"

const received = (log) => calls(log).map(({ params }) => params.name)

const python = opsClient

const sdkClient = (url, headers = {}) => sharedSdkClient(defer, url, headers)

const names = async (client) => (await client.listTools()).tools.map((t) => t.name)

test("two audiences on one port: different listings, auth, hooks and limits; /mcp stays the whole set", T, async () => {
  const ghLog = tmpFile("gh.log")
  const memLog = tmpFile("mem.log")
  const tk = await createToolkit({ mcpConfig: { mcpServers: { gh: upstream(ghLog, "add", "echo"), mem: upstream(memLog, "echo", "structured") } } })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", {
    endpoints: {
      readers: {
        servers: ["mem"],
        auth: { tokens: [{ token: READER, subject: "reader" }] },
        hooks: { beforeCall: (call) => (String(call.arguments.text).includes("plan") ? { deny: "readers cannot send plans" } : undefined) },
      },
      admins: { tools: ["gh_*"], limits: { tools: { gh_add: { callsPerMinute: 1, burst: 1 } } } },
    },
  })
  defer(() => handle.stop())
  assert.deepEqual(handle.endpoints, { readers: `${handle.url}/mcp/readers`, admins: `${handle.url}/mcp/admins` })

  // The whole set, open on loopback.
  const all = await sdkClient(`${handle.url}/mcp`)
  assert.deepEqual(await names(all), ["gh_add", "gh_echo", "mem_echo", "mem_structured"])
  assert.equal((await all.callTool({ name: "mem_echo", arguments: { text: "a plan" } })).content[0].text, "a plan")

  // readers: mem's tools, behind its own token, with its own hook; Python in both eras.
  const unauthorised = await fetch(handle.endpoints.readers, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" })
  assert.equal(unauthorised.status, 401)
  for (const mode of MODES) {
    const report = await python(handle.endpoints.readers, mode, [
      { list: "tools" },
      { call: "mem_echo", args: { text: "hello" } },
      { call: "mem_echo", args: { text: "the plan" } },
      { call: "gh_add", args: { a: 1, b: 2 } },
    ], READER)
    const [listed, echoed, denied, hidden] = report.answers
    assert.deepEqual(listed.tools, ["mem_echo", "mem_structured"], mode)
    assert.equal(echoed.text, "hello", mode)
    assert.deepEqual([denied.text, denied.isError], ["readers cannot send plans", true], mode)
    assert.match(JSON.stringify(hidden), /Unknown tool: gh_add/, mode)
  }

  // admins: gh's tools by glob, open like /mcp, with gh_add limited.
  const admins = await sdkClient(handle.endpoints.admins)
  assert.deepEqual(await names(admins), ["gh_add", "gh_echo"])
  assert.equal((await admins.callTool({ name: "gh_add", arguments: { a: 2, b: 3 } })).content[0].text, "5")
  const limited = await admins.callTool({ name: "gh_add", arguments: { a: 2, b: 3 } })
  assert.deepEqual([limited.isError, limited.content[0].text], [true, "Too many calls: the limit of tool gh_add allows 1 call a minute (bursts of 1); retry in 60 s"])
  // The limit is the admins endpoint's alone.
  assert.equal((await all.callTool({ name: "gh_add", arguments: { a: 1, b: 1 } })).content[0].text, "2")
  for (const mode of MODES) {
    const report = await python(handle.endpoints.admins, mode, [{ list: "tools" }])
    assert.deepEqual(report.answers[0].tools, ["gh_add", "gh_echo"], mode)
  }

  // Sessions are each endpoint's own: the admins session is unknown at /mcp.
  const admin = /** @type {any} */ (admins).transport.sessionId
  assert.match(admin, /\S/)
  const elsewhere = await fetch(`${handle.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": admin, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  })
  assert.equal(elsewhere.status, 404)
  // An endpoint nobody named does not exist.
  assert.equal((await fetch(`${handle.url}/mcp/nope`, { method: "POST", body: "{}" })).status, 404)
  assert.deepEqual(received(ghLog), ["add", "add"])
  assert.deepEqual(received(memLog), ["echo", "echo", "echo"])
})

test("each endpoint's listing follows its own servers: list_changed reaches the audience whose tools changed", T, async () => {
  const tk = await createToolkit({ mcpConfig: { mcpServers: { gh: upstream(tmpFile("gh.log"), "add", "grow"), mem: upstream(tmpFile("mem.log"), "echo") } } })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", { endpoints: { admins: { servers: ["gh"] }, readers: { servers: ["mem"] } } })
  defer(() => handle.stop())
  const admins = await sdkClient(handle.endpoints.admins)
  const readers = await sdkClient(handle.endpoints.readers)
  let readersHeard = 0
  readers.setNotificationHandler(ToolListChangedNotificationSchema, () => void readersHeard++)
  const heard = new Promise((resolve) => admins.setNotificationHandler(ToolListChangedNotificationSchema, resolve))
  // Streams open (a GET each) before the change, so the notification has somewhere to go.
  assert.deepEqual(await names(admins), ["gh_add", "gh_grow"])
  assert.deepEqual(await names(readers), ["mem_echo"])
  const all = await sdkClient(`${handle.url}/mcp`)
  assert.equal((await all.callTool({ name: "gh_grow", arguments: { name: "grown" } })).content[0].text, "added grown")
  await heard
  assert.deepEqual(await names(admins), ["gh_add", "gh_grow", "gh_grown"])
  assert.deepEqual(await names(readers), ["mem_echo"])
  assert.equal(readersHeard, 0, "the readers' tools did not change")
})

test("endpoints are checked when given, in words", T, async () => {
  const tk = await createToolkit({ mcpConfig: { mcpServers: { gh: upstream(tmpFile("gh.log"), "add") } } })
  defer(() => tk.close())
  const refused = (endpoints, message) => assert.rejects(tk.serve("127.0.0.1:0", { endpoints }), { message })
  await refused({ "a/b": {} }, 'toolnexus: endpoints.a/b: an endpoint\'s name is its path (/mcp/<name>): 1 to 64 letters, digits, "_", "-" or "."')
  await refused({ readers: { server: ["gh"] } }, "toolnexus: endpoints.readers.server is not an endpoint's setting (they are servers, tools, auth, hooks, limits)")
  await refused({ readers: { servers: ["github"] } }, 'toolnexus: endpoints.readers.servers: the config has no server "github"')
  await refused({ readers: { tools: "gh_*" } }, "toolnexus: endpoints.readers.tools must be an array of names")
  await refused({ readers: { limits: { burst: 1 } } }, "toolnexus: limits.burst needs callsPerMinute (the rate its bucket refills at)")
})

test("toolnexus serve --tools-config with endpoints: a line per endpoint, each serving its audience", T, async () => {
  const config = tmpConfig({ mcpServers: { gh: upstream(tmpFile("gh.log"), "add", "echo"), mem: upstream(tmpFile("mem.log"), "echo") } })
  const file = tmpFile("gateway.json")
  fs.writeFileSync(file, JSON.stringify({ servers: { mem: { prefix: "memory" } }, endpoints: { memory: { servers: ["mem"] }, adders: { tools: ["*_add"] } } }))
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--tools-config", file])
  const url = await gw.serving
  // The endpoints' lines follow the first (heard as they come, not polled).
  await new Promise((resolve) => {
    const heard = () => {
      if (!/adders/.test(gw.stdout())) return
      gw.child.stdout.off("data", heard)
      resolve()
    }
    gw.child.stdout.on("data", heard)
    heard()
  })
  assert.equal(gw.stdout(), `toolnexus: serving 3 tools at ${url}/mcp\ntoolnexus: endpoint memory at ${url}/mcp/memory\ntoolnexus: endpoint adders at ${url}/mcp/adders\n`)
  assert.deepEqual(await names(await sdkClient(`${url}/mcp/memory`)), ["memory_echo"])
  assert.deepEqual(await names(await sdkClient(`${url}/mcp/adders`)), ["gh_add"])
})
