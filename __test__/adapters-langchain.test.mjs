// toolnexus/langchain (issue 26): LangChain structured tools driven by a scripted fake chat model
// from @langchain/core (no network, no LLM) over real MCP servers loaded with loadMcp.
import { test } from "node:test"
import assert from "node:assert/strict"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { FakeListChatModel } from "@langchain/core/utils/testing"
import { convertToOpenAITool } from "@langchain/core/utils/function_calling"
import { loadMcp } from "toolnexus"
import { toLangChainTools } from "toolnexus/langchain"
import { assertAbortCancels, everything, fixtureServer, strictViolations, withSource } from "./adapters-helpers.mjs"
import { waitFor } from "./helpers.mjs"

const T = { timeout: 30000 }

/** LangChain's fake list model, answering from `script` (tool calls, or a text) and recording what it was sent. */
class ScriptedChatModel extends FakeListChatModel {
  constructor(script) {
    super({ responses: script.map(() => "") })
    this.script = script
    this.seen = []
  }

  // The fake's own bindTools answers with a plain FakeListChatModel; this one stays itself and
  // keeps the tool definitions as OpenAI would be sent them.
  bindTools(tools, options) {
    this.bound = tools.map((t) => convertToOpenAITool(t, options))
    return this
  }

  async _generate(messages) {
    this.seen.push(messages)
    const next = this.script[this.seen.length - 1] ?? "done"
    const message = typeof next === "string" ? new AIMessage(next) : new AIMessage({ content: "", tool_calls: next })
    return { generations: [{ text: typeof next === "string" ? next : "", message }] }
  }
}

/** The loop an agent runs: the model's tool calls are invoked, their ToolMessages sent back. */
async function agentLoop(model, tools, prompt, config = {}) {
  const byName = new Map(tools.map((t) => [t.name, t]))
  const bound = model.bindTools(tools, config.strict ? { strict: true } : undefined)
  const messages = [new HumanMessage(prompt)]
  for (;;) {
    const reply = await bound.invoke(messages, config)
    messages.push(reply)
    if (!reply.tool_calls?.length) return messages
    for (const toolCall of reply.tool_calls) messages.push(await byName.get(toolCall.name).invoke(toolCall, config))
  }
}

const toolCall = (name, args, id = "c1") => ({ name, args, id, type: "tool_call" })

test("a call's result reaches the model's next turn as a ToolMessage: MCP parts as content, the ToolResult as artifact", T, async () => {
  await withSource(loadMcp(everything()), async (source) => {
    const model = new ScriptedChatModel([[toolCall("ev_get-sum", { a: 2, b: 3 })], "done"])
    const messages = await agentLoop(model, toLangChainTools(source), "add")
    assert.equal(messages.at(-1).content, "done")
    const answer = model.seen[1].at(-1)
    assert.ok(answer instanceof ToolMessage)
    assert.equal(answer.tool_call_id, "c1")
    assert.equal(answer.status, "success")
    assert.deepEqual(answer.content, [{ type: "text", text: "The sum of 2 and 3 is 5." }])
    assert.deepEqual(answer.artifact, { output: "The sum of 2 and 3 is 5.", isError: false, content: [{ type: "text", text: "The sum of 2 and 3 is 5." }], metadata: { server: "ev" } })
  })
})

test("an isError result is an error ToolMessage (and a throw when invoked without a tool call); an image is an image block", T, async () => {
  const { config } = fixtureServer(["fail", "mixed"])
  await withSource(loadMcp(config), async (source) => {
    const tools = toLangChainTools(source)
    const model = new ScriptedChatModel([[toolCall("x_fail", {}), toolCall("x_mixed", {}, "c2")], "done"])
    await agentLoop(model, tools, "go")
    const [failed, mixed] = model.seen[1].slice(-2)
    assert.equal(failed.status, "error")
    assert.deepEqual(failed.content, [{ type: "text", text: "first problem" }, { type: "text", text: "second problem" }])
    assert.equal(failed.artifact.isError, true)
    assert.equal(mixed.status, "success")
    assert.deepEqual(mixed.content, [{ type: "text", text: "one" }, { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }, { type: "text", text: "two" }])
    await assert.rejects(tools.find((t) => t.name === "x_fail").invoke({}), { message: "first problem\n\nsecond problem" })
  })
})

test("abort through config.signal ends the MCP call in under a second; the server is sent notifications/cancelled", T, () =>
  assertAbortCancels({
    reached: "LangChain's signal reached execute",
    start: (spy, signal) => toLangChainTools(spy).find((t) => t.name === "x_sleep").invoke(toolCall("x_sleep", { ms: 20000 }), { signal }),
    settle: async (running) => {
      const answer = await running
      assert.equal(answer.status, "error")
      assert.deepEqual(answer.content, [{ type: "text", text: "MCP tool call aborted" }])
    },
  }))

test("strict: every tool bound strictly is strict-valid; a null for an optional property passes validation and is not sent", T, async () => {
  await withSource(loadMcp(everything()), async (source) => {
    const tools = toLangChainTools(source, { strict: true })
    assert.equal(tools.length, 13)
    for (const tool of tools) {
      const openai = convertToOpenAITool(tool, { strict: true })
      assert.deepEqual(strictViolations(openai.function.parameters), [], tool.name)
    }
    const links = tools.find((t) => t.name === "ev_get-resource-links")
    const answer = await links.invoke(toolCall("ev_get-resource-links", { count: null }))
    assert.equal(answer.status, "success", JSON.stringify(answer.content))
    assert.equal(answer.artifact.content.filter((p) => p.type === "resource_link").length, 3)
  })
})

test("list_changed: reading the tools again shows the new tool, unchanged tools are the same objects", T, async () => {
  const { config } = fixtureServer(["grow", "echo"])
  const changes = []
  await withSource(loadMcp(config, { onToolsChanged: (change) => changes.push(change) }), async (source) => {
    const before = toLangChainTools(source)
    assert.deepEqual(before.map((t) => t.name), ["x_grow", "x_echo"])
    await before[0].invoke({ name: "fresh" })
    await waitFor(() => changes.length === 1, { message: "onToolsChanged after grow" })
    const after = toLangChainTools(source)
    assert.deepEqual(after.map((t) => t.name).sort(), ["x_echo", "x_fresh", "x_grow"])
    assert.equal(after.find((t) => t.name === "x_echo"), before[1])
    assert.equal(after.find((t) => t.name === "x_grow"), before[0])
    const fresh = after.find((t) => t.name === "x_fresh")
    assert.deepEqual((await fresh.invoke(toolCall("x_fresh", {}))).content, [{ type: "text", text: "fresh" }])
  })
})
