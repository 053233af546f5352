// @ts-check
// The app's own resources, resource templates and prompts: defineResource,
// defineResourceTemplate and definePrompt, and what the native server needs of each
// (`servedSurface`): its listing, and calls whose results lib/surface-results.js normalises to
// MCP's ReadResourceResult, GetPromptResult and completion shapes.
"use strict"

const { readResult, promptResult, completionResult, envelope } = require("./surface-results.js")

/** @typedef {import("../index").DefineResourceOptions} DefineResourceOptions */
/** @typedef {import("../index").DefineResourceTemplateOptions} DefineResourceTemplateOptions */
/** @typedef {import("../index").DefinePromptOptions} DefinePromptOptions */
/** @typedef {import("../index").ResourceDefinition} ResourceDefinition */
/** @typedef {import("../index").ResourceTemplateDefinition} ResourceTemplateDefinition */
/** @typedef {import("../index").PromptDefinition} PromptDefinition */
/** @typedef {import("../index").CacheHints} CacheHints */
/** @typedef {{ resourceUpdated(uri: string): void }} Updatable */
/** @typedef {(id: number, signal: AbortSignal, principal?: import("../index").Principal) => object} MakeContext */
/** @typedef {import("../binding").NativeSurfaceEntry} NativeSurfaceEntry */
/** @typedef {{ id: number, args: Record<string, any>, principal?: import("../index").Principal }} SurfaceCall */

/** The services serving a definition now (not enumerable): `notifyUpdated()` tells them. */
const SERVING = Symbol("toolnexus.serving")

/**
 * @param {string} what  e.g. `defineResource "demo://x"`
 * @param {Record<string, unknown>} o
 * @param {string[]} strings  optional fields that must be strings
 */
function optionalFields(what, o, strings) {
  for (const key of strings) {
    if (o[key] !== undefined && typeof o[key] !== "string") {
      throw new TypeError(`toolnexus: ${what}: ${key} must be a string`)
    }
  }
  for (const key of ["annotations", "_meta"]) {
    const v = o[key]
    if (v !== undefined && (v === null || typeof v !== "object" || Array.isArray(v))) {
      throw new TypeError(`toolnexus: ${what}: ${key} must be an object`)
    }
  }
  if (o.icons !== undefined && !Array.isArray(o.icons)) {
    throw new TypeError(`toolnexus: ${what}: icons must be an array`)
  }
}

/**
 * @param {string} fn  the define function's name
 * @param {unknown} opts
 * @param {string} idField
 * @returns {Record<string, unknown>}
 */
function options(fn, opts, idField) {
  if (opts === null || typeof opts !== "object" || Array.isArray(opts)) {
    throw new TypeError(`toolnexus: ${fn} needs an options object`)
  }
  const o = /** @type {Record<string, unknown>} */ (opts)
  if (typeof o[idField] !== "string" || o[idField] === "") {
    throw new TypeError(`toolnexus: ${fn}: ${idField} must be a non-empty string`)
  }
  if (idField !== "name" && (typeof o.name !== "string" || o.name === "")) {
    throw new TypeError(`toolnexus: ${fn} "${o[idField]}": name must be a non-empty string`)
  }
  return o
}

/**
 * @param {string} what
 * @param {unknown} complete
 * @returns {Record<string, Function> | undefined}
 */
function completers(what, complete) {
  if (complete === undefined) return undefined
  if (complete === null || typeof complete !== "object" || Array.isArray(complete)) {
    throw new TypeError(`toolnexus: ${what}: complete must be an object of functions by argument name`)
  }
  for (const [name, fn] of Object.entries(complete)) {
    if (typeof fn !== "function") throw new TypeError(`toolnexus: ${what}: complete.${name} must be a function`)
  }
  return /** @type {Record<string, Function>} */ (complete)
}

/** The listing fields of `o` that are given, in MCP's order. @param {Record<string, unknown>} o @param {string[]} keys */
const given = (o, keys) => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]))

const RESOURCE_FIELDS = ["uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta"]
const TEMPLATE_FIELDS = ["uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta"]
const PROMPT_FIELDS = ["name", "title", "description", "arguments", "icons", "_meta"]

/**
 * A resource of the app's own. `read(uri, ctx)` may return a string (text, of `mimeType` or
 * text/plain), `{ text }`, `{ blob }` (base64 text or bytes), a `contents` array or `{ contents }`.
 * @param {DefineResourceOptions} opts
 * @returns {ResourceDefinition}
 */
function defineResource(opts) {
  const o = options("defineResource", opts, "uri")
  const what = `defineResource "${o.uri}"`
  optionalFields(what, o, ["title", "description", "mimeType"])
  if (o.size !== undefined && !(Number.isInteger(o.size) && /** @type {number} */ (o.size) >= 0)) {
    throw new TypeError(`toolnexus: ${what}: size must be a non-negative integer`)
  }
  if (typeof o.read !== "function") throw new TypeError(`toolnexus: ${what}: read must be a function`)
  /** @type {Set<Updatable>} */
  const serving = new Set()
  const uri = /** @type {string} */ (o.uri)
  const def = /** @type {ResourceDefinition} */ ({
    ...given(o, RESOURCE_FIELDS),
    read: o.read,
    notifyUpdated() {
      for (const service of serving) service.resourceUpdated(uri)
    },
  })
  Object.defineProperty(def, SERVING, { value: serving })
  return def
}

/**
 * A resource template of the app's own: `read(uri, vars, ctx)` answers every URI that matches
 * `uriTemplate` (RFC 6570), with its variables; `complete` completes them by name.
 * @param {DefineResourceTemplateOptions} opts
 * @returns {ResourceTemplateDefinition}
 */
function defineResourceTemplate(opts) {
  const o = options("defineResourceTemplate", opts, "uriTemplate")
  const what = `defineResourceTemplate "${o.uriTemplate}"`
  optionalFields(what, o, ["title", "description", "mimeType"])
  if (typeof o.read !== "function") throw new TypeError(`toolnexus: ${what}: read must be a function`)
  const complete = completers(what, o.complete)
  return /** @type {ResourceTemplateDefinition} */ ({
    ...given(o, TEMPLATE_FIELDS),
    read: o.read,
    ...(complete ? { complete } : {}),
  })
}

/**
 * A prompt of the app's own: `get(args, ctx)` returns a string (one user message) or
 * `{ description?, messages }`; a message's `content` may be a string.
 * @param {DefinePromptOptions} opts
 * @returns {PromptDefinition}
 */
function definePrompt(opts) {
  const o = options("definePrompt", opts, "name")
  const what = `definePrompt "${o.name}"`
  optionalFields(what, o, ["title", "description"])
  if (o.arguments !== undefined) {
    if (!Array.isArray(o.arguments)) throw new TypeError(`toolnexus: ${what}: arguments must be an array`)
    o.arguments.forEach((arg, i) => {
      if (arg === null || typeof arg !== "object" || typeof arg.name !== "string" || arg.name === "") {
        throw new TypeError(`toolnexus: ${what}: arguments[${i}].name must be a non-empty string`)
      }
      optionalFields(`${what}: argument "${arg.name}"`, arg, ["title", "description"])
      if (arg.required !== undefined && typeof arg.required !== "boolean") {
        throw new TypeError(`toolnexus: ${what}: argument "${arg.name}": required must be a boolean`)
      }
    })
  }
  if (typeof o.get !== "function") throw new TypeError(`toolnexus: ${what}: get must be a function`)
  const complete = completers(what, o.complete)
  return /** @type {PromptDefinition} */ ({
    ...given(o, PROMPT_FIELDS),
    get: o.get,
    ...(complete ? { complete } : {}),
  })
}

/**
 * A resource (or template: it has `uriTemplate`) as given to buildMcpServer or createToolkit:
 * a definition, or an object shaped like one, checked as the define functions check it.
 * @param {unknown} r
 * @param {string} where  e.g. `resources[0]`
 */
function resourceOf(r, where) {
  if (r === null || typeof r !== "object") {
    throw new TypeError(`toolnexus: ${where} must be a defineResource or defineResourceTemplate definition`)
  }
  return "uriTemplate" in r
    ? /** @type {const} */ (["template", defineResourceTemplate(/** @type {any} */ (r))])
    : /** @type {const} */ (["resource", defineResource(/** @type {any} */ (r))])
}

/**
 * The array the native server needs: one entry per resource, template and prompt, each with its
 * listing and `execute({ id, args })` resolving an envelope `{ result } | { error }` (args are
 * `{ uri, vars }` for reads, the prompt's arguments for prompts), `abort(id)`, and for those
 * with completers `complete({ argument, context })` and the names it completes (`completes`).
 * @param {unknown} resources
 * @param {unknown} prompts
 * @param {MakeContext} makeContext  a call's ctx (lib/serve.js's runContext)
 * @param {[string, string]} [names]  what the two arrays are called in errors
 * @returns {NativeSurfaceEntry[]}
 */
function servedSurface(resources, prompts, makeContext, names = ["resources", "prompts"]) {
  const list = (/** @type {unknown} */ v, /** @type {string} */ name) => {
    if (v === undefined || v === null) return []
    if (!Array.isArray(v)) throw new TypeError(`toolnexus: ${name} must be an array`)
    return v
  }
  /** @type {Map<number, AbortController>} */
  const pending = new Map()
  /** @param {number} id */
  const abort = (id) => {
    pending.get(id)?.abort(new Error("toolnexus: the MCP client cancelled this request"))
    pending.delete(id)
  }
  /**
   * @param {SurfaceCall} c
   * @param {(ctx: object) => unknown} run
   * @param {(v: unknown) => unknown} normalise
   */
  const call = async (c, run, normalise) => {
    const controller = new AbortController()
    pending.set(c.id, controller)
    try {
      return await envelope(() => run(makeContext(c.id, controller.signal, c.principal)), normalise)
    } finally {
      pending.delete(c.id)
    }
  }
  /** @param {Record<string, Function> | undefined} complete */
  const completing = (complete) =>
    complete && Object.keys(complete).length > 0
      ? {
          completes: Object.keys(complete),
          /** @param {any} c */
          complete(c) {
            const { argument, context } = c?.args ?? c ?? {}
            const fn = complete[argument?.name]
            if (typeof fn !== "function") return Promise.resolve({ result: { values: [] } })
            return envelope(() => fn(String(argument?.value ?? ""), context ?? {}), completionResult)
          },
        }
      : {}
  /** @type {NativeSurfaceEntry[]} */
  const entries = list(resources, names[0]).map((r, i) => {
    const [kind, def] = resourceOf(r, `${names[0]}[${i}]`)
    if (kind === "template") {
      const t = /** @type {ResourceTemplateDefinition} */ (def)
      return {
        kind,
        listing: given(/** @type {any} */ (t), TEMPLATE_FIELDS),
        /** @param {SurfaceCall} c */
        execute: (c) =>
          call(c, (ctx) => t.read(c.args.uri, c.args.vars ?? {}, /** @type {any} */ (ctx)), (v) => readResult(v, c.args.uri, t.mimeType)),
        abort,
        ...completing(t.complete),
      }
    }
    const d = /** @type {ResourceDefinition} */ (def)
    return {
      kind,
      listing: given(/** @type {any} */ (d), RESOURCE_FIELDS),
      /** @param {SurfaceCall} c */
      execute: (c) =>
        call(c, (ctx) => d.read(c.args.uri ?? d.uri, /** @type {any} */ (ctx)), (v) => readResult(v, c.args.uri ?? d.uri, d.mimeType)),
      abort,
    }
  })
  list(prompts, names[1]).forEach((p, i) => {
    if (p === null || typeof p !== "object") throw new TypeError(`toolnexus: ${names[1]}[${i}] must be a definePrompt definition`)
    const def = definePrompt(/** @type {any} */ (p))
    entries.push({
      kind: "prompt",
      listing: given(/** @type {any} */ (def), PROMPT_FIELDS),
      /** @param {SurfaceCall} c */
      execute: (c) => call(c, (ctx) => def.get(c.args ?? {}, /** @type {any} */ (ctx)), promptResult),
      abort,
      ...completing(def.complete),
    })
  })
  return entries
}

/** The longest ttlMs served: lib/options.js's MAX_TIMEOUT_MS (2^31 - 1 ms). */
const MAX_TTL_MS = 2147483647

/**
 * Checks `cache` (`{ ttlMs?, scope? }`) and gives it as the native server takes it.
 * @param {unknown} cache
 * @param {string} [label]
 * @returns {CacheHints | undefined}
 */
function cacheHints(cache, label = "") {
  if (cache === undefined || cache === null) return undefined
  if (typeof cache !== "object" || Array.isArray(cache)) throw new TypeError(`toolnexus: ${label}cache must be an object`)
  const { ttlMs, scope } = /** @type {Record<string, unknown>} */ (cache)
  if (ttlMs !== undefined && !(Number.isInteger(ttlMs) && /** @type {number} */ (ttlMs) >= 0)) {
    throw new TypeError(`toolnexus: ${label}cache.ttlMs must be a non-negative integer (milliseconds)`)
  }
  if (typeof ttlMs === "number" && ttlMs > MAX_TTL_MS) {
    throw new TypeError(`toolnexus: ${label}cache.ttlMs must be at most ${MAX_TTL_MS} milliseconds (about 24.8 days)`)
  }
  if (scope !== undefined && scope !== "public" && scope !== "private") {
    throw new TypeError(`toolnexus: ${label}cache.scope must be "public" or "private"`)
  }
  return /** @type {CacheHints} */ (given({ ttlMs, scope }, ["ttlMs", "scope"]))
}

/**
 * `service` serves these resources from now on (`on`) or no longer: their `notifyUpdated()`
 * reaches it while it does.
 * @param {unknown} resources
 * @param {Updatable} service
 * @param {boolean} on
 */
function serving(resources, service, on) {
  if (!Array.isArray(resources)) return
  for (const r of resources) {
    /** @type {Set<Updatable> | undefined} */
    const set = r?.[SERVING]
    if (set) on ? set.add(service) : set.delete(service)
  }
}

module.exports = {
  defineResource,
  defineResourceTemplate,
  definePrompt,
  servedSurface,
  cacheHints,
  serving,
}
