// @ts-check
// Curation of a toolkit's tools (`createToolkit({ curation })`, `toolnexus serve --tools-config`):
// per server a name prefix (or none); per tool a new name, title or description, hidden, or
// arguments preset (gone from the schema, set on every call) and defaulted (filled in when
// absent). Checked when the toolkit starts (a mistake throws, in words); applied again, with
// warnings instead, whenever the tool set changes.
"use strict"

const binding = require("../binding.js")
const { MCP_TOOL_REF } = require("./source.js")

/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../index").ToolCuration} ToolCuration */
/** @typedef {{ server: string, tool: string }} Origin */
/** @typedef {{ tools: Map<string, ToolCuration>, prefixes: Map<string, string | false> }} Curation */

/** The key of a curated loadMcp tool's changes, for the native server (not enumerable). */
const CURATION = "__toolnexusCuration"
/** The key of a toolkit's loadMcp tool's server and original name (not enumerable). */
const ORIGIN = "__toolnexusOrigin"
const TOOL_FIELDS = ["rename", "title", "description", "hide", "preset", "defaults"]
/** A tool name as MCP allows it (SEP-986). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/

/** @param {unknown} value */
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `curation` checked and normalised (undefined when absent).
 * @param {unknown} value
 * @param {string} where  its name in messages
 * @returns {Curation | undefined}
 */
function curationOption(value, where) {
  if (value === undefined || value === null) return undefined
  if (!isObject(value)) throw new TypeError(`toolnexus: ${where} must be an object with tools and/or servers`)
  const o = /** @type {Record<string, unknown>} */ (value)
  for (const key of Object.keys(o)) {
    if (key !== "tools" && key !== "servers") throw new TypeError(`toolnexus: ${where}.${key} is not part of a curation (it has tools and servers)`)
  }
  /** @type {Map<string, string | false>} */
  const prefixes = new Map()
  if (o.servers !== undefined) {
    if (!isObject(o.servers)) throw new TypeError(`toolnexus: ${where}.servers must be an object by server name`)
    for (const [server, entry] of Object.entries(/** @type {object} */ (o.servers))) {
      const at = `${where}.servers.${server}`
      if (!isObject(entry) || Object.keys(entry).some((k) => k !== "prefix")) {
        throw new TypeError(`toolnexus: ${at} must be { prefix: "name" } or { prefix: false }`)
      }
      const { prefix } = /** @type {{ prefix?: unknown }} */ (entry)
      if (prefix === false || prefix === "") prefixes.set(server, false)
      else if (typeof prefix === "string" && TOOL_NAME.test(prefix) && prefix.length <= 64) prefixes.set(server, prefix)
      else throw new TypeError(`toolnexus: ${at}.prefix must be false (no prefix) or up to 64 letters, digits, "_", "-" or "."`)
    }
  }
  /** @type {Map<string, ToolCuration>} */
  const tools = new Map()
  if (o.tools !== undefined) {
    if (!isObject(o.tools)) throw new TypeError(`toolnexus: ${where}.tools must be an object by tool name`)
    for (const [name, entry] of Object.entries(/** @type {object} */ (o.tools))) {
      tools.set(name, toolEntry(entry, `${where}.tools.${name}`))
    }
  }
  return { tools, prefixes }
}

/**
 * One tool's curation, checked.
 * @param {unknown} entry
 * @param {string} at
 * @returns {ToolCuration}
 */
function toolEntry(entry, at) {
  if (!isObject(entry)) throw new TypeError(`toolnexus: ${at} must be an object (${TOOL_FIELDS.join(", ")})`)
  const e = /** @type {Record<string, unknown>} */ (entry)
  for (const key of Object.keys(e)) {
    if (!TOOL_FIELDS.includes(key)) throw new TypeError(`toolnexus: ${at}.${key} is not a curation of a tool (they are ${TOOL_FIELDS.join(", ")})`)
  }
  if (e.rename !== undefined && (typeof e.rename !== "string" || !TOOL_NAME.test(e.rename))) {
    throw new TypeError(`toolnexus: ${at}.rename must be a tool name: 1 to 128 letters, digits, "_", "-" or "."`)
  }
  for (const key of ["title", "description"]) {
    if (e[key] !== undefined && typeof e[key] !== "string") throw new TypeError(`toolnexus: ${at}.${key} must be a string`)
  }
  if (e.hide !== undefined && typeof e.hide !== "boolean") throw new TypeError(`toolnexus: ${at}.hide must be a boolean`)
  for (const key of ["preset", "defaults"]) {
    if (e[key] !== undefined && !isObject(e[key])) throw new TypeError(`toolnexus: ${at}.${key} must be an object of arguments`)
  }
  const both = Object.keys(/** @type {object} */ (e.preset ?? {})).find((k) => Object.hasOwn(/** @type {object} */ (e.defaults ?? {}), k))
  if (both !== undefined) throw new TypeError(`toolnexus: ${at}: "${both}" is both preset and defaulted`)
  return /** @type {ToolCuration} */ (e)
}

/**
 * `tools` (the toolkit's, named) as curated: renamed, re-described, hidden, their arguments
 * preset and defaulted. Each problem (a name no tool has, a preset that does not fit its tool's
 * schema, two tools under one name) is one line of `problems`; the caller throws them at start
 * and warns of them later.
 * @param {Tool[]} tools
 * @param {(tool: Tool) => Origin | null} originOf  the server and name a loadMcp tool came from
 * @param {Curation} curation
 * @param {string[]} unconnected  servers of the config that are not connected
 */
function curate(tools, originOf, curation, unconnected) {
  /** @type {string[]} */
  const problems = []
  const known = new Set(tools.map((t) => t.name))
  for (const name of curation.tools.keys()) {
    if (known.has(name)) continue
    // A tool of a server that did not connect cannot be checked yet.
    if (unconnected.some((server) => name.startsWith(`${server}_`))) continue
    problems.push(`curation: no tool is named "${name}" (tools are named as toolnexus list shows them, before any rename)`)
  }
  /** @type {Tool[]} */
  const out = []
  /** @type {Map<string, string>} */
  const servedAs = new Map()
  for (const tool of tools) {
    const entry = curation.tools.get(tool.name)
    const origin = originOf(tool)
    const prefix = origin ? curation.prefixes.get(origin.server) : undefined
    if (entry?.hide) continue
    let name = tool.name
    if (entry?.rename !== undefined) name = entry.rename
    else if (origin && prefix !== undefined) name = prefix === false ? origin.tool : `${prefix}_${origin.tool}`
    const clash = servedAs.get(name)
    if (clash !== undefined) {
      problems.push(`curation: "${tool.name}" and "${clash}" would both be named "${name}"`)
      continue
    }
    servedAs.set(name, tool.name)
    if (!entry && name === tool.name) {
      out.push(tool)
      continue
    }
    const curated = curatedTool(tool, name, entry ?? {}, problems)
    if (curated) out.push(curated)
  }
  return { tools: out, problems }
}

/**
 * A copy of `tool` as `name`, with `entry`'s changes; undefined (and a problem) when its preset
 * or defaults do not fit its schema.
 * @param {Tool} tool
 * @param {string} name
 * @param {ToolCuration} entry
 * @param {string[]} problems
 */
function curatedTool(tool, name, entry, problems) {
  const schema = tool.inputSchema ?? { type: "object", properties: {} }
  for (const key of /** @type {const} */ (["preset", "defaults"])) {
    const values = entry[key]
    if (values === undefined) continue
    const problem = binding.checkToolValues(schema, values)
    if (problem !== null && problem !== undefined) {
      problems.push(`curation: the ${key} of tool "${tool.name}" does not fit its schema: ${problem}`)
      return undefined
    }
  }
  const preset = entry.preset ?? {}
  const defaults = entry.defaults ?? {}
  const changesArguments = Object.keys(preset).length + Object.keys(defaults).length > 0
  /** @type {any} */
  const curated = { ...tool, name }
  if (entry.title !== undefined) curated.title = entry.title
  if (entry.description !== undefined) curated.description = entry.description
  if (changesArguments) {
    curated.inputSchema = advertisedSchema(schema, preset, defaults)
    curated.execute = (/** @type {Record<string, unknown>} */ args, /** @type {any} */ ctx) => {
      /** @type {Record<string, unknown>} */
      const merged = { ...args }
      for (const [k, v] of Object.entries(defaults)) if (!Object.hasOwn(merged, k)) merged[k] = v
      Object.assign(merged, preset)
      return tool.execute(merged, ctx)
    }
  }
  const origin = /** @type {any} */ (tool)[ORIGIN]
  if (origin) Object.defineProperty(curated, ORIGIN, { value: origin, configurable: true, writable: true })
  const ref = /** @type {any} */ (tool)[MCP_TOOL_REF]
  if (ref) {
    // A loadMcp tool is relayed natively: the native server applies the same changes.
    Object.defineProperty(curated, MCP_TOOL_REF, { value: ref })
    Object.defineProperty(curated, CURATION, {
      value: { title: entry.title, description: entry.description, preset: entry.preset, defaults: entry.defaults },
    })
  }
  return /** @type {Tool} */ (curated)
}

/**
 * The schema a curated tool is listed with (as the engine lists a relayed one, keeping the
 * order of its properties): the preset arguments gone, the defaulted ones given their `default`
 * and no longer required.
 * @param {import("../index").JSONSchema} schema
 * @param {Record<string, unknown>} preset
 * @param {Record<string, unknown>} defaults
 */
function advertisedSchema(schema, preset, defaults) {
  /** @type {Record<string, any>} */
  const out = { ...schema }
  if (isObject(schema.properties)) {
    /** @type {Record<string, unknown>} */
    const properties = {}
    for (const [name, property] of Object.entries(/** @type {object} */ (schema.properties))) {
      if (Object.hasOwn(preset, name)) continue
      properties[name] = Object.hasOwn(defaults, name) && isObject(property) ? { ...property, default: defaults[name] } : property
    }
    out.properties = properties
  }
  if (Array.isArray(schema.required)) {
    const required = schema.required.filter((name) => !Object.hasOwn(preset, name) && !Object.hasOwn(defaults, name))
    if (required.length > 0) out.required = required
    else delete out.required
  }
  return out
}

module.exports = { CURATION, ORIGIN, curate, curationOption }
