// @ts-check
// `toolkit.serve(addr, opts)`'s options, checked once, here: who may use the endpoint (`auth`,
// lib/serve-auth.js), the access log, and the HTTP server's own bounds, in the shape the native
// `serveHttp` takes. Never a token's value in a message.
"use strict"

const { kindOf, boundedNumber } = require("./options.js")
const { authOption } = require("./serve-auth.js")
const { parsedUrl } = require("./serve-checks.js")

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
 * @typedef {import("./serve-auth.js").BindingAuth} BindingAuth
 * @typedef {import("../binding").HttpServeOptions & { auth?: BindingAuth, accessLog?: (entry: import("../index").AccessLogEntry) => void, stateKey?: Buffer[], replicaUrl?: string, stateStore?: string }} ServeBinding
 * What the native `serveHttp` is handed (the "binding shape" of issue 22's design).
 */

/**
 * `accessLog`: `true` writes one JSON line per request on stderr; a function gets each entry
 * (guarded: a throw in it is a `ToolnexusWarning`, never the request's failure).
 * @param {unknown} value
 * @returns {((entry: import("../index").AccessLogEntry) => void) | undefined}
 */
function accessLogOption(value) {
  if (value === undefined || value === null || value === false) return undefined
  /** @type {(entry: import("../index").AccessLogEntry) => unknown} */
  let write
  if (value === true) {
    write = (entry) => {
      try {
        process.stderr.write(`${JSON.stringify(entry)}\n`)
      } catch {
        // A closed stderr loses log lines, never a request.
      }
    }
  } else if (typeof value === "function") {
    write = guarded(/** @type {(entry: any) => unknown} */ (value), "accessLog")
  } else {
    throw new TypeError(`toolnexus: accessLog must be true, false or a function (entry) => void, got ${kindOf(value)}`)
  }
  // The native server's `null` after the last entry, when it stops: not an entry, only the sign
  // that every entry before it was handed over (src/serve/http.rs, LogFlush).
  return (entry) => {
    if (entry !== null) write(entry)
  }
}

/** The shortest state key accepted, in bytes (crates/engine/src/serve/seal.rs refuses shorter ones too). */
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
 * `stateStore`: the `redis://` or `rediss://` URL of the store replicas share (credentials may
 * be in it; no message ever quotes them).
 * @param {unknown} value
 * @returns {string | undefined}
 */
function stateStoreOption(value) {
  if (value === undefined || value === null) return undefined
  const words = "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379)"
  if (typeof value !== "string") throw new TypeError(`${words}, got ${kindOf(value)}`)
  let url
  try {
    url = new URL(value)
  } catch {
    throw new TypeError(`${words}, got something that is not a URL`)
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") throw new TypeError(`${words}, got ${url.protocol}//`)
  if (url.hostname === "") throw new TypeError(`${words}: it names no host`)
  if (url.search !== "" || url.hash !== "") throw new TypeError(`${words}, with no query or fragment (the database may follow the port: redis://host:6379/2)`)
  if (!/^\/?(\d+)?$/.test(url.pathname)) throw new TypeError(`${words}: what follows the host must be a database number (redis://host:6379/2)`)
  return value
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
  const stateStore = stateStoreOption(o.stateStore)
  if (stateStore !== undefined && stateKey === undefined) {
    throw new TypeError("toolnexus: stateStore needs stateKey (what replicas keep in the store is named and sealed with the key they share)")
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
    stateStore,
    metrics: metricsOption(o.metrics),
    limits: limitsOption(o.limits),
  }
}

const LIMIT_FIELDS = ["callsPerMinute", "burst", "concurrent"]

/**
 * One limit (`callsPerMinute`, `burst`, `concurrent`), checked; `where` names it in messages.
 * @param {unknown} value
 * @param {string} where
 * @param {string[]} [more]  other fields allowed beside it (read by the caller)
 */
function limitOption(value, where, more = []) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`toolnexus: ${where} must be an object like { callsPerMinute, burst, concurrent }`)
  }
  const o = /** @type {Record<string, unknown>} */ (value)
  for (const key of Object.keys(o)) {
    if (!LIMIT_FIELDS.includes(key) && !more.includes(key)) {
      throw new TypeError(`toolnexus: ${where}.${key} is not a limit (they are ${[...LIMIT_FIELDS, ...more].join(", ")})`)
    }
  }
  const callsPerMinute = boundedNumber(`${where}.callsPerMinute`, o.callsPerMinute, "a number of calls from 0.001 to 1e9", 0.001, 1e9, false)
  const burst = boundedNumber(`${where}.burst`, o.burst, "a whole number of calls from 1 to 1e9", 1, 1e9, true)
  const concurrent = boundedNumber(`${where}.concurrent`, o.concurrent, "a whole number of calls from 1 to 1e6", 1, 1e6, true)
  if (burst !== undefined && callsPerMinute === undefined) {
    throw new TypeError(`toolnexus: ${where}.burst needs callsPerMinute (the rate its bucket refills at)`)
  }
  return { callsPerMinute, burst, concurrent }
}

/** Whether a checked limit limits anything. */
const limits = (/** @type {{ callsPerMinute?: number, concurrent?: number }} */ l) => l.callsPerMinute !== undefined || l.concurrent !== undefined

/**
 * `limits`: each caller's (the fields at its top), the endpoint's (`overall`) and each tool's
 * (`tools`, by name or glob), checked and normalised for the native server.
 * @param {unknown} value
 */
function limitsOption(value) {
  if (value === undefined || value === null) return undefined
  const caller = limitOption(value, "limits", ["overall", "tools"])
  const o = /** @type {Record<string, unknown>} */ (value)
  const overall = o.overall === undefined ? undefined : limitOption(o.overall, "limits.overall")
  /** @type {{ glob: string, limit: ReturnType<typeof limitOption> }[]} */
  const tools = []
  if (o.tools !== undefined) {
    if (typeof o.tools !== "object" || o.tools === null || Array.isArray(o.tools)) {
      throw new TypeError("toolnexus: limits.tools must be an object of limits by tool name (or glob)")
    }
    for (const [glob, limit] of Object.entries(o.tools)) {
      if (glob === "") throw new TypeError("toolnexus: limits.tools has an empty tool name")
      tools.push({ glob, limit: limitOption(limit, `limits.tools[${JSON.stringify(glob)}]`) })
    }
  }
  return {
    caller: limits(caller) ? caller : undefined,
    overall: overall && limits(overall) ? overall : undefined,
    tools: tools.filter((t) => limits(t.limit)),
  }
}

/**
 * `metrics`: serve Prometheus text at `/metrics` (behind the endpoint's auth).
 * @param {unknown} value
 */
function metricsOption(value) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "boolean") throw new TypeError(`toolnexus: metrics must be a boolean, got ${typeof value}`)
  return value
}

module.exports = { serveOptions }
