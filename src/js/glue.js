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
          const ctx = {
            signal: controller.signal,
            progress: (progress, total, message) => ask("progress", { progress, total, message }),
            log: (level, data, logger) => ask("log", { level, data, logger }),
            elicit: (request) => ask("elicit", request),
            sample: (request) => ask("sample", request),
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

  async function createToolkit(opts) {
    const { mcpConfig, extraTools = [], signal, waitFor } = opts ?? {}
    if (!Array.isArray(extraTools)) throw new TypeError("toolnexus: extraTools must be an array")
    const source =
      mcpConfig === undefined || mcpConfig === null
        ? undefined
        : await native.loadMcp(mcpConfig, { signal, waitFor })
    const tools = []
    const byName = new Map()
    for (const tool of [...(source?.tools ?? []), ...extraTools]) {
      if (byName.has(tool.name)) {
        process.emitWarning(
          `toolnexus: duplicate tool name "${tool.name}" (source ${tool.source}); keeping the first`,
          "ToolnexusWarning",
        )
        continue
      }
      byName.set(tool.name, tool)
      tools.push(tool)
    }
    const handles = new Set()
    let closed
    return {
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
      mcpStatus: () => ({ ...(source?.status ?? {}) }),
      mcpErrors: () => ({ ...(source?.errors ?? {}) }),
      async serve(addr, serveOpts) {
        const { mcp, onCall, stateless, allowedHosts, allowedOrigins } = serveOpts ?? {}
        const service = serviceFor(tools, mcp ?? {}, onCall)
        const handle = await service.serveHttp(String(addr), { stateless, allowedHosts, allowedOrigins })
        handles.add(handle)
        const stop = async () => {
          handles.delete(handle)
          await handle.stop()
        }
        return { url: handle.url, stop, close: stop }
      },
      close() {
        closed ??= (async () => {
          await Promise.all([...handles].map((h) => h.stop()))
          handles.clear()
          await source?.close()
        })()
        return closed
      },
    }
  }

  return { defineTool, exposedMcpTools, buildMcpServer, createToolkit, settleCalls, mcpExecute }
})
