import type { ContentBlock } from "@langchain/core/messages"
import type { DynamicStructuredTool } from "@langchain/core/tools"
import type { ToolResult } from "../index.js"
import type { AdapterOptions, ToolsInput } from "./shared.mjs"

export type { AdapterOptions, ToolsInput } from "./shared.mjs"
export { toStrictSchema } from "./shared.mjs"

/**
 * A toolnexus tool as LangChain sees it: a JSON-schema input, and as output a ToolMessage whose
 * `content` is the MCP parts and whose `artifact` is the whole `ToolResult`.
 */
export type LangChainTool = DynamicStructuredTool

/**
 * The tools of `sourceOrTools` as LangChain structured tools with
 * `responseFormat: "content_and_artifact"`: the MCP parts as content blocks, the whole
 * `ToolResult` as the artifact. `config.signal` is forwarded (the server is sent
 * `notifications/cancelled`). An `isError` result answers its tool call with a
 * `status: "error"` ToolMessage (invoked without a tool call, it throws). Read them again after
 * `list_changed`. Task-required tools are left out. With `strict`, also bind them strictly
 * (`model.bindTools(tools, { strict: true })`).
 */
export declare function toLangChainTools(sourceOrTools: ToolsInput, options?: AdapterOptions): LangChainTool[]

/** LangChain content blocks for a `ToolResult`'s MCP parts. */
export declare function toLangChainContent(result: ToolResult): ContentBlock[]
