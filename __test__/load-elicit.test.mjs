// loadMcp (docs/loading.md), part 3: the elicitation bridge (form and URL mode, with
// server-everything and an SDK-built server using elicitInput) and its exported mappers.
// Real servers throughout (server-everything, the SDK-built fixtures in __test__/fixtures/, an
// in-process streamable-HTTP server); the shared set-up and clean-up are in lib/load.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { answerToElicitResult, elicitationToRequest } from "toolnexus"
import { nodeFixture } from "./helpers.mjs"
import { byName, call, everything, loadHarness, names, T } from "./lib/load.mjs"

const load = loadHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// Elicitation through waitFor, with server-everything

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
