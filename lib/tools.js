// @ts-check
// Tools of the app's own: defineTool, and the filter of what an MCP server exposes.
"use strict"

const { toToolResult, errorResult } = require("./results.js")

/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../index").DefineToolOptions} DefineToolOptions */
/** @typedef {import("../index").ToolInfo} ToolInfo */

/** The results of task tools' throws (see servedTools). @type {WeakSet<object>} */
const THROWN = new WeakSet()

/**
 * Defines a tool from a `run` function. `run` may return a string (kept), a `ToolResult`
 * (kept) or any other value (JSON-stringified; `undefined` gives `""`); a throw or rejection
 * becomes `{ output: message, isError: true }`.
 * @param {DefineToolOptions} opts
 * @returns {Tool}
 */
function defineTool(opts) {
  if (opts === null || typeof opts !== "object") {
    throw new TypeError("toolnexus: defineTool needs an options object")
  }
  // The listing's other fields are passed on when given (as a loadMcp tool has them).
  const { name, description = "", inputSchema, source = "native", run, title, annotations, outputSchema, icons, _meta, task, deferTask } =
    /** @type {DefineToolOptions & Partial<Pick<ToolInfo, "title" | "annotations" | "outputSchema" | "icons" | "_meta">>} */ (opts)
  let { execution } = /** @type {DefineToolOptions} */ (opts)
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError("toolnexus: defineTool: name must be a non-empty string")
  }
  if (typeof run !== "function") {
    throw new TypeError(`toolnexus: defineTool "${name}": run must be a function`)
  }
  if (typeof description !== "string") {
    throw new TypeError(`toolnexus: defineTool "${name}": description must be a string`)
  }
  if (task !== undefined && task !== "optional" && task !== "required") {
    throw new TypeError(`toolnexus: defineTool "${name}": task must be "optional" or "required"`)
  }
  if (deferTask !== undefined && typeof deferTask !== "boolean") {
    throw new TypeError(`toolnexus: defineTool "${name}": deferTask must be a boolean`)
  }
  if (deferTask && task === undefined) {
    throw new TypeError(`toolnexus: defineTool "${name}": deferTask needs task ("optional" or "required")`)
  }
  if (task !== undefined) execution = { ...(execution ?? {}), taskSupport: task }
  const schema = { type: "object", properties: {}, ...(inputSchema ?? {}) }
  const listing = Object.fromEntries(
    Object.entries({ title, annotations, outputSchema, icons, execution, _meta }).filter(([, v]) => v !== undefined),
  )
  return {
    name,
    description,
    inputSchema: schema,
    source,
    ...listing,
    // Served: a task call starts as an ordinary one until run calls ctx.startTask().
    ...(deferTask ? { deferTask: true } : {}),
    async execute(args, ctx) {
      try {
        return toToolResult(await run(args ?? {}, ctx ?? {}))
      } catch (error) {
        const result = errorResult(error)
        // Served as a task, a throw fails the task (an isError result completes it).
        if (task !== undefined) THROWN.add(result)
        return result
      }
    },
  }
}

/**
 * The tools an MCP server would expose (docs/serving.md / seed 003): `cfg.tools` (names) narrows the
 * set, in tool order; unknown names are ignored; absent means every tool.
 * @param {Tool[]} tools
 * @param {{ tools?: string[] }} [cfg]
 * @returns {Tool[]}
 */
function exposedMcpTools(tools, cfg) {
  if (!Array.isArray(tools)) throw new TypeError("toolnexus: tools must be an array of tools")
  const names = cfg?.tools
  if (names === undefined || names === null) return tools.slice()
  if (!Array.isArray(names)) throw new TypeError("toolnexus: cfg.tools must be an array of names")
  const wanted = new Set(names)
  return tools.filter((tool) => wanted.has(tool.name))
}

module.exports = { THROWN, defineTool, exposedMcpTools }
