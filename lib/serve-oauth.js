// @ts-check
// `toolkit.serve`'s `auth.oauth`: the authorisation server whose access tokens are accepted, in
// the shape the native `serveHttp` takes. Never a secret's value in a message.
"use strict"

const { kindOf } = require("./options.js")
const { isPlainObject, onlyKeys, scopeList, parsedUrl } = require("./serve-checks.js")

/**
 * @typedef {{ clientId: string, clientSecret: string, endpoint?: string }} BindingIntrospection
 * @typedef {{ issuer: string, audience?: string, requiredScopes?: string[], jwksUri?: string, introspection?: BindingIntrospection, clockSkew?: number }} BindingOAuth
 */

const OAUTH_KEYS = ["issuer", "audience", "requiredScopes", "jwksUri", "introspection", "clockSkew"]

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

module.exports = { oauthOption }
