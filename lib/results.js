// @ts-check
// What a `run` callback's value becomes: a ToolResult. Shared by defineTool and the toolkit.
"use strict"

const binding = require("../binding.js")

/** @typedef {import("../index").ToolResult} ToolResult */

/**
 * @param {unknown} value
 * @returns {value is ToolResult}
 */
function isToolResult(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (/** @type {any} */ (value).output) === "string" &&
    typeof (/** @type {any} */ (value).isError) === "boolean"
  )
}

/**
 * An MCP CallToolResult: `content` parts (and maybe structuredContent), no `output`.
 * @param {unknown} value
 * @returns {value is { content: unknown[] }}
 */
function isMcpResult(value) {
  return value !== null && typeof value === "object" && Array.isArray(/** @type {any} */ (value).content) && !("output" in value)
}

/**
 * A string is kept, a ToolResult is kept, an MCP result keeps its parts (its `output` mapped
 * as for MCP tools, natively), undefined is "", anything else is JSON.
 * @param {unknown} value
 * @returns {ToolResult}
 */
function toToolResult(value) {
  if (typeof value === "string") return { output: value, isError: false }
  if (isToolResult(value)) return value
  if (isMcpResult(value)) return /** @type {ToolResult} */ (binding.toolResultFromMcp(value))
  if (value === undefined) return { output: "", isError: false }
  let json
  try {
    json = JSON.stringify(value)
  } catch (error) {
    return errorResult(error)
  }
  return { output: json === undefined ? String(value) : json, isError: false }
}

/**
 * @param {unknown} error
 * @returns {ToolResult}
 */
function errorResult(error) {
  const output = error instanceof Error ? error.message : typeof error === "string" ? error : String(error)
  return { output, isError: true }
}

/**
 * An app's callback that throws (or rejects, if async) must not break the engine: its error
 * becomes a warning.
 * @template {unknown[]} A
 * @param {(...args: A) => unknown} fn
 * @param {string} name
 * @returns {(...args: A) => void}
 */
function guardCallback(fn, name) {
  /** @param {unknown} error */
  const warn = (error) => process.emitWarning(`toolnexus: ${name} threw: ${/** @type {any} */ (error)?.message ?? error}`, "ToolnexusWarning")
  return (...args) => {
    try {
      const result = /** @type {any} */ (fn(...args))
      // An async listener's rejection is a warning too, never an unhandled rejection.
      if (result !== null && typeof result === "object" && typeof result.then === "function") result.then(undefined, warn)
    } catch (error) {
      warn(error)
    }
  }
}

module.exports = { toToolResult, errorResult, guardCallback }
