// Policy hooks on served and relayed calls (issue 41: `hooks: { beforeCall, afterCall }`):
// a refused call never reaches the upstream (its own log says so), rewritten arguments do, a
// result is redacted before it leaves; reads and prompts alike; a hook that throws or answers
// something else fails its call in words and the server goes on. Met by the official Python
// client in both eras and the TypeScript SDK's client (the handshake era; its 2026-07-28 tasks
// are met on the wire).
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { createToolkit, defineTool, defineResource, definePrompt, defineSkill, buildMcpServer } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { deferredCleanup, tmpConfig, tmpFile } from "./helpers.mjs"
import { wire, until } from "./lib/tasks-wire.mjs"
import { startCli } from "./lib/gateway.mjs"
import { calls, opsClient, sdkClient as sharedSdkClient, upstream } from "./lib/policy.mjs"
import { cli } from "./lib/cli.mjs"

const T = { timeout: 120_000 }
const defer = deferredCleanup(afterEach)
const MODES = ["2026-07-28", "legacy"]

/** The stdio fixture with `tools`, logging each call it receives to `log`. */
/** What the upstream received: [method, params.name ?? params.uri, params.arguments]. */
const received = (log) => calls(log).map(({ method, params }) => [method, params.name ?? params.uri, params.arguments])

/** ops_client.py against `url`'s /mcp; resolves its report. */
const python = (url, mode, ops, token) => opsClient(`${url}/mcp`, mode, ops, token)

const sdkClient = (url, headers = {}) => sharedSdkClient(defer, `${url}/mcp`, headers)

const text = (result) => result.content.map((c) => c.text).join("")

/** A team's policy: no 13s, every echo signed, secrets redacted; each call it saw is kept. */
function policy() {
  const seen = []
  const hooks = {
    beforeCall(call) {
      seen.push(call)
      if (call.tool === "up_add" && call.arguments.a === 13) return { deny: "13 is unlucky here" }
      if (call.tool === "up_add" && call.arguments.a === 99) return { arguments: { a: "ninety-nine", b: 1 } }
      if (call.tool === "up_echo") return { arguments: { text: `${call.arguments.text} (signed by policy)` } }
    },
    async afterCall(call) {
      if (call.kind !== "tool" || call.tool !== "up_echo") return
      return { ...call.result, content: call.result.content.map((c) => ({ ...c, text: c.text.replaceAll("hunter2", "[redacted]") })) }
    },
  }
  return { hooks, seen }
}

async function gateway(log, opts = {}) {
  const { hooks, seen } = policy()
  const tk = await createToolkit({ mcpConfig: { mcpServers: { up: upstream(log, "add", "echo") } }, hooks, ...opts })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  return { url: handle.url, seen }
}

const DENIED = "13 is unlucky here"
const MISFIT = /^beforeCall hook failed: the arguments it gave do not fit tool up_add's schema: .*a/

test("the official Python client in both eras: a refused call never reaches the upstream, rewritten arguments do, a result is redacted", T, async () => {
  const log = tmpFile("calls.log")
  const { url, seen } = await gateway(log)
  for (const mode of MODES) {
    fs.rmSync(log, { force: true })
    const report = await python(url, mode, [
      { call: "up_add", args: { a: 13, b: 1 } },
      { call: "up_add", args: { a: 1, b: 2 } },
      { call: "up_add", args: { a: 99, b: 1 } },
      { call: "up_echo", args: { text: "password hunter2" } },
    ])
    assert.equal(report.protocolVersion, mode === "legacy" ? "2025-11-25" : mode)
    const [denied, added, misfit, echoed] = report.answers
    assert.deepEqual([denied.text, denied.isError], [DENIED, true], mode)
    assert.deepEqual([added.text, added.isError], ["3", false], mode)
    assert.equal(misfit.isError, true, mode)
    assert.match(misfit.text, MISFIT)
    assert.deepEqual([echoed.text, echoed.isError], ["password [redacted] (signed by policy)", false], mode)
    // The upstream saw the allowed calls only, the echo as the policy rewrote it.
    assert.deepEqual(received(log), [
      ["tools/call", "add", { a: 1, b: 2 }],
      ["tools/call", "echo", { text: "password hunter2 (signed by policy)" }],
    ], mode)
  }
  // What the hook was told: the served name, the upstream server, the caller's arguments.
  // (and, in 2026-07-28, the request's _meta, which carries the protocol's own fields).
  const { meta, ...call } = seen[0]
  assert.deepEqual(call, { kind: "tool", method: "tools/call", tool: "up_add", server: "up", arguments: { a: 13, b: 1 } })
  assert.equal(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28")
  assert.equal(seen[4].meta, undefined, "the handshake era's call has no _meta")
  assert.equal(seen.length, 8)
})

test("the TypeScript SDK client: the same policy, and a tool of the application's own is refused before its run", T, async () => {
  const log = tmpFile("calls.log")
  let runs = 0
  const own = defineTool({ name: "up_add_local", description: "never run when refused", run: () => `ran ${++runs}` })
  const { hooks } = policy()
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { up: upstream(log, "add", "echo") } },
    extraTools: [own],
    hooks: { ...hooks, beforeCall: (call) => (call.tool === "up_add_local" ? { deny: "local tools are off today" } : hooks.beforeCall(call)) },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const client = await sdkClient(handle.url)
  const denied = await client.callTool({ name: "up_add", arguments: { a: 13, b: 1 } })
  assert.deepEqual([text(denied), denied.isError], [DENIED, true])
  const echoed = await client.callTool({ name: "up_echo", arguments: { text: "hunter2" } })
  assert.deepEqual([text(echoed), echoed.isError], ["[redacted] (signed by policy)", undefined])
  const local = await client.callTool({ name: "up_add_local", arguments: {} })
  assert.deepEqual([text(local), local.isError, runs], ["local tools are off today", true, 0])
  assert.deepEqual(received(log), [["tools/call", "echo", { text: "hunter2 (signed by policy)" }]])
})

test("reads and prompts: a refused read is -32600 in the policy's words, a prompt's arguments are rewritten, a read is redacted", T, async () => {
  const seen = []
  const tk = await createToolkit({
    extraResources: [
      defineResource({ uri: "memo://public", name: "public", read: () => "open memo" }),
      defineResource({ uri: "memo://secret", name: "secret", read: () => "launch codes" }),
      defineResource({ uri: "memo://mixed", name: "mixed", read: () => "team: hunter2" }),
    ],
    extraPrompts: [
      definePrompt({ name: "greet", arguments: [{ name: "who", required: true }], get: ({ who }) => `Hello, ${who}!` }),
    ],
    hooks: {
      beforeCall(call) {
        seen.push(call)
        if (call.kind === "resource" && call.uri === "memo://secret") return { deny: "memos marked secret stay home" }
        if (call.kind === "prompt") return { arguments: { who: call.arguments.who.toUpperCase() } }
      },
      afterCall(call) {
        if (call.kind !== "resource") return null
        return { contents: call.result.contents.map((c) => ({ ...c, text: c.text.replace("hunter2", "[redacted]") })) }
      },
    },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  for (const mode of MODES) {
    const report = await python(handle.url, mode, [
      { read: "memo://public" },
      { read: "memo://secret" },
      { read: "memo://mixed" },
      { prompt: "greet", args: { who: "ada" } },
    ])
    assert.deepEqual(report.answers, [
      { contents: ["open memo"] },
      { error: { code: -32600, message: "memos marked secret stay home" } },
      { contents: ["team: [redacted]"] },
      { messages: ["Hello, ADA!"] },
    ], mode)
  }
  const client = await sdkClient(handle.url)
  await assert.rejects(client.readResource({ uri: "memo://secret" }), { code: -32600, message: "MCP error -32600: memos marked secret stay home" })
  const prompt = await client.getPrompt({ name: "greet", arguments: { who: "grace" } })
  assert.equal(prompt.messages[0].content.text, "Hello, GRACE!")
  const strip = ({ meta, ...call }) => call
  assert.deepEqual(strip(seen.find((c) => c.kind === "resource")), { kind: "resource", method: "resources/read", uri: "memo://public", arguments: {} })
  assert.deepEqual(strip(seen.find((c) => c.kind === "prompt")), { kind: "prompt", method: "prompts/get", prompt: "greet", arguments: { who: "ada" } })
  // The other requests that name a resource are asked of beforeCall too, which may refuse them.
  await assert.rejects(client.subscribeResource({ uri: "memo://secret" }), { code: -32600, message: "MCP error -32600: memos marked secret stay home" })
  await client.subscribeResource({ uri: "memo://public" })
  assert.deepEqual(strip(seen.at(-1)), { kind: "resource", method: "resources/subscribe", uri: "memo://public", arguments: {} })
})

test("a hook that throws or answers something else fails its call in words; the server goes on", T, async () => {
  const log = tmpFile("calls.log")
  let mode = "throw"
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { up: upstream(log, "add", "echo") } },
    hooks: {
      beforeCall(call) {
        if (call.tool !== "up_add") return
        if (mode === "throw") throw new Error("the policy store is down")
        if (mode === "reject") return Promise.reject(new Error("the policy store timed out"))
        if (mode === "deny-number") return { deny: 5 }
        if (mode === "unknown") return { allow: true }
      },
      afterCall(call) {
        if (call.tool === "up_echo") return "not a result"
      },
    },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const client = await sdkClient(handle.url)
  const expected = {
    throw: "beforeCall hook failed: the policy store is down",
    reject: "beforeCall hook failed: the policy store timed out",
    "deny-number": "beforeCall hook failed: beforeCall's deny must be the reason, a non-empty string",
    unknown: 'beforeCall hook failed: beforeCall returned an unknown field "allow" (it may return deny or arguments)',
  }
  for (const [m, message] of Object.entries(expected)) {
    mode = m
    const result = await client.callTool({ name: "up_add", arguments: { a: 1, b: 1 } })
    assert.deepEqual([text(result), result.isError], [message, true], m)
  }
  const echoed = await client.callTool({ name: "up_echo", arguments: { text: "hi" } })
  assert.deepEqual([text(echoed), echoed.isError], ["afterCall hook failed: afterCall must return nothing or a tool result with a content array", true])
  mode = "fine"
  const added = await client.callTool({ name: "up_add", arguments: { a: 2, b: 2 } })
  assert.deepEqual([text(added), added.isError], ["4", undefined])
  // Only the calls the policy let through reached the upstream (the echo ran; its answer was lost).
  assert.deepEqual(received(log).map(([, name]) => name), ["echo", "add"])
})

test("hooks are checked when given: not an object, an unknown hook, or one that is not a function", async () => {
  await assert.rejects(createToolkit({ hooks: () => {} }), { message: "toolnexus: hooks must be an object with beforeCall and/or afterCall functions" })
  await assert.rejects(createToolkit({ hooks: { beforecall() {} } }), { message: "toolnexus: hooks.beforecall is not a hook (the hooks are beforeCall and afterCall)" })
  await assert.rejects(createToolkit({ hooks: { afterCall: "redact" } }), { message: "toolnexus: hooks.afterCall must be a function" })
  assert.throws(() => buildMcpServer([], { hooks: { beforeCall: 1 } }), { message: "toolnexus: cfg.hooks.beforeCall must be a function" })
})

test("2026-07-28 tasks: a refused call makes no task; an allowed one's task result is redacted; buildMcpServer takes hooks too", T, async () => {
  let runs = 0
  const job = defineTool({
    name: "job",
    description: "a task tool",
    inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    task: "optional",
    run: ({ n }) => `secret ${n} (run ${++runs})`,
  })
  const hooks = {
    beforeCall: (call) => (call.arguments.n < 0 ? { deny: "n must not be negative" } : undefined),
    afterCall: (call) => ({ ...call.result, content: [{ type: "text", text: call.result.content[0].text.replace("secret", "[redacted]") }] }),
  }
  const tk = await createToolkit({ extraTools: [job], hooks })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const request = wire(`${handle.url}/mcp`)
  const refused = (await request("tools/call", { name: "job", arguments: { n: -1 } })).result
  assert.equal(refused.resultType, "complete")
  assert.deepEqual([refused.content, refused.isError], [[{ type: "text", text: "n must not be negative" }], true])
  assert.equal(runs, 0)
  const created = (await request("tools/call", { name: "job", arguments: { n: 7 } })).result
  assert.equal(created.resultType, "task")
  const done = await until(request, created.taskId, ["completed", "failed", "cancelled"])
  assert.deepEqual([done.status, done.result.content], ["completed", [{ type: "text", text: "[redacted] 7 (run 1)" }]])

  // buildMcpServer over an SDK transport: the same hooks.
  const server = buildMcpServer([defineTool({ name: "plain", run: ({ n }) => `plain secret ${n}`, inputSchema: { type: "object", properties: { n: { type: "number" } } } })], { hooks })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await server.connect(a)
  defer(() => server.close())
  const client = new Client({ name: "hooks-test", version: "1.0.0" })
  await client.connect(b)
  defer(() => client.close())
  assert.equal(text(await client.callTool({ name: "plain", arguments: { n: -2 } })), "n must not be negative")
  assert.equal(text(await client.callTool({ name: "plain", arguments: { n: 2 } })), "plain [redacted] 2")
})

test("toolnexus serve --hooks policy.mjs: the module's hooks guard the gateway; a module without hooks is exit 2", T, async () => {
  const log = tmpFile("calls.log")
  const dir = path.dirname(log)
  const policyFile = path.join(dir, "policy.mjs")
  fs.writeFileSync(
    policyFile,
    `export function beforeCall(call) {
  if (call.tool === "up_add" && call.arguments.a === 13) return { deny: "13 is unlucky here" }
}
export const afterCall = (call) => call.tool === "up_echo" ? { content: [{ type: "text", text: "[redacted]" }] } : undefined
`,
  )
  const config = tmpConfig({ mcpServers: { up: upstream(log, "add", "echo") } })
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--hooks", policyFile])
  const url = await gw.serving
  const client = await sdkClient(url)
  const denied = await client.callTool({ name: "up_add", arguments: { a: 13, b: 1 } })
  assert.deepEqual([text(denied), denied.isError], [DENIED, true])
  assert.equal(text(await client.callTool({ name: "up_echo", arguments: { text: "hunter2" } })), "[redacted]")
  assert.equal(text(await client.callTool({ name: "up_add", arguments: { a: 1, b: 1 } })), "2")
  assert.deepEqual(received(log).map(([, name]) => name), ["echo", "add"])

  const empty = path.join(dir, "empty.mjs")
  fs.writeFileSync(empty, "export const policy = 1\n")
  const refused = await cli(["serve", config, "--addr", "127.0.0.1:0", "--hooks", empty])
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, new RegExp(`toolnexus serve: --hooks ${empty.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} exports neither beforeCall nor afterCall`))
  const broken = await cli(["serve", config, "--addr", "127.0.0.1:0", "--hooks", path.join(dir, "missing.mjs")])
  assert.equal(broken.code, 2)
  assert.match(broken.stderr, /--hooks .*missing\.mjs: cannot load it: Cannot find module/)
})

test("2026-07-28 input rounds with a state key: a call whose arguments beforeCall rewrote is retried with the caller's own (Python client), on this replica and another", T, async () => {
  const seen = []
  const greet = defineTool({
    name: "greet",
    inputSchema: { type: "object", properties: { greeting: { type: "string" } } },
    async run({ greeting }, ctx) {
      const answer = await ctx.elicit({ message: "What is your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } })
      return `${greeting}, ${answer.content.name}`
    },
  })
  const hooks = {
    beforeCall(call) {
      seen.push(call.arguments)
      return { arguments: { greeting: `${call.arguments.greeting ?? "Hello"} (checked)` } }
    },
  }
  const stateKey = "a state key the replicas share, 32+ bytes"
  const replicas = []
  for (let i = 0; i < 2; i++) {
    const tk = await createToolkit({ extraTools: [greet], hooks })
    defer(() => tk.close())
    const handle = await tk.serve("127.0.0.1:0", { stateKey, stateless: true })
    defer(() => handle.stop())
    replicas.push(handle.url)
  }
  // The retry comes back to the replica holding the run: the run goes on (no second hook).
  const here = await python(replicas[0], "2026-07-28", [{ call: "greet", args: { greeting: "Hi" } }])
  assert.deepEqual([here.answers[0].text, here.answers[0].isError], ["Hi (checked), Ada Lovelace", false])
  assert.deepEqual(seen, [{ greeting: "Hi" }])
  // The retry reaches the other replica: the call is run again from its sealed state, asked of
  // beforeCall again with the caller's own arguments, and goes on with the rewritten ones.
  seen.length = 0
  const on = (url) => wire(`${url}/mcp`, { extensions: false })
  const first = (await on(replicas[0])("tools/call", { name: "greet", arguments: { greeting: "Hey" } })).result
  assert.equal(first.resultType, "input_required", JSON.stringify(first))
  const [key] = Object.keys(first.inputRequests)
  const retried = await on(replicas[1])("tools/call", {
    name: "greet",
    arguments: { greeting: "Hey" },
    inputResponses: { [key]: { action: "accept", content: { name: "Grace" } } },
    requestState: first.requestState,
  })
  assert.deepEqual(retried.result?.content, [{ type: "text", text: "Hey (checked), Grace" }], JSON.stringify(retried))
  assert.deepEqual(seen, [{ greeting: "Hey" }, { greeting: "Hey" }])
})

test("skills: skills/get and resources/directory/read are asked of beforeCall, which may refuse them", T, async () => {
  const skill = (name) => defineSkill({ files: { "SKILL.md": `---\nname: ${name}\ndescription: The ${name} skill\n---\nDo ${name}.\n` } })
  const seen = []
  const tk = await createToolkit({
    skills: [skill("public-notes"), skill("internal-ops")],
    hooks: {
      beforeCall(call) {
        seen.push([call.method, call.uri])
        if (call.uri?.startsWith("skill://internal-ops")) return { deny: "internal skills are for staff" }
      },
    },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const request = wire(`${handle.url}/mcp`)
  const open = await request("skills/get", { uri: "skill://public-notes/SKILL.md" })
  assert.equal(open.result.skill.frontmatter.name, "public-notes", JSON.stringify(open))
  const refused = await request("skills/get", { uri: "skill://internal-ops/SKILL.md" })
  assert.deepEqual(refused.error, { code: -32600, message: "internal skills are for staff" })
  const folder = await request("resources/directory/read", { uri: "skill://internal-ops" })
  assert.deepEqual(folder.error, { code: -32600, message: "internal skills are for staff" })
  // A skill's file read as a resource (here by the SDK's client, in the handshake era).
  const client = await sdkClient(handle.url)
  await assert.rejects(client.readResource({ uri: "skill://internal-ops/SKILL.md" }), { code: -32600, message: "MCP error -32600: internal skills are for staff" })
  assert.deepEqual(seen, [
    ["skills/get", "skill://public-notes/SKILL.md"],
    ["skills/get", "skill://internal-ops/SKILL.md"],
    ["resources/directory/read", "skill://internal-ops"],
    ["resources/read", "skill://internal-ops/SKILL.md"],
  ])
})
