// The JavaScript half of the boundary, evaluated once per environment by `src/js/glue.rs` and
// handed the native functions it needs. It holds only what is naturally JavaScript: running a
// user's `run` callback and mapping its result, wiring an SDK `Transport`'s callbacks, and
// assembling a toolkit object. Everything else is Rust.
(function toolnexusGlue(native) {
  "use strict"

  const MCP_TOOL_REF = native.mcpToolRefKey

  // loadMcp tools' calls in flight, by number: the native side starts a call and answers it
  // later, with others that finished meanwhile, as one JSON text (src/js/settle.rs).
  const calls = new Map()

  function settleCalls(batch) {
    for (const [id, result] of JSON.parse(batch)) {
      const resolve = calls.get(id)
      calls.delete(id)
      resolve?.(result)
    }
  }

  // The `execute` of a loadMcp tool; `ref` is its native handle.
  function mcpExecute(ref) {
    return function execute(args, ctx) {
      return new Promise((resolve) => calls.set(native.callMcpTool(ref, args, ctx), resolve))
    }
  }

  function isToolResult(value) {
    return (
      value !== null &&
      typeof value === "object" &&
      typeof value.output === "string" &&
      typeof value.isError === "boolean"
    )
  }

  // An MCP CallToolResult: `content` parts (and maybe structuredContent), no `output`.
  function isMcpResult(value) {
    return value !== null && typeof value === "object" && Array.isArray(value.content) && !("output" in value)
  }

  // A string is kept, a ToolResult is kept, an MCP result keeps its parts (its `output` mapped
  // as for MCP tools), undefined is "", anything else is JSON.
  function toToolResult(value) {
    if (typeof value === "string") return { output: value, isError: false }
    if (isToolResult(value)) return value
    if (isMcpResult(value)) return native.toolResultFromMcp(value)
    if (value === undefined) return { output: "", isError: false }
    let json
    try {
      json = JSON.stringify(value)
    } catch (error) {
      return errorResult(error)
    }
    return { output: json === undefined ? String(value) : json, isError: false }
  }

  function errorResult(error) {
    const output =
      error instanceof Error ? error.message : typeof error === "string" ? error : String(error)
    return { output, isError: true }
  }

  // An app's callback that throws must not break the engine: its error becomes a warning.
  function guardCallback(fn, name) {
    return (...args) => {
      try {
        fn(...args)
      } catch (error) {
        process.emitWarning(`toolnexus: ${name} threw: ${error?.message ?? error}`, "ToolnexusWarning")
      }
    }
  }

  // A loadMcp source's `tools` follow its servers' list changes: read, they are rebuilt (by
  // `rebuild`, in Rust) when the session's `generation` moved on since the last read. Assigning
  // `source.tools` replaces the live list with a plain value.
  function followTools(source, generation, rebuild) {
    let tools = source.tools
    let seen = generation()
    Object.defineProperty(source, "tools", {
      enumerable: true,
      configurable: true,
      get() {
        const now = generation()
        if (now !== seen) {
          seen = now
          tools = rebuild()
        }
        return tools
      },
      set(value) {
        Object.defineProperty(source, "tools", { value, writable: true, enumerable: true, configurable: true })
      },
    })
  }

  function defineTool(opts) {
    if (opts === null || typeof opts !== "object") {
      throw new TypeError("toolnexus: defineTool needs an options object")
    }
    const { name, description = "", inputSchema, source = "native", run, title, annotations, outputSchema, icons, _meta } = opts
    if (typeof name !== "string" || name.length === 0) {
      throw new TypeError("toolnexus: defineTool: name must be a non-empty string")
    }
    if (typeof run !== "function") {
      throw new TypeError(`toolnexus: defineTool "${name}": run must be a function`)
    }
    if (typeof description !== "string") {
      throw new TypeError(`toolnexus: defineTool "${name}": description must be a string`)
    }
    const schema = { type: "object", properties: {}, ...(inputSchema ?? {}) }
    const listing = Object.fromEntries(
      Object.entries({ title, annotations, outputSchema, icons, _meta }).filter(([, v]) => v !== undefined),
    )
    return {
      name,
      description,
      inputSchema: schema,
      source,
      ...listing,
      async execute(args, ctx) {
        try {
          return toToolResult(await run(args ?? {}, ctx ?? {}))
        } catch (error) {
          return errorResult(error)
        }
      },
    }
  }

  // SPEC §5 / seed 003: `cfg.tools` (names) narrows the set, in tool order; unknown names are
  // ignored; absent means every tool.
  function exposedMcpTools(tools, cfg) {
    if (!Array.isArray(tools)) throw new TypeError("toolnexus: tools must be an array of tools")
    const names = cfg?.tools
    if (names === undefined || names === null) return tools.slice()
    if (!Array.isArray(names)) throw new TypeError("toolnexus: cfg.tools must be an array of names")
    const wanted = new Set(names)
    return tools.filter((tool) => wanted.has(tool.name))
  }

  // What the native server needs of each tool: its listing, and either the loadMcp connection
  // it came from (a gateway call stays in Rust) or an `execute` that gets an AbortSignal, fired
  // through `abort(id)` when the MCP client cancels the call or goes away.
  function servedTools(tools) {
    const pending = new Map()
    const abort = (id) => {
      pending.get(id)?.abort(new Error("toolnexus: the MCP client cancelled this call"))
      pending.delete(id)
    }
    return tools.map((tool) => {
      if (tool === null || typeof tool !== "object" || typeof tool.name !== "string") {
        throw new TypeError("toolnexus: every tool needs a string name")
      }
      if (typeof tool.execute !== "function" && !tool[MCP_TOOL_REF]) {
        throw new TypeError(`toolnexus: tool "${tool.name}" has no execute function`)
      }
      return {
        name: tool.name,
        description: typeof tool.description === "string" ? tool.description : "",
        inputSchema: tool.inputSchema ?? { type: "object", properties: {} },
        source: typeof tool.source === "string" ? tool.source : "native",
        title: tool.title,
        annotations: tool.annotations,
        outputSchema: tool.outputSchema,
        icons: tool.icons,
        execution: tool.execution,
        _meta: tool._meta,
        mcp: tool[MCP_TOOL_REF],
        async execute(call) {
          const controller = new AbortController()
          pending.set(call.id, controller)
          const ask = (op, payload) => native.callContext(call.id, op, payload ?? {})
          // Input requests made in one tick go out together (one input-required result in the
          // 2026-07-28 era), each settled with its own answer.
          let batch = null
          const input = (kind, request, options) =>
            new Promise((resolve, reject) => {
              if (batch === null) {
                batch = []
                queueMicrotask(() => {
                  const asks = batch
                  batch = null
                  const payload = asks.map(({ kind, request, key }) => ({ kind, request, key }))
                  let answered
                  try {
                    answered = ask("input", { asks: payload })
                  } catch (error) {
                    answered = Promise.reject(error) // a request that cannot cross as JSON
                  }
                  answered.then(
                    (answers) =>
                      asks.forEach((a, i) => {
                        const answer = answers[i]
                        if (answer?.ok) a.resolve(answer.value)
                        else a.reject(new Error(`toolnexus: ${answer?.error ?? "no answer"}`))
                      }),
                    (error) => asks.forEach((a) => a.reject(error)),
                  )
                })
              }
              const key = typeof options?.key === "string" ? options.key : undefined
              batch.push({ kind, request: request ?? {}, key, resolve, reject })
            })
          const ctx = {
            signal: controller.signal,
            progress: (progress, total, message) => ask("progress", { progress, total, message }),
            log: (level, data, logger) => ask("log", { level, data, logger }),
            elicit: (request, options) => input("elicit", request, options),
            sample: (request, options) => input("sample", request, options),
            listRoots: (options) => input("roots", {}, options),
          }
          try {
            return await tool.execute(call.args, ctx)
          } finally {
            pending.delete(call.id)
          }
        },
        abort,
      }
    })
  }

  // A serve option that must be a number (its range is checked natively).
  function numberOption(name, value) {
    if (value !== undefined && typeof value !== "number") {
      throw new TypeError(`toolnexus: ${name} must be a number, got ${typeof value}`)
    }
    return value
  }

  function serviceFor(tools, cfg, onCall) {
    if (onCall !== undefined && typeof onCall !== "function") {
      throw new TypeError("toolnexus: onCall must be a function")
    }
    return native.createService(
      servedTools(exposedMcpTools(tools, cfg)),
      cfg?.name ?? "toolnexus",
      cfg?.version ?? "0.1.0",
      onCall,
    )
  }

  function buildMcpServer(tools, cfg, onCall) {
    const service = serviceFor(tools, cfg ?? {}, onCall)
    let transport
    let bridged
    let closed = false
    return {
      // With an SDK `Transport`, messages cross into the Rust server and back; resolves once the
      // transport started. Without one, serves this process's stdin/stdout natively and
      // resolves when the input ends or close() is called.
      async connect(t) {
        if (closed) throw new Error("toolnexus: this MCP server is closed")
        if (t === undefined || t === null) return service.serveStdio()
        if (transport) throw new Error("toolnexus: this MCP server is already connected")
        transport = t
        const session = service.bridge((message) => {
          if (closed) return
          Promise.resolve(t.send(message)).catch((error) => t.onerror?.(error))
        })
        t.onmessage = (message) => session.push(message)
        t.onclose = () => {
          closed = true
          session.close()
        }
        bridged = session
        await t.start()
      },
      async close() {
        if (closed && !transport) return
        closed = true
        service.close()
        bridged?.close()
        const t = transport
        transport = undefined
        if (t) await t.close()
      },
    }
  }

  // A toolkit holds one loadMcp source per server, so `reload` can start, close or restart
  // servers one at a time while the others keep running; every served endpoint follows.
  async function createToolkit(opts) {
    const { mcpConfig, extraTools = [], signal, waitFor, onToolsChanged, authorize, tokenStore } = opts ?? {}
    if (!Array.isArray(extraTools)) throw new TypeError("toolnexus: extraTools must be an array")
    if (onToolsChanged !== undefined && typeof onToolsChanged !== "function") {
      throw new TypeError("toolnexus: onToolsChanged must be a function")
    }
    let specs = mcpConfig === undefined || mcpConfig === null ? {} : native.parseMcpConfig(mcpConfig)
    const sources = new Map()
    let closed
    let tools = []
    let byName = new Map()
    const services = new Set()

    // The servers' tools are named across all sources, as one loadMcp of the config names them,
    // and keep their names while other servers restart or re-list (SPEC §4).
    const nameTools = native.toolkitNamer()
    const rebuild = (warn) => {
      tools = []
      byName = new Map()
      const mcpTools = [...sources.values()].flatMap((source) => source.tools)
      const { names, warnings } = nameTools(mcpTools)
      mcpTools.forEach((tool, i) => {
        if (names[i] !== null) tool.name = names[i]
      })
      if (warn) for (const warning of warnings) process.emitWarning(warning, "ToolnexusWarning")
      for (const tool of [...mcpTools, ...extraTools]) {
        if (byName.has(tool.name)) {
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
    // Served endpoints and the app hear of every change to the tool set.
    const announce = () => {
      for (const { service, cfg } of services) service.setTools(servedTools(exposedMcpTools(tools, cfg)))
      if (onToolsChanged) guardCallback(onToolsChanged, "onToolsChanged")(tools.slice())
    }
    const following = (source) => () => {
      if (closed || ![...sources.values()].includes(source)) return
      rebuild(true)
      announce()
    }
    // Each server alone; the sources come back in config order whatever order they finish in.
    const load = async (names) => {
      const loaded = await Promise.allSettled(
        names.map(async (name) => {
          let source
          const onChange = () => source && following(source)()
          source = await native.loadMcp({ mcpServers: { [name]: specs[name] } }, {
            signal,
            waitFor,
            authorize,
            tokenStore,
            onToolsChanged: onChange,
            // Its elicitation and sampling requests go to the gateway's front clients.
            relayInput: true,
            [native.namedByToolkitKey]: true,
          })
          return source
        }),
      )
      const failure = loaded.find((r) => r.status === "rejected")
      if (failure) {
        await Promise.all(loaded.filter((r) => r.status === "fulfilled").map((r) => r.value.close()))
        throw failure.reason
      }
      return names.map((name, i) => [name, loaded[i].value])
    }
    const inOrder = (entries) => {
      const all = new Map([...sources, ...entries])
      sources.clear()
      for (const name of Object.keys(specs)) if (all.has(name)) sources.set(name, all.get(name))
    }

    inOrder(await load(Object.keys(specs)))
    rebuild(true)

    const merged = (key) => Object.assign({}, ...[...sources.values()].map((source) => source[key]))

    // Reads the config again and applies the difference; one at a time (see `reload`).
    const reloadOnce = async (config) => {
      if (closed) throw new Error("toolnexus: this toolkit is closed")
      const next = native.parseMcpConfig(config ?? mcpConfig ?? {})
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
      const retired = [...removed, ...restarted].map((name) => sources.get(name)).filter(Boolean)
      for (const name of removed) sources.delete(name)
      inOrder(started)
      rebuild(true)
      announce()
      await Promise.all(retired.map((source) => source.close()))
      return { added, removed, restarted }
    }
    let reloading = Promise.resolve()
    const toolkit = {
      tools: () => tools.slice(),
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
      mcpStatus: () => merged("status"),
      mcpErrors: () => merged("errors"),
      // Reads `config` (default: the mcpConfig the toolkit was made with) again: servers it
      // no longer has are closed, new ones started, changed ones restarted; unchanged ones
      // keep running. Served clients are told when the tool set changed.
      reload(config) {
        const run = reloading.then(() => reloadOnce(config))
        reloading = run.catch(() => {})
        return run
      },
      async serve(addr, serveOpts) {
        const { mcp, onCall, stateless, allowedHosts, allowedOrigins, sessionIdleTimeout, maxSessions } = serveOpts ?? {}
        const cfg = mcp ?? {}
        const service = serviceFor(tools, cfg, onCall)
        const handle = await service.serveHttp(String(addr), {
          stateless,
          allowedHosts,
          allowedOrigins,
          sessionIdleTimeout: numberOption("sessionIdleTimeout", sessionIdleTimeout),
          maxSessions: numberOption("maxSessions", maxSessions),
        })
        const entry = { service, cfg, handle }
        services.add(entry)
        const stop = async () => {
          services.delete(entry)
          await handle.stop()
        }
        return { url: handle.url, stop, close: stop }
      },
      // Serves this process's stdin/stdout; resolves when the input ends or the toolkit closes.
      async serveStdio(serveOpts) {
        const { mcp, onCall } = serveOpts ?? {}
        const cfg = mcp ?? {}
        const service = serviceFor(tools, cfg, onCall)
        const entry = { service, cfg }
        services.add(entry)
        try {
          await service.serveStdio()
        } finally {
          services.delete(entry)
        }
      },
      close() {
        closed ??= (async () => {
          await reloading // a reload that was starting servers closes them itself
          const running = [...services]
          services.clear()
          for (const { service } of running) service.close()
          await Promise.all(running.filter((s) => s.handle).map((s) => s.handle.stop()))
          await Promise.all([...sources.values()].map((source) => source.close()))
        })()
        return closed
      },
    }
    return toolkit
  }

  return { defineTool, exposedMcpTools, buildMcpServer, createToolkit, followTools, guardCallback, settleCalls, mcpExecute }
})
