// What the framework adapters share (issue 26): toolnexus's naming scheme reimplemented in JS
// (checked against the names loadMcp gives), strict-mode schemas for every tool of real
// servers, nulls stripped back out of strict arguments, and task-required tools left out.
import { test } from "node:test"
import assert from "node:assert/strict"
import { tool as agentsTool } from "@openai/agents"
import { listMcpTools, loadMcp } from "toolnexus"
import { toAiSdkTools } from "toolnexus/ai-sdk"
import { toLangChainTools } from "toolnexus/langchain"
import { toOpenAIAgentsTools, toStrictSchema } from "toolnexus/openai-agents"
import { assignNames, SafeNamer, shortHash } from "../adapters/naming.mjs"
import { stripNulls } from "../adapters/strict.mjs"
import { TASKS_SUPPORTED } from "../adapters/shared.mjs"
import { everything, strictViolations, withSource } from "./adapters-helpers.mjs"
import { nodeFixture } from "./helpers.mjs"

const T = { timeout: 30000 }

test("the JS naming scheme gives exactly loadMcp's names: a name over 64 characters, and collisions", T, async () => {
  const long = "a".repeat(70)
  await withSource(loadMcp({
    mcpServers: {
      "a.b": { command: nodeFixture("stdio-server", "--tools", `x,${long}`) },
      a_b: { command: nodeFixture("stdio-server", "--tools", "x") },
      a: { command: nodeFixture("stdio-server", "--tools", "b.c,b_c,b-c") },
    },
  }), async (source) => {
    const pairs = [["a.b", "x"], ["a.b", long], ["a_b", "x"], ["a", "b.c"], ["a", "b_c"], ["a", "b-c"]]
    const names = assignNames(pairs)
    assert.deepEqual(source.tools.map((t) => t.name), names)
    assert.equal(names[1].length, 64)
    assert.equal(names[1], `a_b_${"a".repeat(51)}_${shortHash(["a.b", long])}`)
    assert.match(names[2], /^a_b_x_[0-9a-f]{8}$/)
    assert.match(names[4], /^a_b_c_[0-9a-f]{8}$/)
  })
})

test("safe names: a name already safe keeps itself, the other is hashed, names stay while the list changes", () => {
  const namer = new SafeNamer()
  const first = namer.assign(["x_get-sum", "x_get_sum", "x_echo", `x_${"é".repeat(70)}`])
  assert.equal(first[1], "x_get_sum")
  assert.equal(first[0], `x_get_sum_${shortHash(["x_get-sum"])}`)
  assert.equal(first[2], "x_echo")
  assert.equal(first[3].length, 64)
  for (const name of first) assert.match(name, /^[A-Za-z0-9_]{1,64}$/)
  // The real x_get_sum goes away and comes back: x_get-sum keeps its name throughout.
  assert.deepEqual(namer.assign(["x_get-sum", "x_echo"]), [first[0], "x_echo"])
  assert.deepEqual(namer.assign(["x_get_sum", "x_get-sum"]), ["x_get_sum", first[0]])
  // A safe name nobody else wants is kept as it is.
  assert.deepEqual(new SafeNamer().assign(["x_get-sum"]), ["x_get_sum"])
})

test("toStrictSchema: every schema of server-everything and of the fixture is strict-valid, and the Agents SDK accepts each", T, async () => {
  const inventory = await listMcpTools({ ...everything(), mcpServers: { ...everything().mcpServers, x: { command: nodeFixture("stdio-server") } } })
  const schemas = [...inventory.tools.ev, ...inventory.tools.x].map((t) => [t.name, t.inputSchema])
  assert.equal(inventory.tools.ev.length, 13)
  const before = schemas.filter(([, s]) => strictViolations(s).length > 0).map(([name]) => name)
  assert.ok(before.length >= 6, `only ${before.length} schemas were not strict-valid to begin with`)
  for (const [name, schema] of schemas) {
    const strict = toStrictSchema(schema)
    assert.deepEqual(strictViolations(strict), [], `${name}: ${JSON.stringify(strict)}`)
    assert.doesNotThrow(() => agentsTool({ name: "t", description: "", parameters: strict, strict: true, execute: () => "" }), name)
  }
})

test("toStrictSchema: optional properties become nullable, nested objects and arrays are closed, refused keywords go", () => {
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      name: { type: "string", minLength: 1, format: "uri" },
      count: { type: "number", default: 3, description: "How many" },
      kind: { type: "string", enum: ["a", "b"] },
      tags: { type: "array", items: { type: "object", properties: { k: { type: "string" } }, uniqueItems: true } },
      either: { oneOf: [{ type: "string" }, { type: "number" }] },
      anything: {},
      env: { type: "object", additionalProperties: { type: "string" } },
      maybe: { type: ["string", "null"] },
    },
    required: ["name"],
    allOf: [{ required: ["name"] }],
  }
  const copy = structuredClone(schema)
  const strict = toStrictSchema(schema)
  assert.deepEqual(schema, copy, "the input is not changed")
  assert.deepEqual(strictViolations(strict), [])
  assert.deepEqual(strict, {
    type: "object",
    properties: {
      name: { type: "string" },
      count: { type: ["number", "null"], description: "How many (Default: 3.)" },
      kind: { anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }] },
      tags: {
        type: ["array", "null"],
        items: { type: "object", properties: { k: { type: ["string", "null"] } }, required: ["k"], additionalProperties: false },
      },
      either: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
      anything: { type: ["string", "number", "boolean", "null"] },
      env: { type: ["object", "null"], properties: {}, required: [], additionalProperties: false },
      maybe: { type: ["string", "null"] },
    },
    required: ["name", "count", "kind", "tags", "either", "anything", "env", "maybe"],
    additionalProperties: false,
  })
  // A schema that is no object at all still gives a valid empty object schema.
  assert.deepEqual(toStrictSchema(undefined), { type: "object", properties: {}, required: [], additionalProperties: false })
})

test("stripNulls: the nulls strict mode made up are removed, at every level; nulls the schema accepts are kept", () => {
  const schema = {
    type: "object",
    properties: {
      a: { type: "number" },
      b: { type: "number" },
      keep: { type: ["string", "null"] },
      nested: { type: "object", properties: { c: { type: "string" } } },
      list: { type: "array", items: { $ref: "#/$defs/item" } },
    },
    required: ["a"],
    $defs: { item: { type: "object", properties: { d: { type: "string" } } } },
  }
  const args = { a: null, b: null, keep: null, nested: { c: null }, list: [{ d: null }, { d: "x" }], extra: null }
  assert.deepEqual(stripNulls(schema, args), { a: null, keep: null, nested: {}, list: [{}, { d: "x" }], extra: null })
  assert.deepEqual(args.nested, { c: null }, "the input is not changed")
})

test("task-required tools: the engine runs them as tasks, so every adapter offers them with the others", T, async () => {
  assert.equal(TASKS_SUPPORTED, true)
  await withSource(loadMcp(everything()), async (source) => {
    const task = source.tools.find((t) => t.name === "ev_simulate-research-query")
    assert.deepEqual(task.execution, { taskSupport: "required" })
    const result = await task.execute({ topic: "x" })
    assert.equal(result.isError, false)
    assert.match(result.output, /^# Research Report: x\n/)

    const offered = source.tools.map((t) => t.name)
    assert.equal(offered.length, 13)
    assert.deepEqual(Object.keys(toAiSdkTools(source)), offered)
    assert.deepEqual(toLangChainTools(source).map((t) => t.name), offered)
    assert.deepEqual(toOpenAIAgentsTools(source).map((t) => t.name), offered.map((n) => n.replaceAll("-", "_")))
  })
})
