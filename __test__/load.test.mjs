// loadMcp, Tool.execute, the elicitation bridge and its exported mappers against real MCP
// servers (SPEC §4; seed 002; issue 3): @modelcontextprotocol/server-everything over stdio, the
// SDK-built fixtures in __test__/fixtures/ (stdio-server, elicit-server for URL-mode
// elicitation, crash/hang/grandchild servers) and an in-process streamable-HTTP server.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import { setTimeout as delay } from "node:timers/promises"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { loadMcp, listMcpTools, elicitationToRequest, answerToElicitResult, sanitize } from "toolnexus"
import {
  assertAbortMidway,
  assertAbortedBeforeStart,
  descendants,
  describePids,
  fixture,
  isAlive,
  killAll,
  nodeFixture,
  readPid,
  rejection,
  serverEverything,
  tmpFile,
  waitFor,
  watchDescendants,
} from "./helpers.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"

const T = { timeout: 30000 }
const everything = () => ({ command: [process.execPath, serverEverything, "stdio"], timeout: 15000 })

// Every source a test opens, so one that a failing test did not close is closed afterwards.
const opened = []
/** loadMcp, remembering the source for the afterEach clean-up. */
async function load(input, opts) {
  const source = await loadMcp(input, opts)
  opened.push(source)
  return source
}

// SPEC §4: close() leaves nothing running; whatever a test did, no child of this process
// survives it. The check comes first, so a test that forgot to close fails.
afterEach(async () => {
  const left = descendants()
  await Promise.all(opened.splice(0).map((s) => s.close()))
  killAll(left) // keep one failure from cascading into the next tests
  assert.deepEqual(left, [], `processes left running after the test: ${describePids(left)}`)
})

/** The tools of a source by name. */
const byName = (source) => Object.fromEntries(source.tools.map((t) => [t.name, t]))
const names = (source) => source.tools.map((t) => t.name)

/** Collects ToolnexusWarning messages until stop() (which lets pending emitWarning ticks run). */
function captureWarnings() {
  const seen = []
  const listener = (w) => {
    if (w.name === "ToolnexusWarning") seen.push(w.message)
  }
  process.on("warning", listener)
  return {
    async stop() {
      await new Promise((resolve) => setImmediate(resolve)) // emitWarning emits on nextTick
      process.off("warning", listener)
      return seen
    },
  }
}

/** Calls execute and fails the test if it rejects (execute must never reject). */
async function callFull(tool, args, ctx) {
  let result
  try {
    result = await tool.execute(args, ctx)
  } catch (err) {
    assert.fail(`execute rejected (it must never reject): ${err?.stack ?? err}`)
  }
  return result
}

/** The result in words (output, isError, metadata): what the mapping tests compare exactly.
 * The MCP parts (`content`, `structuredContent`) have tests of their own. */
async function call(tool, args, ctx) {
  const { content, structuredContent, ...words } = await callFull(tool, args, ctx)
  return words
}

// ---------------------------------------------------------------------------------------------
// @modelcontextprotocol/server-everything over stdio

test("server-everything: echo, get-sum and get-structured-content map exactly", T, async () => {
  const source = await load({ mcpServers: { everything: everything() } })
  assert.deepEqual(source.status, { everything: "connected" }, JSON.stringify(source.errors))
  assert.deepEqual(source.errors, {})
  const tools = byName(source)
  for (const n of ["echo", "get-sum", "get-structured-content", "trigger-long-running-operation"]) {
    assert.ok(tools[`everything_${n}`], `everything_${n} in ${names(source).join(",")}`)
  }
  for (const tool of source.tools) {
    assert.equal(tool.source, "mcp")
    const extras = Object.keys(tool).filter((k) => !["description", "execute", "inputSchema", "name", "source"].includes(k))
    assert.deepEqual(extras.filter((k) => !["title", "annotations", "outputSchema", "icons", "execution", "_meta"].includes(k)), [], tool.name)
    assert.equal(tool.inputSchema.type, "object", tool.name)
    assert.equal(tool.inputSchema.additionalProperties, false, tool.name)
    assert.equal(typeof tool.inputSchema.properties, "object", tool.name)
  }
  assert.equal(tools.everything_echo.description, "Echoes back the input string")
  assert.deepEqual(tools.everything_echo.inputSchema.properties, { message: { type: "string", description: "Message to echo" } })
  assert.deepEqual(tools.everything_echo.inputSchema.required, ["message"])

  assert.deepEqual(await call(tools.everything_echo, { message: "hello, world" }), {
    output: "Echo: hello, world",
    isError: false,
    metadata: { server: "everything" },
  })
  assert.deepEqual(await call(tools["everything_get-sum"], { a: 2, b: 40 }), {
    output: "The sum of 2 and 40 is 42.",
    isError: false,
    metadata: { server: "everything" },
  })
  const structured = await call(tools["everything_get-structured-content"], { location: "Chicago" })
  assert.equal(structured.isError, false)
  assert.deepEqual(structured.metadata, { server: "everything" })
  assert.equal(structured.output, JSON.stringify({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 }))
  const parsed = JSON.parse(structured.output)
  assert.deepEqual(Object.keys(parsed).sort(), ["conditions", "humidity", "temperature"])
  await source.close()
})

test("server-everything: progress notifications restart ctx.timeout (3 s operation, 1.5 s timeout)", T, async (t) => {
  const source = await load({ mcpServers: { everything: everything() } })
  const op = byName(source)["everything_trigger-long-running-operation"]
  const start = performance.now()
  const result = await call(op, { duration: 3, steps: 3 }, { timeout: 1500 })
  const elapsed = performance.now() - start
  t.diagnostic(`3-step operation with ctx.timeout 1500 finished after ${elapsed.toFixed(0)} ms`)
  assert.deepEqual(result, {
    output: "Long running operation completed. Duration: 3 seconds, Steps: 3.",
    isError: false,
    metadata: { server: "everything" },
  })
  assert.ok(elapsed > 1500, `finished after ${elapsed} ms: the operation did not outlive the timeout`)
  await source.close()
})

test("ctx.timeout without progress: the exact timeout message, and the server is told to cancel", T, async () => {
  const events = tmpFile("events")
  const source = await load({
    mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep,echo"), env: { FIXTURE_EVENT_FILE: events } } },
  })
  const tools = byName(source)
  const start = performance.now()
  const result = await call(tools.fx_sleep, { ms: 5000 }, { timeout: 1500 })
  const elapsed = performance.now() - start
  assert.deepEqual(result, { output: "MCP tool call timed out after 1500 ms", isError: true, metadata: { server: "fx" } })
  assert.ok(elapsed >= 1490 && elapsed < 1500 + 1000, `timed out after ${elapsed} ms`)
  await waitFor(() => fs.existsSync(events) && fs.readFileSync(events, "utf8") === "cancelled sleep\n", {
    timeout: 3000,
    message: "the timed-out call is cancelled at the server",
  })
  // The connection is still usable.
  assert.equal((await call(tools.fx_echo, { text: "still here" })).output, "still here")
  await source.close()
})

test("ctx.timeout overrides the server's timeout in both directions", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep"), timeout: 1000 } } })
  const sleep = byName(source).fx_sleep
  assert.deepEqual(await call(sleep, { ms: 3000 }), {
    output: "MCP tool call timed out after 1000 ms",
    isError: true,
    metadata: { server: "fx" },
  })
  assert.deepEqual(await call(sleep, { ms: 1500 }, { timeout: 5000 }), { output: "slept 1500", isError: false, metadata: { server: "fx" } })
  assert.deepEqual(await call(sleep, { ms: 3000 }, { timeout: 200 }), {
    output: "MCP tool call timed out after 200 ms",
    isError: true,
    metadata: { server: "fx" },
  })
  await source.close()
})

test("fixture slow tool: progress every 200 ms keeps a 300 ms timeout alive for 1 s", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "slow") } } })
  assert.deepEqual(await call(byName(source).fx_slow, { steps: 5, intervalMs: 200 }, { timeout: 300 }), {
    output: "slow done after 5 steps",
    isError: false,
    metadata: { server: "fx" },
  })
  await source.close()
})

test("server-everything: ctx.signal aborts a long-running operation fast", T, async (t) => {
  const source = await load({ mcpServers: { everything: everything() } })
  const tools = byName(source)
  const ac = new AbortController()
  const pending = tools["everything_trigger-long-running-operation"].execute({ duration: 20, steps: 2 }, { signal: ac.signal })
  // Messages are handled in order: once this echo is answered, the operation has started.
  assert.equal((await call(tools.everything_echo, { message: "sync" })).output, "Echo: sync")
  const start = performance.now()
  ac.abort()
  const result = await pending
  const latency = performance.now() - start
  t.diagnostic(`abort -> result latency: ${latency.toFixed(2)} ms`)
  assert.deepEqual(result, { output: "MCP tool call aborted", isError: true, metadata: { server: "everything" } })
  assert.ok(latency < 1000, `the aborted call resolved ${latency} ms after abort`)
  // The connection survives an aborted call.
  assert.equal((await call(tools.everything_echo, { message: "after" })).output, "Echo: after")
  await source.close()
})

test("ctx.signal: the server receives notifications/cancelled (fixture records it)", T, async () => {
  const events = tmpFile("events")
  const source = await load({
    mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "sleep,echo"), env: { FIXTURE_EVENT_FILE: events } } },
  })
  const tools = byName(source)
  const ac = new AbortController()
  const pending = tools.fx_sleep.execute({ ms: 20000 }, { signal: ac.signal })
  assert.equal((await call(tools.fx_echo, { text: "sync" })).output, "sync")
  assert.equal(fs.existsSync(events), false)
  const start = performance.now()
  ac.abort(new Error("user pressed stop"))
  const result = await pending
  const latency = performance.now() - start
  assert.deepEqual(result, { output: "MCP tool call aborted", isError: true, metadata: { server: "fx" } })
  assert.ok(latency < 1000, `resolved ${latency} ms after abort`)
  await waitFor(() => fs.existsSync(events) && fs.readFileSync(events, "utf8") === "cancelled sleep\n", {
    timeout: 3000,
    message: "the fixture recorded the cancellation",
  })
  // An already-aborted signal resolves at once with the same message.
  const before = performance.now()
  assert.deepEqual(await call(tools.fx_sleep, { ms: 20000 }, { signal: AbortSignal.abort() }), {
    output: "MCP tool call aborted",
    isError: true,
    metadata: { server: "fx" },
  })
  assert.ok(performance.now() - before < 1000)
  await source.close()
})

// The schema trigger-elicitation-request sends (server-everything 2026.8.31), verbatim.
const EVERYTHING_ELICIT_SCHEMA = {
  type: "object",
  properties: {
    name: { title: "String", type: "string", description: "Your full, legal name" },
    check: { title: "Boolean", type: "boolean", description: "Agree to the terms and conditions" },
    firstLine: {
      title: "String with default",
      type: "string",
      description: "Favorite first line of a story",
      default: "It was a dark and stormy night.",
    },
    email: {
      title: "String with email format",
      type: "string",
      format: "email",
      description: "Your email address (will be verified, and never shared with anyone else)",
    },
    homepage: { type: "string", format: "uri", title: "String with uri format", description: "Portfolio / personal website" },
    birthdate: { title: "String with date format", type: "string", format: "date", description: "Your date of birth" },
    integer: {
      title: "Integer",
      type: "integer",
      description: "Your favorite integer (do not give us your phone number, pin, or other sensitive info)",
      minimum: 1,
      maximum: 100,
      default: 42,
    },
    number: {
      title: "Number in range 1-1000",
      type: "number",
      description: "Favorite number (there are no wrong answers)",
      minimum: 0,
      maximum: 1000,
      default: 3.14,
    },
    untitledSingleSelectEnum: {
      type: "string",
      title: "Untitled Single Select Enum",
      description: "Choose your favorite friend",
      enum: ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"],
      default: "Monica",
    },
    untitledMultipleSelectEnum: {
      type: "array",
      title: "Untitled Multiple Select Enum",
      description: "Choose your favorite instruments",
      minItems: 1,
      maxItems: 3,
      items: { type: "string", enum: ["Guitar", "Piano", "Violin", "Drums", "Bass"] },
      default: ["Guitar"],
    },
    titledSingleSelectEnum: {
      type: "string",
      title: "Titled Single Select Enum",
      description: "Choose your favorite hero",
      oneOf: [
        { const: "hero-1", title: "Superman" },
        { const: "hero-2", title: "Green Lantern" },
        { const: "hero-3", title: "Wonder Woman" },
      ],
      default: "hero-1",
    },
    titledMultipleSelectEnum: {
      type: "array",
      title: "Titled Multiple Select Enum",
      description: "Choose your favorite types of fish",
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: "fish-1", title: "Tuna" },
          { const: "fish-2", title: "Salmon" },
          { const: "fish-3", title: "Trout" },
        ],
      },
      default: ["fish-1"],
    },
    legacyTitledEnum: {
      type: "string",
      title: "Legacy Titled Single Select Enum",
      description: "Choose your favorite type of pet",
      enum: ["pet-1", "pet-2", "pet-3", "pet-4", "pet-5"],
      enumNames: ["Cats", "Dogs", "Birds", "Fish", "Reptiles"],
      default: "pet-1",
    },
  },
  required: ["name"],
}

test("server-everything: trigger-elicitation-request through waitFor (accept, decline, cancel)", T, async () => {
  const requests = []
  const answers = [
    { ok: true, data: { name: "Ada Lovelace", check: true, email: "ada@example.com", integer: 7 } },
    { ok: false, reason: "declined" },
    { ok: false, reason: "dismissed" },
  ]
  const source = await load(
    { mcpServers: { everything: everything() } },
    {
      waitFor: async (request) => {
        requests.push(request)
        return answers[requests.length - 1]
      },
    },
  )
  const elicit = byName(source)["everything_trigger-elicitation-request"]
  assert.ok(elicit, `trigger-elicitation-request is listed when waitFor is given: ${names(source).join(",")}`)

  const accepted = await call(elicit, {})
  assert.equal(requests.length, 1)
  assert.deepEqual(requests[0], {
    kind: "input",
    message: "Please provide inputs for the following fields:",
    data: { schema: EVERYTHING_ELICIT_SCHEMA },
    server: "everything",
  })
  assert.equal(accepted.isError, false)
  assert.deepEqual(accepted.metadata, { server: "everything" })
  const [head, raw] = accepted.output.split("\n\nRaw result: ")
  assert.equal(
    head,
    "✅ User provided the requested information!\nUser inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n" +
      "- Email: ada@example.com\n- Favorite Integer: 7\n- Favorite Number: 3.14",
  )
  // Fields the answer left out come back with the schema's defaults (the number's 3.14 shows
  // above); the answer's own values win.
  const defaults = Object.fromEntries(
    Object.entries(EVERYTHING_ELICIT_SCHEMA.properties)
      .filter(([, p]) => "default" in p)
      .map(([k, p]) => [k, p.default]),
  )
  assert.equal(defaults.number, 3.14)
  assert.deepEqual(JSON.parse(raw), { action: "accept", content: { ...defaults, ...answers[0].data } })

  assert.deepEqual(await call(elicit, {}), {
    output: '❌ User declined to provide the requested information.\n\nRaw result: {\n  "action": "decline"\n}',
    isError: false,
    metadata: { server: "everything" },
  })
  assert.deepEqual(await call(elicit, {}), {
    output: '⚠️ User cancelled the elicitation dialog.\n\nRaw result: {\n  "action": "cancel"\n}',
    isError: false,
    metadata: { server: "everything" },
  })
  assert.equal(requests.length, 3)
  await source.close()
})

test("server-everything: trigger-url-elicitation reaches waitFor as kind authorization", T, async () => {
  const requests = []
  const source = await load(
    { mcpServers: { everything: everything() } },
    {
      waitFor: async (request) => {
        requests.push(request)
        return { ok: true }
      },
    },
  )
  const urlTool = byName(source)["everything_trigger-url-elicitation"]
  assert.ok(urlTool, `trigger-url-elicitation is listed (URL mode advertised): ${names(source).join(",")}`)
  const result = await call(urlTool, { url: "https://auth.example.com/start?x=1", elicitationId: "e-42" })
  assert.deepEqual(requests, [
    {
      kind: "authorization",
      message: "Please open the link to complete this action.",
      url: "https://auth.example.com/start?x=1",
      elicitationId: "e-42",
      server: "everything",
    },
  ])
  assert.equal(result.isError, false, result.output)
  const [head, raw] = result.output.split("\n\nRaw result: ")
  assert.equal(head, "✅ User completed the URL elicitation flow.\nElicitation ID: e-42\nURL: https://auth.example.com/start?x=1")
  assert.equal(JSON.parse(raw).action, "accept")
  await source.close()
})

test("without waitFor: elicitation is not advertised, and an elicitation/create is declined", T, async () => {
  const source = await load({ mcpServers: { everything: everything(), el: { command: nodeFixture("elicit-server") } } })
  assert.deepEqual(source.status, { everything: "connected", el: "connected" }, JSON.stringify(source.errors))
  const list = names(source)
  // server-everything registers its elicitation tools only for clients that advertise elicitation.
  assert.equal(list.includes("everything_trigger-elicitation-request"), false, list.join(","))
  assert.equal(list.includes("everything_trigger-url-elicitation"), false, list.join(","))
  const tools = byName(source)
  assert.deepEqual(await call(tools["el_client-caps"], {}), { output: "{}", isError: false, metadata: { server: "el" } })
  for (const mode of ["form", "url"]) {
    assert.deepEqual(await call(tools["el_raw-elicit"], { mode }), {
      output: JSON.stringify({ action: "decline" }),
      isError: false,
      metadata: { server: "el" },
    })
  }
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// URL-mode elicitation with an SDK-built server (McpServer + elicitInput({mode: "url"}))

test("URL-mode elicitation: waitFor receives kind authorization; accept/decline/cancel map end to end", T, async () => {
  const requests = []
  let answer
  const source = await load(
    { mcpServers: { "auth srv": { command: nodeFixture("elicit-server") } } },
    {
      waitFor: async (request) => {
        requests.push(request)
        if (answer instanceof Error) throw answer
        return answer
      },
    },
  )
  const tools = byName(source)
  assert.deepEqual(Object.keys(tools), ["auth_srv_open-url", "auth_srv_raw-elicit", "auth_srv_client-caps"])
  assert.deepEqual(JSON.parse((await call(tools["auth_srv_client-caps"], {})).output), { elicitation: { form: {}, url: {} } })
  const openUrl = tools["auth_srv_open-url"]
  const url = "https://auth.example.com/oauth/authorize?client_id=tnx&state=a%20b"
  const cases = [
    [{ ok: true }, { action: "accept", content: {} }],
    [{ ok: true, data: { code: "xyz" } }, { action: "accept", content: { code: "xyz" } }],
    [{ ok: false, reason: "declined" }, { action: "decline" }],
    [{ ok: false, reason: "timeout" }, { action: "cancel" }],
    [{ ok: false }, { action: "cancel" }],
    [new Error("waitFor blew up"), { action: "cancel" }],
  ]
  for (const [i, [given, expected]] of cases.entries()) {
    answer = given
    const result = await call(openUrl, { url, message: `Sign in #${i}`, elicitationId: `el-${i}` })
    assert.deepEqual(result, { output: JSON.stringify(expected), isError: false, metadata: { server: "auth srv" } }, `case ${i}`)
    assert.deepEqual(requests[i], { kind: "authorization", message: `Sign in #${i}`, url, elicitationId: `el-${i}`, server: "auth srv" })
  }
  assert.equal(requests.length, cases.length)
  // The same bridge serves a raw URL request and a form request.
  answer = { ok: true, data: { name: "Ada" } }
  assert.equal((await call(tools["auth_srv_raw-elicit"], { mode: "form" })).output, JSON.stringify({ action: "accept", content: { name: "Ada" } }))
  assert.deepEqual(requests.at(-1), {
    kind: "input",
    message: "Name?",
    data: { schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    server: "auth srv",
  })
  await source.close()
})

test("form elicitation with the stdio fixture: accepted data reaches the server", T, async () => {
  const source = await load(
    { mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "elicit") } } },
    { waitFor: async () => ({ ok: true, data: { name: "Grace" } }) },
  )
  assert.deepEqual(await call(byName(source).fx_elicit, {}), {
    output: JSON.stringify({ action: "accept", content: { name: "Grace" } }),
    isError: false,
    metadata: { server: "fx" },
  })
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// Result mapping and tool objects with the SDK stdio fixture

test("result mapping: isError join, empty error, mixed parts, structuredContent, plain text", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "fail,fail-empty,mixed,structured,add") } } })
  const tools = byName(source)
  const meta = { server: "fx" }
  assert.deepEqual(await call(tools.fx_fail, {}), { output: "first problem\n\nsecond problem", isError: true, metadata: meta })
  assert.deepEqual(await call(tools["fx_fail-empty"], {}), { output: "MCP tool returned an error", isError: true, metadata: meta })
  assert.deepEqual(await call(tools.fx_mixed, {}), { output: "one\ntwo", isError: false, metadata: meta })
  assert.deepEqual(await call(tools.fx_structured, {}), { output: JSON.stringify({ sum: 3, items: ["x", "y"] }), isError: false, metadata: meta })
  assert.deepEqual(await call(tools.fx_add, { a: 1.5, b: 2 }), { output: "3.5", isError: false, metadata: meta })
  await source.close()
})

test("tool objects: the server's schema plus additionalProperties false; bare tool defaults", T, async () => {
  const cfg = {
    mcpServers: {
      fx: { command: nodeFixture("stdio-server", "--tools", "add,echo,bare") },
      liar: { command: nodeFixture("liar-server", "minimal") },
    },
  }
  const inv = await listMcpTools(cfg)
  const source = await load(cfg)
  assert.deepEqual(names(source), ["fx_add", "fx_echo", "fx_bare", "liar_minimal"])
  const tools = byName(source)
  for (const [name, info] of [
    ["fx_add", inv.tools.fx[0]],
    ["fx_echo", inv.tools.fx[1]],
  ]) {
    assert.equal(tools[name].description, info.description)
    assert.deepEqual(tools[name].inputSchema, { ...info.inputSchema, additionalProperties: false })
    assert.equal(tools[name].source, "mcp")
  }
  for (const name of ["fx_bare", "liar_minimal"]) {
    assert.equal(tools[name].description, "")
    assert.deepEqual(tools[name].inputSchema, { type: "object", properties: {}, additionalProperties: false })
  }
  assert.deepEqual(await call(tools.fx_bare, {}), { output: "bare", isError: false, metadata: { server: "fx" } })
  assert.deepEqual(await call(tools.liar_minimal), { output: "minimal", isError: false, metadata: { server: "liar" } })
  await source.close()
})

test("execute never rejects on bad arguments", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "echo") } } })
  const echo = byName(source).fx_echo
  const notObject = await call(echo, "just a string")
  assert.equal(notObject.isError, true)
  assert.deepEqual(notObject.metadata, { server: "fx" })
  assert.ok(notObject.output.length > 0)
  const invalid = await call(echo, { text: 42 })
  assert.equal(invalid.isError, true)
  assert.match(invalid.output, /text/)
  assert.doesNotMatch(invalid.output, /ServiceError|McpError\s*\{|ErrorData/)
  assert.equal((await call(echo, { text: "fine" })).output, "fine")
  await source.close()
})

test("200 concurrent calls on one connection each get their own result", T, async (t) => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "echo,add") } } })
  const { fx_echo: echo, fx_add: add } = byName(source)
  const start = performance.now()
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => (i % 4 === 3 ? call(add, { a: i, b: 1000 }) : call(echo, { text: `call-${i}` }))),
  )
  t.diagnostic(`200 concurrent calls in ${(performance.now() - start).toFixed(1)} ms`)
  results.forEach((r, i) => {
    const expected = i % 4 === 3 ? String(i + 1000) : `call-${i}`
    assert.deepEqual(r, { output: expected, isError: false, metadata: { server: "fx" } }, `call ${i}`)
  })
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// A server that dies mid-call

test("crash mid-call: isError with the exit, the process is gone, other servers still work", T, async () => {
  const pidFile = tmpFile("crash.pid")
  const source = await load({
    mcpServers: {
      fx: { command: nodeFixture("stdio-server", "--tools", "crash,echo"), env: { PID_FILE: pidFile } },
      other: { command: nodeFixture("stdio-server", "--tools", "echo") },
    },
  })
  const tools = byName(source)
  const pid = readPid(pidFile)
  assert.notEqual(pid, null)
  const start = performance.now()
  const result = await call(tools.fx_crash, {})
  const elapsed = performance.now() - start
  assert.deepEqual(result, { output: 'server "fx" exited (code 1)', isError: true, metadata: { server: "fx" } })
  assert.ok(elapsed < 2000, `the crash was reported after ${elapsed} ms`)
  assert.equal(isAlive(pid), false, `crashed server ${pid} is still alive`)
  assert.deepEqual(await call(tools.other_echo, { text: "unaffected" }), { output: "unaffected", isError: false, metadata: { server: "other" } })
  await source.close()
})

test("crash: later calls to the dead server resolve with the same exit message (never reject)", T, async () => {
  const source = await load({
    mcpServers: {
      fx: { command: nodeFixture("stdio-server", "--tools", "crash,echo") },
      other: { command: nodeFixture("stdio-server", "--tools", "echo") },
    },
  })
  const tools = byName(source)
  assert.equal((await call(tools.fx_crash, {})).output, 'server "fx" exited (code 1)')
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(await call(tools.fx_echo, { text: "anyone there?" }), {
      output: 'server "fx" exited (code 1)',
      isError: true,
      metadata: { server: "fx" },
    }, `call ${i + 1} after the crash`)
  }
  assert.equal((await call(tools.other_echo, { text: "ok" })).output, "ok")
  await source.close()
})

test("crash: a call in flight on the dying server resolves with the exit message too", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "crash,sleep,echo") } } })
  const tools = byName(source)
  const inflight = call(tools.fx_sleep, { ms: 20000 })
  assert.equal((await call(tools.fx_echo, { text: "sync" })).output, "sync")
  const crashed = await call(tools.fx_crash, {})
  const other = await inflight
  for (const r of [crashed, other]) {
    assert.deepEqual(r, { output: 'server "fx" exited (code 1)', isError: true, metadata: { server: "fx" } })
  }
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// close()

test("close(): idempotent, ends every child (and grandchild) before resolving; later calls fail cleanly", T, async (t) => {
  const pidA = tmpFile("a.pid")
  const pidG = tmpFile("g.pid")
  const pidGc = tmpFile("gc.pid")
  t.after(() => killAll([readPid(pidGc)].filter(Boolean)))
  const source = await load({
    mcpServers: {
      a: { command: nodeFixture("stdio-server", "--tools", "echo,sleep"), env: { PID_FILE: pidA } },
      g: { command: nodeFixture("grandchild-server"), env: { PID_FILE: pidG, GRANDCHILD_PID_FILE: pidGc } },
    },
  })
  const pids = [readPid(pidA), readPid(pidG), readPid(pidGc)]
  assert.ok(pids.every((p) => p !== null), `pids ${pids}`)
  for (const pid of pids) assert.equal(isAlive(pid), true)
  const tools = byName(source)
  assert.equal((await call(tools.a_echo, { text: "before" })).output, "before")
  const inflight = call(tools.a_sleep, { ms: 20000 })
  assert.equal((await call(tools.a_echo, { text: "sync" })).output, "sync")

  const first = source.close()
  const second = source.close()
  assert.ok(first instanceof Promise && second instanceof Promise)
  assert.deepEqual(await inflight, { output: "not connected (source closed)", isError: true, metadata: { server: "a" } })
  assert.equal(await first, undefined)
  assert.equal(await second, undefined)
  // Checked at once: close() resolves only when every child has exited.
  for (const pid of pids) assert.equal(isAlive(pid), false, `${pid} still alive after close() resolved`)
  assert.deepEqual(descendants(), [])

  assert.deepEqual(await call(tools.a_echo, { text: "after" }), {
    output: "not connected (source closed)",
    isError: true,
    metadata: { server: "a" },
  })
  assert.deepEqual(await call(tools.g_a, {}), { output: "not connected (source closed)", isError: true, metadata: { server: "g" } })
  assert.equal(await source.close(), undefined, "a third close() after completion resolves too")
})

// ---------------------------------------------------------------------------------------------
// Naming

test("naming: server names with spaces, dots and emoji are sanitized per UTF-16 unit", T, async () => {
  const warnings = captureWarnings()
  const source = await load({
    mcpServers: {
      "my server.v2": { command: nodeFixture("stdio-server", "--tools", "read.file,echo") },
      "😀 bot": { command: nodeFixture("stdio-server", "--tools", "héllo") },
    },
  })
  assert.deepEqual(await warnings.stop(), [])
  assert.deepEqual(names(source), ["my_server_v2_read_file", "my_server_v2_echo", "___bot_h_llo"])
  for (const [server, tool] of [
    ["my server.v2", "read.file"],
    ["😀 bot", "héllo"],
  ]) {
    assert.ok(names(source).includes(`${sanitize(server)}_${sanitize(tool)}`))
  }
  const tools = byName(source)
  // Calls go to the original tool name.
  assert.deepEqual(await call(tools.my_server_v2_read_file, {}), { output: "read.file", isError: false, metadata: { server: "my server.v2" } })
  assert.deepEqual(await call(tools.___bot_h_llo, {}), { output: "héllo", isError: false, metadata: { server: "😀 bot" } })
  await source.close()
})

test("naming: a name over 64 characters is shortened deterministically, with a warning", T, async () => {
  const long = `very_long_tool_name_${"x".repeat(50)}` // 70 characters
  const sibling = `very_long_tool_name_${"x".repeat(49)}y` // same readable head, different tool
  assert.equal(long.length, 70)
  const cfg = { mcpServers: { srv: { command: nodeFixture("stdio-server", "--tools", `${long},${sibling},short`) } } }
  const runs = []
  for (let i = 0; i < 2; i++) {
    const warnings = captureWarnings()
    const source = await load(cfg)
    runs.push({ names: names(source), warnings: await warnings.stop() })
    if (i === 0) {
      const tools = source.tools
      assert.deepEqual(await call(tools[0], {}), { output: long, isError: false, metadata: { server: "srv" } })
      assert.deepEqual(await call(tools[1], {}), { output: sibling, isError: false, metadata: { server: "srv" } })
    }
    await source.close()
  }
  const [a, b] = runs
  assert.deepEqual(a.names, b.names, "the same config gives the same names")
  const [n1, n2, n3] = a.names
  assert.equal(n3, "srv_short")
  for (const [n, tool] of [
    [n1, long],
    [n2, sibling],
  ]) {
    assert.equal(n.length, 64, n)
    assert.match(n, /^[A-Za-z0-9_-]{1,64}$/)
    assert.ok(n.startsWith(`srv_${tool}`.slice(0, 40)), `${n} keeps a readable head`)
  }
  assert.notEqual(n1, n2)
  assert.equal(a.warnings.length, 2, a.warnings.join("\n"))
  assert.ok(a.warnings[0].includes(`srv_${long}`), a.warnings[0])
  assert.ok(a.warnings[0].includes(n1), a.warnings[0])
  assert.ok(a.warnings[1].includes(n2), a.warnings[1])
  assert.deepEqual(a.warnings, b.warnings)
})

test("naming: sanitized names that collide across servers are disambiguated, with a warning", T, async () => {
  const cfg = {
    mcpServers: {
      "a.b": { command: nodeFixture("stdio-server", "--tools", "x") },
      a_b: { command: nodeFixture("stdio-server", "--tools", "x") },
    },
  }
  const runs = []
  for (let i = 0; i < 2; i++) {
    const warnings = captureWarnings()
    const source = await load(cfg)
    runs.push({ names: names(source), warnings: await warnings.stop() })
    if (i === 0) {
      const [first, second] = source.tools
      assert.equal(first.name, "a_b_x", "the first tool in config order keeps the plain name")
      assert.notEqual(second.name, first.name)
      assert.match(second.name, /^a_b_x.+/)
      assert.ok(second.name.length <= 64)
      assert.deepEqual(await call(first, {}), { output: "x", isError: false, metadata: { server: "a.b" } })
      assert.deepEqual(await call(second, {}), { output: "x", isError: false, metadata: { server: "a_b" } })
    }
    await source.close()
  }
  assert.deepEqual(runs[0].names, runs[1].names, "disambiguation is deterministic")
  assert.equal(runs[0].warnings.length, 1, runs[0].warnings.join("\n"))
  assert.ok(runs[0].warnings[0].includes("a_b_x"), runs[0].warnings[0])
  assert.ok(runs[0].warnings[0].includes(runs[0].names[1]), runs[0].warnings[0])
})

// ---------------------------------------------------------------------------------------------
// tools filter, isolation and order

test("tools filter: allowlist (tool order kept), drop-list, empty map, unknown name warned", T, async () => {
  const all = "add,echo,mixed,fail,bare"
  const warnings = captureWarnings()
  const source = await load({
    mcpServers: {
      allow: { command: nodeFixture("stdio-server", "--tools", all), tools: { echo: true, add: true, mixed: false } },
      drop: { command: nodeFixture("stdio-server", "--tools", all), tools: { fail: false, bare: false } },
      empty: { command: nodeFixture("stdio-server", "--tools", "add,echo"), tools: {} },
      unknown: { command: nodeFixture("stdio-server", "--tools", "add,echo"), tools: { echo: true, nope: true } },
      unknownDrop: { command: nodeFixture("stdio-server", "--tools", "add,echo"), tools: { ghost: false } },
    },
  })
  const seen = await warnings.stop()
  assert.deepEqual(names(source), [
    "allow_add",
    "allow_echo",
    "drop_add",
    "drop_echo",
    "drop_mixed",
    "empty_add",
    "empty_echo",
    "unknown_echo",
    "unknownDrop_add",
    "unknownDrop_echo",
  ])
  assert.equal(seen.length, 2, seen.join("\n"))
  assert.ok(seen[0].includes('"unknown"') && seen[0].includes('"nope"'), seen[0])
  assert.ok(seen[1].includes('"unknownDrop"') && seen[1].includes('"ghost"'), seen[1])
  await source.close()
})

test("isolation and order: failing servers are status/errors only; tools in server then tool order", T, async () => {
  const source = await load({
    mcpServers: {
      zeta: { command: nodeFixture("stdio-server", "--tools", "z2,z1") },
      off: { command: ["true"], enabled: false },
      missing: { command: ["/nonexistent-toolnexus-test-binary"] },
      alpha: { command: nodeFixture("stdio-server", "--tools", "a1") },
      crash: { command: nodeFixture("crash-server") },
      hang: { command: nodeFixture("hang-server"), timeout: 300 },
      beta: { command: nodeFixture("stdio-server", "--tools", "b2,b1,b3") },
    },
  })
  assert.deepEqual(Object.keys(source.status), ["zeta", "off", "missing", "alpha", "crash", "hang", "beta"])
  assert.deepEqual(source.status, {
    zeta: "connected",
    off: "disabled",
    missing: "failed",
    alpha: "connected",
    crash: "failed",
    hang: "failed",
    beta: "connected",
  })
  assert.deepEqual(Object.keys(source.errors), ["missing", "crash", "hang"])
  assert.match(source.errors.missing, /spawn|no such file|not found|enoent/i)
  assert.ok(source.errors.crash.includes("fatal: database missing"), source.errors.crash)
  assert.match(source.errors.hang, /time(d)?[ -]?out/i)
  assert.deepEqual(names(source), ["zeta_z2", "zeta_z1", "alpha_a1", "beta_b2", "beta_b1", "beta_b3"])
  // The failed servers' processes are already gone; the connected ones stay up until close().
  assert.equal(descendants().length, 3, describePids(descendants()))
  assert.deepEqual(await call(byName(source).beta_b1, {}), { output: "b1", isError: false, metadata: { server: "beta" } })
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// Streamable HTTP

test("streamable HTTP: tools load and run; close() ends the session with DELETE", T, async (t) => {
  const s = await startStreamableHttp({ tools: 3 })
  t.after(() => s.close())
  const source = await load({ mcpServers: { web: { type: "streamable-http", url: s.url } } })
  assert.deepEqual(source.status, { web: "connected" }, JSON.stringify(source.errors))
  assert.deepEqual(names(source), ["web_tool1", "web_tool2", "web_tool3"])
  assert.deepEqual(byName(source).web_tool2.inputSchema, { type: "object", properties: {}, additionalProperties: false })
  assert.equal(byName(source).web_tool2.description, "tool tool2")
  const results = await Promise.all([call(byName(source).web_tool2, {}), call(byName(source).web_tool3, {})])
  assert.deepEqual(results, [
    { output: "tool2", isError: false, metadata: { server: "web" } },
    { output: "tool3", isError: false, metadata: { server: "web" } },
  ])
  assert.equal(s.stats.rpc["tools/call"], 2)
  assert.equal(s.stats.http.DELETE, 0, "the session stays open until close()")
  assert.equal(s.stats.sessions.opened, 1)
  await source.close()
  assert.equal(s.stats.http.DELETE, 1, "close() DELETEs the session before resolving")
  assert.equal(s.stats.sessions.closed, 1)
  assert.deepEqual(await call(byName(source).web_tool1, {}), { output: "not connected (source closed)", isError: true, metadata: { server: "web" } })
  await source.close()
  assert.equal(s.stats.http.DELETE, 1, "a second close() sends nothing")
})

// ---------------------------------------------------------------------------------------------
// Deadline and abort of the load itself

for (const key of ["deadline", "timeout"]) {
  test(`opts.${key}: 100 ms with a hang server rejects with the exact message, nothing left`, T, async () => {
    const pidFile = tmpFile("hang.pid")
    const watch = watchDescendants()
    const start = performance.now()
    const err = await rejection(
      loadMcp(
        {
          mcpServers: {
            ok: { command: nodeFixture("stdio-server", "--tools", "a") },
            hang: { command: nodeFixture("hang-server"), env: { PID_FILE: pidFile }, timeout: 30000 },
          },
        },
        { [key]: 100 },
      ),
    )
    const elapsed = performance.now() - start
    const seen = watch.stop()
    assert.ok(err instanceof Error, `rejected with ${err}`)
    assert.equal(err.message, "toolnexus: MCP load deadline exceeded")
    assert.ok(elapsed < 100 + 1500, `deadline rejection after ${elapsed} ms`)
    assert.ok(seen.length > 0, "the servers were spawned")
    for (const pid of seen) assert.equal(isAlive(pid), false, `${pid} alive after the deadline rejection`)
    assert.deepEqual(descendants(), [])
  })
}

for (const [label, makeReason] of [
  ["default reason", () => undefined],
  ["custom Error reason", () => new Error("stop loading")],
  ["non-Error reason", () => "plain string"],
]) {
  test(`abort mid-load rejects with the exact reason (${label}) and tears everything down`, T, async (t) => {
    await assertAbortMidway(t, loadMcp, makeReason(), { waitFor: async () => ({ ok: false }) })
  })
}

test("an already-aborted signal rejects at once with its reason and spawns nothing", T, () => assertAbortedBeforeStart(loadMcp))

// ---------------------------------------------------------------------------------------------
// Exported mappers

test("elicitationToRequest: form and URL mode, exactly", () => {
  const schema = { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] }
  assert.deepEqual(elicitationToRequest({ mode: "form", message: "Who are you?", requestedSchema: schema }), {
    kind: "input",
    message: "Who are you?",
    data: { schema },
  })
  assert.deepEqual(elicitationToRequest({ message: "Who are you?", requestedSchema: schema }), {
    kind: "input",
    message: "Who are you?",
    data: { schema },
  })
  assert.deepEqual(
    elicitationToRequest({ mode: "url", message: "Sign in", url: "https://auth.example.com/x?y=1", elicitationId: "e-1" }),
    { kind: "authorization", message: "Sign in", url: "https://auth.example.com/x?y=1", elicitationId: "e-1" },
  )
  assert.deepEqual(elicitationToRequest({ mode: "url", message: "Sign in", url: "https://auth.example.com/" }), {
    kind: "authorization",
    message: "Sign in",
    url: "https://auth.example.com/",
  })
})

test("answerToElicitResult: accept (data ?? {}), decline, cancel, exactly", () => {
  assert.deepEqual(answerToElicitResult({ ok: true, data: { name: "Ada", n: 3, yes: true } }), {
    action: "accept",
    content: { name: "Ada", n: 3, yes: true },
  })
  assert.deepEqual(answerToElicitResult({ ok: true }), { action: "accept", content: {} })
  assert.deepEqual(answerToElicitResult({ ok: false, reason: "declined" }), { action: "decline" })
  assert.deepEqual(answerToElicitResult({ ok: false, reason: "timeout" }), { action: "cancel" })
  assert.deepEqual(answerToElicitResult({ ok: false }), { action: "cancel" })
  assert.deepEqual(answerToElicitResult({ ok: false, data: { name: "x" } }), { action: "cancel" })
})

// ---------------------------------------------------------------------------------------------
// Per-call overhead (measured and logged, not asserted)

test("per-call overhead: loadMcp execute vs the SDK Client's callTool on the same fixture", T, async (t) => {
  const N = 500
  const WARMUP = 50
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "echo") } } })
  const echo = byName(source).fx_echo
  const client = new Client({ name: "overhead-bench", version: "1.0.0" })
  const transport = new StdioClientTransport({ command: process.execPath, args: [fixture("stdio-server"), "--tools", "echo"], stderr: "ignore" })
  await client.connect(transport)
  try {
    const sdkCall = async (text) => (await client.callTool({ name: "echo", arguments: { text } })).content[0].text
    const tnxCall = async (text) => (await echo.execute({ text })).output
    for (let i = 0; i < WARMUP; i++) {
      assert.equal(await tnxCall(`w${i}`), `w${i}`)
      assert.equal(await sdkCall(`w${i}`), `w${i}`)
    }
    const measure = async (fn) => {
      const start = performance.now()
      for (let i = 0; i < N; i++) assert.equal(await fn(`m${i}`), `m${i}`)
      return (performance.now() - start) / N
    }
    // Interleave two rounds each to even out drift.
    const tnx = [await measure(tnxCall)]
    const sdk = [await measure(sdkCall)]
    tnx.push(await measure(tnxCall))
    sdk.push(await measure(sdkCall))
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
    const tnxMean = mean(tnx)
    const sdkMean = mean(sdk)
    t.diagnostic(
      `${N} sequential echo calls x2: loadMcp execute ${(tnxMean * 1000).toFixed(1)} µs/call, ` +
        `SDK callTool ${(sdkMean * 1000).toFixed(1)} µs/call, ratio ${(tnxMean / sdkMean).toFixed(2)}`,
    )
  } finally {
    await client.close()
    await source.close()
  }
})
