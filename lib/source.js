// @ts-check
// loadMcp: the native load, then the source object around its handle: tools with an `execute`
// each, and resources, templates and prompts with their methods, which follow their servers'
// list changes; and the source's requests on them.
"use strict"

const binding = require("../binding.js")
const options = require("./options.js")
const { searcher } = require("./search.js")
const telemetry = require("./telemetry.js")
const { checkLoad, callOptions } = options

/** @typedef {import("../index").McpSource} McpSource */
/** @typedef {import("../index").LoadOptions} LoadOptions */
/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../binding").NativeSource} NativeSource */
/** @typedef {import("../index").Resource} Resource */
/** @typedef {import("../index").ResourceTemplate} ResourceTemplate */
/** @typedef {import("../index").Prompt} Prompt */
/** @typedef {import("../index").RequestOptions} RequestOptions */
/** @typedef {import("../index").CompletionContext} CompletionContext */
/** @typedef {import("./options.js").SurfaceListeners} SurfaceListeners */

/**
 * The key of a loadMcp tool's native handle (not enumerable): a gateway serving the tool calls
 * its connection in Rust, and a toolkit names it by its server and original name.
 */
const MCP_TOOL_REF = "__toolnexusMcpTool"

/**
 * The key of a loadMcp source's `NativeSource` (not enumerable): a toolkit hands its session
 * (`upstream()`) to the services that relay its resources and prompts.
 */
const SOURCE_HANDLE = "__toolnexusSource"

/**
 * loadMcp tools' calls in flight, by number: the native side starts a call and answers it
 * later, with others that finished meanwhile, as one JSON text (src/settle.rs).
 * @type {Map<number, (result: any) => void>}
 */
const calls = new Map()

/** @param {string} batch */
function settleCalls(batch) {
  for (const [id, result] of JSON.parse(batch)) {
    const resolve = calls.get(id)
    calls.delete(id)
    resolve?.(result)
  }
}

/**
 * A failed call's result without its `metadata.errorType` (what telemetry records as
 * `error.type`; not part of the result the app sees).
 * @param {any} result
 */
function withoutErrorType(result) {
  if (result.metadata?.errorType !== undefined) delete result.metadata.errorType
  return result
}
binding.receiveCallResults(settleCalls)

/**
 * The `execute` of a loadMcp tool; `ref` is its native handle.
 * @param {unknown} ref
 * @returns {Tool["execute"]}
 */
function mcpExecute(ref) {
  return function execute(args, ctx) {
    const options = callOptions(ctx)
    const span = telemetry.startToolCall(ref, args)
    if (span === null) {
      return new Promise((resolve) => calls.set(binding.callMcpTool(ref, args, options), (r) => resolve(withoutErrorType(r))))
    }
    const traced = span.meta === undefined ? options : { ...options, meta: span.meta }
    return new Promise((resolve) =>
      calls.set(binding.callMcpTool(ref, args, traced), (result) => {
        span.end(result)
        resolve(withoutErrorType(result))
      }),
    )
  }
}

/**
 * The handle's tools as they are now, each with its `execute` and its hidden native handle.
 * @param {NativeSource} handle
 * @returns {Tool[]}
 */
function toolsOf(handle) {
  const [tools, refs] = /** @type {[any[], unknown[]]} */ (handle.tools())
  for (let i = 0; i < tools.length; i++) {
    tools[i].execute = mcpExecute(refs[i])
    Object.defineProperty(tools[i], MCP_TOOL_REF, { value: refs[i] })
  }
  return tools
}

/**
 * A loadMcp source's `tools` follow its servers' list changes: read, they are rebuilt when the
 * session's generation moved on since the last read. Assigning `source.tools` replaces the live
 * list with a plain value.
 * @param {McpSource} source
 * @param {NativeSource} handle
 */
function followTools(source, handle) {
  let tools = source.tools
  let seen = handle.generation()
  Object.defineProperty(source, "tools", {
    enumerable: true,
    configurable: true,
    get() {
      const now = handle.generation()
      if (now !== seen) {
        seen = now
        tools = toolsOf(handle)
      }
      return tools
    },
    set(value) {
      Object.defineProperty(source, "tools", { value, writable: true, enumerable: true, configurable: true })
    },
  })
}

/**
 * Runs `start` (a request on the source's surface), turning a refusal of the arguments into a
 * rejection: the source's methods never throw.
 * @template T
 * @param {() => Promise<T>} start
 * @returns {Promise<T>}
 */
function request(start) {
  try {
    return start()
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * The requests of a source on its servers' resources and prompts.
 * @param {NativeSource} handle
 */
function requests(handle) {
  const o = options
  const { traceRequest } = telemetry
  /** @type {McpSource["readResource"]} */
  const readResource = (server, uri, opts) =>
    request(() => {
      const [s, u, ro] = [o.stringArgument(server, "server"), o.stringArgument(uri, "uri"), o.requestOptions(opts)]
      return traceRequest(handle, s, "resources/read", null, { "mcp.resource.uri": u }, ro, (ro) => handle.readResource(s, u, ro))
    })
  /** @type {McpSource["getPrompt"]} */
  const getPrompt = (server, name, args, opts) =>
    request(() => {
      const [s, n] = [o.stringArgument(server, "server"), o.stringArgument(name, "name")]
      const [a, ro] = [o.stringRecord(args, "args", "prompt argument"), o.requestOptions(opts)]
      return traceRequest(handle, s, "prompts/get", n, { "gen_ai.prompt.name": n }, ro, (ro) => handle.getPrompt(s, n, a, ro))
    })
  /** @type {McpSource["complete"]} */
  const complete = (server, ref, argument, context, opts) =>
    request(() => {
      const [r, a, c] = o.completionArguments(ref, argument, context)
      const [s, ro] = [o.stringArgument(server, "server"), o.requestOptions(opts)]
      return traceRequest(handle, s, "completion/complete", null, {}, ro, (ro) => handle.complete(s, r, a, c, ro))
    }).then((result) => result.completion)
  /** @type {McpSource["subscribe"]} */
  const subscribe = (server, uri, onUpdated, opts) =>
    request(() => {
      const listener = o.functionOption(onUpdated, "onUpdated")
      if (!listener) throw new TypeError("toolnexus: onUpdated must be a function")
      const guarded = require("./results.js").guardCallback(listener, "onUpdated")
      return handle.subscribe(o.stringArgument(server, "server"), o.stringArgument(uri, "uri"), guarded, o.requestOptions(opts))
    }).then((subscription) => () => subscription.unsubscribe())
  /**
   * A skill loaded by the native side, with `read(path)` on it.
   * @param {string} server
   * @param {any} loaded
   */
  const withRead = (server, loaded) => {
    loaded.read = (/** @type {string} */ path, /** @type {RequestOptions | undefined} */ opts) => readSkillFile(server, loaded.uri, path, opts)
    return /** @type {import("../index").LoadedSkill} */ (loaded)
  }
  /** @type {McpSource["loadSkill"]} */
  const loadSkill = (server, uri, opts) =>
    request(() => {
      const [s, u, ro] = [o.stringArgument(server, "server"), o.stringArgument(uri, "uri"), o.requestOptions(opts)]
      return traceRequest(handle, s, "resources/read", null, { "mcp.resource.uri": u }, ro, (ro) => handle.loadSkill(s, u, ro)).then((loaded) => withRead(s, loaded))
    })
  /**
   * @param {string} server
   * @param {string} uri
   * @param {unknown} path
   * @param {RequestOptions | undefined} opts
   */
  const readSkillFile = (server, uri, path, opts) =>
    request(() => {
      const [p, ro] = [o.stringArgument(path, "path"), o.requestOptions(opts)]
      return traceRequest(handle, server, "resources/read", null, { "mcp.resource.uri": uri }, ro, (ro) => handle.readSkillFile(server, uri, p, ro))
    })
  return { readResource, getPrompt, complete, subscribe, loadSkill, readSkillFile }
}

/**
 * The handle's resources, templates and prompts as they are now, each with its methods.
 * @param {NativeSource} handle
 * @param {ReturnType<typeof requests>} r
 * @returns {{ resources: Resource[], resourceTemplates: ResourceTemplate[], prompts: Prompt[], skills: import("../index").Skill[] }}
 */
function surfaceOf(handle, r) {
  const surface = /** @type {any} */ (handle.surface())
  for (const resource of surface.resources) {
    /** @param {RequestOptions} [opts] */
    resource.read = (opts) => r.readResource(resource.server, resource.uri, opts)
  }
  for (const template of surface.resourceTemplates) {
    /**
     * @param {Record<string, string | number> | string} varsOrUri
     * @param {RequestOptions} [opts]
     */
    template.read = (varsOrUri, opts) =>
      request(() => {
        if (typeof varsOrUri === "string") return r.readResource(template.server, varsOrUri, opts)
        if (varsOrUri === null || typeof varsOrUri !== "object") {
          throw new TypeError("toolnexus: read takes the template's variables (an object) or a URI (a string)")
        }
        checkVariables(template.uriTemplate, varsOrUri)
        return r.readResource(template.server, binding.expandUriTemplate(template.uriTemplate, varsOrUri), opts)
      })
    const ref = { type: /** @type {const} */ ("ref/resource"), uri: template.uriTemplate }
    /** @type {ResourceTemplate["complete"]} */
    template.complete = (name, value, context, opts) => r.complete(template.server, ref, { name, value }, context, opts)
  }
  for (const skill of surface.skills) {
    /** @param {RequestOptions} [opts] */
    skill.load = (opts) => r.loadSkill(skill.server, skill.uri, opts)
    /**
     * @param {string} path
     * @param {RequestOptions} [opts]
     */
    skill.read = (path, opts) => r.readSkillFile(skill.server, skill.uri, path, opts)
  }
  for (const prompt of surface.prompts) {
    /**
     * @param {Record<string, string>} [args]
     * @param {RequestOptions} [opts]
     */
    prompt.get = (args, opts) => r.getPrompt(prompt.server, prompt.name, args, opts)
    const ref = { type: /** @type {const} */ ("ref/prompt"), name: prompt.name }
    /** @type {Prompt["complete"]} */
    prompt.complete = (name, value, context, opts) => r.complete(prompt.server, ref, { name, value }, context, opts)
  }
  return surface
}

/**
 * A source's `resources`, `resourceTemplates`, `prompts` and `skills` follow their servers' list changes,
 * as `tools` do (rebuilt, read, when the surface generation moved on).
 * @param {McpSource} source
 * @param {NativeSource} handle
 * @param {ReturnType<typeof requests>} r
 */
function followSurface(source, handle, r) {
  // Built on first read (a source whose surface is never read never pays for it).
  /** @type {number | undefined} */
  let seen
  /** @type {ReturnType<typeof surfaceOf> | undefined} */
  let surface
  const current = () => {
    const now = handle.surfaceGeneration()
    if (surface === undefined || now !== seen) {
      seen = now
      surface = surfaceOf(handle, r)
    }
    return surface
  }
  for (const key of /** @type {const} */ (["resources", "resourceTemplates", "prompts", "skills"])) {
    Object.defineProperty(source, key, {
      enumerable: true,
      configurable: true,
      get: () => current()[key],
      set(value) {
        Object.defineProperty(source, key, { value, writable: true, enumerable: true, configurable: true })
      },
    })
  }
}

/**
 * The native `onSurfaceChanged` for an app's `onResourcesChanged`/`onPromptsChanged`: a change
 * of resources or templates reports both lists of that server, a change of prompts its prompts.
 * @param {SurfaceListeners} listeners
 * @param {() => NativeSource | undefined} handle
 */
function surfaceListener(listeners, handle) {
  const { onResourcesChanged, onPromptsChanged } = listeners
  if (!onResourcesChanged && !onPromptsChanged) return undefined
  /** @param {{ server: string, kind: string, items: any[] }} change */
  return ({ server, kind, items }) => {
    /** @param {"resources" | "resourceTemplates"} other */
    const listed = (other) => {
      const all = /** @type {any[]} */ (/** @type {any} */ (handle()?.surface())?.[other] ?? [])
      return all.filter((item) => item.server === server).map(({ server: _, ...item }) => item)
    }
    if (kind === "prompts") onPromptsChanged?.({ server, prompts: items })
    else if (kind === "resources") onResourcesChanged?.({ server, resources: items, resourceTemplates: listed("resourceTemplates") })
    else if (kind === "resourceTemplates") onResourcesChanged?.({ server, resources: listed("resources"), resourceTemplates: items })
  }
}

/**
 * Levenshtein distance, for the names close to one that is not known.
 * @param {string} a
 * @param {string} b
 */
function distance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = row
  }
  return prev[b.length]
}

/**
 * The (up to `limit`) names closest to `wanted`, best first: within a third of its length, or
 * containing it or contained in it. For "did you mean" here and in the CLI.
 * @param {string} wanted
 * @param {string[]} names
 * @param {number} [limit]
 * @returns {string[]}
 */
function closeMatches(wanted, names, limit = 3) {
  if (wanted.length > 200) return []
  const bound = Math.max(2, Math.floor(wanted.length / 3))
  return names
    .map((name) => ({ name, d: name.includes(wanted) || wanted.includes(name) ? 0.5 : distance(wanted, name) }))
    .filter(({ d }) => d <= bound)
    .sort((x, y) => x.d - y.d || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map(({ name }) => name)
}

/**
 * What to say of a tool name the source does not have: the closest names it has, else how many
 * it has.
 * @param {string} wanted
 * @param {string[]} names
 */
function unknownToolHint(wanted, names) {
  const close = closeMatches(wanted, names)
  if (close.length > 0) return `; did you mean ${close.map((name) => `"${name}"`).join(", ")}?`
  if (names.length === 0) return "; the source has no tools"
  return `; it has ${names.length} ${names.length === 1 ? "tool" : "tools"} (see source.tools)`
}

/**
 * A source's `call(name, args, ctx)`: runs the tool of `source.tools` named `name` (as loadMcp
 * names it). An unknown name rejects, naming the closest names there are; otherwise it is the
 * tool's `execute`, which never rejects.
 * @param {McpSource} source
 * @returns {McpSource["call"]}
 */
function caller(source) {
  return function call(name, args, ctx) {
    if (typeof name !== "string") return Promise.reject(new TypeError("toolnexus: call takes a tool's name (a string) first"))
    const tools = source.tools
    const tool = tools.find((t) => t.name === name)
    if (tool === undefined) {
      const hint = unknownToolHint(name, tools.map((t) => t.name))
      return Promise.reject(new Error(`toolnexus: no tool named ${JSON.stringify(name)}${hint}`))
    }
    return tool.execute(/** @type {Record<string, unknown>} */ (args ?? {}), ctx)
  }
}

/**
 * loadMcp with a toolkit's `hooks` (its own `onToolsChanged`, `onSurfaceChanged`, `relayInput`,
 * `namedByToolkit`); lib/options.js checks the options.
 * @param {string | object} input
 * @param {LoadOptions} [opts]
 * @param {import("./options.js").ToolkitHooks} [hooks]
 * @returns {Promise<McpSource>}
 */
function loadSource(input, opts, hooks) {
  const checked = checkLoad(input, opts, hooks)
  if ("reject" in checked) return Promise.reject(checked.reject)
  /** @type {NativeSource | undefined} */
  let native
  const more = { ...checked.more, onSurfaceChanged: checked.more.onSurfaceChanged ?? surfaceListener(checked.listeners, () => native) }
  return binding.loadMcp(input, checked.options, more).then((loaded) => {
    const { handle, status, errors, info } = /** @type {any} */ (loaded)
    native = handle
    const r = requests(handle)
    const { readSkillFile: _skillFile, ...methods } = r
    const source = /** @type {McpSource} */ ({ tools: toolsOf(handle), status, errors, info, ...methods, close: () => handle.close() })
    followTools(source, handle)
    source.searchTools = searcher(() => source.tools, MCP_TOOL_REF)
    source.call = caller(source)
    followSurface(source, handle, r)
    Object.defineProperty(source, SOURCE_HANDLE, { value: handle })
    return source
  })
}

/**
 * Connects to every enabled server and returns live, callable tools. Connections stay open
 * until `source.close()`.
 * @param {string | object} input
 * @param {LoadOptions} [opts]
 * @returns {Promise<import("../index").McpSource<any>>}  (typed by the caller's `ToolMap`: see index.d.ts)
 */
function loadMcp(input, opts) {
  return loadSource(input, opts)
}

module.exports = { loadMcp, loadSource, closeMatches, MCP_TOOL_REF, SOURCE_HANDLE }

/**
 * Rejects `vars` missing one of a URI template's variables, or holding one that is not a string
 * or a number, so a read never quietly asks for the wrong URI. The variables of a query
 * expression (`{?a,b}`, `{&a}`) may be left out, as RFC 6570 leaves them out of the URI.
 * @param {string} uriTemplate
 * @param {Record<string, unknown>} vars
 */
function checkVariables(uriTemplate, vars) {
  for (const [, expression] of uriTemplate.matchAll(/\{([^}]*)\}/g)) {
    const optional = expression.startsWith("?") || expression.startsWith("&")
    for (const spec of expression.replace(/^[+#./;?&]/, "").split(",")) {
      const name = spec.replace(/(:\d+|\*)$/, "")
      if (!name) continue
      const value = Object.hasOwn(vars, name) ? vars[name] : undefined
      if (value === undefined) {
        if (optional) continue
        throw new TypeError(`toolnexus: read is missing the template's variable "${name}"`)
      }
      if (typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value))) {
        throw new TypeError(`toolnexus: the template's variable "${name}" must be a string or a number`)
      }
    }
  }
}
