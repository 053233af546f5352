// @ts-check
// Policy hooks (`hooks: { beforeCall, afterCall }`) as the native server asks them: each
// answer is checked here, so a hook that answers something else fails its call in words
// (the engine bounds each in time and turns a throw into the call's failure).
"use strict"

/** @typedef {import("../index").CallHooks} CallHooks */

const ANSWER_FIELDS = { tool: "content", resource: "contents", prompt: "messages" }

/**
 * @param {unknown} hooks  what the user gave as `hooks`
 * @param {string} where  its name in messages (`hooks`, `mcp.hooks`, ...)
 * @returns {import("../binding").NativePolicy | undefined}
 */
function nativeHooks(hooks, where) {
  if (hooks === undefined || hooks === null) return undefined
  if (typeof hooks !== "object" || Array.isArray(hooks)) {
    throw new TypeError(`toolnexus: ${where} must be an object with beforeCall and/or afterCall functions`)
  }
  for (const key of Object.keys(hooks)) {
    if (key !== "beforeCall" && key !== "afterCall") {
      throw new TypeError(`toolnexus: ${where}.${key} is not a hook (the hooks are beforeCall and afterCall)`)
    }
  }
  const { beforeCall, afterCall } = /** @type {CallHooks} */ (hooks)
  for (const [name, hook] of [["beforeCall", beforeCall], ["afterCall", afterCall]]) {
    if (hook !== undefined && typeof hook !== "function") {
      throw new TypeError(`toolnexus: ${where}.${name} must be a function`)
    }
  }
  if (!beforeCall && !afterCall) return undefined
  return {
    before: beforeCall ? async (/** @type {any} */ call) => verdict(await beforeCall(call)) : undefined,
    after: afterCall ? async (/** @type {any} */ call) => replacement(await afterCall(call), call.kind) : undefined,
  }
}

/**
 * What `beforeCall` answered, checked: nothing (go on), `{ deny: "reason" }` or `{ arguments }`.
 * @param {unknown} answer
 */
function verdict(answer) {
  if (answer === undefined || answer === null) return null
  if (typeof answer !== "object" || Array.isArray(answer)) {
    throw new TypeError("beforeCall must return nothing, { deny: \"reason\" } or { arguments: {...} }")
  }
  const { deny, arguments: args, ...rest } = /** @type {Record<string, unknown>} */ (answer)
  const extra = Object.keys(rest)
  if (extra.length > 0) throw new TypeError(`beforeCall returned an unknown field "${extra[0]}" (it may return deny or arguments)`)
  if (deny !== undefined) {
    if (typeof deny !== "string" || deny.length === 0) throw new TypeError("beforeCall's deny must be the reason, a non-empty string")
    if (args !== undefined) throw new TypeError("beforeCall returned both deny and arguments")
    return { deny }
  }
  if (args === undefined) return null
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new TypeError("beforeCall's arguments must be an object")
  }
  return { arguments: args }
}

/**
 * What `afterCall` answered, checked: nothing (keep the result), or a result of the call's kind.
 * @param {unknown} answer
 * @param {"tool" | "resource" | "prompt"} kind
 */
function replacement(answer, kind) {
  if (answer === undefined || answer === null) return null
  const field = ANSWER_FIELDS[kind]
  if (typeof answer !== "object" || !Array.isArray(/** @type {any} */ (answer)[field])) {
    throw new TypeError(`afterCall must return nothing or a ${kind} result with a ${field} array`)
  }
  return { result: answer }
}

/**
 * `resultLimits` ({ maxBytes, tools: { <name or glob>: bytes } }) checked, as the native
 * server's policy fields (undefined when absent).
 * @param {unknown} value
 * @param {string} where  its name in messages
 */
function nativeResultLimits(value, where) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "object" || Array.isArray(value)) throw new TypeError(`toolnexus: ${where} must be an object like { maxBytes, tools }`)
  const o = /** @type {Record<string, unknown>} */ (value)
  for (const key of Object.keys(o)) {
    if (key !== "maxBytes" && key !== "tools") throw new TypeError(`toolnexus: ${where}.${key} is not a result limit (they are maxBytes and tools)`)
  }
  /** @param {unknown} bytes @param {string} at */
  const checked = (bytes, at) => {
    if (typeof bytes !== "number" || !Number.isInteger(bytes) || bytes < 256 || bytes > 2 ** 31) {
      throw new TypeError(`toolnexus: ${at} must be a whole number of bytes from 256 to 2147483648, got ${JSON.stringify(bytes)}`)
    }
    return bytes
  }
  const maxResultBytes = o.maxBytes === undefined ? undefined : checked(o.maxBytes, `${where}.maxBytes`)
  /** @type {{ glob: string, bytes: number }[]} */
  const toolResultBytes = []
  if (o.tools !== undefined) {
    if (typeof o.tools !== "object" || o.tools === null || Array.isArray(o.tools)) {
      throw new TypeError(`toolnexus: ${where}.tools must be an object of byte limits by tool name (or glob)`)
    }
    for (const [glob, bytes] of Object.entries(o.tools)) toolResultBytes.push({ glob, bytes: checked(bytes, `${where}.tools[${JSON.stringify(glob)}]`) })
  }
  return { maxResultBytes, toolResultBytes }
}

/**
 * The native server's policy: hooks and result limits together (undefined when neither).
 * @param {import("../binding").NativePolicy | undefined} hooks
 * @param {ReturnType<typeof nativeResultLimits>} limits
 * @returns {import("../binding").NativePolicy | undefined}
 */
function nativePolicy(hooks, limits) {
  if (hooks === undefined && limits === undefined) return undefined
  return { ...(hooks ?? {}), ...(limits ?? {}) }
}

module.exports = { nativeHooks, nativePolicy, nativeResultLimits }
