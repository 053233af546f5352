// Result limits (issue 41: `resultLimits`): a result over its limit is cut with a marker that
// says how much was left out, never silently; a structured result that does not fit is left
// out whole and the result is an error saying so. Met by the official Python client in both
// eras and the TypeScript SDK client, through a gateway relaying an upstream and a tool of the
// toolkit's own.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { deferredCleanup, nodeFixture } from "./helpers.mjs"
import { opsClient } from "./lib/policy.mjs"

const T = { timeout: 120_000 }
const defer = deferredCleanup(afterEach)
const MODES = ["2026-07-28", "legacy"]

const python = (url, mode, ops) => opsClient(`${url}/mcp`, mode, ops)

const report = defineTool({
  name: "report",
  description: "A large structured report",
  outputSchema: { type: "object", properties: { rows: { type: "array" } }, required: ["rows"] },
  run: () => ({ content: [{ type: "text", text: "42 rows" }], structuredContent: { rows: Array.from({ length: 42 }, (_, i) => ({ id: i, name: `row ${i}` })) } }),
})

// {"type":"text","text":"…"} is the text's length plus 25 bytes of JSON.
const MARKER = "[toolnexus: this result was cut to its limit of 1000 bytes: 4025 of its 5025 bytes were left out]"

test("a long relayed result is cut to its limit with a marker; a short one is untouched (Python both eras, TypeScript SDK)", T, async () => {
  const tk = await createToolkit({
    mcpConfig: { mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "echo,add") } } },
    extraTools: [report],
    resultLimits: { maxBytes: 1000, tools: { report: 300 } },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0")
  defer(() => handle.stop())
  const long = "x".repeat(5000)
  for (const mode of MODES) {
    const { answers } = await python(handle.url, mode, [
      { call: "up_echo", args: { text: long } },
      { call: "up_add", args: { a: 1, b: 2 } },
    ])
    assert.deepEqual([answers[0].text, answers[0].isError], [`${"x".repeat(975)}${MARKER}`, false], mode)
    assert.deepEqual([answers[1].text, answers[1].isError], ["3", false], mode)
  }
  const client = new Client({ name: "results-test", version: "1.0.0" })
  defer(() => client.close())
  await client.connect(new StreamableHTTPClientTransport(new URL(`${handle.url}/mcp`)))
  const cut = await client.callTool({ name: "up_echo", arguments: { text: long } })
  assert.deepEqual(cut.content, [{ type: "text", text: "x".repeat(975) }, { type: "text", text: MARKER }])
  // A structured result over its tool's own limit: left out whole, the result an error in words.
  const structured = await client.callTool({ name: "report", arguments: {} })
  assert.equal(structured.isError, true)
  assert.equal(structured.structuredContent, undefined)
  assert.equal(structured.content[0].text, "42 rows")
  assert.match(structured.content[1].text, /^\[toolnexus: this result was cut to its limit of 300 bytes: \d+ of its \d+ bytes were left out\] \[its structuredContent did not fit, so the structured result is not given\]$/)
})

test("result limits are checked when given", async () => {
  const refused = (resultLimits, message) => assert.rejects(createToolkit({ resultLimits }), { message })
  await refused({ maxBytes: 10 }, "toolnexus: resultLimits.maxBytes must be a whole number of bytes from 256 to 2147483648, got 10")
  await refused({ maxbytes: 1000 }, "toolnexus: resultLimits.maxbytes is not a result limit (they are maxBytes and tools)")
  await refused({ tools: { "a*": "big" } }, 'toolnexus: resultLimits.tools["a*"] must be a whole number of bytes from 256 to 2147483648, got "big"')
})
