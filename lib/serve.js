// @ts-check
// Serving tools: what the native server needs of each tool, and buildMcpServer's SDK-transport
// wiring. The server itself is native (NativeService in binding.d.ts).
"use strict"

const binding = require("../binding.js")
const { exposedMcpTools, THROWN } = require("./tools.js")
const { MCP_TOOL_REF } = require("./source.js")
const { nativeHooks, nativePolicy, nativeResultLimits } = require("./hooks.js")
const { CURATION } = require("./curation.js")
const { servedSurface, cacheHints, serving } = require("./surface.js")
const { serveToolCall } = require("./telemetry.js")

/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../index").McpServer} McpServer */
/** @typedef {import("../index").McpServerOptions} McpServerOptions */
/** @typedef {import("../index").CallRecord} CallRecord */
/** @typedef {import("../binding").NativeService} NativeService */

/**
 * Input requests made in one tick go out together (one input-required result in the 2026-07-28
 * era), each settled with its own answer. An answer marked `ended` (the run is being aborted:
 * cancelled, expired, its server closed) calls `ended()` first, so the run's signal has fired
 * by the time its ask rejects.
 * @param {(op: string, payload: object) => Promise<any>} ask
 * @param {() => void} [ended]
 */
function inputBatcher(ask, ended) {
  /** @type {null | Array<{ kind: string, request: object, key: string | undefined, resolve: (v: unknown) => void, reject: (e: unknown) => void }>} */
  let batch = null
  /**
   * @param {string} kind
   * @param {object | undefined} request
   * @param {{ key?: unknown } | undefined} options
   */
  return (kind, request, options) =>
    new Promise((resolve, reject) => {
      if (batch === null) {
        batch = []
        queueMicrotask(() => {
          const asks = /** @type {NonNullable<typeof batch>} */ (batch)
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
                if (answer?.ended) ended?.()
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
}

/**
 * The `ctx` of a served call (a tool's run, a resource's read, a prompt's get): its signal, and
 * progress, log messages and input requests that reach the calling client.
 * @param {number} id  the native call's id
 * @param {AbortSignal} signal
 * @param {import("../index").Principal} [principal]  who made the call (serving with auth)
 * @param {() => void} [ended]  fires `signal` (the run is being aborted)
 */
function runContext(id, signal, principal, ended) {
  /** @type {(op: string, payload?: object) => Promise<any>} */
  const ask = (op, payload) => binding.callContext(id, op, payload ?? {})
  const input = inputBatcher(ask, ended)
  return {
    signal,
    principal,
    /** @type {(progress: number, total?: number, message?: string) => Promise<boolean>} */
    progress: (progress, total, message) => ask("progress", { progress, total, message }),
    /** @type {(level: string, data: unknown, logger?: string) => Promise<boolean>} */
    log: (level, data, logger) => ask("log", { level, data, logger }),
    /** @type {(request: object, options?: { key?: string }) => Promise<any>} */
    elicit: (request, options) => input("elicit", request, options),
    /** @type {(request: object, options?: { key?: string }) => Promise<any>} */
    sample: (request, options) => input("sample", request, options),
    /** @type {(options?: { key?: string }) => Promise<any>} */
    listRoots: (options) => input("roots", {}, options),
    /** @type {() => Promise<boolean>} */
    startTask: () => ask("startTask"),
  }
}

/**
 * What the native server needs of each tool: its listing, and either the loadMcp connection it
 * came from (a gateway call stays in Rust) or an `execute` that gets an AbortSignal, fired
 * through `abort(id)` when the MCP client cancels the call or goes away.
 * @param {Tool[]} tools
 */
function servedTools(tools) {
  /** @type {Map<number, AbortController>} */
  const pending = new Map()
  /** @param {number} id */
  const abort = (id) => {
    pending.get(id)?.abort(new Error("toolnexus: the MCP client cancelled this call"))
    pending.delete(id)
  }
  return tools.map((tool) => {
    const anyTool = /** @type {any} */ (tool)
    if (tool === null || typeof tool !== "object" || typeof tool.name !== "string") {
      throw new TypeError("toolnexus: every tool needs a string name")
    }
    if (typeof tool.execute !== "function" && !anyTool[MCP_TOOL_REF]) {
      throw new TypeError(`toolnexus: tool "${tool.name}" has no execute function`)
    }
    return {
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : "",
      inputSchema: tool.inputSchema ?? { type: "object", properties: {} },
      source: typeof tool.source === "string" ? tool.source : "native",
      title: anyTool.title,
      annotations: anyTool.annotations,
      outputSchema: anyTool.outputSchema,
      icons: anyTool.icons,
      execution: anyTool.execution,
      _meta: anyTool._meta,
      deferTask: anyTool.deferTask === true,
      mcp: anyTool[MCP_TOOL_REF],
      curation: anyTool[CURATION],
      /** @param {{ id: number, args: Record<string, unknown>, principal?: import("../index").Principal, trace?: Record<string, string>, spanned?: boolean }} call */
      async execute(call) {
        const controller = new AbortController()
        pending.set(call.id, controller)
        const ctx = runContext(call.id, controller.signal, call.principal, () => abort(call.id))
        try {
          const result = await serveToolCall(tool.name, call.trace, call.spanned === true, () => tool.execute(call.args, /** @type {any} */ (ctx)))
          // A task tool's throw: the call failed rather than answered.
          if (result !== null && typeof result === "object" && THROWN.has(result)) {
            throw new Error(/** @type {{ output: string }} */ (result).output)
          }
          return result
        } finally {
          pending.delete(call.id)
        }
      },
      abort,
    }
  })
}

/**
 * @param {Tool[]} tools
 * @param {McpServerOptions | undefined} cfg
 * @param {unknown} onCall
 * @param {{ limit: number, always: string[] }} [search]  served searched instead of listed (`toolSearch`)
 * @param {import("../binding").NativeSkills} [skills]  skills served too (prepared by lib/skills.js)
 * @param {import("../binding").NativePolicy} [policy]  policy hooks and result limits (prepared by lib/hooks.js)
 * @returns {NativeService}
 */
function serviceFor(tools, cfg, onCall, search, skills, policy) {
  if (onCall !== undefined && typeof onCall !== "function") {
    throw new TypeError("toolnexus: onCall must be a function")
  }
  const exposed = exposedMcpTools(tools, cfg)
  if (search !== undefined) {
    // Search mode answers these two names itself: a tool of the same name could never be called.
    const clash = exposed.find((t) => t.name === "search_tools" || t.name === "call_tool")
    if (clash) {
      throw new Error(
        `toolnexus: toolSearch serves its own "${clash.name}", which would hide the tool of that name: rename the tool, or serve without toolSearch`,
      )
    }
  }
  return binding.createService(
    servedTools(exposed),
    cfg?.name ?? "toolnexus",
    cfg?.version ?? "0.1.0",
    /** @type {((call: CallRecord) => void) | undefined} */ (onCall),
    search,
    skills,
    policy,
  )
}

/** @param {string[]} warnings */
function emitWarnings(warnings) {
  for (const warning of warnings) process.emitWarning(warning, "ToolnexusWarning")
}

/**
 * An MCP server for `tools`. `connect(transport)` takes any `@modelcontextprotocol/sdk`
 * `Transport`; `connect()` with no argument serves this process's stdin/stdout.
 * @param {Tool[]} tools
 * @param {McpServerOptions} [cfg]
 * @param {(call: CallRecord) => void} [onCall]
 * @returns {McpServer}
 */
function buildMcpServer(tools, cfg, onCall) {
  const { resources, prompts, cache, skills } = cfg ?? {}
  const own = servedSurface(resources, prompts, runContext, ["cfg.resources", "cfg.prompts"])
  const hints = cacheHints(cache, "cfg.")
  const policy = nativePolicy(nativeHooks(cfg?.hooks, "cfg.hooks"), nativeResultLimits(cfg?.resultLimits, "cfg.resultLimits"))
  const service = serviceFor(tools, cfg ?? {}, onCall, undefined, require("./skills.js").nativeSkills(skills, "cfg.skills"), policy)
  emitWarnings(service.setSurface(own, [], hints).warnings)
  serving(resources, service, true)
  /** @type {any} */
  let transport
  /** @type {import("../binding").NativeBridge | undefined} */
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
        Promise.resolve(t.send(/** @type {any} */ (message))).catch((error) => t.onerror?.(error))
      })
      t.onmessage = (message) => session.push(message)
      t.onclose = () => {
        closed = true
        session.close()
      }
      bridged = session
      await t.start()
    },
    resourceUpdated(uri) {
      if (typeof uri !== "string") throw new TypeError("toolnexus: resourceUpdated needs the resource's URI (a string)")
      service.resourceUpdated(uri)
    },
    async close() {
      serving(resources, service, false)
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

module.exports = { buildMcpServer, serviceFor, servedTools, runContext, emitWarnings }
