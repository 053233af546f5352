// Per-scope policies of a served toolkit (issue 22) for prompts and resources: a resource URI
// is checked as the server would read it, and hidden prompts and resources are absent from lists
// and answer exactly as unknown ones.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, definePrompt, defineResource, defineResourceTemplate, defineTool } from "toolnexus"
import { deferredCleanup, waitFor } from "./helpers.mjs"
import { bearerSession, mcpPost } from "./lib/gateway.mjs"
import { sseMessages } from "./lib/serve.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 90_000 }

test("a resource URI is checked as the server would read it: dot segments and escaped separators match no glob", T, async () => {
  const tk = await createToolkit({
    builtins: false,
    extraResources: [defineResourceTemplate({ uriTemplate: "docs://{+path}", name: "docs", read: (_uri, vars) => `path=${vars.path}` })],
  })
  defer(() => tk.close())
  const USER = "tn-user-9d8c7b6a"
  const handle = await tk.serve("127.0.0.1:0", { auth: { tokens: [{ token: USER, subject: "user" }], resources: { "*": ["docs://{+path}", "docs://public/*"] } } })
  defer(() => handle.stop())
  const headers = await bearerSession(handle.url, USER)
  const read = async (uri) => (await mcpPost(handle.url, { token: USER, headers, body: { jsonrpc: "2.0", id: 7, method: "resources/read", params: { uri } } })).json
  assert.equal((await read("docs://public/a.txt")).result.contents[0].text, "path=public/a.txt")
  assert.equal((await read("docs://public/%61.txt")).result.contents[0].text, "path=public/a.txt", "escaped letters match as themselves")
  // Dot segments match no glob: the server may resolve them above the prefix that was allowed.
  for (const uri of ["docs://public/./b/../c", "docs://public/../secret/x", "docs://public/%2e%2e/secret", "docs://public/%2E%2e/%2e/secret", "docs://public%2f..%2fsecret", "docs://public\\..\\secret", "docs://secret"]) {
    const answer = await read(uri)
    assert.deepEqual(answer.error, { code: -32002, message: `Resource not found: ${uri}`, data: { uri } }, uri)
  }
})

test("prompts and resources follow their own policies: hidden ones are absent from lists and answer exactly as unknown ones", T, async () => {
  const tk = await createToolkit({
    builtins: false,
    extraTools: [defineTool({ name: "t", description: "t", run: () => "t" })],
    extraPrompts: [definePrompt({ name: "greet", description: "g", get: () => "hello" }), definePrompt({ name: "secret_plan", description: "s", arguments: [{ name: "topic" }], complete: { topic: () => ["alpha", "beta"] }, get: () => "plan" })],
    extraResources: [
      defineResource({ uri: "notes://public", name: "public", read: () => "pub" }),
      defineResource({ uri: "notes://private", name: "private", read: () => "priv" }),
      defineResourceTemplate({ uriTemplate: "files://{name}", name: "files", read: (_uri, vars) => vars.name }),
    ],
  })
  defer(() => tk.close())
  const USER = "tn-user-1a2b3c4d"
  const ADMIN = "tn-admin-5e6f7a8b"
  const log = []
  const handle = await tk.serve("127.0.0.1:0", {
    accessLog: (e) => log.push(e),
    auth: {
      tokens: [{ token: USER, subject: "user" }, { token: ADMIN, subject: "admin", scopes: ["admin"] }],
      prompts: { "*": ["greet"], admin: ["*"] },
      resources: { "*": ["notes://public"], admin: ["*"] },
    },
  })
  defer(() => handle.stop())
  const url = handle.url
  const ask = async (token, method, params = {}) => {
    const headers = await bearerSession(url, token)
    const res = await mcpPost(url, { token, headers, body: { jsonrpc: "2.0", id: 5, method, params } })
    assert.equal(res.status, 200, res.text)
    return res.json
  }
  const names = async (token, method, key, field) => (await ask(token, method)).result[key].map((x) => x[field])
  assert.deepEqual(await names(USER, "tools/list", "tools", "name"), ["t"], "no tools policy: every tool")
  assert.deepEqual(await names(USER, "prompts/list", "prompts", "name"), ["greet"])
  assert.deepEqual(await names(ADMIN, "prompts/list", "prompts", "name"), ["greet", "secret_plan"])
  assert.deepEqual(await names(USER, "resources/list", "resources", "uri"), ["notes://public"])
  assert.deepEqual(await names(ADMIN, "resources/list", "resources", "uri"), ["notes://public", "notes://private"])
  assert.deepEqual(await names(USER, "resources/templates/list", "resourceTemplates", "uriTemplate"), [])
  assert.deepEqual(await names(ADMIN, "resources/templates/list", "resourceTemplates", "uriTemplate"), ["files://{name}"])

  const same = (hidden, unknown, hiddenName, unknownName) => assert.deepEqual(JSON.parse(JSON.stringify(hidden).replaceAll(hiddenName, unknownName)), unknown)
  same(await ask(USER, "prompts/get", { name: "secret_plan" }), await ask(USER, "prompts/get", { name: "no_such_prompt" }), "secret_plan", "no_such_prompt")
  same(await ask(USER, "resources/read", { uri: "notes://private" }), await ask(USER, "resources/read", { uri: "notes://nothing" }), "notes://private", "notes://nothing")
  same(await ask(USER, "resources/read", { uri: "files://x" }), await ask(USER, "resources/read", { uri: "nofiles://x" }), "files://x", "nofiles://x")
  const completion = (name) => ({ ref: { type: "ref/prompt", name }, argument: { name: "topic", value: "a" } })
  same(await ask(USER, "completion/complete", completion("secret_plan")), await ask(USER, "completion/complete", completion("no_such_prompt")), "secret_plan", "no_such_prompt")
  same(await ask(USER, "resources/subscribe", { uri: "notes://private" }), await ask(USER, "resources/subscribe", { uri: "notes://nothing" }), "notes://private", "notes://nothing")
  assert.ok((await ask(USER, "prompts/get", { name: "secret_plan" })).error, "an error, as for an unknown prompt")
  assert.deepEqual((await ask(ADMIN, "completion/complete", completion("secret_plan"))).result.completion.values, ["alpha", "beta"])
  assert.deepEqual((await ask(ADMIN, "prompts/get", { name: "secret_plan" })).result.messages, [{ role: "user", content: { type: "text", text: "plan" } }])
  assert.equal((await ask(ADMIN, "resources/read", { uri: "files://x" })).result.contents[0].text, "x")
  assert.equal((await ask(USER, "resources/read", { uri: "notes://public" })).result.contents[0].text, "pub")

  // A 2026-07-28 subscriptions/listen is acknowledged with only the URIs the caller may see:
  // a hidden one is neither echoed back nor followed.
  const acknowledged = async (token) => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    }
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: ["notes://public", "notes://private", "files://x"] }, _meta: meta },
      }),
    })
    assert.equal(res.status, 200)
    for await (const m of sseMessages(res.body)) {
      if (m.method === "notifications/subscriptions/acknowledged") return m.params.notifications.resourceSubscriptions
    }
    assert.fail("the listen stream ended without an acknowledgement")
  }
  assert.deepEqual(await acknowledged(USER), ["notes://public"])
  assert.deepEqual(await acknowledged(ADMIN), ["notes://public", "notes://private", "files://x"])

  // The access log names the prompt or resource a request asked for (hidden or not).
  await waitFor(() => log.filter((e) => e.method === "resources/read").length === 6, { message: "the reads logged" })
  const named = log.filter((e) => e.method === "prompts/get" || e.method === "resources/read").map(({ time, ms, http, path: p, status, ...rest }) => rest)
  assert.deepEqual(named, [
    { principal: "user", method: "prompts/get", prompt: "secret_plan" },
    { principal: "user", method: "prompts/get", prompt: "no_such_prompt" },
    { principal: "user", method: "resources/read", resource: "notes://private" },
    { principal: "user", method: "resources/read", resource: "notes://nothing" },
    { principal: "user", method: "resources/read", resource: "files://x" },
    { principal: "user", method: "resources/read", resource: "nofiles://x" },
    { principal: "user", method: "prompts/get", prompt: "secret_plan" },
    { principal: "admin", method: "prompts/get", prompt: "secret_plan" },
    { principal: "admin", method: "resources/read", resource: "files://x" },
    { principal: "user", method: "resources/read", resource: "notes://public" },
  ])
})
