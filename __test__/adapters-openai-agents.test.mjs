// toolnexus/openai-agents (issue 26): Agents SDK runs with a scripted Model (the SDK's Model
// interface, no network, no LLM) over real MCP servers loaded with loadMcp: safe names reach the
// right tool, results reach the next turn, an abort cancels the MCP call, errors are text.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Agent, run, setTracingDisabled, Usage } from "@openai/agents"
import { loadMcp } from "toolnexus"
import { toOpenAIAgentsTools, toolnexusName } from "toolnexus/openai-agents"
import { shortHash } from "../adapters/naming.mjs"
import { assertAbortCancels, everything, fixtureServer, strictViolations, withSource } from "./adapters-helpers.mjs"

setTracingDisabled(true)
const T = { timeout: 30000 }

/** A Model that makes `calls` ([name, args]) on its first turn, then says "done"; `requests` holds what it was sent. */
function scripted(...calls) {
  const requests = []
  return {
    requests,
    model: {
      async getResponse(request) {
        requests.push(request)
        if (requests.length === 1) {
          return { usage: new Usage(), output: calls.map(([name, args], i) => ({ type: "function_call", callId: `c${i + 1}`, name, arguments: JSON.stringify(args), status: "completed" })) }
        }
        return { usage: new Usage(), output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }] }
      },
      async *getStreamedResponse() {
        throw new Error("the scripted model does not stream")
      },
    },
  }
}

/** The function call outputs the model was sent on its second turn, by call id. */
const outputs = (requests) => Object.fromEntries(requests[1].input.filter((i) => i.type === "function_call_result").map((i) => [i.callId, i.output]))

test("safe names: x_get-sum and a real x_get_sum each get their own call; results reach the next turn", T, async () => {
  const { config } = fixtureServer(["get-sum", "get_sum", "echo"])
  await withSource(loadMcp(config), async (source) => {
    const tools = toOpenAIAgentsTools(source)
    const hashed = `x_get_sum_${shortHash(["x_get-sum"])}`
    assert.deepEqual(tools.map((t) => t.name), [hashed, "x_get_sum", "x_echo"])
    assert.equal(toolnexusName(source, hashed), "x_get-sum")
    assert.equal(toolnexusName(source, "x_get_sum"), "x_get_sum")
    const { model, requests } = scripted([hashed, {}], ["x_get_sum", {}], ["x_echo", { text: "hi" }])
    const result = await run(new Agent({ name: "a", instructions: "Use the tools.", model, tools }), "go")
    assert.equal(result.finalOutput, "done")
    assert.deepEqual(requests[0].tools.map((t) => t.name), [hashed, "x_get_sum", "x_echo"])
    assert.deepEqual(outputs(requests), {
      c1: { type: "text", text: "get-sum" },
      c2: { type: "text", text: "get_sum" },
      c3: { type: "text", text: "hi" },
    })
    // Read again: the same names and objects.
    const again = toOpenAIAgentsTools(source)
    assert.ok(again.length === 3 && again.every((t, i) => t === tools[i]))
  })
})

test("server-everything: all 13 tools offered under safe names (the task-required one too); with strict every schema is strict-valid and nulls are not sent", T, async () => {
  await withSource(loadMcp(everything()), async (source) => {
    const tools = toOpenAIAgentsTools(source, { strict: true })
    assert.equal(tools.length, 13)
    for (const tool of tools) {
      assert.match(tool.name, /^[A-Za-z0-9_]{1,64}$/)
      assert.equal(tool.strict, true)
      assert.deepEqual(strictViolations(tool.parameters), [], tool.name)
    }
    const { model, requests } = scripted(["ev_get_resource_links", { count: null }], ["ev_get_sum", { a: 2, b: 3 }])
    await run(new Agent({ name: "a", instructions: "Use the tools.", model, tools }), "go")
    const sent = outputs(requests)
    assert.deepEqual(sent.c2, { type: "text", text: "The sum of 2 and 3 is 5." })
    assert.doesNotMatch(JSON.stringify(sent.c1), /Error/, JSON.stringify(sent.c1))
  })
})

test("an error is returned as text, not thrown; an image reaches the model as an image", T, async () => {
  const { config } = fixtureServer(["fail", "mixed"])
  await withSource(loadMcp(config), async (source) => {
    const { model, requests } = scripted(["x_fail", {}], ["x_mixed", {}])
    const result = await run(new Agent({ name: "a", instructions: "Use the tools.", model, tools: toOpenAIAgentsTools(source) }), "go")
    assert.equal(result.finalOutput, "done")
    const sent = outputs(requests)
    assert.deepEqual(sent.c1, { type: "text", text: "Error: first problem\n\nsecond problem" })
    assert.deepEqual(sent.c2, [
      { type: "input_text", text: "one" },
      { type: "input_image", image: "data:image/png;base64,iVBORw0KGgo=" },
      { type: "input_text", text: "two" },
    ])
  })
})

test("abort through the run's signal ends the MCP call in under a second; the server is sent notifications/cancelled", T, () =>
  assertAbortCancels({
    reached: "the run's signal reached execute",
    start: (spy, signal) => {
      const { model } = scripted(["x_sleep", { ms: 20000 }])
      return run(new Agent({ name: "a", instructions: "Sleep.", model, tools: toOpenAIAgentsTools(spy) }), "go", { signal })
    },
    settle: (running) => running.catch(() => {}),
  }))
