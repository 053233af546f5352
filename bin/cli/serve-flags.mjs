// `toolnexus serve`'s flags for auth, the state key, tool search and policy hooks, read and checked as
// toolkit.serve and createToolkit check them, so a mistake is exit 2 before any server starts.
import fs from "node:fs"
import { createRequire } from "node:module"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { ArgumentError, UsageError, messageOf } from "./inventory.mjs"

const AUTH_FLAGS = ["auth-token-env", "auth-token-file", "auth-file", "oauth-issuer", "oauth-audience", "oauth-scopes", "oauth-jwks-uri"]

/** The text of `file` for `flag`, or a UsageError in words. */
function readFlagFile(flag, file) {
  return readFlagFileBytes(flag, file).toString("utf8")
}

/**
 * @param {string} flag
 * @param {string} file
 */
function readFlagFileBytes(flag, file) {
  try {
    return fs.readFileSync(file)
  } catch (err) {
    const why = err?.code === "ENOENT" ? "no such file" : err?.code === "EISDIR" ? "it is a folder" : messageOf(err)
    throw new UsageError(`toolnexus serve: cannot read ${flag} ${file}: ${why}`)
  }
}

/**
 * JSON.parse's own message may quote the text (a token, here), so only the place is told.
 * @param {string} text
 * @param {string} file
 */
function parseAuthFile(text, file) {
  let value
  try {
    value = JSON.parse(text)
  } catch (err) {
    const at = /position (\d+)/.exec(messageOf(err))
    let where = ""
    if (at) {
      const before = text.slice(0, Number(at[1])).split("\n")
      where = ` (line ${before.length}, column ${before[before.length - 1].length + 1})`
    }
    throw new UsageError(`toolnexus serve: --auth-file ${file} is not valid JSON${where}`)
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`toolnexus serve: --auth-file ${file} must hold a JSON object { tokens?, oauth?, tools?, prompts?, resources? }`)
  }
  return value
}

/**
 * `serve`'s `auth` and `accessLog` from the flags, checked as toolkit.serve checks them, so a
 * mistake is exit 2 before any server starts. No token is ever part of a message.
 */
export function authFromFlags(values) {
  const given = AUTH_FLAGS.filter((flag) => values[flag] !== undefined)
  if (values["no-auth"] && given.length > 0) {
    throw new ArgumentError(`toolnexus serve: --no-auth cannot be combined with --${given[0]}`)
  }
  if (values.stdio) {
    const http = [...given, ...["no-auth", "access-log", "metrics"].filter((flag) => values[flag])]
    if (http.length > 0) throw new ArgumentError(`toolnexus serve: --${http[0]} is for HTTP serving, not --stdio`)
  }
  let auth
  if (values["no-auth"]) auth = "none"
  else if (given.length > 0) {
    auth = values["auth-file"] !== undefined ? parseAuthFile(readFlagFile("--auth-file", values["auth-file"]), values["auth-file"]) : {}
    const tokens = []
    for (const name of values["auth-token-env"] ?? []) {
      const token = process.env[name]
      if (token === undefined) throw new UsageError(`toolnexus serve: --auth-token-env ${name}: the environment variable ${name} is not set`)
      if (token.trim() === "") throw new UsageError(`toolnexus serve: --auth-token-env ${name}: the environment variable ${name} is empty`)
      tokens.push({ token: token.trim(), subject: name })
      // The servers this command starts inherit its environment: the token is not theirs.
      delete process.env[name]
    }
    for (const file of values["auth-token-file"] ?? []) {
      const lines = readFlagFile("--auth-token-file", file).split(/\r?\n/).map((line) => line.trim())
      const found = lines.filter((line) => line !== "" && !line.startsWith("#"))
      if (found.length === 0) {
        throw new UsageError(`toolnexus serve: --auth-token-file ${file} holds no token (one per line; blank lines and # comments are ignored)`)
      }
      tokens.push(...found)
    }
    if (tokens.length > 0) auth.tokens = Array.isArray(auth.tokens) ? [...auth.tokens, ...tokens] : auth.tokens === undefined ? tokens : auth.tokens
    const oauthFlags = { "oauth-issuer": "issuer", "oauth-audience": "audience", "oauth-jwks-uri": "jwksUri" }
    const oauth = {}
    for (const [flag, key] of Object.entries(oauthFlags)) if (values[flag] !== undefined) oauth[key] = values[flag]
    if (values["oauth-scopes"] !== undefined) oauth.requiredScopes = values["oauth-scopes"].split(",").map((s) => s.trim()).filter(Boolean)
    if (Object.keys(oauth).length > 0) {
      const merged = { ...(auth.oauth !== null && typeof auth.oauth === "object" ? auth.oauth : {}), ...oauth }
      if (merged.issuer === undefined) {
        const flag = Object.keys(oauthFlags).concat("oauth-scopes").find((f) => values[f] !== undefined)
        throw new ArgumentError(`toolnexus serve: --${flag} needs --oauth-issuer (or oauth.issuer in --auth-file)`)
      }
      auth.oauth = merged
    }
  }
  const options = { auth, accessLog: values["access-log"] === true ? true : undefined }
  try {
    createRequire(import.meta.url)("../../lib/serve-options.js").serveOptions(options)
  } catch (err) {
    throw new UsageError(`toolnexus serve: ${messageOf(err).replace(/^toolnexus: /, "")}${values["auth-file"] !== undefined ? ` (in --auth-file ${values["auth-file"]} or the flags)` : ""}`)
  }
  return options
}

const STATE_KEY_FLAGS = ["state-key-file", "state-key-env", "replica-url", "state-store", "state-store-env"]
const MIN_STATE_KEY = 16
const KEY_ADVICE = "a key must be at least 16 bytes (32 random bytes are best: openssl rand -base64 32)"

/**
 * The keys of a --state-key-file: exactly 32 bytes that are not text are one raw key (as
 * `head -c 32 /dev/urandom` writes it); otherwise UTF-8 text, one key a line (blank lines and
 * # comments skipped), a line `base64:…` being the bytes it encodes. Anything else is refused
 * in words (never quoting the file).
 * @param {string} file
 * @returns {Array<string | Buffer>}
 */
function stateKeysOfFile(file) {
  const bytes = readFlagFileBytes("--state-key-file", file)
  const text = new TextDecoder("utf-8", { fatal: true })
  let decoded
  try {
    decoded = text.decode(bytes)
  } catch {
    decoded = undefined
  }
  // Text holds no control characters but line breaks and tabs.
  const isText = decoded !== undefined && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(decoded)
  if (!isText) {
    if (bytes.length === 32) return [bytes]
    throw new UsageError(
      `toolnexus serve: --state-key-file ${file} is not text (one key a line) nor a raw key of exactly 32 bytes (it holds ${bytes.length} bytes); write the key as text (openssl rand -base64 32 > FILE), as base64:<key in base64> lines, or as 32 raw bytes (head -c 32 /dev/urandom > FILE)`,
    )
  }
  /** @type {Array<string | Buffer>} */
  const keys = []
  decoded.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim()
    if (line === "" || line.startsWith("#")) return
    let key = /** @type {string | Buffer} */ (line)
    if (line.startsWith("base64:")) {
      const encoded = line.slice("base64:".length).trim()
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
        throw new UsageError(`toolnexus serve: --state-key-file ${file}: line ${i + 1} says base64: but what follows is not base64`)
      }
      key = Buffer.from(encoded, "base64")
    }
    const length = typeof key === "string" ? Buffer.byteLength(key, "utf8") : key.length
    if (length < MIN_STATE_KEY) throw new UsageError(`toolnexus serve: --state-key-file ${file}: the key on line ${i + 1} is ${length} bytes; ${KEY_ADVICE}`)
    keys.push(key)
  })
  return keys
}

/**
 * serve's `stateKey` and `replicaUrl` from --state-key-file, --state-key-env and --replica-url
 * (both undefined without them), checked as toolkit.serve checks them. No key is ever part of
 * a message, and an --state-key-env variable is removed from the environment once read.
 */
export function stateKeyFromFlags(values) {
  const given = STATE_KEY_FLAGS.filter((flag) => values[flag] !== undefined)
  if (values.stdio && given.length > 0) throw new ArgumentError(`toolnexus serve: --${given[0]} is for HTTP serving, not --stdio`)
  const file = values["state-key-file"]
  const names = values["state-key-env"] ?? []
  if (file !== undefined && names.length > 0) {
    throw new ArgumentError("toolnexus serve: --state-key-file and --state-key-env cannot be combined (keep every key in one place, the sealing one first)")
  }
  /** @type {Array<string | Buffer>} */
  const keys = []
  if (file !== undefined) {
    keys.push(...stateKeysOfFile(file))
    if (keys.length === 0) {
      throw new UsageError(`toolnexus serve: --state-key-file ${file} holds no key (one per line, the sealing one first; blank lines and # comments are ignored)`)
    }
  }
  for (const name of names) {
    const value = process.env[name]
    if (value === undefined) throw new UsageError(`toolnexus serve: --state-key-env ${name}: the environment variable ${name} is not set`)
    const key = value.trim()
    if (key === "") throw new UsageError(`toolnexus serve: --state-key-env ${name}: the environment variable ${name} is empty`)
    const bytes = Buffer.byteLength(key, "utf8")
    if (bytes < MIN_STATE_KEY) throw new UsageError(`toolnexus serve: --state-key-env ${name}: the key is ${bytes} bytes; ${KEY_ADVICE}`)
    keys.push(key)
    // The servers this command starts inherit its environment: the key is not theirs.
    delete process.env[name]
  }
  const stateKey = keys.length > 0 ? keys : undefined
  const replicaUrl = values["replica-url"]
  if (replicaUrl !== undefined && stateKey === undefined) {
    throw new ArgumentError("toolnexus serve: --replica-url needs a state key (--state-key-file or --state-key-env)")
  }
  const stateStore = stateStoreFromFlags(values)
  if (stateStore !== undefined && stateKey === undefined) {
    throw new ArgumentError(`toolnexus serve: --${values["state-store"] !== undefined ? "state-store" : "state-store-env"} needs a state key (--state-key-file or --state-key-env)`)
  }
  try {
    createRequire(import.meta.url)("../../lib/serve-options.js").serveOptions({ stateKey, replicaUrl, stateStore })
  } catch (err) {
    const words = messageOf(err)
      .replace(/^toolnexus: replicaUrl/, "--replica-url")
      .replace(/^toolnexus: stateKey/, "the state key")
      .replace(/^toolnexus: stateStore/, values["state-store"] !== undefined ? "--state-store" : `--state-store-env ${values["state-store-env"]}: the URL`)
      .replace(/^toolnexus: /, "")
    throw new UsageError(`toolnexus serve: ${words}`)
  }
  return { stateKey, replicaUrl, stateStore }
}

/**
 * The store's URL from --state-store (refused when it holds a password: argv is readable by
 * every user of the machine) or --state-store-env (removed from the environment once read).
 * @returns {string | undefined}
 */
function stateStoreFromFlags(values) {
  const url = values["state-store"]
  const name = values["state-store-env"]
  if (url !== undefined && name !== undefined) {
    throw new ArgumentError("toolnexus serve: --state-store and --state-store-env cannot be combined")
  }
  if (url !== undefined) {
    let password = false
    try {
      password = new URL(url).password !== ""
    } catch {
      // Not a URL: serveOptions says so.
    }
    if (password) {
      throw new ArgumentError("toolnexus serve: --state-store must not hold a password (the command line is visible to every user of the machine): put the URL in an environment variable and pass --state-store-env NAME")
    }
    return url
  }
  if (name === undefined) return undefined
  const value = process.env[name]
  if (value === undefined) throw new UsageError(`toolnexus serve: --state-store-env ${name}: the environment variable ${name} is not set`)
  const trimmed = value.trim()
  if (trimmed === "") throw new UsageError(`toolnexus serve: --state-store-env ${name}: the environment variable ${name} is empty`)
  // The servers this command starts inherit its environment: the credentials are not theirs.
  delete process.env[name]
  return trimmed
}

/**
 * createToolkit's `toolSearch` from --tool-search, --tool-search-limit and
 * --tool-search-always (undefined without --tool-search), checked as createToolkit checks it.
 */
export function toolSearchFromFlags(values) {
  const limit = values["tool-search-limit"]
  const always = values["tool-search-always"]
  if (!values["tool-search"]) {
    const flag = limit !== undefined ? "tool-search-limit" : always !== undefined ? "tool-search-always" : undefined
    if (flag !== undefined) throw new ArgumentError(`toolnexus serve: --${flag} needs --tool-search`)
    return undefined
  }
  const option = {}
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 50) {
      throw new ArgumentError(`toolnexus serve: --tool-search-limit must be a whole number from 1 to 50, got "${limit}"`)
    }
    option.limit = Number(limit)
  }
  if (always !== undefined) {
    option.always = always.split(",").map((s) => s.trim()).filter(Boolean)
    if (option.always.length === 0) throw new ArgumentError("toolnexus serve: --tool-search-always must name at least one tool")
  }
  return Object.keys(option).length === 0 ? true : option
}

/**
 * createToolkit's `hooks` from --hooks FILE: the module's `beforeCall` and `afterCall` exports,
 * or its default export's (undefined without the flag). A module that does not load, or has
 * neither hook, is a usage error.
 * @param {string | undefined} file
 */
export async function hooksFromFlag(file) {
  if (file === undefined) return undefined
  let module
  try {
    module = await import(pathToFileURL(path.resolve(file)).href)
  } catch (err) {
    throw new ArgumentError(`toolnexus serve: --hooks ${file}: cannot load it: ${messageOf(err)}`)
  }
  const from = typeof module.beforeCall === "function" || typeof module.afterCall === "function" ? module : module.default ?? {}
  const hooks = {}
  for (const name of ["beforeCall", "afterCall"]) {
    if (from[name] === undefined) continue
    if (typeof from[name] !== "function") throw new ArgumentError(`toolnexus serve: --hooks ${file}: ${name} must be a function`)
    hooks[name] = from[name]
  }
  if (Object.keys(hooks).length === 0) {
    throw new ArgumentError(`toolnexus serve: --hooks ${file} exports neither beforeCall nor afterCall`)
  }
  return hooks
}

/**
 * What --tools-config FILE says (all undefined without the flag): createToolkit's `curation`
 * (its `tools` and `servers`) and `resultLimits`, and serve's `endpoints` and `limits`, each checked as they will
 * be: an unreadable file, bad JSON or a malformed part is a usage error.
 * @param {string | undefined} file
 */
export function curationFromFlag(file) {
  if (file === undefined) return {}
  let parsed
  try {
    parsed = JSON.parse(readFlagFile("--tools-config", file))
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new ArgumentError(`toolnexus serve: --tools-config ${file} is not JSON: ${messageOf(err)}`)
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ArgumentError(`toolnexus serve: --tools-config ${file} must hold an object (tools, servers, endpoints, limits, resultLimits)`)
  }
  const { endpoints, limits, resultLimits, ...curation } = parsed
  const require = createRequire(import.meta.url)
  try {
    require("../../lib/curation.js").curationOption(curation, "curation")
    require("../../lib/serve-options.js").serveOptions({ limits })
    for (const endpoint of require("../../lib/endpoints.js").endpointsOption(endpoints, undefined)) {
      require("../../lib/serve-options.js").serveOptions({ limits: endpoint.limits })
    }
    require("../../lib/hooks.js").nativeResultLimits(resultLimits, "resultLimits")
  } catch (err) {
    throw new ArgumentError(`toolnexus serve: --tools-config ${file}: ${messageOf(err).replace(/^toolnexus: (curation\.)?/, "")}`)
  }
  return { curation, endpoints, limits, resultLimits }
}
