// Shared by the adapter tests (__test__/adapters-*.test.mjs): a checker of OpenAI's strict-mode
// rules for tool schemas, the servers the tests load, a source closed after its use, a spy on a
// source's calls, and the abort check every adapter passes.
import assert from "node:assert/strict"
import fs from "node:fs"
import { loadMcp } from "toolnexus"
import { nodeFixture, serverEverything, tmpFile, waitFor } from "./helpers.mjs"

/** Keywords OpenAI's strict mode refuses in a function's parameters. */
const REFUSED = [
  "$schema", "allOf", "not", "if", "then", "else", "oneOf", "dependentRequired", "dependentSchemas", "dependencies",
  "patternProperties", "propertyNames", "unevaluatedProperties", "minProperties", "maxProperties", "unevaluatedItems",
  "contains", "minContains", "maxContains", "uniqueItems", "prefixItems", "additionalItems", "minLength", "maxLength", "default",
]
const FORMATS = ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]
const METADATA = ["anyOf", "description", "title", "$defs", "definitions"]

/**
 * Every way `schema` breaks OpenAI's strict-mode rules, as `path: problem` strings (empty when
 * it is strict-valid): the root is `type: "object"`; every object has `properties`, lists all of
 * them in `required` and sets `additionalProperties: false`; every node says what it is (`type`,
 * `anyOf`, `enum`, `const` or `$ref`); only metadata stands beside `anyOf`; no refused keyword;
 * `format` is one strict mode knows.
 */
export function strictViolations(schema) {
  const problems = []
  if (schema?.type !== "object") problems.push(`$: root type is ${JSON.stringify(schema?.type)}, not "object"`)
  const visit = (node, path) => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return problems.push(`${path}: not a schema object`)
    for (const key of REFUSED) if (key in node) problems.push(`${path}: refused keyword ${key}`)
    if ("format" in node && !FORMATS.includes(node.format)) problems.push(`${path}: format ${node.format}`)
    if (!("type" in node || "anyOf" in node || "enum" in node || "const" in node || "$ref" in node)) problems.push(`${path}: no type`)
    if ("anyOf" in node) {
      for (const key of Object.keys(node)) if (!METADATA.includes(key)) problems.push(`${path}: ${key} beside anyOf`)
      node.anyOf.forEach((branch, i) => visit(branch, `${path}.anyOf[${i}]`))
    }
    const types = Array.isArray(node.type) ? node.type : [node.type]
    if (types.includes("object")) {
      const props = node.properties
      if (typeof props !== "object" || props === null) problems.push(`${path}: object without properties`)
      else {
        const required = Array.isArray(node.required) ? node.required : []
        for (const key of Object.keys(props)) if (!required.includes(key)) problems.push(`${path}: ${key} not required`)
        for (const [key, value] of Object.entries(props)) visit(value, `${path}.${key}`)
      }
      if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`)
    }
    if ("items" in node) visit(node.items, `${path}.items`)
    for (const key of ["$defs", "definitions"]) for (const [name, def] of Object.entries(node[key] ?? {})) visit(def, `${path}.${key}.${name}`)
  }
  visit(schema, "$")
  return problems
}

/** server-everything as `ev` (13 tools, one of them task-required). */
export const everything = () => ({ mcpServers: { ev: { command: [process.execPath, serverEverything] } } })

/** The stdio fixture as `x` with `tools`, recording cancellations in the returned `events` file. */
export function fixtureServer(tools) {
  const events = tmpFile("events")
  return { events, config: { mcpServers: { x: { command: nodeFixture("stdio-server", "--tools", tools.join(",")), env: { FIXTURE_EVENT_FILE: events } } } } }
}

/**
 * A source that shows `source`'s live tools but reports each call as it is sent:
 * `spy.sent(name)` resolves once a call of that tool has gone to its server, with the context
 * the adapter gave (`{ signal }`).
 */
export function spySource(source) {
  const deferred = () => {
    let resolve
    const promise = new Promise((r) => (resolve = r))
    return { promise, resolve }
  }
  const waiting = new Map()
  const settle = (name, ctx) => {
    const entry = waiting.get(name) ?? deferred()
    waiting.set(name, entry)
    entry.resolve(ctx)
  }
  const wrapped = new WeakMap()
  const wrap = (tool) => {
    if (!wrapped.has(tool)) {
      wrapped.set(tool, {
        ...tool,
        execute(args, ctx) {
          const pending = tool.execute(args, ctx)
          settle(tool.name, ctx)
          return pending
        },
      })
    }
    return wrapped.get(tool)
  }
  return {
    get tools() {
      return source.tools.map(wrap)
    },
    sent(name) {
      const entry = waiting.get(name) ?? deferred()
      waiting.set(name, entry)
      return entry.promise
    },
  }
}

/** Awaits the source `loading` resolves to, runs `fn(source)` and closes the source however it ends. */
export async function withSource(loading, fn) {
  const source = await loading
  try {
    return await fn(source)
  } finally {
    await source.close()
  }
}

/**
 * The abort check of every adapter: loads the fixture with sleep and echo, and `start(spy,
 * signal)` runs a 20 s x_sleep through the framework with the tools of `spy` (a spySource) and
 * `signal`. Once the call reached execute with a signal (`reached` says whose) and the server is
 * running it, the signal is aborted with Error("stop"); `settle(running)` awaits how the
 * framework ends, and the server must have recorded notifications/cancelled within a second.
 */
export async function assertAbortCancels({ reached, start, settle }) {
  const { events, config } = fixtureServer(["sleep", "echo"])
  await withSource(loadMcp(config), async (source) => {
    const spy = spySource(source)
    const ac = new AbortController()
    const running = start(spy, ac.signal)
    const ctx = await spy.sent("x_sleep")
    assert.ok(ctx.signal instanceof AbortSignal, reached)
    // The echo answered after the sleep request: the server is running it.
    assert.equal((await source.tools.find((t) => t.name === "x_echo").execute({ text: "sync" })).output, "sync")
    const began = performance.now()
    ac.abort(new Error("stop"))
    await settle(running)
    await waitFor(() => fs.existsSync(events) && fs.readFileSync(events, "utf8") === "cancelled sleep\n", { timeout: 1000, message: "the server recording the cancellation" })
    const elapsed = performance.now() - began
    assert.ok(elapsed < 1000, `cancelled after ${elapsed} ms`)
  })
}
