// @ts-check
// `toolkit.serve`'s `auth`: who may use the endpoint (static tokens, a verifying function or
// OAuth) and which tools, prompts and resources each scope reaches, in the shape the native
// `serveHttp` takes. Never a token's value in a message.
"use strict"

const { kindOf } = require("./options.js")
const { isPlainObject, onlyKeys, scopeList } = require("./serve-checks.js")
const { oauthOption } = require("./serve-oauth.js")

/**
 * @typedef {{ token: string, subject: string, scopes: string[] }} BindingToken
 * @typedef {{ subject: string, scopes: string[], claims: Record<string, unknown> }} BindingPrincipal
 * @typedef {{ scope: string, globs: string[] }} BindingRule
 * @typedef {import("./serve-oauth.js").BindingOAuth} BindingOAuth
 * @typedef {{ none: true } | { tokens?: BindingToken[], verify?: (token: string) => Promise<BindingPrincipal | null>, oauth?: BindingOAuth, tools?: BindingRule[], prompts?: BindingRule[], resources?: BindingRule[] }} BindingAuth
 */

/** The longest bearer token the server reads (longer ones are refused unparsed). */
const MAX_TOKEN_LENGTH = 16384
const AUTH_KEYS = ["tokens", "oauth", "tools", "prompts", "resources"]

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

module.exports = { authOption }
