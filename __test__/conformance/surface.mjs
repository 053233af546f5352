// The conformance fixture's resources, resource template and prompts (server.mjs serves them
// with its tools): each one a server scenario reads or gets, named and answering as the suite's
// scenario descriptions ask (resources-*, prompts-*, completion-complete, caching and
// input-required-result-non-tool-request).
import { definePrompt, defineResource, defineResourceTemplate } from "toolnexus"

// A 1x1 red PNG.
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

export function conformanceResources() {
  return [
    defineResource({
      uri: "test://static-text",
      name: "static-text",
      description: "A static text resource",
      mimeType: "text/plain",
      read: () => "This is the content of the static text resource.",
    }),
    defineResource({
      uri: "test://static-binary",
      name: "static-binary",
      description: "A static binary resource (a 1x1 PNG)",
      mimeType: "image/png",
      read: () => ({ blob: Buffer.from(PNG_BASE64, "base64") }),
    }),
    // resources-subscribe / -unsubscribe subscribe to it; nothing changes it.
    defineResource({
      uri: "test://watched-resource",
      name: "watched-resource",
      description: "A resource clients subscribe to",
      mimeType: "text/plain",
      read: () => "Watched resource content.",
    }),
    defineResourceTemplate({
      uriTemplate: "test://template/{id}/data",
      name: "template-data",
      description: "Data for an id",
      mimeType: "application/json",
      read: (_uri, { id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
    }),
  ]
}

const WORDS = ["paris", "park", "party"]

export function conformancePrompts() {
  return [
    definePrompt({
      name: "test_simple_prompt",
      description: "A prompt without arguments",
      get: () => "This is a simple prompt for testing.",
    }),
    definePrompt({
      name: "test_prompt_with_arguments",
      description: "A prompt with two required arguments",
      arguments: [
        { name: "arg1", description: "First test argument", required: true },
        { name: "arg2", description: "Second test argument", required: true },
      ],
      get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
      complete: { arg1: (value) => WORDS.filter((w) => w.startsWith(value)) },
    }),
    definePrompt({
      name: "test_prompt_with_embedded_resource",
      description: "A prompt that embeds a resource",
      arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
      get: ({ resourceUri }) => ({
        messages: [
          {
            role: "user",
            content: {
              type: "resource",
              resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
            },
          },
          { role: "user", content: "Please process the embedded resource above." },
        ],
      }),
    }),
    definePrompt({
      name: "test_prompt_with_image",
      description: "A prompt with an image",
      get: () => ({
        messages: [
          { role: "user", content: { type: "image", data: PNG_BASE64, mimeType: "image/png" } },
          { role: "user", content: "Please analyze the image above." },
        ],
      }),
    }),
    // 2026-07-28: asks for input as an input-required result, then answers with what it got.
    definePrompt({
      name: "test_input_required_result_prompt",
      description: "A prompt that asks the user for context first",
      async get(_args, ctx) {
        const answer = await ctx.elicit(
          {
            message: "What context should the prompt use?",
            requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] },
          },
          { key: "user_context" },
        )
        return `Use this context: ${answer.content?.context ?? "none"}`
      },
    }),
  ]
}
