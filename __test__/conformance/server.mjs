// The fixture MCP server for the conformance suite's server scenarios, built only with this
// package: `defineTool` tools (and surface.mjs's resources and prompts) in a `createToolkit`,
// served with `toolkit.serve`. Each tool is the one a server scenario calls, named and behaving
// as the suite's scenario descriptions ask (its reference is the suite's everything-server).
//
// The tools use issue 10's API: `run` may return an MCP result `{ content }`, and `ctx.progress`,
// `ctx.log`, `ctx.elicit`, `ctx.sample` and `ctx.listRoots` reach the calling client (in the
// 2026-07-28 era the last three as input-required results, keyed as the scenarios ask).
//
// The shared pieces are in fixture-shared.mjs, the 2026-07-28 and task tools in tools-rounds.mjs.
//
// Run alone (`node __test__/conformance/server.mjs`) it prints the endpoint URL and serves until
// interrupted, for poking at it with the conformance CLI by hand.
import { createToolkit, defineSkill, defineTool } from "toolnexus"
import { setTimeout as delay } from "node:timers/promises"
import { pathToFileURL } from "node:url"
import { PNG_BASE64, conformancePrompts, conformanceResources } from "./surface.mjs"
import { JSON_SCHEMA_2020_12, SEP1034_DEFAULTS_SCHEMA, SEP1330_ENUMS_SCHEMA, capability, elicitAndReport, noArgs, wavBase64 } from "./fixture-shared.mjs"
import { roundAndTaskTools } from "./tools-rounds.mjs"

export { JSON_SCHEMA_2020_12 }

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
    ...roundAndTaskTools(),
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


export { conformancePrompts, conformanceResources }

/**
 * The skills extension's fixture (SEP-2640): one skill with a file in a subfolder, so that
 * `resources/directory/read` of its folder shows a folder (`inode/directory`).
 */
function conformanceSkills() {
  return [
    defineSkill({
      files: {
        "SKILL.md": "---\nname: pdf-processing\ndescription: Extract text and fill forms in PDF files\nlicense: MIT\n---\n# PDF processing\n\nSee references/FORMS.md.\n",
        "references/FORMS.md": "# Forms\n\nFill each field.\n",
      },
    }),
  ]
}

/**
 * Serves the conformance tools, resources and prompts on 127.0.0.1 (ephemeral port); `url` is
 * the MCP endpoint.
 */
export async function startFixtureServer() {
  const toolkit = await createToolkit({
    extraTools: conformanceTools(),
    extraResources: conformanceResources(),
    extraPrompts: conformancePrompts(),
    skills: conformanceSkills(),
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
