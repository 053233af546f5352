// @ts-check
// `toolkit.serve(addr, opts)`'s options, checked once, here: who may use the endpoint (`auth`),
// the access log, and the HTTP server's own bounds, in the shape the native `serveHttp` takes.
// Never a token's value in a message.
"use strict"

const { kindOf, boundedNumber } = require("./options.js")

/**
 * An app's listener guarded (lib/results.js, read only when a listener is given).
 * @param {(...args: any[]) => unknown} fn
 * @param {string} name
 */
const guarded = (fn, name) => require("./results.js").guardCallback(fn, name)

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
 * @typedef {import("../binding").HttpServeOptions & { auth?: BindingAuth, accessLog?: (entry: import("../index").AccessLogEntry) => void, stateKey?: Buffer[], replicaUrl?: string }} ServeBinding
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
  const url = parsedUrl(value, words)
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

/** The shortest state key accepted, in bytes (src/serve/seal.rs refuses shorter ones too). */
const MIN_STATE_KEY = 16
/** Keys in rotation at most. */
const MAX_STATE_KEYS = 16
const STATE_KEY_ADVICE = "32 random bytes are best: openssl rand -base64 32"

/**
 * `stateKey`: one key (a string, taken as UTF-8, or bytes) or a list of them, the first sealing
 * and every one opening, so keys rotate by putting the new one first. Copied into Buffers, as the
 * native server takes them. The messages give lengths, never a key.
 * @param {unknown} value
 * @returns {Buffer[] | undefined}
 */
function stateKeyOption(value) {
  if (value === undefined || value === null) return undefined
  /** @param {unknown} v @returns {v is string | Uint8Array} */
  const one = (v) => typeof v === "string" || v instanceof Uint8Array
  if (!one(value) && !Array.isArray(value)) {
    throw new TypeError(
      `toolnexus: stateKey must be a string, a Buffer or Uint8Array, or an array of them (the first seals, all open), got ${kindOf(value)}`,
    )
  }
  const list = Array.isArray(value) ? value : [value]
  if (list.length === 0) throw new TypeError("toolnexus: stateKey must hold at least one key (an empty array)")
  if (list.length > MAX_STATE_KEYS) {
    throw new TypeError(`toolnexus: stateKey holds ${list.length} keys; at most ${MAX_STATE_KEYS} can be in rotation`)
  }
  return list.map((key, i) => {
    const path = Array.isArray(value) ? `stateKey[${i}]` : "stateKey"
    if (!one(key)) throw new TypeError(`toolnexus: ${path} must be a string, a Buffer or a Uint8Array, got ${kindOf(key)}`)
    // A copy either way: changing the caller's bytes later changes nothing served.
    const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : Buffer.from(key)
    if (bytes.length < MIN_STATE_KEY) {
      throw new TypeError(`toolnexus: ${path} must be at least ${MIN_STATE_KEY} bytes, got ${bytes.length} (${STATE_KEY_ADVICE})`)
    }
    return bytes
  })
}

/**
 * `value` as a URL, or a TypeError saying `words` (never quoting the value).
 * @param {string} value
 * @param {string} words
 * @returns {URL}
 */
function parsedUrl(value, words) {
  try {
    return new URL(value)
  } catch {
    throw new TypeError(`${words}, got a string that is not a URL`)
  }
}

/**
 * `replicaUrl`: the http(s) origin other replicas reach this one at, without a trailing slash.
 * @param {unknown} value
 * @returns {string | undefined}
 */
function replicaUrlOption(value) {
  if (value === undefined || value === null) return undefined
  const words = "toolnexus: replicaUrl must be an http:// or https:// URL other replicas reach this one at (e.g. http://10.0.0.5:8808)"
  if (typeof value !== "string") throw new TypeError(`${words}, got ${kindOf(value)}`)
  const url = parsedUrl(value, words)
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`${words}, got ${url.protocol}//${url.host}`)
  if (url.username !== "" || url.password !== "") throw new TypeError("toolnexus: replicaUrl must not hold a user name or password")
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || /[?#]/.test(value)) {
    throw new TypeError(`toolnexus: replicaUrl must be an origin with no path, query or fragment (e.g. http://10.0.0.5:8808, not …/mcp), got ${url.protocol}//${url.host} with more after it`)
  }
  return value.endsWith("/") ? value.slice(0, -1) : value
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
  const stateKey = stateKeyOption(o.stateKey)
  const replicaUrl = replicaUrlOption(o.replicaUrl)
  if (replicaUrl !== undefined && stateKey === undefined) {
    throw new TypeError("toolnexus: replicaUrl needs stateKey (replicas hand each other answers only when they share a state key)")
  }
  return {
    stateless: o.stateless ?? undefined,
    allowedHosts: stringsOption("allowedHosts", o.allowedHosts),
    allowedOrigins: stringsOption("allowedOrigins", o.allowedOrigins),
    sessionIdleTimeout: boundedNumber("sessionIdleTimeout", o.sessionIdleTimeout, "a number of milliseconds from 1 to 1e12", 1, 1e12, false),
    maxSessions: boundedNumber("maxSessions", o.maxSessions, "a whole number from 1 to 1e9", 1, 1e9, true),
    auth: authOption(o.auth),
    accessLog: accessLogOption(o.accessLog),
    stateKey,
    replicaUrl,
  }
}

module.exports = { serveOptions }
