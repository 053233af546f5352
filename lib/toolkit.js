// @ts-check
// createToolkit: one loadMcp source per server, so `reload` can start, close or restart servers
// one at a time while the others keep running; every served endpoint follows.
"use strict"

const binding = require("../binding.js")
const { errorResult, guardCallback } = require("./results.js")
const { loadSource, MCP_TOOL_REF, SOURCE_HANDLE } = require("./source.js")
const { serviceFor, servedTools, runContext, emitWarnings } = require("./serve.js")
const { servedSurface, cacheHints, serving } = require("./surface.js")
const { exposedMcpTools } = require("./tools.js")
const { serveOptions } = require("./serve-options.js")
const { searcher, toolSearchOption } = require("./search.js")
const { nativeHooks, nativePolicy, nativeResultLimits } = require("./hooks.js")
const { curate, curationOption, ORIGIN } = require("./curation.js")
const { endpointsOption } = require("./endpoints.js")

/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../index").Toolkit} Toolkit */
/** @typedef {import("../index").ToolkitOptions} ToolkitOptions */
/** @typedef {import("../index").McpSource} McpSource */
/** @typedef {import("../index").McpServerOptions} McpServerOptions */
/** @typedef {{ service: import("../binding").NativeService, cfg: McpServerOptions, cache?: import("../index").CacheHints, handle?: import("../binding").HttpServer, pick?: (tools: Tool[]) => Tool[], servers?: string[], signature?: string }} Served */

/**
 * What a set of tools is listed as (names, descriptions, schemas), to tell whether it changed.
 * @param {Tool[]} tools
 */
const listingSignature = (tools) =>
  JSON.stringify(
    tools.map((tool) => {
      const t = /** @type {any} */ (tool)
      return [t.name, t.description, t.inputSchema, t.title, t.annotations, t.outputSchema, t.execution]
    }),
  )

/**
 * A toolkit: MCP tools from `mcpConfig` first, then `extraTools` (first name wins, with a
 * warning), callable by name and servable over streamable HTTP.
 * @param {ToolkitOptions} [opts]
 * @returns {Promise<Toolkit>}
 */
async function createToolkit(opts) {
  const { mcpConfig, extraTools = [], extraResources, extraPrompts } = opts ?? {}
  const { signal, waitFor, onToolsChanged, authorize, tokenStore, builtins } = opts ?? {}
  if (!Array.isArray(extraTools)) throw new TypeError("toolnexus: extraTools must be an array")
  // Served searched instead of listed (search_tools and call_tool), when asked.
  const search = toolSearchOption(opts?.toolSearch)
  // Skills served beside the tools (a folder, or defineSkill's), checked once, here.
  const skillsLib = require("./skills.js")
  const skills = skillsLib.nativeSkills(opts?.skills, "skills")
  // Renames, descriptions, hidden tools, preset and default arguments (checked once the
  // servers are connected).
  const curation = curationOption(opts?.curation, "curation")
  // Policy hooks of every endpoint (one may set its own: serve's mcp.hooks), checked once.
  const hooks = nativeHooks(opts?.hooks, "hooks")
  // Results larger than these are cut, with a marker (an endpoint may set its own).
  const resultLimits = nativeResultLimits(opts?.resultLimits, "resultLimits")
  if (opts?.loadSkillTool !== undefined && typeof opts.loadSkillTool !== "boolean") {
    throw new TypeError("toolnexus: loadSkillTool must be a boolean")
  }
  // The toolkit's own resources, templates and prompts, served after its servers' ones.
  const own = servedSurface(extraResources, extraPrompts, runContext, ["extraResources", "extraPrompts"])
  if (onToolsChanged !== undefined && typeof onToolsChanged !== "function") {
    throw new TypeError("toolnexus: onToolsChanged must be a function")
  }
  // `builtins?: false` (index.d.ts): toolnexus has no built-in tools to turn on.
  if (builtins !== undefined && builtins !== false) {
    throw new TypeError("toolnexus: builtins can only be false (toolnexus has no built-in tools)")
  }
  /** @type {Record<string, unknown>} */
  let specs = mcpConfig === undefined || mcpConfig === null ? {} : binding.parseMcpConfig(mcpConfig)
  /** @type {Map<string, McpSource>} */
  const sources = new Map()
  /** @type {Promise<void> | undefined} */
  let closed
  /** @type {Tool[]} */
  let tools = []
  /** @type {Map<string, Tool>} */
  let byName = new Map()
  /** @type {Set<Served>} */
  const services = new Set()

  // The servers' tools are named across all sources, as one loadMcp of the config names them,
  // and keep their names while other servers restart or re-list (docs/loading.md).
  const namer = new binding.ToolkitNamer()
  // Every skill the toolkit's servers list, then its own.
  const allSkills = () => [...[...sources.values()].flatMap((source) => source.skills), ...skillsLib.ownSkills(skills)]
  // `load_skill`, when asked for: a model loads any of them by name.
  const skillTool = opts?.loadSkillTool ? skillsLib.loadSkillTool(allSkills) : undefined
  /**
   * @param {boolean} warn
   * @param {boolean} [strict]  a curation problem throws (at start) instead of being warned of
   */
  const rebuild = (warn, strict = false) => {
    const mcpTools = [...sources.values()].flatMap((source) => source.tools)
    const { names, origins, warnings } = namer.name(mcpTools.map((tool) => /** @type {any} */ (tool)[MCP_TOOL_REF]))
    /** @type {Map<Tool, { server: string, tool: string }>} */
    const originOf = new Map()
    mcpTools.forEach((tool, i) => {
      const name = names[i]
      if (name !== null && name !== undefined) tool.name = name
      const origin = origins[i]
      if (origin) {
        originOf.set(tool, origin)
        Object.defineProperty(tool, ORIGIN, { value: origin, configurable: true, writable: true })
      }
    })
    if (warn) for (const warning of warnings) process.emitWarning(warning, "ToolnexusWarning")
    let all = [...mcpTools, ...extraTools, ...(skillTool ? [skillTool] : [])]
    if (curation) {
      const statuses = Object.assign({}, ...[...sources.values()].map((source) => source.status))
      const unconnected = Object.keys(specs).filter((name) => statuses[name] !== "connected")
      const curated = curate(all, (tool) => originOf.get(tool) ?? null, curation, unconnected)
      if (strict && curated.problems.length > 0) throw new Error(`toolnexus: ${curated.problems.join("; ")}`)
      if (warn) for (const problem of curated.problems) process.emitWarning(`toolnexus: ${problem}`, "ToolnexusWarning")
      all = curated.tools
    }
    tools = []
    byName = new Map()
    const firsts = binding.firstOfName(all.map((tool) => tool.name))
    for (const [i, tool] of all.entries()) {
      if (!firsts[i]) {
        if (warn) {
          process.emitWarning(
            `toolnexus: duplicate tool name "${tool.name}" (source ${tool.source}); keeping the first`,
            "ToolnexusWarning",
          )
        }
        continue
      }
      byName.set(tool.name, tool)
      tools.push(tool)
    }
  }
  // A served endpoint's resources, templates and prompts: its servers' (relayed in Rust, in
  // config order) and the toolkit's own; its clients hear of the kinds that changed.
  /** @param {Served} served */
  const setSurface = ({ service, cache, servers }) => {
    const upstreams = [...sources.entries()]
      .filter(([name]) => servers === undefined || servers.includes(name))
      .map(([, source]) => /** @type {any} */ (source)[SOURCE_HANDLE].upstream())
    emitWarnings(service.setSurface(own, upstreams, cache).warnings)
  }
  // Served endpoints and the app hear of every change to the tool set.
  const announce = () => {
    for (const served of services) {
      const exposed = exposedOf(served)
      // An audience's endpoint hears of a change only when its own subset changed; it serves
      // the new tools either way (a restarted server's tools call its new session).
      let quiet = false
      if (served.pick) {
        const signature = listingSignature(exposed)
        quiet = signature === served.signature
        served.signature = signature
      }
      served.service.setTools(servedTools(exposed), quiet)
      setSurface(served)
    }
    if (onToolsChanged) guardCallback(onToolsChanged, "onToolsChanged")(tools.slice())
  }
  /** @param {McpSource} source */
  const following = (source) => () => {
    if (closed || ![...sources.values()].includes(source)) return
    rebuild(true)
    announce()
  }
  /** @param {McpSource} source */
  const followingSurface = (source) => () => {
    if (closed || ![...sources.values()].includes(source)) return
    for (const served of services) setSurface(served)
  }
  /**
   * Each server alone; the sources come back in config order whatever order they finish in.
   * @param {string[]} names
   * @returns {Promise<Array<[string, McpSource]>>}
   */
  const load = async (names) => {
    const loaded = await Promise.allSettled(
      names.map(async (name) => {
        /** @type {McpSource | undefined} */
        let source
        const onChange = () => source && following(source)()
        const onSurfaceChange = () => source && followingSurface(source)()
        source = await loadSource(
          { mcpServers: { [name]: specs[name] } },
          { signal, waitFor, authorize, tokenStore },
          // Its elicitation and sampling requests go to the gateway's front clients; the
          // toolkit names its tools (and warns of names) across all its sources.
          { onToolsChanged: onChange, onSurfaceChanged: onSurfaceChange, relayInput: true, namedByToolkit: true },
        )
        return source
      }),
    )
    const failure = loaded.find((r) => r.status === "rejected")
    if (failure) {
      await Promise.all(loaded.flatMap((r) => (r.status === "fulfilled" ? [r.value.close()] : [])))
      throw failure.reason
    }
    return names.map((name, i) => [name, /** @type {PromiseFulfilledResult<McpSource>} */ (loaded[i]).value])
  }
  /** @param {Array<[string, McpSource]>} entries */
  const inOrder = (entries) => {
    const all = new Map([...sources, ...entries])
    sources.clear()
    for (const name of Object.keys(specs)) {
      const source = all.get(name)
      if (source) sources.set(name, source)
    }
  }

  inOrder(await load(Object.keys(specs)))
  try {
    for (const server of curation?.prefixes.keys() ?? []) {
      if (!(server in specs)) throw new Error(`toolnexus: curation.servers.${server}: the config has no server of that name`)
    }
    rebuild(true, true)
  } catch (error) {
    await Promise.all([...sources.values()].map((source) => source.close()))
    throw error
  }

  /** @param {"status" | "errors"} key */
  const merged = (key) => Object.assign({}, ...[...sources.values()].map((source) => source[key]))

  /**
   * Reads the config again and applies the difference; one at a time (see `reload`).
   * @param {string | object | undefined} config
   */
  const reloadOnce = async (config) => {
    if (closed) throw new Error("toolnexus: this toolkit is closed")
    /** @type {Record<string, unknown>} */
    const next = binding.parseMcpConfig(config ?? mcpConfig ?? {})
    /** @param {string} name */
    const same = (name) => name in specs && JSON.stringify(specs[name]) === JSON.stringify(next[name])
    const added = Object.keys(next).filter((name) => !(name in specs))
    const removed = Object.keys(specs).filter((name) => !(name in next))
    const restarted = Object.keys(next).filter((name) => name in specs && !same(name))
    if (added.length + removed.length + restarted.length === 0) return { added, removed, restarted }
    const previous = specs
    specs = next
    let started
    try {
      started = await load([...added, ...restarted])
    } catch (error) {
      specs = previous
      throw error
    }
    if (closed) {
      // close() came while these were starting: they are not the toolkit's to keep.
      await Promise.all(started.map(([, source]) => source.close()))
      throw new Error("toolnexus: this toolkit is closed")
    }
    const retired = [...removed, ...restarted].flatMap((name) => sources.get(name) ?? [])
    for (const name of removed) sources.delete(name)
    inOrder(started)
    rebuild(true)
    announce()
    await Promise.all(retired.map((source) => source.close()))
    return { added, removed, restarted }
  }
  /**
   * The policy (hooks, result limits) of an endpoint served with `cfg` (serve's `mcp`): its
   * own, else the toolkit's.
   * @param {McpServerOptions} cfg
   */
  const endpointHooks = (cfg) =>
    nativePolicy(
      cfg.hooks === undefined ? hooks : nativeHooks(cfg.hooks, "mcp.hooks"),
      cfg.resultLimits === undefined ? resultLimits : nativeResultLimits(cfg.resultLimits, "mcp.resultLimits"),
    )
  /**
   * The tools an endpoint serves: its `mcp.tools`, narrowed by its audience's choice.
   * @param {Served} served
   */
  const exposedOf = (served) => {
    const exposed = exposedMcpTools(tools, served.cfg)
    return served.pick ? served.pick(exposed) : exposed
  }
  /** @type {Promise<unknown>} */
  let reloading = Promise.resolve()
  /** @type {Toolkit} */
  const toolkit = {
    tools: () => tools.slice(),
    skills: () => /** @type {any} */ (allSkills()),
    searchTools: searcher(() => tools, MCP_TOOL_REF),
    get: (name) => byName.get(name),
    async execute(name, args, ctx) {
      const tool = byName.get(name)
      if (!tool) return { output: `Unknown tool: ${name}`, isError: true }
      try {
        return await tool.execute(args ?? {}, ctx)
      } catch (error) {
        return errorResult(error)
      }
    },
    // Tells every served client subscribed to `uri` that it changed.
    resourceUpdated(uri) {
      if (typeof uri !== "string") throw new TypeError("toolnexus: resourceUpdated needs the resource's URI (a string)")
      for (const { service } of services) service.resourceUpdated(uri)
    },
    mcpStatus: () => merged("status"),
    mcpErrors: () => merged("errors"),
    // Reads `config` (default: the mcpConfig the toolkit was made with) again: servers it no
    // longer has are closed, new ones started, changed ones restarted; unchanged ones keep
    // running. Served clients are told when the tool set changed.
    reload(config) {
      const run = reloading.then(() => reloadOnce(config))
      reloading = run.catch(() => {})
      return run
    },
    async serve(addr, serveOpts) {
      const { mcp, onCall } = serveOpts ?? {}
      const cfg = mcp ?? {}
      const cache = cacheHints(cfg.cache, "mcp.")
      const service = serviceFor(tools, cfg, onCall, search, skills, endpointHooks(cfg))
      const options = serveOptions(serveOpts ?? {})
      // Other audiences on the same listener, each at /mcp/<name> with its own tools,
      // sessions, auth, hooks and limits.
      /** @type {Served[]} */
      const named = []
      for (const endpoint of endpointsOption(serveOpts?.endpoints, Object.keys(specs))) {
        const hooksOf =
          endpoint.hooks === undefined
            ? endpointHooks(cfg)
            : nativePolicy(nativeHooks(endpoint.hooks, `endpoints.${endpoint.name}.hooks`), cfg.resultLimits === undefined ? resultLimits : nativeResultLimits(cfg.resultLimits, "mcp.resultLimits"))
        /** @type {Served} */
        const entry = { service: /** @type {any} */ (undefined), cfg, cache, pick: endpoint.pick, servers: endpoint.servers }
        const exposed = endpoint.pick(exposedMcpTools(tools, cfg))
        entry.signature = listingSignature(exposed)
        entry.service = serviceFor(exposed, {}, onCall, search, skills, hooksOf)
        // Its own limits, else the same ones as the main endpoint (counted apart).
        const { auth, limits } = serveOptions({ auth: endpoint.auth, limits: endpoint.limits ?? serveOpts?.limits })
        service.addEndpoint(endpoint.name, entry.service, auth, limits)
        named.push(entry)
        setSurface(entry)
      }
      // /readyz: ready when every server that is not disabled is connected.
      options.ready = () => {
        const servers = merged("status")
        const ready = Object.values(servers).every((status) => status === "connected" || status === "disabled")
        return { ready, servers }
      }
      /** @type {Served} */
      const entry = { service, cfg, cache }
      setSurface(entry)
      const handle = await service.serveHttp(String(addr), options)
      entry.handle = handle
      for (const served of [entry, ...named]) {
        services.add(served)
        serving(extraResources, served.service, true)
      }
      const stop = async () => {
        for (const served of [entry, ...named]) {
          services.delete(served)
          serving(extraResources, served.service, false)
        }
        await handle.stop()
      }
      /** @type {Record<string, string>} */
      const endpoints = {}
      for (const endpoint of endpointsOption(serveOpts?.endpoints, Object.keys(specs))) endpoints[endpoint.name] = `${handle.url}/mcp/${endpoint.name}`
      return { url: handle.url, endpoints, stop, close: stop }
    },
    // Serves this process's stdin/stdout; resolves when the input ends or the toolkit closes.
    async serveStdio(serveOpts) {
      const { mcp, onCall } = serveOpts ?? {}
      const cfg = mcp ?? {}
      const cache = cacheHints(cfg.cache, "mcp.")
      const service = serviceFor(tools, cfg, onCall, search, skills, endpointHooks(cfg))
      /** @type {Served} */
      const entry = { service, cfg, cache }
      setSurface(entry)
      services.add(entry)
      serving(extraResources, service, true)
      try {
        await service.serveStdio()
      } finally {
        services.delete(entry)
        serving(extraResources, service, false)
      }
    },
    close() {
      closed ??= (async () => {
        await reloading // a reload that was starting servers closes them itself
        const running = [...services]
        services.clear()
        for (const { service } of running) {
          serving(extraResources, service, false)
          service.close()
        }
        await Promise.all(running.flatMap((s) => (s.handle ? [s.handle.stop()] : [])))
        await Promise.all([...sources.values()].map((source) => source.close()))
      })()
      return closed
    },
  }
  return toolkit
}

module.exports = { createToolkit }
