// @ts-check
// The public options, checked once, here, in the words the API documents; the native binding
// gets typed values only (CallOptions, LoadHooks and McpCallOptions in binding.d.ts), so no
// napi conversion error, which names Rust types, ever reaches an app.
"use strict"

/**
 * An app's listener guarded (lib/results.js, read only when a listener is given).
 * @param {(...args: any[]) => unknown} fn
 * @param {string} name
 */
const guarded = (fn, name) => require("./results.js").guardCallback(fn, name)

/** @typedef {import("../index").ListOptions} ListOptions */
/** @typedef {import("../index").LoadOptions} LoadOptions */
/** @typedef {import("../binding").CallOptions} CallOptions */
/** @typedef {import("../binding").LoadHooks} LoadHooks */
/** @typedef {import("../binding").McpCallOptions} McpCallOptions */
/** @typedef {import("../binding").SurfaceRequestOptions} SurfaceRequestOptions */

/** The longest timer Node keeps (2^31 - 1 ms); crates/engine/src/bounds.rs's MAX_TIMEOUT_MS. */
const MAX_TIMEOUT_MS = 2147483647

/**
 * An optional number of milliseconds under the first of `names` that is set: a finite number
 * from 0 to MAX_TIMEOUT_MS, rounded up to a whole millisecond.
 * @param {any} opts
 * @param {string} what
 * @param {string[]} names
 * @returns {number | undefined}
 */
function millisOption(opts, what, names) {
  for (const name of names) {
    const value = opts[name]
    if (value === undefined || value === null) continue
    if (typeof value !== "number") throw new TypeError(`toolnexus: ${what}.${name} must be a number of milliseconds`)
    if (!Number.isFinite(value) || value < 0) {
      throw new TypeError(`toolnexus: ${what}.${name} must be a non-negative number of milliseconds`)
    }
    if (value > MAX_TIMEOUT_MS) {
      throw new TypeError(`toolnexus: ${what}.${name} must be at most ${MAX_TIMEOUT_MS} milliseconds (about 24.8 days)`)
    }
    return Math.ceil(value)
  }
  return undefined
}

/**
 * An optional function; anything else but `undefined`/`null` is refused in words.
 * @param {unknown} value
 * @param {string} path
 * @returns {((...args: any[]) => any) | undefined}
 */
function functionOption(value, path) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "function") throw new TypeError(`toolnexus: ${path} must be a function`)
  return /** @type {(...args: any[]) => any} */ (value)
}

/**
 * `signal`: an object is taken as an AbortSignal (anything else is ignored, as it always was);
 * one without `addEventListener` is refused in words.
 * @param {unknown} value
 * @param {string} path
 * @returns {AbortSignal | undefined}
 */
function signalOption(value, path) {
  if (value === null || typeof value !== "object") return undefined
  const signal = /** @type {AbortSignal} */ (value)
  if (!signal.aborted && typeof signal.addEventListener !== "function") {
    throw new TypeError(`toolnexus: ${path} must be an AbortSignal`)
  }
  return signal
}

/**
 * `authorize` and `tokenStore` (its methods bound to it, so a class-based store's `this` works).
 * @param {any} opts
 * @returns {Pick<CallOptions, "authorize" | "tokenStore">}
 */
function authOptions(opts) {
  const authorize = functionOption(opts.authorize, "opts.authorize")?.bind(opts)
  const store = opts.tokenStore
  if (store === undefined || store === null) return { authorize }
  if (typeof store !== "object") throw new TypeError("toolnexus: opts.tokenStore must be an object { get, set, delete }")
  /** @param {string} key */
  const method = (key) => {
    const f = functionOption(store[key], `opts.tokenStore.${key}`)
    if (f === undefined) throw new TypeError(`toolnexus: opts.tokenStore.${key} must be a function`)
    return f.bind(store)
  }
  return { authorize, tokenStore: { get: method("get"), set: method("set"), delete: method("delete") } }
}

/**
 * The options of a listMcpTools or loadMcp call, and the config input's kind, checked in the
 * order the native side always checked them: the deadline, an already aborted signal (the
 * call rejects with its reason), the config's kind, then (`more`) the rest.
 * @template T
 * @param {unknown} input
 * @param {unknown} opts
 * @param {(opts: any) => T} more
 * @returns {{ options: CallOptions, more: T } | { reject: unknown }}
 */
function checkCall(input, opts, more) {
  try {
    const o = /** @type {any} */ (opts !== null && typeof opts === "object" ? opts : {})
    const deadlineMs = millisOption(o, "opts", ["deadline", "timeout"])
    const signal = signalOption(o.signal, "opts.signal")
    if (signal?.aborted) return { reject: signal.reason }
    if (input === null || (typeof input !== "string" && typeof input !== "object")) {
      throw new TypeError("toolnexus: MCP config must be a file path, JSON text or an object")
    }
    const extra = more(o)
    const trace = require("./telemetry.js").activeCarrier()
    return { options: { deadlineMs, signal, ...authOptions(o), trace }, more: extra }
  } catch (error) {
    return { reject: error }
  }
}

/**
 * listMcpTools, its options checked here.
 * @param {string | object} input
 * @param {ListOptions} [opts]
 */
function listMcpTools(input, opts) {
  const checked = checkCall(input, opts, () => undefined)
  if ("reject" in checked) return Promise.reject(checked.reject)
  return require("../binding.js").listMcpTools(input, checked.options)
}

/**
 * @typedef {{ onToolsChanged?: unknown, onSurfaceChanged?: unknown, relayInput?: boolean, namedByToolkit?: boolean }} ToolkitHooks
 * A toolkit's hooks of its loads: its own listeners, and how its sources are served.
 */

/**
 * @typedef {{ onResourcesChanged?: (change: import("../index").ResourcesChange) => void, onPromptsChanged?: (change: import("../index").PromptsChange) => void }} SurfaceListeners
 * An app's listeners of its servers' resources and prompts, guarded (lib/source.js calls them
 * from the native `onSurfaceChanged`).
 */

/**
 * loadMcp's options: the call's, and the callbacks it takes. `hooks` are a toolkit's (its own
 * `onToolsChanged`, `onSurfaceChanged`, `relayInput`, `namedByToolkit`); without them an app's
 * `onToolsChanged`, `onResourcesChanged` and `onPromptsChanged` are the ones (`listeners`, for
 * lib/source.js to call). The listeners are guarded: a throw in one is a `ToolnexusWarning`.
 * @param {unknown} input
 * @param {LoadOptions | undefined} opts
 * @param {ToolkitHooks} [hooks]
 * @returns {{ options: CallOptions, more: LoadHooks, listeners: SurfaceListeners } | { reject: unknown }}
 */
function checkLoad(input, opts, hooks) {
  /** @type {SurfaceListeners} */
  const listeners = {}
  const checked = checkCall(input, opts, (o) => {
    const waitFor = functionOption(o.waitFor, "opts.waitFor")
    const onToolsChanged = functionOption(hooks ? hooks.onToolsChanged : o.onToolsChanged, "opts.onToolsChanged")
    let onSurfaceChanged = functionOption(hooks?.onSurfaceChanged, "onSurfaceChanged")
    if (onSurfaceChanged) onSurfaceChanged = guarded(onSurfaceChanged, "onSurfaceChanged")
    if (!hooks) {
      const onResources = functionOption(o.onResourcesChanged, "opts.onResourcesChanged")
      const onPrompts = functionOption(o.onPromptsChanged, "opts.onPromptsChanged")
      if (onResources) listeners.onResourcesChanged = guarded(onResources, "onResourcesChanged")
      if (onPrompts) listeners.onPromptsChanged = guarded(onPrompts, "onPromptsChanged")
    }
    return {
      waitFor,
      onToolsChanged: onToolsChanged && guarded(onToolsChanged, "onToolsChanged"),
      onSurfaceChanged,
      relayInput: hooks?.relayInput,
      namedByToolkit: hooks?.namedByToolkit,
    }
  })
  return "reject" in checked ? checked : { ...checked, listeners }
}

/**
 * A string argument of a source's method, or a TypeError naming it.
 * @param {unknown} value
 * @param {string} name
 * @returns {string}
 */
function stringArgument(value, name) {
  if (typeof value !== "string") throw new TypeError(`toolnexus: ${name} must be a string, got ${kindOf(value)}`)
  return value
}

/** @param {unknown} value */
function kindOf(value) {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value
}

/**
 * String values by name (prompt arguments, a completion context's arguments): absent is `{}`.
 * @param {unknown} value
 * @param {string} name
 * @param {string} what
 * @returns {Record<string, string>}
 */
function stringRecord(value, name, what) {
  if (value === undefined || value === null) return {}
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`toolnexus: ${name} must be an object of strings, got ${kindOf(value)}`)
  }
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new TypeError(`toolnexus: ${what} ${JSON.stringify(key)} must be a string, got ${kindOf(v)}`)
  }
  return /** @type {Record<string, string>} */ (value)
}

/**
 * A request's options on a source's resources or prompts: `timeout` and `signal`.
 * @param {unknown} opts
 * @returns {SurfaceRequestOptions}
 */
function requestOptions(opts) {
  if (opts === undefined || opts === null) return {}
  if (typeof opts !== "object") throw new TypeError(`toolnexus: opts must be an object, got ${kindOf(opts)}`)
  const o = /** @type {any} */ (opts)
  return { timeoutMs: millisOption(o, "opts", ["timeout"]), signal: signalOption(o.signal, "opts.signal") }
}

/**
 * `complete`'s reference, argument and context, checked (the server would answer -32602).
 * @param {unknown} ref
 * @param {unknown} argument
 * @param {unknown} context
 * @returns {[import("../index").CompletionRef, { name: string, value: string }, { arguments?: Record<string, string> } | undefined]}
 */
function completionArguments(ref, argument, context) {
  const r = /** @type {any} */ (ref)
  if (r === null || typeof r !== "object" || (r.type !== "ref/prompt" && r.type !== "ref/resource")) {
    throw new TypeError('toolnexus: ref must be { type: "ref/prompt", name } or { type: "ref/resource", uri }')
  }
  const checkedRef =
    r.type === "ref/prompt"
      ? { type: r.type, name: stringArgument(r.name, "ref.name") }
      : { type: r.type, uri: stringArgument(r.uri, "ref.uri") }
  const a = /** @type {any} */ (argument)
  if (a === null || typeof a !== "object") throw new TypeError("toolnexus: argument must be { name, value }")
  const checkedArgument = { name: stringArgument(a.name, "argument.name"), value: stringArgument(a.value, "argument.value") }
  if (context === undefined || context === null) return [checkedRef, checkedArgument, undefined]
  if (typeof context !== "object") throw new TypeError(`toolnexus: context must be { arguments }, got ${kindOf(context)}`)
  const args = /** @type {any} */ (context).arguments
  if (args === undefined || args === null) return [checkedRef, checkedArgument, {}]
  return [checkedRef, checkedArgument, { arguments: stringRecord(args, "context.arguments", "context argument") }]
}

/**
 * A loadMcp tool call's `ctx`: its timeout, signal, progress and task-status listeners (guarded:
 * a throw in them is a warning) and whether to run the call as a task. A bad one is the call's error result, like bad arguments (a call never
 * rejects), so it goes to the native side as `refusal`.
 * @param {unknown} ctx
 * @returns {McpCallOptions | undefined}
 */
function callOptions(ctx) {
  // No ctx (the common case): nothing for the binding to read.
  if (ctx === null || typeof ctx !== "object") return undefined
  const c = /** @type {any} */ (ctx)
  try {
    const timeoutMs = millisOption(c, "ctx", ["timeout"])
    const onProgress = functionOption(c.onProgress, "ctx.onProgress")
    const onStatus = functionOption(c.onStatus, "ctx.onStatus")
    const signal = signalOption(c.signal, "ctx.signal")
    if (c.task !== undefined && c.task !== null && typeof c.task !== "boolean") {
      throw new TypeError(`toolnexus: ctx.task must be a boolean, got ${kindOf(c.task)}`)
    }
    return {
      timeoutMs,
      signal,
      onProgress: onProgress && guarded(onProgress, "ctx.onProgress"),
      onStatus: onStatus && guarded(onStatus, "ctx.onStatus"),
      task: c.task === true ? true : undefined,
    }
  } catch (error) {
    return { refusal: /** @type {Error} */ (error).message }
  }
}

/**
 * An optional number in `[min, max]` (whole when `whole`): a non-number is a TypeError, a number
 * out of range an Error, both naming it.
 * @param {string} name
 * @param {unknown} value
 * @param {string} what
 * @param {number} min
 * @param {number} max
 * @param {boolean} whole
 * @returns {number | undefined}
 */
function boundedNumber(name, value, what, min, max, whole) {
  if (value === undefined) return undefined
  if (typeof value !== "number") throw new TypeError(`toolnexus: ${name} must be a number, got ${typeof value}`)
  if (!(value >= min && value <= max) || (whole && !Number.isInteger(value))) {
    throw new Error(`toolnexus: ${name} must be ${what}, got ${value}`)
  }
  return value
}

module.exports = {
  listMcpTools,
  checkLoad,
  callOptions,
  kindOf,
  boundedNumber,
  requestOptions,
  stringArgument,
  stringRecord,
  completionArguments,
  functionOption,
}
