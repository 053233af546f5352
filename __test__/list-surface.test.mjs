// listMcpTools lists each connected server's resources, resource templates and prompts beside
// its tools: server-everything over stdio and streamable HTTP (the same listing), the Python
// `mcp` fixture in both eras, and surface-server.mjs's paging and bounds. A kind that fails to
// list is `[]` with a warning; the server stays connected with its tools.
import assert from "node:assert/strict"
import path from "node:path"
import { test } from "node:test"

import { listMcpTools } from "../index.js"
import { PYTHON, fixture, nodeFixture, serverEverything, startListening } from "./helpers.mjs"

const T = { timeout: 60_000 }
const PY_FIXTURE = path.join(path.dirname(fixture("era-server")), "py-era-server.py")

/** Runs `fn` and gives its result with the ToolnexusWarnings emitted meanwhile. */
async function withWarnings(fn) {
  const warnings = []
  const listen = (w) => {
    if (w.name === "ToolnexusWarning") warnings.push(w.message)
  }
  process.on("warning", listen)
  try {
    const result = await fn()
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
    return { result, warnings }
  } finally {
    process.off("warning", listen)
  }
}

const DOCS = ["architecture", "extension", "features", "how-it-works", "instructions", "startup", "structure"]

function checkEverything(inv) {
  assert.equal(inv.status.everything, "connected", inv.errors.everything)
  const resources = inv.resources.everything
  assert.equal(resources.length, 7)
  // readdir order varies: compared as a set.
  assert.deepEqual(resources.map((r) => r.uri).sort(), DOCS.map((d) => `demo://resource/static/document/${d}.md`))
  for (const r of resources) {
    const file = r.uri.slice("demo://resource/static/document/".length)
    assert.equal(r.name, file)
    assert.equal(r.mimeType, "text/markdown")
    assert.equal(r.description, `Static document file exposed from /docs: ${file}`)
  }
  assert.deepEqual(
    inv.resourceTemplates.everything.map((t) => [t.uriTemplate, t.mimeType]),
    [
      ["demo://resource/dynamic/text/{resourceId}", "text/plain"],
      ["demo://resource/dynamic/blob/{resourceId}", "application/octet-stream"],
    ],
  )
  const prompts = inv.prompts.everything
  assert.deepEqual(prompts.map((p) => p.name), ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"])
  assert.deepEqual(prompts[1].arguments, [
    { name: "city", description: "Name of the city", required: true },
    { name: "state", required: false },
  ])
}

test("server-everything over stdio and streamable HTTP: 7 resources, 2 templates, 4 prompts, the same on both", T, async () => {
  const { result: inv, warnings } = await withWarnings(() =>
    listMcpTools({ mcpServers: { everything: { command: [process.execPath, serverEverything, "stdio"], timeout: 20000 } } }),
  )
  checkEverything(inv)
  assert.deepEqual(warnings, [])
  assert.deepEqual(Object.keys(inv), ["tools", "resources", "resourceTemplates", "prompts", "skills", "status", "errors", "info"])

  const everything = await startListening(process.execPath, ["--import", fixture("loopback-only"), serverEverything, "streamableHttp"], {
    env: { PORT: "0" },
    stream: "stderr",
  })
  try {
    const url = `http://127.0.0.1:${everything.port}/mcp`
    const overHttp = await listMcpTools({ mcpServers: { everything: { url, timeout: 20000 } } })
    checkEverything(overHttp)
    // Set order aside (readdir), the listings are equal.
    const byUri = (a, b) => (a.uri < b.uri ? -1 : 1)
    assert.deepEqual([...overHttp.resources.everything].sort(byUri), [...inv.resources.everything].sort(byUri))
    assert.deepEqual(overHttp.resourceTemplates, inv.resourceTemplates)
    assert.deepEqual(overHttp.prompts, inv.prompts)
  } finally {
    await everything.close()
  }
})

test("a server without the capabilities lists [] for all three; failed and disabled servers have no key", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      pager: { command: nodeFixture("pager-server", "--pages", "1") },
      off: { command: "nope", enabled: false },
      gone: { command: "toolnexus-test-no-such-binary" },
    },
  })
  assert.equal(inv.status.pager, "connected")
  assert.deepEqual(inv.resources, { pager: [] })
  assert.deepEqual(inv.resourceTemplates, { pager: [] })
  assert.deepEqual(inv.prompts, { pager: [] })
})

test("surface-server: 3 pages give 9 resources in order, with its templates and prompts as given", T, async () => {
  const inv = await listMcpTools({ mcpServers: { s: { command: nodeFixture("surface-server", "--pages", "3") } } })
  assert.equal(inv.status.s, "connected", inv.errors.s)
  assert.deepEqual(
    inv.resources.s.map((r) => r.uri),
    [0, 1, 2].flatMap((p) => [0, 1, 2].map((i) => `surface://r${p}/${i}`)),
  )
  assert.deepEqual(inv.resources.s[4], { uri: "surface://r1/1", name: "r1_1", mimeType: "text/plain" })
  assert.deepEqual(inv.resourceTemplates.s, [{ uriTemplate: "surface://items/{id}", name: "item", mimeType: "application/json" }])
  assert.deepEqual(inv.prompts.s, [
    { name: "greet", description: "Say hello", arguments: [{ name: "name", required: true }] },
    { name: "plain" },
  ])
  assert.deepEqual(inv.tools.s.map((t) => t.name), ["ping"])
})

test("a kind that fails to list is [] with a warning naming it; the server stays connected with its tools", T, async () => {
  const cases = [
    ["--repeat", 'toolnexus: server "s": resources/list repeated cursor "p1"; stopped paging; its resources are left out'],
    [
      "--bad-item",
      'toolnexus: server "s": resources/list failed: the server\'s answer is not a resources listing (item 1: "uri" is missing or not a string); its resources are left out',
    ],
  ]
  for (const [flag, warning] of cases) {
    const { result: inv, warnings } = await withWarnings(() =>
      listMcpTools({ mcpServers: { s: { command: nodeFixture("surface-server", "--pages", "3", flag) } } }),
    )
    assert.equal(inv.status.s, "connected", flag)
    assert.deepEqual(inv.tools.s.map((t) => t.name), ["ping"])
    assert.deepEqual(inv.resources.s, [], flag)
    assert.equal(inv.prompts.s.length, 2, "the other kinds are kept")
    assert.equal(inv.resourceTemplates.s.length, 1)
    assert.deepEqual(warnings, [warning])
  }

  const { result: huge, warnings } = await withWarnings(() =>
    listMcpTools({ mcpServers: { s: { command: nodeFixture("surface-server", "--huge") } } }),
  )
  assert.equal(huge.status.s, "connected")
  assert.deepEqual(huge.resources.s, [])
  assert.equal(warnings.length, 1)
  assert.match(
    warnings[0],
    /^toolnexus: server "s": resources\/list failed: resource "surface:\/\/r0\/0" is \d+ bytes of JSON, over the 1 MiB an item may be; its resources are left out$/,
  )
})

test("a server that declares resources but serves no resources/templates/list has no templates, and no warning", T, async () => {
  const { result: inv, warnings } = await withWarnings(() =>
    listMcpTools({ mcpServers: { s: { command: nodeFixture("surface-server", "--no-templates") } } }),
  )
  assert.equal(inv.status.s, "connected", inv.errors.s)
  assert.deepEqual(inv.resourceTemplates.s, [])
  assert.equal(inv.resources.s.length, 3)
  assert.deepEqual(warnings, [])
})

test("a kind that never ends listing times out at the server's timeout, the server connected", T, async () => {
  const started = Date.now()
  const { result: inv, warnings } = await withWarnings(() =>
    listMcpTools({ mcpServers: { s: { command: nodeFixture("surface-server", "--endless"), timeout: 3000 } } }),
  )
  const took = Date.now() - started
  assert.equal(inv.status.s, "connected", inv.errors.s)
  assert.deepEqual(inv.resources.s, [])
  assert.deepEqual(warnings, ['toolnexus: server "s": resources/list timed out after 3000 ms; its resources are left out'])
  // Start-up takes part of the bound too; the listing ends at its timeout, not much later (a
  // generous hang bound).
  assert.ok(took < 3000 + 10000, `took ${took} ms`)
})

test("the Python fixture lists the same over stdio, and over HTTP in both eras", T, async () => {
  const expected = {
    resources: [{ uri: "era://note", name: "note", description: "A note", mimeType: "text/plain" }],
    resourceTemplates: [{ uriTemplate: "era://items/{id}", name: "item", description: "", mimeType: "text/plain" }],
    prompts: [{ name: "greet", description: "Greets someone", arguments: [{ name: "name", required: true }] }],
  }
  const pick = (inv) => ({ resources: inv.resources.py, resourceTemplates: inv.resourceTemplates.py, prompts: inv.prompts.py })
  const stdio = await listMcpTools({ mcpServers: { py: { command: [PYTHON, PY_FIXTURE, "stdio", "--surface"], timeout: 20000 } } })
  assert.equal(stdio.status.py, "connected", stdio.errors.py)
  assert.deepEqual(pick(stdio), expected)
  const py = await startListening(PYTHON, [PY_FIXTURE, "http", "--surface"])
  try {
    const url = `http://127.0.0.1:${py.port}/mcp`
    for (const protocol of ["2026-07-28", "2025-11-25"]) {
      const inv = await listMcpTools({ mcpServers: { py: { url, protocol, timeout: 20000 } } })
      assert.equal(inv.status.py, "connected", inv.errors.py)
      assert.equal(inv.info.py.protocolVersion, protocol)
      assert.deepEqual(pick(inv), expected, protocol)
    }
  } finally {
    await py.close()
  }
})
