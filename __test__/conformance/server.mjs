// The fixture MCP server for the conformance suite's server scenarios, built only with this
// package: `defineTool` tools (and surface.mjs's resources and prompts) in a `createToolkit`,
// served with `toolkit.serve`. Each tool is the one a server scenario calls, named and behaving
// as the suite's scenario descriptions ask (its reference is the suite's everything-server).
//
// The tools use issue 10's API: `run` may return an MCP result `{ content }`, and `ctx.progress`,
// `ctx.log`, `ctx.elicit`, `ctx.sample` and `ctx.listRoots` reach the calling client (in the
// 2026-07-28 era the last three as input-required results, keyed as the scenarios ask).
//
// Run alone (`node __test__/conformance/server.mjs`) it prints the endpoint URL and serves until
// interrupted, for poking at it with the conformance CLI by hand.
import { createToolkit, defineTool } from "toolnexus"
import { setTimeout as delay } from "node:timers/promises"
import { pathToFileURL } from "node:url"
import { PNG_BASE64, conformancePrompts, conformanceResources } from "./surface.mjs"

// A valid WAV: 8 kHz, 8-bit mono, 8 samples of silence.
function wavBase64() {
  const samples = Buffer.alloc(8, 0x80)
  const header = Buffer.alloc(44)
  header.write("RIFF", 0)
  header.writeUInt32LE(36 + samples.length, 4)
  header.write("WAVEfmt ", 8)
  header.writeUInt32LE(16, 16) // fmt chunk size
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(1, 22) // channels
  header.writeUInt32LE(8000, 24) // sample rate
  header.writeUInt32LE(8000, 28) // byte rate
  header.writeUInt16LE(1, 32) // block align
  header.writeUInt16LE(8, 34) // bits per sample
  header.write("data", 36)
  header.writeUInt32LE(samples.length, 40)
  return Buffer.concat([header, samples]).toString("base64")
}

// What a tool needs of `ctx` (issue 10's API). Absent in this build, the call fails with a reason
// that names it, and the scenario's failure says why.
function capability(ctx, name) {
  const fn = ctx?.[name]
  if (typeof fn !== "function") {
    throw new Error(`ctx.${name} is not available in this toolnexus build (issue 10)`)
  }
  return fn.bind(ctx)
}

const noArgs = { type: "object", properties: {} }

// SEP-1613 / SEP-2106: the listing must keep every keyword of this schema as given.
export const JSON_SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
}

const SEP1034_DEFAULTS_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", description: "User name", default: "John Doe" },
    age: { type: "integer", description: "User age", default: 30 },
    score: { type: "number", description: "User score", default: 95.5 },
    status: {
      type: "string",
      description: "User status",
      enum: ["active", "inactive", "pending"],
      default: "active",
    },
    verified: { type: "boolean", description: "Verification status", default: true },
  },
  required: [],
}

const SEP1330_ENUMS_SCHEMA = {
  type: "object",
  properties: {
    untitledSingle: {
      type: "string",
      description: "Select one option",
      enum: ["option1", "option2", "option3"],
    },
    titledSingle: {
      type: "string",
      description: "Select one option with titles",
      oneOf: [
        { const: "value1", title: "First Option" },
        { const: "value2", title: "Second Option" },
        { const: "value3", title: "Third Option" },
      ],
    },
    legacyEnum: {
      type: "string",
      description: "Select one option (legacy)",
      enum: ["opt1", "opt2", "opt3"],
      enumNames: ["Option One", "Option Two", "Option Three"],
    },
    untitledMulti: {
      type: "array",
      description: "Select multiple options",
      minItems: 1,
      maxItems: 3,
      items: { type: "string", enum: ["option1", "option2", "option3"] },
    },
    titledMulti: {
      type: "array",
      description: "Select multiple options with titles",
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: "value1", title: "First Choice" },
          { const: "value2", title: "Second Choice" },
          { const: "value3", title: "Third Choice" },
        ],
      },
    },
  },
  required: [],
}

const askName = (message) => ({
  message,
  requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
})
const confirmation = () => ({
  message: "Please confirm",
  requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
})
const question = (text, maxTokens) => ({
  messages: [{ role: "user", content: { type: "text", text } }],
  maxTokens,
})
const textOf = (result) => (Array.isArray(result.content) ? result.content[0] : result.content)?.text ?? "No response"

async function elicitAndReport(ctx, params, label) {
  const answer = await capability(ctx, "elicit")(params)
  return `${label}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`
}

export function conformanceTools() {
  const image = { type: "image", data: PNG_BASE64, mimeType: "image/png" }
  return [
    defineTool({
      name: "test_simple_text",
      description: "Tests simple text content response",
      inputSchema: noArgs,
      run: () => "This is a simple text response for testing.",
    }),
    defineTool({
      name: "test_image_content",
      description: "Tests image content response",
      inputSchema: noArgs,
      run: () => ({ content: [image] }),
    }),
    defineTool({
      name: "test_audio_content",
      description: "Tests audio content response",
      inputSchema: noArgs,
      run: () => ({ content: [{ type: "audio", data: wavBase64(), mimeType: "audio/wav" }] }),
    }),
    defineTool({
      name: "test_embedded_resource",
      description: "Tests embedded resource content response",
      inputSchema: noArgs,
      run: () => ({
        content: [
          {
            type: "resource",
            resource: {
              uri: "test://embedded-resource",
              mimeType: "text/plain",
              text: "This is an embedded resource content.",
            },
          },
        ],
      }),
    }),
    defineTool({
      name: "test_multiple_content_types",
      description: "Tests response with multiple content types (text, image, resource)",
      inputSchema: noArgs,
      run: () => ({
        content: [
          { type: "text", text: "Multiple content types test:" },
          image,
          {
            type: "resource",
            resource: {
              uri: "test://mixed-content-resource",
              mimeType: "application/json",
              text: JSON.stringify({ test: "data", value: 123 }),
            },
          },
        ],
      }),
    }),
    defineTool({
      name: "test_tool_with_logging",
      description: "Tests tool that emits log messages during execution",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const log = capability(ctx, "log")
        await log("info", "Tool execution started")
        await delay(50)
        await log("info", "Tool processing data")
        await delay(50)
        await log("info", "Tool execution completed")
        return "Tool with logging executed successfully"
      },
    }),
    defineTool({
      name: "test_tool_with_progress",
      description: "Tests tool that reports progress notifications",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const progress = capability(ctx, "progress")
        for (const step of [0, 50, 100]) {
          if (step > 0) await delay(50)
          await progress(step, 100, `Completed step ${step} of 100`)
        }
        return "Tool with progress executed successfully"
      },
    }),
    defineTool({
      name: "test_error_handling",
      description: "Tests error response handling",
      inputSchema: noArgs,
      run() {
        throw new Error("This tool intentionally returns an error for testing")
      },
    }),
    // SEP-1699 (server-sse-polling): the reference closes the call's SSE stream mid-call so the
    // client must reconnect. A JavaScript tool cannot reach the stream; this one answers after
    // the pause, so the scenario sees whatever stream the engine itself serves.
    defineTool({
      name: "test_reconnection",
      description: "Tests SSE stream disconnection and client reconnection (SEP-1699)",
      inputSchema: noArgs,
      async run() {
        await delay(100)
        return "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
      },
    }),
    defineTool({
      name: "test_sampling",
      description: "Tests server-initiated sampling (LLM completion request)",
      inputSchema: {
        type: "object",
        properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } },
        required: ["prompt"],
      },
      async run({ prompt }, ctx) {
        const result = await capability(ctx, "sample")({
          messages: [{ role: "user", content: { type: "text", text: prompt } }],
          maxTokens: 100,
        })
        const content = Array.isArray(result.content) ? result.content[0] : result.content
        return `LLM response: ${content?.text ?? "No response"}`
      },
    }),
    defineTool({
      name: "test_elicitation",
      description: "Tests server-initiated elicitation (user input request)",
      inputSchema: {
        type: "object",
        properties: { message: { type: "string", description: "The message to show the user" } },
        required: ["message"],
      },
      run: ({ message }, ctx) =>
        elicitAndReport(
          ctx,
          {
            message,
            requestedSchema: {
              type: "object",
              properties: {
                username: { type: "string", description: "User's response" },
                email: { type: "string", description: "User's email address" },
              },
              required: ["username", "email"],
            },
          },
          "User response",
        ),
    }),
    defineTool({
      name: "test_elicitation_sep1034_defaults",
      description: "Tests elicitation with default values per SEP-1034",
      inputSchema: noArgs,
      run: (_args, ctx) =>
        elicitAndReport(
          ctx,
          {
            message: "Please review and update the form fields with defaults",
            requestedSchema: SEP1034_DEFAULTS_SCHEMA,
          },
          "Elicitation completed",
        ),
    }),
    defineTool({
      name: "test_elicitation_sep1330_enums",
      description: "Tests elicitation with enum schema improvements per SEP-1330",
      inputSchema: noArgs,
      run: (_args, ctx) =>
        elicitAndReport(
          ctx,
          { message: "Please select options from the enum fields", requestedSchema: SEP1330_ENUMS_SCHEMA },
          "Elicitation completed",
        ),
    }),
    defineTool({
      name: "json_schema_2020_12_tool",
      description: "Tool with JSON Schema 2020-12 features",
      inputSchema: JSON_SCHEMA_2020_12,
      run: (args) => `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`,
    }),
    // SEP-2243: a parameter mirrored in an `Mcp-Param-Region` header, which the server checks
    // against the body (rmcp validates it through the served tool's schema).
    defineTool({
      name: "test_custom_header",
      description: "Echoes a region that the client also sends as a header",
      inputSchema: {
        type: "object",
        properties: { region: { type: "string", "x-mcp-header": "Region" } },
        required: ["region"],
      },
      run: ({ region }) => `region ${region}`,
    }),
    // 2026-07-28 (SEP-2322): an elicitation / sampling / roots request inside a call goes out as
    // an input-required result under the key given, and the retried call resumes `run`.
    defineTool({
      name: "test_input_required_result_elicitation",
      description: "Asks the user for their name through an input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(askName("What is your name?"), { key: "user_name" })
        return `Hello, ${answer.content?.name}!`
      },
    }),
    defineTool({
      name: "test_input_required_result_sampling",
      description: "Asks the client's model a question through an input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const result = await capability(ctx, "sample")(question("What is the capital of France?", 100), {
          key: "capital_question",
        })
        return textOf(result)
      },
    }),
    defineTool({
      name: "test_input_required_result_list_roots",
      description: "Asks the client for its roots through an input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const { roots } = await capability(ctx, "listRoots")({ key: "client_roots" })
        return `Roots: ${roots.map((r) => r.uri).join(", ")}`
      },
    }),
    // A retry is resumed only under the requestState its round went out with, so getting here
    // means the state was the server's own.
    defineTool({
      name: "test_input_required_result_request_state",
      description: "Confirms through an input-required result with requestState",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(confirmation(), { key: "confirm" })
        return `state-ok: confirmed=${answer.content?.ok}`
      },
    }),
    defineTool({
      name: "test_input_required_result_tampered_state",
      description: "Confirms through an input-required result; a changed requestState is refused",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(confirmation(), { key: "confirm" })
        return `confirmed=${answer.content?.ok}`
      },
    }),
    defineTool({
      name: "test_input_required_result_multiple_inputs",
      description: "Asks for a name, a greeting and the roots in one input-required result",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const [name, greeting, { roots }] = await Promise.all([
          capability(ctx, "elicit")(askName("What is your name?"), { key: "user_name" }),
          capability(ctx, "sample")(question("Generate a greeting", 50), { key: "greeting" }),
          capability(ctx, "listRoots")({ key: "client_roots" }),
        ])
        return `${textOf(greeting)} ${name.content?.name} (${roots.length} roots)`
      },
    }),
    defineTool({
      name: "test_input_required_result_multi_round",
      description: "Asks two questions, one input-required round each",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const elicit = capability(ctx, "elicit")
        const name = await elicit(askName("Step 1: What is your name?"), { key: "step1" })
        const color = await elicit(
          {
            message: "Step 2: What is your favorite color?",
            requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
          },
          { key: "step2" },
        )
        return `${name.content?.name} likes ${color.content?.color}`
      },
    }),
    // Asks for elicitation and sampling at once: what the client did not declare is refused
    // (and not sent), the rest goes out.
    defineTool({
      name: "test_input_required_result_capabilities",
      description: "Asks only for what the client declared it can answer",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const [name, answer] = await Promise.allSettled([
          capability(ctx, "elicit")(askName("What is your name?")),
          capability(ctx, "sample")(question("What is the capital of France?", 100)),
        ])
        return `elicitation ${name.status}, sampling ${answer.status}`
      },
    }),
    // server-stateless's diagnostic tools (SEP-2575).
    defineTool({
      name: "test_missing_capability",
      description: "Needs sampling: without the client's sampling capability the call fails with -32021",
      inputSchema: noArgs,
      async run(_args, ctx) {
        return textOf(await capability(ctx, "sample")(question("Say hello", 20)))
      },
    }),
    defineTool({
      name: "test_streaming_elicitation",
      description: "Elicits mid-call: in the 2026-07-28 era only as an input-required result, never a request",
      inputSchema: noArgs,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(askName("What is your name?"))
        return `Hello, ${answer.content?.name}!`
      },
    }),
    // The tasks extension's scenarios (io.modelcontextprotocol/tasks): tools served as tasks.
    defineTool({
      name: "greet",
      description: "Greets by name (never a task)",
      inputSchema: { type: "object", properties: { name: { type: "string" } } },
      run: ({ name }) => `Hello, ${name}!`,
    }),
    defineTool({
      name: "slow_compute",
      description: "Sleeps `seconds` seconds, then answers; a cancel ends it",
      inputSchema: { type: "object", properties: { seconds: { type: "number" }, label: { type: "string" } } },
      task: "optional",
      async run({ seconds = 0, label = "" }, ctx) {
        await sleepUnlessAborted(seconds * 1000, ctx.signal)
        return `computed ${label} after ${seconds}s`
      },
    }),
    defineTool({
      name: "failing_job",
      description: "Runs a moment, then reports a tool error",
      inputSchema: noArgs,
      task: "required",
      async run(_args, ctx) {
        await sleepUnlessAborted(500, ctx.signal)
        return { output: "the job failed", isError: true }
      },
    }),
    defineTool({
      name: "protocol_error_job",
      description: "Fails rather than answers",
      inputSchema: noArgs,
      task: "optional",
      async run() {
        throw new Error("the job broke")
      },
    }),
    defineTool({
      name: "confirm_delete",
      description: "Asks the user to confirm before deleting a file",
      inputSchema: { type: "object", properties: { filename: { type: "string" } } },
      task: "optional",
      async run({ filename = "" }, ctx) {
        const answer = await capability(ctx, "elicit")(confirmation(), { key: "confirm" })
        return answer.action === "accept" ? `deleted ${filename}` : `kept ${filename}`
      },
    }),
    defineTool({
      name: "multi_input",
      description: "Asks two questions at once",
      inputSchema: noArgs,
      task: "optional",
      async run(_args, ctx) {
        const elicit = capability(ctx, "elicit")
        const [a, b] = await Promise.all([
          elicit(askName("First name?"), { key: "first" }),
          elicit(askName("Last name?"), { key: "last" }),
        ])
        return `${a.content?.name} ${b.content?.name}`
      },
    }),
    defineTool({
      name: "test_tool_with_task",
      description: "Asks for a name in the call, then answers as a task",
      inputSchema: noArgs,
      task: "required",
      deferTask: true,
      async run(_args, ctx) {
        const answer = await capability(ctx, "elicit")(askName("What is your name?"), { key: "user_name" })
        await capability(ctx, "startTask")()
        return `Hello, ${answer.content?.name}!`
      },
    }),
    defineTool({
      name: "test_logging_tool",
      description: "Logs while it runs; nothing is sent unless the request set a log level",
      inputSchema: noArgs,
      async run(_args, ctx) {
        await capability(ctx, "log")("info", "test_logging_tool ran")
        return "logged"
      },
    }),
  ]
}

/** Waits `ms`, or until `signal` fires (then rejects with its reason). */
function sleepUnlessAborted(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true })
  })
}

export { conformancePrompts, conformanceResources }

/**
 * Serves the conformance tools, resources and prompts on 127.0.0.1 (ephemeral port); `url` is
 * the MCP endpoint.
 */
export async function startFixtureServer() {
  const toolkit = await createToolkit({
    extraTools: conformanceTools(),
    extraResources: conformanceResources(),
    extraPrompts: conformancePrompts(),
  })
  const handle = await toolkit.serve("127.0.0.1:0", {
    mcp: { name: "toolnexus-conformance-fixture", version: "1.0.0" },
  })
  return {
    url: `${handle.url}/mcp`,
    async close() {
      await handle.close()
      await toolkit.close()
    },
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const server = await startFixtureServer()
  console.log(server.url)
  const stop = () => server.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
