// `toolnexus serve [<config>] [--addr host:port | --stdio] [--watch] [--tools a,b] [--name n]
// [--tool-search …]`: one MCP gateway over every server of a config, served as streamable HTTP
// (or stdio) until SIGINT/SIGTERM (or the end of stdin).
import fs from "node:fs"
import path from "node:path"
import { configLocations, resolveServers } from "./discover.mjs"
import { messageOf, tn } from "./inventory.mjs"
import { authFromFlags, curationFromFlag, hooksFromFlag, stateKeyFromFlags, toolSearchFromFlags } from "./serve-flags.mjs"
import { MARK } from "./term.mjs"

export { SERVE_HELP } from "./serve-help.mjs"

const log = (line) => process.stderr.write(`${line}\n`)

function reportStatuses(toolkit) {
  const statuses = Object.entries(toolkit.mcpStatus())
  const errors = toolkit.mcpErrors()
  const width = Math.max(0, ...statuses.map(([server]) => server.length))
  for (const [server, status] of statuses) {
    const detail = status === "failed" ? errors[server] ?? status : status
    log(`${MARK[status] ?? "?"} ${server.padEnd(width)}  ${detail}`)
  }
}

/**
 * Calls `onChange` (debounced) when any of `files` changes, is created or removed. Watches
 * their folders, since editors replace a file rather than write it in place.
 */
function watchFiles(files, onChange) {
  const names = new Map()
  for (const file of files) {
    const dir = path.dirname(path.resolve(file))
    names.set(dir, [...(names.get(dir) ?? []), path.basename(file)])
  }
  let timer
  const watchers = []
  for (const [dir, basenames] of names) {
    try {
      watchers.push(
        fs.watch(dir, (_event, name) => {
          if (name !== null && !basenames.includes(String(name))) return
          clearTimeout(timer)
          timer = setTimeout(onChange, 150)
        }),
      )
    } catch (err) {
      log(`toolnexus: --watch: cannot watch ${dir}: ${messageOf(err)}`)
    }
  }
  return () => {
    clearTimeout(timer)
    for (const w of watchers) w.close()
  }
}

export async function serve({ positionals, values }) {
  const [config] = positionals
  // Auth and search flags first: a usage error is exit 2 before anything starts.
  const { auth, accessLog } = authFromFlags(values)
  const { stateKey, replicaUrl, stateStore } = stateKeyFromFlags(values)
  const toolSearch = toolSearchFromFlags(values)
  const hooks = await hooksFromFlag(values.hooks)
  const { curation, endpoints, limits, resultLimits } = curationFromFlag(values["tools-config"])
  const addr = values.addr ?? "127.0.0.1:8808"
  const list = (value) => (value === undefined ? undefined : value.split(",").map((s) => s.trim()).filter(Boolean))
  const only = list(values.tools)
  // A malformed config is exit 2, before anything starts.
  const resolved = resolveServers(config)
  // Without <config>, every place a client keeps its config is watched (whose folder exists),
  // so a config created later is read too.
  const watched = config !== undefined ? [config] : [...new Set(configLocations().map((l) => l.file))].filter((f) => fs.existsSync(path.dirname(f)))
  const mcpConfigOf = (r) => (config !== undefined ? config : { mcpServers: r.servers })
  if (typeof tn.createToolkit !== "function") {
    log("toolnexus: this build of toolnexus has no createToolkit, so it cannot serve")
    return 1
  }

  // A signal at any point ends the command cleanly: during start-up it aborts the connections,
  // once serving it stops the listener and closes every server.
  const controller = new AbortController()
  let stopping = null
  let shutdown = null
  const onSignal = (sig) => {
    if (stopping) {
      log(`toolnexus: ${sig} again, exiting now`)
      process.exit(1)
    }
    stopping = sig
    controller.abort(new Error(`interrupted by ${sig}`))
    shutdown?.()
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)

  let toolkit
  try {
    const skills = values.skills === undefined ? undefined : path.resolve(values.skills)
    toolkit = await tn.createToolkit({ mcpConfig: mcpConfigOf(resolved), builtins: false, signal: controller.signal, toolSearch, skills, hooks, curation, resultLimits })
  } catch (err) {
    if (stopping) return 0
    const message = messageOf(err)
    // A refused skill names itself; anything else is the config's.
    const own = message.startsWith("toolnexus: skills: ") || message.startsWith("toolnexus: curation")
    log(own ? message.replace(/^toolnexus: curation/, "toolnexus: --tools-config") : `toolnexus: cannot load ${config ?? "the client configs"}: ${message}`)
    return 1
  }

  const mcp = {}
  if (only !== undefined) mcp.tools = only
  if (values.name !== undefined) mcp.name = values.name
  // A line per call costs throughput under load, and off a terminal (a container, a service)
  // nobody reads it unless asked: --log-calls.
  const onCall =
    values["log-calls"] === true || process.stderr.isTTY
      ? ({ name, ms, isError }) => log(`${isError ? MARK.failed : MARK.connected} ${name}  ${Math.round(ms)} ms`)
      : undefined

  let handle
  let serving
  try {
    reportStatuses(toolkit)
    const all = toolkit.tools().map((t) => t.name)
    for (const name of only ?? []) {
      if (!all.includes(name)) log(`toolnexus: --tools: no tool named "${name}" (ignored)`)
    }
    const exposed = only === undefined ? all : all.filter((name) => only.includes(name))
    if (toolSearch !== undefined) {
      const always = toolSearch === true ? [] : toolSearch.always ?? []
      for (const name of always) {
        if (!exposed.includes(name)) log(`toolnexus: --tool-search-always: no tool named "${name}" (ignored)`)
      }
      const kept = always.filter((name) => exposed.includes(name))
      log(`toolnexus: --tool-search: tools/list shows search_tools and call_tool${kept.length > 0 ? ` and ${kept.join(", ")}` : ""}; ${exposed.length} tools searched`)
    }
    if (values.stdio && (endpoints !== undefined || limits !== undefined)) {
      log("toolnexus: --tools-config: its limits and endpoints apply over HTTP only (ignored with --stdio)")
    }
    if (!stopping && values.stdio) {
      serving = toolkit.serveStdio({ mcp, onCall })
      log(`toolnexus: serving ${exposed.length} tools over stdio`)
    } else if (!stopping) {
      handle = await toolkit.serve(addr, {
        mcp,
        stateless: values.stateless === true,
        allowedHosts: list(values["allowed-hosts"]),
        allowedOrigins: list(values["allowed-origins"]),
        sessionIdleTimeout: values["session-idle-timeout"],
        maxSessions: values["max-sessions"],
        auth,
        accessLog,
        stateKey,
        replicaUrl,
        stateStore,
        metrics: values.metrics === true ? true : undefined,
        onCall,
        endpoints,
        limits,
      })
      const lines = [`toolnexus: serving ${exposed.length} tools at ${handle.url}/mcp`]
      for (const [name, at] of Object.entries(handle.endpoints ?? {})) lines.push(`toolnexus: endpoint ${name} at ${at}`)
      if (!stopping) process.stdout.write(`${lines.join("\n")}\n`)
    }
  } catch (err) {
    log(`toolnexus: cannot serve at ${addr}: ${messageOf(err)}`)
    await toolkit.close()
    return 1
  }

  // --watch: one reload at a time; a change during a reload is read once that one ends.
  let unwatch = () => {}
  let reloading = Promise.resolve()
  if (values.watch && !stopping) {
    let again = false
    let busy = false
    const reload = async () => {
      if (busy) {
        again = true
        return
      }
      busy = true
      try {
        do {
          again = false
          const next = config !== undefined ? config : mcpConfigOf(resolveServers(undefined))
          const { added, removed, restarted } = await toolkit.reload(next)
          if (added.length + removed.length + restarted.length === 0) continue
          const said = [["added", added], ["removed", removed], ["restarted", restarted]].filter(([, names]) => names.length > 0)
          log(`toolnexus: config changed: ${said.map(([what, names]) => `${what} ${names.join(", ")}`).join("; ")}`)
          reportStatuses(toolkit)
        } while (again && !stopping)
      } catch (err) {
        log(`toolnexus: config not reloaded: ${messageOf(err)}`)
      } finally {
        busy = false
      }
    }
    unwatch = watchFiles(watched, () => {
      if (!stopping) reloading = reload()
    })
    log(`toolnexus: watching ${config ?? `the client configs (${resolved.files.map((f) => f.file).join(", ")})`}`)
  }

  if (!stopping) {
    await new Promise((resolve) => {
      shutdown = resolve
      serving?.then(resolve, (err) => {
        log(`toolnexus: ${messageOf(err)}`)
        resolve()
      })
    })
  }
  unwatch()
  log(stopping ? `toolnexus: ${stopping}, stopping` : "toolnexus: end of input, stopping")
  try {
    await reloading
    await handle?.stop()
  } finally {
    await toolkit.close()
    // What the engine queued for an OpenTelemetry collector goes before the process does.
    await tn.flushTelemetry?.()
  }
  return 0
}
