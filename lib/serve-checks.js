// @ts-check
// Checks shared by `toolkit.serve`'s options (lib/serve-options.js, lib/serve-auth.js,
// lib/serve-oauth.js). Never a token's value in a message.
"use strict"

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

module.exports = { isPlainObject, onlyKeys, scopeList, parsedUrl }
