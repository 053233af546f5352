// The live inventory behind `list` and `diff`: one `listMcpTools` call per server, all
// concurrent, so each server can be reported as it settles; merged back into exactly the shape
// `listMcpTools` returns for the whole config (keys in config order).
import { createRequire } from "node:module"
import * as toolnexus from "toolnexus"

/** The kinds listed beside tools, as the inventory keys them. */
export const SURFACE_KINDS = ["resources", "resourceTemplates", "prompts", "skills"]

/** The package's exports, whether it resolves as CommonJS (exports under `default`) or ESM. */
export const tn = { ...(toolnexus.default ?? {}), ...toolnexus }

const require = createRequire(import.meta.url)

/**
 * A loadMcp tool's server and its name there (what a config's `tools` map names, before the
 * library prefixed and made it safe), from its native handle; undefined when it has none.
 * @param {object} tool
 * @returns {{ server: string, tool: string } | undefined}
 */
export function toolOrigin(tool) {
  const { MCP_TOOL_REF } = require("../../lib/source.js")
  const ref = /** @type {any} */ (tool)[MCP_TOOL_REF]
  if (ref === undefined) return undefined
  const peer = require("../../binding.js").mcpToolPeer(ref)
  return { server: peer.server, tool: peer.tool }
}

/** A config (or snapshot) problem: exit status 2. */
export class UsageError extends Error {}

/** Arguments a command could not make sense of: exit status 2, with the command's usage. */
export class ArgumentError extends UsageError {}

export const messageOf = (err) => (err instanceof Error ? err.message : String(err))

/** Parses and normalises `<config>`; a malformed or unreadable file is a `UsageError` (exit 2). */
export function readConfig(config) {
  try {
    return tn.parseMcpConfig(config)
  } catch (err) {
    throw new UsageError(messageOf(err))
  }
}

/**
 * Lists every server of the normalised map `servers`. `deadline` (ms) bounds the whole run: a
 * server still pending then fails with the library's deadline message while the others keep their
 * results. `onSettle(name, { status, tools?, resources?, resourceTemplates?, prompts?, error?,
 * info?, ms })` fires as each server settles.
 * Aborting `signal` rejects with its reason (every connection torn down by the library).
 */
export async function liveInventory(servers, { deadline, signal, onSettle } = {}) {
  const names = Object.keys(servers)
  const opts = {}
  if (signal) opts.signal = signal
  if (deadline !== undefined) opts.deadline = deadline
  const results = await Promise.all(
    names.map(async (name) => {
      const started = performance.now()
      let result
      try {
        // Always wrapped, so a server named like a wrapper key ("mcp", "servers") stays a server.
        const inv = await tn.listMcpTools({ mcpServers: { [name]: servers[name] } }, opts)
        const status = inv.status[name] ?? "failed"
        result = { status }
        if (status === "connected") {
          result.tools = inv.tools[name] ?? []
          for (const kind of SURFACE_KINDS) result[kind] = inv[kind]?.[name] ?? []
        }
        if (inv.info?.[name] !== undefined) result.info = inv.info[name]
        if (status === "failed") result.error = inv.errors[name] ?? "unknown failure"
      } catch (err) {
        if (signal?.aborted) throw err
        result = { status: "failed", error: messageOf(err) }
      }
      result.ms = Math.round(performance.now() - started)
      onSettle?.(name, result)
      return [name, result]
    }),
  )
  const inventory = { tools: {}, resources: {}, resourceTemplates: {}, prompts: {}, skills: {}, status: {}, errors: {}, info: {} }
  for (const [name, result] of results) {
    inventory.status[name] = result.status
    if (result.tools) inventory.tools[name] = result.tools
    for (const kind of SURFACE_KINDS) if (result[kind]) inventory[kind][name] = result[kind]
    if (result.error !== undefined) inventory.errors[name] = result.error
    if (result.info !== undefined) inventory.info[name] = result.info
  }
  return { inventory, results: new Map(results) }
}

/** Turns SIGINT/SIGTERM into an abort of the returned signal (for commands that only list). */
export function interruptSignal() {
  const controller = new AbortController()
  const onSignal = (sig) => {
    if (controller.signal.aborted) process.exit(sig === "SIGINT" ? 130 : 143)
    controller.abort(Object.assign(new Error(`interrupted by ${sig}`), { signalName: sig }))
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  return controller.signal
}
