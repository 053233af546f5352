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

/** The longest timer Node keeps (2^31 - 1 ms); src/bounds.rs's MAX_TIMEOUT_MS. */
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
    return { options: { deadlineMs, signal, ...authOptions(o) }, more: extra }
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
 * A loadMcp tool call's `ctx`: its timeout, signal and progress listener (guarded: a throw in it
 * is a warning). A bad one is the call's error result, like bad arguments (a call never
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
    const signal = signalOption(c.signal, "ctx.signal")
    return { timeoutMs, signal, onProgress: onProgress && guarded(onProgress, "ctx.onProgress") }
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

/**
 * An optional array of strings.
 * @param {string} name
 * @param {unknown} value
 * @returns {string[] | undefined}
 */
function stringsOption(name, value) {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new TypeError(`toolnexus: ${name} must be an array of strings`)
  }
  return value
}

/**
 * @typedef {{ token: string, subject: string, scopes: string[] }} BindingToken
 * @typedef {{ subject: string, scopes: string[], claims: Record<string, unknown> }} BindingPrincipal
 * @typedef {{ scope: string, globs: string[] }} BindingRule
 * @typedef {{ clientId: string, clientSecret: string, endpoint?: string }} BindingIntrospection
 * @typedef {{ issuer: string, audience?: string, requiredScopes?: string[], jwksUri?: string, introspection?: BindingIntrospection, clockSkew?: number }} BindingOAuth
 * @typedef {{ none: true } | { tokens?: BindingToken[], verify?: (token: string) => Promise<BindingPrincipal | null>, oauth?: BindingOAuth, tools?: BindingRule[], prompts?: BindingRule[], resources?: BindingRule[] }} BindingAuth
 * @typedef {import("../binding").HttpServeOptions & { auth?: BindingAuth, accessLog?: (entry: import("../index").AccessLogEntry) => void }} ServeBinding
 * What the native `serveHttp` is handed (the "binding shape" of issue 22's design).
 */

/** The longest bearer token the server reads (longer ones are refused unparsed). */
const MAX_TOKEN_LENGTH = 16384
const AUTH_KEYS = ["tokens", "oauth", "tools", "prompts", "resources"]
const OAUTH_KEYS = ["issuer", "audience", "requiredScopes", "jwksUri", "introspection", "clockSkew"]

/** @param {unknown} value */
const isPlainObject = (value) => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Refuses keys outside `known`: a misspelt `tool` or `requiredScope` would otherwise serve
 * every tool, or every token, without a word.
 * @param {object} value
 * @param {string} path
 * @param {string[]} known
 */
function onlyKeys(value, path, known) {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new TypeError(`toolnexus: ${path}.${key} is not an option here (known: ${known.join(", ")})`)
    }
  }
}

/**
 * A static bearer token; the messages never quote it.
 * @param {unknown} value
 * @param {string} path
 * @returns {string}
 */
function tokenString(value, path) {
  if (typeof value !== "string" || value === "") throw new TypeError(`toolnexus: ${path} must be a non-empty string`)
  if (value.length > MAX_TOKEN_LENGTH) throw new TypeError(`toolnexus: ${path} must be at most ${MAX_TOKEN_LENGTH} characters`)
  if (/[\s\x00-\x1f\x7f]/.test(value)) {
    throw new TypeError(`toolnexus: ${path} must not contain spaces or control characters (a client could never send it)`)
  }
  return value
}

/**
 * Scope names: strings without spaces (a `scope` claim is space-separated).
 * @param {unknown} value
 * @param {string} path
 * @returns {string[]}
 */
function scopeList(value, path) {
  if (!Array.isArray(value) || !value.every((s) => typeof s === "string" && s !== "" && !/\s/.test(s))) {
    throw new TypeError(`toolnexus: ${path} must be an array of scope names (non-empty strings without spaces)`)
  }
  return [...value]
}

/**
 * An http(s) URL the server fetches or names: https, or http for a loopback host only.
 * @param {unknown} value
 * @param {string} path
 * @returns {string}
 */
function fetchUrl(value, path) {
  const words = `toolnexus: ${path} must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1])`
  if (typeof value !== "string") throw new TypeError(`${words}, got ${kindOf(value)}`)
  // The value is never quoted whole: a misplaced secret, or one in a query, stays out of it.
  let url
  try {
    url = new URL(value)
  } catch {
    throw new TypeError(`${words}, got a string that is not a URL`)
  }
  if (url.username !== "" || url.password !== "") throw new TypeError(`toolnexus: ${path} must not hold a user name or password`)
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname)
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new TypeError(`${words}, got ${url.protocol}//${url.host}`)
  }
  return value
}

/**
 * `auth.tokens` as a list: each a string or `{ token, subject?, scopes? }`.
 * @param {unknown[]} list
 * @returns {BindingToken[]}
 */
function staticTokens(list) {
  /** @type {BindingToken[]} */
  const tokens = []
  list.forEach((entry, i) => {
    const path = `auth.tokens[${i}]`
    /** @type {BindingToken} */
    let token
    if (typeof entry === "string") {
      token = { token: tokenString(entry, path), subject: `token-${i + 1}`, scopes: [] }
    } else if (isPlainObject(entry)) {
      const e = /** @type {any} */ (entry)
      onlyKeys(e, path, ["token", "subject", "scopes"])
      const value = tokenString(e.token, `${path}.token`)
      if (e.subject !== undefined && (typeof e.subject !== "string" || e.subject === "")) {
        throw new TypeError(`toolnexus: ${path}.subject must be a non-empty string`)
      }
      const scopes = e.scopes === undefined ? [] : scopeList(e.scopes, `${path}.scopes`)
      token = { token: value, subject: e.subject ?? `token-${i + 1}`, scopes }
    } else {
      throw new TypeError(`toolnexus: ${path} must be a token string or { token, subject?, scopes? }, got ${kindOf(entry)}`)
    }
    const same = tokens.findIndex((t) => t.token === token.token)
    if (same !== -1) throw new TypeError(`toolnexus: ${path} is the same token as auth.tokens[${same}]`)
    tokens.push(token)
  })
  return tokens
}

const PRINCIPAL = "toolnexus: auth.tokens function"

/**
 * What an `auth.tokens` function resolved to: `null` (not a token it knows), or a principal
 * checked and copied (claims as JSON, since they cross into the server and back into `ctx`).
 * @param {unknown} value
 * @returns {BindingPrincipal | null}
 */
function checkedPrincipal(value) {
  if (value === null || value === undefined) return null
  if (!isPlainObject(value)) {
    throw new TypeError(`${PRINCIPAL} must resolve to { subject, scopes?, claims? } or null, got ${kindOf(value)}`)
  }
  const p = /** @type {any} */ (value)
  if (typeof p.subject !== "string" || p.subject === "") {
    throw new TypeError(`${PRINCIPAL} must resolve to a principal whose subject is a non-empty string, got ${kindOf(p.subject)}`)
  }
  const scopes = p.scopes === undefined || p.scopes === null ? [] : p.scopes
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string")) {
    throw new TypeError(`${PRINCIPAL} must resolve to a principal whose scopes are an array of strings`)
  }
  const claims = p.claims === undefined || p.claims === null ? {} : p.claims
  if (!isPlainObject(claims)) {
    throw new TypeError(`${PRINCIPAL} must resolve to a principal whose claims are a plain object, got ${kindOf(claims)}`)
  }
  let json
  try {
    json = JSON.parse(JSON.stringify(claims))
  } catch {
    throw new TypeError(`${PRINCIPAL} must resolve to a principal whose claims are JSON (no cycles or BigInt)`)
  }
  return { subject: p.subject, scopes: [...scopes], claims: json }
}

/**
 * An `auth.tokens` function as the server calls it: always a promise, never a synchronous
 * throw, and a principal of the documented shape (else a rejection in words).
 * @param {(token: string) => unknown} fn
 * @returns {(token: string) => Promise<BindingPrincipal | null>}
 */
function verifier(fn) {
  return (token) => {
    try {
      return Promise.resolve(fn(token)).then(checkedPrincipal)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/**
 * `auth.oauth`.
 * @param {unknown} value
 * @returns {BindingOAuth}
 */
function oauthOption(value) {
  if (!isPlainObject(value)) {
    throw new TypeError(
      `toolnexus: auth.oauth must be an object { issuer, audience?, requiredScopes?, jwksUri?, introspection?, clockSkew? }, got ${kindOf(value)}`,
    )
  }
  const o = /** @type {any} */ (value)
  onlyKeys(o, "auth.oauth", OAUTH_KEYS)
  if (o.issuer === undefined) throw new TypeError("toolnexus: auth.oauth.issuer is required (the authorisation server's URL)")
  const issuer = fetchUrl(o.issuer, "auth.oauth.issuer")
  const url = new URL(issuer)
  if (url.search !== "" || url.hash !== "") throw new TypeError("toolnexus: auth.oauth.issuer must have no query or fragment (RFC 8414)")
  /** @type {BindingOAuth} */
  const oauth = { issuer }
  if (o.audience !== undefined) {
    if (typeof o.audience !== "string" || o.audience === "") {
      throw new TypeError(`toolnexus: auth.oauth.audience must be a non-empty string (the served URL, e.g. https://mcp.example.com/mcp), got ${kindOf(o.audience)}`)
    }
    oauth.audience = o.audience
  }
  if (o.requiredScopes !== undefined) oauth.requiredScopes = scopeList(o.requiredScopes, "auth.oauth.requiredScopes")
  if (o.jwksUri !== undefined) oauth.jwksUri = fetchUrl(o.jwksUri, "auth.oauth.jwksUri")
  if (o.introspection !== undefined) {
    const i = o.introspection
    if (!isPlainObject(i)) {
      throw new TypeError(`toolnexus: auth.oauth.introspection must be an object { clientId, clientSecret, endpoint? }, got ${kindOf(i)}`)
    }
    onlyKeys(i, "auth.oauth.introspection", ["clientId", "clientSecret", "endpoint"])
    if (typeof i.clientId !== "string" || i.clientId === "") {
      throw new TypeError("toolnexus: auth.oauth.introspection.clientId must be a non-empty string")
    }
    if (typeof i.clientSecret !== "string" || i.clientSecret === "") {
      throw new TypeError("toolnexus: auth.oauth.introspection.clientSecret must be a non-empty string")
    }
    /** @type {BindingIntrospection} */
    const introspection = { clientId: i.clientId, clientSecret: i.clientSecret }
    if (i.endpoint !== undefined) introspection.endpoint = fetchUrl(i.endpoint, "auth.oauth.introspection.endpoint")
    oauth.introspection = introspection
  }
  if (o.clockSkew !== undefined) {
    if (typeof o.clockSkew !== "number" || !(o.clockSkew >= 0 && o.clockSkew <= 600)) {
      throw new TypeError(`toolnexus: auth.oauth.clockSkew must be a number of seconds from 0 to 600, got ${typeof o.clockSkew === "number" ? o.clockSkew : kindOf(o.clockSkew)}`)
    }
    oauth.clockSkew = o.clockSkew
  }
  return oauth
}

/**
 * `auth.tools`, `auth.prompts` or `auth.resources`: scope → globs, as `[{ scope, globs }]`.
 * @param {unknown} value
 * @param {"tools" | "prompts" | "resources"} kind
 * @returns {BindingRule[] | undefined}
 */
function policyOption(value, kind) {
  if (value === undefined || value === null) return undefined
  const what = { tools: "tool names", prompts: "prompt names", resources: "resource URIs" }[kind]
  if (!isPlainObject(value)) {
    throw new TypeError(`toolnexus: auth.${kind} must be an object of scope → globs of ${what}, e.g. { "read": ["files_*"] }, got ${kindOf(value)}`)
  }
  return Object.entries(/** @type {Record<string, unknown>} */ (value)).map(([scope, globs]) => {
    if (scope === "") throw new TypeError(`toolnexus: auth.${kind} has an empty scope name ("*" means any authenticated caller)`)
    if (!Array.isArray(globs) || !globs.every((g) => typeof g === "string")) {
      throw new TypeError(`toolnexus: auth.${kind}[${JSON.stringify(scope)}] must be an array of globs of ${what} (strings)`)
    }
    return { scope, globs: [...globs] }
  })
}

/**
 * `serve`'s `auth`: absent, `"none"`, or `{ tokens?, oauth?, tools?, prompts?, resources? }`
 * with tokens or oauth.
 * @param {unknown} value
 * @returns {BindingAuth | undefined}
 */
function authOption(value) {
  if (value === undefined || value === null) return undefined
  if (value === "none") return { none: true }
  if (!isPlainObject(value)) {
    throw new TypeError(`toolnexus: auth must be "none" or an object { tokens?, oauth?, tools?, prompts?, resources? }, got ${typeof value === "string" ? 'a string other than "none"' : kindOf(value)}`)
  }
  const a = /** @type {any} */ (value)
  onlyKeys(a, "auth", AUTH_KEYS)
  /** @type {Exclude<BindingAuth, { none: true }>} */
  const auth = {}
  if (typeof a.tokens === "function") {
    auth.verify = verifier(a.tokens)
  } else if (Array.isArray(a.tokens)) {
    if (a.tokens.length > 0) auth.tokens = staticTokens(a.tokens)
  } else if (a.tokens !== undefined && a.tokens !== null) {
    throw new TypeError(
      `toolnexus: auth.tokens must be an array of tokens (strings or { token, subject?, scopes? }) or a function (token) => principal | null, got ${kindOf(a.tokens)}`,
    )
  }
  if (a.oauth !== undefined && a.oauth !== null) auth.oauth = oauthOption(a.oauth)
  if (!auth.tokens && !auth.verify && !auth.oauth) throw new TypeError('toolnexus: auth needs tokens or oauth (or "none")')
  for (const kind of /** @type {const} */ (["tools", "prompts", "resources"])) {
    const rules = policyOption(a[kind], kind)
    if (rules) auth[kind] = rules
  }
  return auth
}

/**
 * `accessLog`: `true` writes one JSON line per request on stderr; a function gets each entry
 * (guarded: a throw in it is a `ToolnexusWarning`, never the request's failure).
 * @param {unknown} value
 * @returns {((entry: import("../index").AccessLogEntry) => void) | undefined}
 */
function accessLogOption(value) {
  if (value === undefined || value === null || value === false) return undefined
  if (value === true) {
    return (entry) => {
      try {
        process.stderr.write(`${JSON.stringify(entry)}\n`)
      } catch {
        // A closed stderr loses log lines, never a request.
      }
    }
  }
  if (typeof value === "function") return guarded(/** @type {(entry: any) => unknown} */ (value), "accessLog")
  throw new TypeError(`toolnexus: accessLog must be true, false or a function (entry) => void, got ${kindOf(value)}`)
}

/**
 * `toolkit.serve(addr, opts)`'s options for the native HTTP server (lib/toolkit.js adds `ready`).
 * @param {any} o
 * @returns {ServeBinding}
 */
function serveOptions(o) {
  if (o.stateless !== undefined && o.stateless !== null && typeof o.stateless !== "boolean") {
    throw new TypeError(`toolnexus: stateless must be a boolean, got ${typeof o.stateless}`)
  }
  return {
    stateless: o.stateless ?? undefined,
    allowedHosts: stringsOption("allowedHosts", o.allowedHosts),
    allowedOrigins: stringsOption("allowedOrigins", o.allowedOrigins),
    sessionIdleTimeout: boundedNumber("sessionIdleTimeout", o.sessionIdleTimeout, "a number of milliseconds from 1 to 1e12", 1, 1e12, false),
    maxSessions: boundedNumber("maxSessions", o.maxSessions, "a whole number from 1 to 1e9", 1, 1e9, true),
    auth: authOption(o.auth),
    accessLog: accessLogOption(o.accessLog),
  }
}

module.exports = {
  listMcpTools,
  checkLoad,
  callOptions,
  serveOptions,
  requestOptions,
  stringArgument,
  stringRecord,
  completionArguments,
  functionOption,
}
