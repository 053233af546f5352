import type { FunctionTool, ToolOutputImage, ToolOutputText } from "@openai/agents"
import type { ToolResult } from "../index.js"
import type { AdapterOptions, ToolsInput } from "./shared.mjs"

export type { AdapterOptions, ToolsInput } from "./shared.mjs"
export { toStrictSchema } from "./shared.mjs"

/** What a tool returns to the Agents SDK: text, or text and image outputs. */
export type OpenAIAgentsOutput = string | Array<ToolOutputText | ToolOutputImage>

/**
 * The tools of `sourceOrTools` as Agents SDK function tools, named with `[A-Za-z0-9_]` only and
 * uniquely (toolnexus's hashing when a name is taken or too long), each call going to the tool
 * it was named for. The run's signal is forwarded; an error is returned as text
 * (`Error: …`), not thrown; text and image parts pass as they are. `strict` defaults to false.
 * Read them again after `list_changed` (names stay put). Task-required tools are left out.
 */
export declare function toOpenAIAgentsTools(sourceOrTools: ToolsInput, options?: AdapterOptions): FunctionTool<unknown, any, OpenAIAgentsOutput>[]

/** The toolnexus tool name behind a name `toOpenAIAgentsTools` gave, or undefined. */
export declare function toolnexusName(sourceOrTools: ToolsInput, agentsName: string): string | undefined

/** The Agents SDK output for a `ToolResult`. */
export declare function toOpenAIAgentsOutput(result: ToolResult): OpenAIAgentsOutput
