// toolnexus/openai-agents: toolnexus tools as OpenAI Agents SDK function tools (`@openai/agents`
// is an optional peer dependency).
import { tool as functionTool } from "@openai/agents"
import { SafeNamer } from "./naming.mjs"
import { converter, currentTools, liveTool, offered, offeredTools, partText, schemaFor, toolContext, toStrictSchema } from "./shared.mjs"

export { toStrictSchema }

/**
 * What the Agents SDK gets back from a toolnexus `ToolResult`: an error as text (`Error: …`,
 * returned, not thrown, so the model reads it); a result with images as a list of text and image
 * outputs; anything else as its `output` text.
 */
export function toOpenAIAgentsOutput(result) {
  if (result?.isError) return `Error: ${result.output ?? ""}`
  const content = Array.isArray(result?.content) ? result.content : []
  if (!content.some((part) => part.type === "image" && typeof part.data === "string")) return result?.output ?? ""
  return content.map((part) =>
    part.type === "image" && typeof part.data === "string"
      ? { type: "image", image: { data: part.data, mediaType: part.mimeType } }
      : { type: "text", text: partText(part) },
  )
}

const convert = converter((tool, sourceOrTools, strict, name) => {
  const { schema, prepare } = schemaFor(tool, strict)
  const current = liveTool(sourceOrTools, tool.name, tool)
  return functionTool({
    name,
    description: tool.description || tool.name,
    parameters: schema,
    strict,
    execute: async (input, _runContext, details) => toOpenAIAgentsOutput(await current().execute(prepare(input), toolContext(details?.signal))),
  })
})

/** One namer per source, so that a tool keeps its safe name while the list changes. */
const namers = new WeakMap()

/**
 * The tools of `sourceOrTools` (an `McpSource`, a `Toolkit` or an array of tools) as Agents SDK
 * function tools. Names are made of `[A-Za-z0-9_]` only, as the SDK requires, and kept unique
 * (`x_get-sum` becomes `x_get_sum`, or `x_get_sum_<hash>` beside a real `x_get_sum`); each call
 * goes to the tool it was named for. `strict` defaults to false (the schema is sent as the
 * server gave it). Read them again after `list_changed`: unchanged tools come back as the same
 * objects, under the same names. Task-required tools are left out.
 */
export function toOpenAIAgentsTools(sourceOrTools, { strict = false, loadSkill = false } = {}) {
  const tools = offeredTools(sourceOrTools, loadSkill)
  let namer = typeof sourceOrTools === "object" && sourceOrTools !== null ? namers.get(sourceOrTools) : undefined
  if (!namer) {
    namer = new SafeNamer()
    if (typeof sourceOrTools === "object" && sourceOrTools !== null) namers.set(sourceOrTools, namer)
  }
  const names = namer.assign(tools.map((t) => t.name))
  return convert(sourceOrTools, strict ? "strict" : "plain", tools, (_tool, i) => [strict, names[i]])
}

/** The toolnexus tool name behind an Agents SDK tool name given by `toOpenAIAgentsTools`. */
export function toolnexusName(sourceOrTools, agentsName) {
  const tools = currentTools(sourceOrTools).filter(offered)
  const names = (namers.get(sourceOrTools) ?? new SafeNamer()).assign(tools.map((t) => t.name))
  return tools[names.indexOf(agentsName)]?.name
}
