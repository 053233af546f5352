// @ts-check
// Tool search for big catalogs: `source.searchTools` / `toolkit.searchTools` rank a tool list
// in Rust (binding.ToolIndex over crate::search), one index per version of the list; and a
// toolkit's `toolSearch` option, which serves `search_tools` and `call_tool` instead of the
// catalog (served in Rust: crates/engine/src/serve/search.rs).
"use strict"

const binding = require("../binding.js")

/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../index").ToolMatch} ToolMatch */
/** @typedef {import("../index").SearchToolsOptions} SearchToolsOptions */

/** The most matches one search answers. */
const MAX_LIMIT = 1000
const DEFAULT_LIMIT = 5

/**
 * @param {unknown} query
 * @param {unknown} opts
 * @returns {{ limit: number, servers: string[] | undefined }}
 */
function searchOptions(query, opts) {
  if (typeof query !== "string") throw new TypeError(`toolnexus: searchTools needs a query (a string), got ${query === null ? "null" : typeof query}`)
  if (opts === undefined || opts === null) return { limit: DEFAULT_LIMIT, servers: undefined }
  if (typeof opts !== "object") throw new TypeError(`toolnexus: searchTools options must be an object, got ${typeof opts}`)
  const { limit = DEFAULT_LIMIT, servers } = /** @type {any} */ (opts)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new TypeError(`toolnexus: searchTools limit must be a whole number from 1 to ${MAX_LIMIT}, got ${String(limit)}`)
  }
  if (servers !== undefined && (!Array.isArray(servers) || !servers.every((s) => typeof s === "string"))) {
    throw new TypeError("toolnexus: searchTools servers must be an array of server names")
  }
  return { limit, servers }
}

/**
 * `searchTools(query, opts)` over the tool list `current()` gives, indexed again only when that
 * list is a new array (its owner replaces it when its tools change).
 * @param {() => Tool[]} current
 * @param {string} refKey  where a loadMcp tool keeps its native handle
 * @returns {(query: string, opts?: SearchToolsOptions) => ToolMatch[]}
 */
function searcher(current, refKey) {
  /** @type {Tool[] | undefined} */
  let indexed
  /** @type {import("../binding").ToolIndex | undefined} */
  let index
  return (query, opts) => {
    const { limit, servers } = searchOptions(query, opts)
    const tools = current()
    if (index === undefined || tools !== indexed) {
      // A curated tool is indexed as curated (its own description and schema), not as listed.
      const { CURATION } = require("./curation.js")
      index = new binding.ToolIndex(
        tools.map((tool) => {
          const ref = /** @type {any} */ (tool)[refKey]
          if (ref !== undefined && !(/** @type {any} */ (tool)[CURATION])) return { name: tool.name, mcp: ref }
          const t = /** @type {any} */ (tool)
          return { name: tool.name, description: tool.description, title: typeof t.title === "string" ? t.title : undefined, inputSchema: tool.inputSchema }
        }),
      )
      indexed = tools
    }
    return index.search(query, limit, servers).map(({ index: i, server, score }) => {
      const tool = tools[i]
      /** @type {ToolMatch} */
      const match = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema, score }
      if (server != null) match.server = server
      return match
    })
  }
}

/**
 * `createToolkit({ toolSearch })`, checked: what the native service takes, or undefined.
 * @param {unknown} value
 * @returns {{ limit: number, always: string[] } | undefined}
 */
function toolSearchOption(value) {
  if (value === undefined || value === null || value === false) return undefined
  if (value === true) return { limit: DEFAULT_LIMIT, always: [] }
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`toolnexus: toolSearch must be true or { limit?, always? }, got ${Array.isArray(value) ? "an array" : typeof value}`)
  }
  const { limit = DEFAULT_LIMIT, always = [], ...rest } = /** @type {any} */ (value)
  const unknown = Object.keys(rest)
  if (unknown.length > 0) throw new TypeError(`toolnexus: toolSearch has no option ${JSON.stringify(unknown[0])} (it takes limit and always)`)
  if (!Number.isInteger(limit) || limit < 1 || limit > 50) {
    throw new TypeError(`toolnexus: toolSearch.limit must be a whole number from 1 to 50, got ${String(limit)}`)
  }
  if (!Array.isArray(always) || !always.every((n) => typeof n === "string")) {
    throw new TypeError("toolnexus: toolSearch.always must be an array of tool names")
  }
  return { limit, always }
}

module.exports = { searcher, toolSearchOption }
