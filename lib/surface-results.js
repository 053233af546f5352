// @ts-check
// The results of the app's own reads, prompts and completers (lib/surface.js), normalised to
// MCP's ReadResourceResult, GetPromptResult and completion shapes, and the envelope the native
// server takes: `{ result }`, or `{ error: { code?, message, data? } }` for a throw.
"use strict"

/** @param {unknown} v @returns {string | undefined} base64 of bytes, or the string as it is */
function base64(v) {
  if (typeof v === "string") return v
  if (v instanceof ArrayBuffer) return Buffer.from(v).toString("base64")
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64")
  return undefined
}

/** An error of a served call that the client hears as a JSON-RPC error. */
class Refusal extends Error {}

/**
 * One content of a read, with the requested `uri` when it has none.
 * @param {unknown} c
 * @param {string} uri
 * @param {string | undefined} mimeType  the definition's
 */
function contentOf(c, uri, mimeType) {
  if (typeof c === "string") return { uri, mimeType: mimeType ?? "text/plain", text: c }
  const bytes = base64(c)
  if (bytes !== undefined && typeof c !== "string") {
    return { uri, mimeType: mimeType ?? "application/octet-stream", blob: bytes }
  }
  if (c === null || typeof c !== "object" || Array.isArray(c)) {
    throw new Refusal(`a resource's contents must be objects with text or blob, not ${describe(c)}`)
  }
  const o = /** @type {Record<string, unknown>} */ (c)
  if ("blob" in o) {
    const blob = base64(o.blob)
    if (blob === undefined) throw new Refusal("a resource's blob must be base64 text, a Uint8Array or an ArrayBuffer")
    return { ...o, uri: o.uri ?? uri, mimeType: o.mimeType ?? mimeType ?? "application/octet-stream", blob }
  }
  if (typeof o.text !== "string") throw new Refusal("a resource's contents need a text string or a blob")
  return { ...o, uri: o.uri ?? uri, mimeType: o.mimeType ?? mimeType ?? "text/plain" }
}

/** @param {unknown} v */
function describe(v) {
  if (v === null) return "null"
  if (Array.isArray(v)) return "an array"
  return typeof v === "object" ? "an object" : `a ${typeof v}`
}

/**
 * What `read` returned, as a ReadResourceResult.
 * @param {unknown} value
 * @param {string} uri  the URI read
 * @param {string | undefined} mimeType  the definition's
 */
function readResult(value, uri, mimeType) {
  return { resultType: "complete", ...readContents(value, uri, mimeType) }
}

/**
 * @param {unknown} value
 * @param {string} uri
 * @param {string | undefined} mimeType
 */
function readContents(value, uri, mimeType) {
  if (Array.isArray(value)) return { contents: value.map((c) => contentOf(c, uri, mimeType)) }
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer)) {
    const { contents, ...rest } = /** @type {Record<string, unknown>} */ (value)
    if (contents !== undefined) {
      if (!Array.isArray(contents)) throw new Refusal("a read's contents must be an array")
      return { ...rest, contents: contents.map((c) => contentOf(c, uri, mimeType)) }
    }
  }
  if (value === undefined || value === null) throw new Refusal("read returned nothing")
  return { contents: [contentOf(value, uri, mimeType)] }
}

/**
 * What `get` returned, as a GetPromptResult.
 * @param {unknown} value
 */
function promptResult(value) {
  const text = (/** @type {string} */ t) => ({ type: "text", text: t })
  // resultType: the 2026-07-28 era wants it on every result (the handshake era's is stripped).
  if (typeof value === "string") return { resultType: "complete", messages: [{ role: "user", content: text(value) }] }
  if (value === null || typeof value !== "object" || !Array.isArray(/** @type {any} */ (value).messages)) {
    throw new Refusal(`get must return a string or { messages }, not ${describe(value)}`)
  }
  const result = /** @type {{ messages: unknown[] }} */ (value)
  return {
    resultType: "complete",
    ...result,
    messages: result.messages.map((m, i) => {
      if (m === null || typeof m !== "object") throw new Refusal(`messages[${i}] must be an object`)
      const message = /** @type {Record<string, unknown>} */ (m)
      if (typeof message.content === "string") return { ...message, role: message.role ?? "user", content: text(message.content) }
      return { ...message, role: message.role ?? "user" }
    }),
  }
}

/**
 * What a completer returned: an array of values, or a completion as it is.
 * @param {unknown} value
 */
function completionResult(value) {
  if (Array.isArray(value)) {
    if (!value.every((v) => typeof v === "string")) throw new Refusal("a completer must return strings")
    return capped({ values: value })
  }
  if (value === null || typeof value !== "object" || !Array.isArray(/** @type {any} */ (value).values)) {
    throw new Refusal(`a completer must return an array of strings or { values }, not ${describe(value)}`)
  }
  return capped(/** @type {{ values: unknown[], total?: number, hasMore?: boolean }} */ (value))
}

/** The protocol's most values in one completion (the rest are counted in `total`). */
const MAX_COMPLETION_VALUES = 100

/**
 * A completion cut to its first 100 values before it crosses to the native side, however many
 * a completer gave.
 * @param {{ values: unknown[], total?: number, hasMore?: boolean }} completion
 */
function capped(completion) {
  const n = completion.values.length
  if (n <= MAX_COMPLETION_VALUES) return completion
  const total = typeof completion.total === "number" && completion.total > n ? completion.total : n
  return { ...completion, values: completion.values.slice(0, MAX_COMPLETION_VALUES), total, hasMore: true }
}

/**
 * A throw as the envelope's error: the code when it is an integer, and the data.
 * @param {unknown} error
 */
function errorOf(error) {
  const e = /** @type {any} */ (error)
  const message = error instanceof Error ? error.message : String(error)
  /** @type {{ code?: number, message: string, data?: unknown }} */
  const out = { message }
  if (Number.isInteger(e?.code)) out.code = e.code
  else if (error instanceof Refusal) out.code = -32603
  if (e?.data !== undefined) out.data = e.data
  return out
}

/**
 * @param {() => unknown} run
 * @param {(v: unknown) => unknown} normalise
 */
async function envelope(run, normalise) {
  try {
    return { result: normalise(await run()) }
  } catch (error) {
    return { error: errorOf(error) }
  }
}

module.exports = { readResult, promptResult, completionResult, envelope }
