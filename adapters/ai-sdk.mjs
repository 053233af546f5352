// toolnexus/ai-sdk: toolnexus tools as an AI SDK `ToolSet` (`ai` is an optional peer dependency).
import { dynamicTool, jsonSchema } from "ai"
import { converter, liveTool, mediaParts, offeredTools, partText, schemaFor, toolContext, toStrictSchema } from "./shared.mjs"

export { toStrictSchema }

/**
 * The AI SDK's model output for a toolnexus `ToolResult`: an error as `error-text`; text as
 * `text`; a result with images or audio as `content`, the media as file parts and every other
 * part (resources, links) in words.
 */
export function toAiSdkModelOutput(result) {
  if (result?.isError) return { type: "error-text", value: result.output ?? "" }
  const parts = mediaParts(result)
  if (!parts) return { type: "text", value: result?.output ?? "" }
  return {
    type: "content",
    value: parts.map((part) =>
      part.type === "image" || part.type === "audio"
        ? { type: "file", mediaType: part.mimeType, data: { type: "data", data: part.data } }
        : { type: "text", text: partText(part) },
    ),
  }
}

const convert = converter((tool, sourceOrTools, strict) => {
  const { schema, prepare } = schemaFor(tool, strict)
  const current = liveTool(sourceOrTools, tool.name, tool)
  return dynamicTool({
    description: tool.description || undefined,
    inputSchema: jsonSchema(schema),
    ...(strict && { strict: true }),
    // An async generator: progress notifications go out as preliminary results (the AI SDK's
    // streaming shows them), the ToolResult is the final one.
    async *execute(input, { abortSignal }) {
      const queue = []
      let wake
      const onProgress = (progress) => {
        queue.push({ progress })
        wake?.()
      }
      let settled
      const call = current()
        .execute(prepare(input), toolContext(abortSignal, onProgress))
        .then(
          (result) => (settled = { result }),
          (error) => (settled = { error }),
        )
        .finally(() => wake?.())
      while (!settled || queue.length > 0) {
        if (queue.length > 0) {
          yield queue.shift()
          continue
        }
        await new Promise((resolve) => (wake = resolve))
        wake = undefined
      }
      await call
      if (settled.error) throw settled.error
      yield settled.result
    },
    toModelOutput: ({ output }) => toAiSdkModelOutput(output),
  })
})

/**
 * The tools of `sourceOrTools` (an `McpSource`, a `Toolkit` or an array of tools) as an AI SDK
 * `ToolSet`, keyed by tool name. Read it again after `list_changed` (unchanged tools come back as
 * the same objects). Task-required tools are left out.
 */
export function toAiSdkTools(sourceOrTools, { strict = false, loadSkill = false } = {}) {
  const tools = offeredTools(sourceOrTools, loadSkill)
  const made = convert(sourceOrTools, strict ? "strict" : "plain", tools, () => [strict])
  return Object.fromEntries(tools.map((tool, i) => [tool.name, made[i]]))
}
