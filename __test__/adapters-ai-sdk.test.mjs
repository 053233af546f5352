// toolnexus/ai-sdk (issue 26): generateText with the AI SDK's MockLanguageModelV3 (no network, no
// LLM) over real MCP servers loaded with loadMcp: results reach the model's next turn, an abort
// cancels the MCP call, errors and images reach the model as such, strict schemas are valid.
import { test } from "node:test"
import assert from "node:assert/strict"
import { generateText, isStepCount, streamText } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test"
import { defineTool, loadMcp } from "toolnexus"
import { toAiSdkTools } from "toolnexus/ai-sdk"
import { assertAbortCancels, everything, fixtureServer, strictViolations, withSource } from "./adapters-helpers.mjs"
import { fixture } from "./helpers.mjs"

const T = { timeout: 30000 }
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const call = (toolName, input, toolCallId = "c1") => ({ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) })

/** A model that makes `calls` on its first turn and then says "done"; `turns` holds each call's options. */
function scripted(...calls) {
  const turns = []
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      turns.push(options)
      if (turns.length === 1) return { content: calls, finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] }
      return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }
    },
  })
  return { model, turns }
}

/** The tool results the model was shown on its second turn, by tool call id. */
const shown = (turns) => Object.fromEntries(turns[1].prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).map((p) => [p.toolCallId, p.output]))

test("a call's result reaches the model's next turn; the whole ToolResult stays the tool's result", T, async () => {
  await withSource(loadMcp(everything()), async (source) => {
    const { model, turns } = scripted(call("ev_get-sum", { a: 2, b: 3 }), call("ev_get-structured-content", { location: "Chicago" }, "c2"))
    const answer = await generateText({ model, tools: toAiSdkTools(source), prompt: "add", stopWhen: isStepCount(3) })
    assert.equal(answer.text, "done")
    assert.deepEqual(shown(turns).c1, { type: "text", value: "The sum of 2 and 3 is 5." })
    const structured = answer.steps[0].toolResults.find((r) => r.toolCallId === "c2").output
    assert.equal(structured.isError, false)
    assert.equal(typeof structured.structuredContent.temperature, "number")
    assert.deepEqual(shown(turns).c2, { type: "text", value: JSON.stringify(structured.structuredContent) })
  })
})

test("strict: every tool reaches the model strict-valid and marked strict; a null for an optional property is not sent to the server", T, async () => {
  await withSource(loadMcp(everything()), async (source) => {
    const loose = scripted()
    await generateText({ model: loose.model, tools: toAiSdkTools(source), prompt: "hi" })
    // Without strict, the schemas go as the server gave them: none is strict-valid, 6 of the 13
    // have optional properties (the task-required one, which runs as a task, too).
    const sent = loose.turns[0].tools
    assert.equal(sent.filter((t) => strictViolations(t.inputSchema).length > 0).length, 13)
    const optional = sent.filter((t) => Object.keys(t.inputSchema.properties).some((k) => !(t.inputSchema.required ?? []).includes(k)))
    assert.equal(optional.length, 6)

    const { model, turns } = scripted(call("ev_get-resource-links", { count: null }))
    const answer = await generateText({ model, tools: toAiSdkTools(source, { strict: true }), prompt: "links", stopWhen: isStepCount(3) })
    assert.equal(turns[0].tools.length, 13)
    for (const tool of turns[0].tools) {
      assert.equal(tool.strict, true, tool.name)
      assert.deepEqual(strictViolations(tool.inputSchema), [], tool.name)
    }
    const result = answer.steps[0].toolResults[0].output
    assert.equal(result.isError, false, result.output)
    assert.equal(result.content.filter((p) => p.type === "resource_link").length, 3, "the server's default count (3) applied")
  })
})

test("abort through generateText's abortSignal ends the MCP call in under a second; the server is sent notifications/cancelled", T, () =>
  assertAbortCancels({
    reached: "the AI SDK's signal reached execute",
    start: (spy, signal) => {
      const { model } = scripted(call("x_sleep", { ms: 20000 }))
      return generateText({ model, tools: toAiSdkTools(spy), prompt: "sleep", abortSignal: signal, stopWhen: isStepCount(3) })
    },
    settle: (running) => assert.rejects(running, /stop/),
  }))

test("an isError result reaches the model as error-text; an image as a file part, not as base64 text", T, async () => {
  const { config } = fixtureServer(["fail", "mixed"])
  const ev = everything().mcpServers
  await withSource(loadMcp({ mcpServers: { ...config.mcpServers, ...ev } }), async (source) => {
    const { model, turns } = scripted(call("x_fail", {}), call("x_mixed", {}, "c2"), call("ev_get-tiny-image", {}, "c3"))
    await generateText({ model, tools: toAiSdkTools(source), prompt: "go", stopWhen: isStepCount(3) })
    const outputs = JSON.parse(JSON.stringify(shown(turns)))
    assert.deepEqual(outputs.c1, { type: "error-text", value: "first problem\n\nsecond problem" })
    assert.deepEqual(outputs.c2, {
      type: "content",
      value: [{ type: "text", text: "one" }, { type: "file-data", data: "iVBORw0KGgo=", mediaType: "image/png" }, { type: "text", text: "two" }],
    })
    const image = outputs.c3.value.find((p) => p.type === "file-data")
    assert.equal(image.mediaType, "image/png")
    assert.ok(image.data.length > 1000)
    const texts = outputs.c3.value.filter((p) => p.type === "text").map((p) => p.text).join("")
    assert.ok(!texts.includes(image.data.slice(0, 100)), "the image is not in the text")
  })
})

test("progress a tool reports goes to the AI SDK's stream as preliminary results, before the final one", T, async () => {
  const tool = defineTool({ name: "steps", run: () => "three steps" })
  // A tool of one's own that reports progress through the context the adapter gives it.
  const reporting = {
    ...tool,
    async execute(args, ctx) {
      for (let i = 1; i <= 3; i++) ctx.onProgress?.({ progress: i, total: 3 })
      return tool.execute(args, ctx)
    },
  }
  let turn = 0
  const model = new MockLanguageModelV3({
    doStream: async () => {
      const parts = turn++ === 0
        ? [{ type: "stream-start", warnings: [] }, call("steps", {}), { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage }]
        : [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "done" }, { type: "text-end", id: "t" }, { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage }]
      return { stream: convertArrayToReadableStream(parts) }
    },
  })
  const stream = streamText({ model, tools: toAiSdkTools([reporting]), prompt: "go", stopWhen: isStepCount(3) })
  const results = []
  for await (const part of stream.fullStream) if (part.type === "tool-result") results.push([part.preliminary ?? false, part.output])
  assert.deepEqual(results.slice(0, 3), [1, 2, 3].map((progress) => [true, { progress: { progress, total: 3 } }]))
  // The AI SDK shows every value yielded as preliminary, then the last one again as the result.
  assert.deepEqual(results.slice(3).map(([preliminary, output]) => [preliminary, output.output]), [[true, "three steps"], [false, "three steps"]])
  assert.equal(await stream.text, "done")
})

test("an MCP server's progress on a call reaches the AI SDK's stream as preliminary results", T, async () => {
  await withSource(loadMcp(fixtureServer(["slow"]).config), async (source) => {
    let turn = 0
    const model = new MockLanguageModelV3({
      doStream: async () => {
        const parts = turn++ === 0
          ? [{ type: "stream-start", warnings: [] }, call("x_slow", { steps: 3, intervalMs: 10 }), { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage }]
          : [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "done" }, { type: "text-end", id: "t" }, { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage }]
        return { stream: convertArrayToReadableStream(parts) }
      },
    })
    const stream = streamText({ model, tools: toAiSdkTools(source), prompt: "go", stopWhen: isStepCount(3) })
    const results = []
    for await (const part of stream.fullStream) if (part.type === "tool-result") results.push([part.preliminary ?? false, part.output])
    assert.deepEqual(results.slice(0, 3), [1, 2, 3].map((progress) => [true, { progress: { progress, total: 3, message: `step ${progress}` } }]))
    assert.deepEqual(results.at(-1)[0], false)
    assert.equal(results.at(-1)[1].output, "slow done after 3 steps")
    assert.equal(await stream.text, "done")
  })
})

test("loadSkill: the model sees each skill's name and description in load_skill's description, loads one by name, and a refused skill reaches it as an error", T, async () => {
  const skills = (...args) => ({ command: process.execPath, args: [fixture("skills-server.mjs"), ...args] })
  await withSource(loadMcp({ sk: skills() }), async (source) => {
    const { model, turns } = scripted(call("load_skill", { name: "pdf-processing" }), call("load_skill", { name: "nope" }, "c2"))
    await generateText({ model, tools: toAiSdkTools(source, { loadSkill: true }), prompt: "fill the form", stopWhen: isStepCount(3) })
    const offeredTool = turns[0].tools.find((t) => t.name === "load_skill")
    assert.equal(
      offeredTool.description,
      "Loads a skill: instructions for a kind of task. Load the one whose description fits the task before doing it. Skills:\n" +
        "- pdf-processing: Extract text and fill forms in PDF files\n- code-review: Review a change like a senior engineer\n- live-notes: Notes that change as you work",
    )
    assert.deepEqual(shown(turns).c1, {
      type: "text",
      value: "# Skill: pdf-processing\n\n# PDF processing\n\nUse references/FORMS.md for forms.\n\nThe skill's other files: references/FORMS.md, assets/logo.bin",
    })
    assert.deepEqual(shown(turns).c2, { type: "error-text", value: "no skill named \"nope\"; the skills are: pdf-processing, code-review, live-notes" })
  })
  await withSource(loadMcp({ sk: skills("--tamper", "digest") }), async (source) => {
    const { model, turns } = scripted(call("load_skill", { name: "pdf-processing" }))
    await generateText({ model, tools: toAiSdkTools(source, { loadSkill: true }), prompt: "fill the form", stopWhen: isStepCount(3) })
    assert.equal(shown(turns).c1.type, "error-text")
    assert.match(shown(turns).c1.value, /^loading skill skill:\/\/pdf-processing\/SKILL\.md failed: refused: skill:\/\/pdf-processing\/SKILL\.md has digest sha256:/)
  })
  assert.throws(() => toAiSdkTools([], { loadSkill: true }), { name: "TypeError", message: "toolnexus: loadSkill needs an McpSource or a Toolkit (whose skills it loads), not an array of tools" })
})
