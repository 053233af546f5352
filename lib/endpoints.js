// @ts-check
// `serve(addr, { endpoints })`: other audiences on the same listener, each at /mcp/<name>, a
// named subset of the toolkit's tools (by server, by tool name or glob) with its own auth,
// hooks and limits.
"use strict"

const { ORIGIN } = require("./curation.js")

/** @typedef {import("../index").Tool} Tool */
/** @typedef {{ name: string, pick: (tools: Tool[]) => Tool[], servers?: string[], auth?: unknown, hooks?: unknown, limits?: unknown }} Endpoint */

const FIELDS = ["servers", "tools", "auth", "hooks", "limits"]
const NAME = /^[A-Za-z0-9_.-]{1,64}$/

/** A glob (`*` any run of characters, `?` one, as the engine's) as a whole-name matcher. @param {string} glob */
function globMatcher(glob) {
  const pattern = [...glob].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("")
  const re = new RegExp(`^${pattern}$`)
  return (/** @type {string} */ name) => re.test(name)
}

/**
 * `endpoints` checked (an empty list when absent); `servers` are the config's server names
 * (undefined: not known yet, not checked).
 * @param {unknown} value
 * @param {string[] | undefined} servers
 * @returns {Endpoint[]}
 */
function endpointsOption(value, servers) {
  if (value === undefined || value === null) return []
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError("toolnexus: endpoints must be an object of endpoints by name ({ readers: { tools: [...] } })")
  }
  return Object.entries(value).map(([name, spec]) => {
    const at = `endpoints.${name}`
    if (!NAME.test(name)) throw new TypeError(`toolnexus: ${at}: an endpoint's name is its path (/mcp/<name>): 1 to 64 letters, digits, "_", "-" or "."`)
    if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new TypeError(`toolnexus: ${at} must be an object (${FIELDS.join(", ")})`)
    const s = /** @type {Record<string, unknown>} */ (spec)
    for (const key of Object.keys(s)) {
      if (!FIELDS.includes(key)) throw new TypeError(`toolnexus: ${at}.${key} is not an endpoint's setting (they are ${FIELDS.join(", ")})`)
    }
    for (const key of ["servers", "tools"]) {
      const list = s[key]
      if (list !== undefined && (!Array.isArray(list) || list.some((n) => typeof n !== "string" || n === ""))) {
        throw new TypeError(`toolnexus: ${at}.${key} must be an array of names`)
      }
    }
    const onServers = /** @type {string[] | undefined} */ (s.servers)
    for (const server of onServers ?? []) {
      if (servers !== undefined && !servers.includes(server)) throw new TypeError(`toolnexus: ${at}.servers: the config has no server "${server}"`)
    }
    const globs = /** @type {string[] | undefined} */ (s.tools)?.map(globMatcher)
    /** @param {Tool[]} tools */
    const pick = (tools) =>
      tools.filter((tool) => {
        const origin = /** @type {any} */ (tool)[ORIGIN]
        if (onServers !== undefined && !(origin && onServers.includes(origin.server))) return false
        return globs === undefined || globs.some((matches) => matches(tool.name))
      })
    return { name, pick, servers: onServers, auth: s.auth, hooks: s.hooks, limits: s.limits }
  })
}

module.exports = { endpointsOption }
