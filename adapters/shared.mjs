// What the framework adapters share: reading the current tools of a source, which of them to
// offer, schemas for strict mode, and the MCP content of a result in words.
import { createRequire } from "node:module"
import { stripNulls, toStrictSchema } from "./strict.mjs"

export { stripNulls, toStrictSchema }

const binding = createRequire(import.meta.url)("../index.js")

/**
 * Whether the engine runs task-required tools (`execution.taskSupport === "required"`): it does
 * (as tasks, each call waiting for its task's result), so they are offered like the others;
 * __test__/adapters-shared.test.mjs checks this against the engine.
 */
export const TASKS_SUPPORTED = true

/**
 * The tools of `sourceOrTools` now: an `McpSource` (`source.tools`, replaced on `list_changed`),
 * a `Toolkit` (`toolkit.tools()`), or an array of tools.
 */
export function currentTools(sourceOrTools) {
  if (Array.isArray(sourceOrTools)) return sourceOrTools
  if (sourceOrTools && typeof sourceOrTools.tools === "function") return sourceOrTools.tools()
  if (sourceOrTools && Array.isArray(sourceOrTools.tools)) return sourceOrTools.tools
  throw new TypeError("toolnexus: expected an McpSource (from loadMcp), a Toolkit (from createToolkit) or an array of tools")
}

/** The `load_skill` tool of each source (one per source, so that a converted tool is kept). */
const skillTools = new WeakMap()

/**
 * The tools a model is offered from `sourceOrTools`: its tools now (task-required ones too), and
 * with `loadSkill` the `load_skill` tool over its skills (an McpSource's or a Toolkit's; a
 * toolkit made with `loadSkillTool: true` has it among its tools already).
 */
export function offeredTools(sourceOrTools, loadSkill) {
  const tools = currentTools(sourceOrTools).filter(offered)
  // A toolkit made with `loadSkillTool: true` has it already (an MCP tool may be named so too).
  if (!loadSkill || tools.some((t) => t[Symbol.for("toolnexus.loadSkillTool")])) return tools
  if (Array.isArray(sourceOrTools)) throw new TypeError("toolnexus: loadSkill needs an McpSource or a Toolkit (whose skills it loads), not an array of tools")
  let tool = skillTools.get(sourceOrTools)
  if (!tool) skillTools.set(sourceOrTools, (tool = binding.loadSkillTool(sourceOrTools)))
  return [...tools, tool]
}

/** Whether a model should be offered `tool`: every tool is, now that task-required ones run. */
export const offered = (tool) => TASKS_SUPPORTED || tool.execution?.taskSupport !== "required"

/**
 * A function that returns the tool named `name` in `sourceOrTools` as it is now (the list is
 * replaced on `list_changed`), or `fallback` when the name is gone.
 */
export function liveTool(sourceOrTools, name, fallback) {
  if (Array.isArray(sourceOrTools)) return () => fallback
  return () => currentTools(sourceOrTools).find((t) => t.name === name) ?? fallback
}

/**
 * `convert(tool, sourceOrTools, ...argsOf(tool, i))` (plain JSON arguments) for the tools of one read, cached per source and variant: reading the
 * tools again (every turn, or after `list_changed`) gives the very same framework objects for
 * the tools whose name, description and schema did not change. The cache holds only the tools
 * of the last read. (A converted tool calls the tool of its name as the source lists it then.)
 */
export function converter(convert) {
  const caches = new WeakMap()
  return (sourceOrTools, variant, tools, argsOf) => {
    let byVariant = caches.get(sourceOrTools)
    if (!byVariant) caches.set(sourceOrTools, (byVariant = new Map()))
    const previous = byVariant.get(variant) ?? new Map()
    const next = new Map()
    const made = tools.map((tool, i) => {
      const args = argsOf(tool, i)
      const key = JSON.stringify([tool.name, tool.description, tool.inputSchema ?? null, args])
      const converted = next.get(key) ?? previous.get(key) ?? convert(tool, sourceOrTools, ...args)
      next.set(key, converted)
      return converted
    })
    byVariant.set(variant, next)
    return made
  }
}

/** The schema to show the model, and the argument fix-up to apply before `execute`. */
export function schemaFor(tool, strict) {
  const original = tool.inputSchema ?? { type: "object", properties: {} }
  if (!strict) return { schema: original, prepare: (args) => args ?? {} }
  return { schema: toStrictSchema(original), prepare: (args) => stripNulls(original, args ?? {}) }
}

/** One content part that has no media form of its own, in words. */
export function partText(part) {
  return part.type === "text" ? part.text : binding.describeContent([part])
}

/** Whether a part is an image or audio (sent as media). */
export const isMedia = (part) => (part.type === "image" || part.type === "audio") && typeof part.data === "string"

/** The parts of a result to show, or null when its `output` says it all (no media in it). */
export function mediaParts(result) {
  const content = Array.isArray(result?.content) ? result.content : []
  return content.some(isMedia) ? content : null
}

/** Options a framework gave to an execute, turned into toolnexus's `ToolContext`. */
export function toolContext(signal, onProgress) {
  const ctx = {}
  if (signal) ctx.signal = signal
  if (onProgress) ctx.onProgress = onProgress
  return ctx
}
