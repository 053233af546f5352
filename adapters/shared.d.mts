import type { JSONSchema, McpSource, Tool, Toolkit } from "../index.js"

/** What the adapters accept: a live source from `loadMcp`, a toolkit, or an array of tools. */
export type ToolsInput = McpSource | Toolkit | Tool[]

/** Options shared by the adapters. */
export interface AdapterOptions {
  /**
   * Send each schema rewritten for OpenAI's strict mode (`toStrictSchema`) and mark the tool
   * strict; `null`s the model gives for optional properties are removed before the call.
   * Default `false`: schemas go as the server gave them.
   */
  strict?: boolean
  /**
   * Offer the `load_skill` tool too (`loadSkillTool` from "toolnexus"): the model loads a skill of
   * the source's servers (or the toolkit's) by name. Needs an McpSource or a Toolkit.
   */
  loadSkill?: boolean
}

/**
 * `schema` rewritten for OpenAI's strict mode: `type: "object"` at the root, every property
 * required (optional ones also accept `null`), `additionalProperties: false` on every object,
 * keywords strict mode refuses removed (a `default` kept in words in the description), `oneOf`
 * as `anyOf`. The input is not changed.
 */
export declare function toStrictSchema(schema: JSONSchema): JSONSchema
