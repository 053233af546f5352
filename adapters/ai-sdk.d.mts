import type { Tool as AiSdkTool, ToolSet } from "ai"
import type { ToolResult } from "../index.js"
import type { AdapterOptions, ToolsInput } from "./shared.mjs"

export type { AdapterOptions, ToolsInput } from "./shared.mjs"
export { toStrictSchema } from "./shared.mjs"

/** The AI SDK's model output for a tool result (what `toModelOutput` returns). */
export type AiSdkModelOutput = Awaited<ReturnType<NonNullable<AiSdkTool["toModelOutput"]>>>

/**
 * The tools of `sourceOrTools` as an AI SDK `ToolSet`, keyed by tool name. `execute` forwards
 * the AI SDK's `abortSignal` (the server is sent `notifications/cancelled`) and resolves with
 * the whole `ToolResult` (so `structuredContent` is kept); `toModelOutput` shows the model an
 * error as `error-text`, images and audio as file parts. Read it again after `list_changed`.
 * Task-required tools are left out.
 */
export declare function toAiSdkTools(sourceOrTools: ToolsInput, options?: AdapterOptions): ToolSet

/** The model output for a `ToolResult`: error → `error-text`, text → `text`, media → `content`. */
export declare function toAiSdkModelOutput(result: ToolResult): AiSdkModelOutput
