// Type check of the adapter subpaths against the frameworks' own types (npx tsc -p
// __test__/tsconfig.adapters.json): what each adapter returns is accepted where the framework
// takes tools, and wrong options are refused.
import { generateText, isStepCount, type ToolSet } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { FakeListChatModel } from "@langchain/core/utils/testing"
import type { StructuredToolInterface } from "@langchain/core/tools"
import type { ContentBlock } from "@langchain/core/messages"
import { Agent, run, type FunctionTool } from "@openai/agents"
import { createToolkit, defineTool, loadMcp, type JSONSchema, type ToolResult } from "toolnexus"
import { toAiSdkModelOutput, toAiSdkTools, toStrictSchema } from "toolnexus/ai-sdk"
import { toLangChainContent, toLangChainTools, type LangChainTool } from "toolnexus/langchain"
import { toOpenAIAgentsOutput, toOpenAIAgentsTools, toolnexusName, type OpenAIAgentsOutput } from "toolnexus/openai-agents"

const source = await loadMcp("mcp.json")
const toolkit = await createToolkit({ mcpConfig: "mcp.json" })
const own = [defineTool({ name: "hello", run: () => "hi" })]

// AI SDK: a ToolSet for generateText.
const aiTools: ToolSet = toAiSdkTools(source, { strict: true })
export const fromToolkit: ToolSet = toAiSdkTools(toolkit)
export const fromArray: ToolSet = toAiSdkTools(own)
export const answer = await generateText({ model: new MockLanguageModelV3(), tools: aiTools, prompt: "hi", stopWhen: isStepCount(3) })
declare const result: ToolResult
export const output = toAiSdkModelOutput(result)
export const strictSchema: JSONSchema = toStrictSchema({ type: "object", properties: { a: { type: "string" } } })
// @ts-expect-error strict is a boolean
toAiSdkTools(source, { strict: "yes" })
// @ts-expect-error a config path is not a source
toAiSdkTools("mcp.json")

// LangChain: structured tools for bindTools.
const lcTools: LangChainTool[] = toLangChainTools(source, { strict: true })
export const asInterfaces: StructuredToolInterface[] = lcTools
export const bound = new FakeListChatModel({ responses: ["ok"] }).bindTools(lcTools)
export const blocks: ContentBlock[] = toLangChainContent(result)
export const invoked = await lcTools[0]!.invoke({ name: lcTools[0]!.name, args: {}, id: "1", type: "tool_call" })

// OpenAI Agents SDK: function tools for an Agent.
const agentTools: FunctionTool<unknown, any, OpenAIAgentsOutput>[] = toOpenAIAgentsTools(source)
export const agent = new Agent({ name: "helper", instructions: "Use the tools.", tools: agentTools })
export const ran = await run(agent, "hi")
export const original: string | undefined = toolnexusName(source, agentTools[0]!.name)
export const agentsOutput: OpenAIAgentsOutput = toOpenAIAgentsOutput(result)
