// toolnexus/langchain: toolnexus tools as LangChain structured tools (`@langchain/core` is an
// optional peer dependency).
import { ToolMessage } from "@langchain/core/messages"
import { DynamicStructuredTool } from "@langchain/core/tools"
import { converter, liveTool, offeredTools, partText, schemaFor, toolContext, toStrictSchema } from "./shared.mjs"

export { toStrictSchema }

/**
 * LangChain content blocks for a toolnexus `ToolResult`: text as text, images and audio as
 * `image`/`audio` blocks (base64 `data` and `mimeType`), a binary resource as a `file` block,
 * other resources and links in words. A result with no content gives its `output` as text.
 */
export function toLangChainContent(result) {
  const content = Array.isArray(result?.content) ? result.content : []
  const blocks = content
    .filter((part) => !(part.type === "text" && result.isError && part.text.trim() === ""))
    .map((part) => {
      if ((part.type === "image" || part.type === "audio") && typeof part.data === "string") return { type: part.type, mimeType: part.mimeType, data: part.data }
      if (part.type === "resource" && typeof part.resource?.blob === "string" && part.resource.mimeType) {
        return { type: "file", mimeType: part.resource.mimeType, data: part.resource.blob, metadata: { uri: part.resource.uri } }
      }
      return { type: "text", text: partText(part) }
    })
  if (blocks.length === 0 || (!content.some((p) => p.type !== "text") && result.structuredContent !== undefined)) {
    return [{ type: "text", text: result?.output ?? "" }]
  }
  return blocks
}

const convert = converter((tool, sourceOrTools, strict) => {
  const { schema, prepare } = schemaFor(tool, strict)
  const current = liveTool(sourceOrTools, tool.name, tool)
  return new DynamicStructuredTool({
    name: tool.name,
    description: tool.description || tool.name,
    schema,
    responseFormat: "content_and_artifact",
    func: async (input, _runManager, config) => {
      const result = await current().execute(prepare(input), toolContext(config?.signal))
      const content = toLangChainContent(result)
      if (!result.isError) return [content, result]
      const toolCallId = config?.toolCall?.id
      // Without a tool call to answer there is no ToolMessage to return: the error is thrown.
      if (!toolCallId) throw new Error(result.output)
      return [new ToolMessage({ status: "error", content, artifact: result, tool_call_id: toolCallId, name: tool.name }), result]
    },
  })
})

/**
 * The tools of `sourceOrTools` (an `McpSource`, a `Toolkit` or an array of tools) as LangChain
 * `DynamicStructuredTool`s with `responseFormat: "content_and_artifact"`: the MCP parts as
 * content blocks, the whole `ToolResult` as the artifact; an `isError` result answers its tool
 * call with a `status: "error"` ToolMessage. Read them again after `list_changed` (unchanged
 * tools come back as the same objects). Task-required tools are left out.
 */
export function toLangChainTools(sourceOrTools, { strict = false, loadSkill = false } = {}) {
  const tools = offeredTools(sourceOrTools, loadSkill)
  return convert(sourceOrTools, strict ? "strict" : "plain", tools, () => [strict])
}
