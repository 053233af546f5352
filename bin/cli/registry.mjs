// Reading server.json documents for `toolnexus add`: from a file, or from an MCP registry's API
// (`GET /v0.1/servers?search=` and `GET /v0.1/servers/{name}/versions/latest`), checked against
// the registry's published schema (bin/schema/server.schema.json) by the engine's JSON Schema
// validator.
import fs from "node:fs"
import { createRequire } from "node:module"
import { UsageError, messageOf } from "./inventory.mjs"

const require = createRequire(import.meta.url)

/** The official registry. */
export const DEFAULT_REGISTRY = "https://registry.modelcontextprotocol.io"

/** Bigger than any real server.json (the largest published ones are tens of kB). */
export const MAX_DOCUMENT_BYTES = 1024 * 1024

/** How many problems a refusal lists. */
const MAX_SHOWN_PROBLEMS = 20

const SCHEMA_FILE = new URL("../schema/server.schema.json", import.meta.url)
let schema
/** The vendored schema (its `$id` names the published version). */
export function serverSchema() {
  schema ??= JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8"))
  return schema
}

/**
 * Parses JSON text of a server.json (or a registry answer `{ server, _meta }`, unwrapped), or
 * throws a `UsageError` naming `source`.
 */
export function parseDocument(text, source) {
  if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES) {
    throw new UsageError(`toolnexus add: ${source} is larger than ${MAX_DOCUMENT_BYTES / 1024} kB; a server.json is far smaller`)
  }
  let doc
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`toolnexus add: ${source} is not JSON: ${err.message}`)
  }
  if (doc !== null && typeof doc === "object" && !Array.isArray(doc) && doc.server !== undefined && doc.name === undefined) doc = doc.server
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new UsageError(`toolnexus add: ${source} must hold a JSON object (a server.json)`)
  return doc
}

/** Reads a server.json file (bounded), or throws a `UsageError`. */
export function readDocumentFile(file) {
  let size
  try {
    size = fs.statSync(file).size
  } catch (err) {
    throw new UsageError(`toolnexus add: cannot read ${file}: ${messageOf(err)}`)
  }
  if (size > MAX_DOCUMENT_BYTES) throw new UsageError(`toolnexus add: ${file} is larger than ${MAX_DOCUMENT_BYTES / 1024} kB; a server.json is far smaller`)
  return parseDocument(fs.readFileSync(file, "utf8"), file)
}

/**
 * Checks `doc` against the published server.json schema; throws a `UsageError` listing each
 * problem as `<instance path>: <words>` when it does not fit.
 */
export function checkDocument(doc, source) {
  const binding = require("../../binding.js")
  const problems = binding.checkJsonSchema(serverSchema(), doc)
  if (problems.length === 0) return
  const shown = problems.slice(0, MAX_SHOWN_PROBLEMS).map((p) => `  ${p.path === "" ? "(document)" : p.path}: ${p.message}`)
  if (problems.length > MAX_SHOWN_PROBLEMS) shown.push(`  … and ${problems.length - MAX_SHOWN_PROBLEMS} more`)
  throw new UsageError(`toolnexus add: ${source} does not fit the server.json schema (${serverSchema().$id}):\n${shown.join("\n")}`)
}

/** A registry base URL from `--registry`, without a trailing slash; a UsageError when not http(s). */
export function registryBase(url = DEFAULT_REGISTRY) {
  let parsed
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`toolnexus add: --registry must be an http(s) URL, got "${url}"`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`toolnexus add: --registry must be an http(s) URL, got "${url}"`)
  return parsed.href.replace(/\/+$/, "")
}

/** GETs `url` as JSON within `timeout` ms; `null` on 404; throws in words otherwise. */
async function getJson(url, { timeout, signal }) {
  const signals = [AbortSignal.timeout(timeout)]
  if (signal) signals.push(signal)
  let res
  try {
    res = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.any(signals) })
  } catch (err) {
    if (signal?.aborted) throw signal.reason
    const why = err.name === "TimeoutError" ? `no answer within ${timeout} ms` : messageOf(err.cause ?? err)
    throw new Error(`cannot reach the registry at ${new URL(url).origin}: ${why}`)
  }
  if (res.status === 404) {
    await res.body?.cancel()
    return null
  }
  const text = await readBounded(res)
  if (!res.ok) throw new Error(`the registry answered ${res.status} ${res.statusText} for ${url}`)
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`the registry's answer for ${url} is not JSON`)
  }
}

/** A response body as text, refusing one beyond 8 MB (a search page is far smaller). */
async function readBounded(res) {
  const max = 8 * MAX_DOCUMENT_BYTES
  const chunks = []
  let size = 0
  for await (const chunk of res.body ?? []) {
    size += chunk.length
    if (size > max) throw new Error(`the registry's answer is larger than ${max / MAX_DOCUMENT_BYTES} MB`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/** How many search pages (`metadata.nextCursor`) are followed before a name is judged. */
export const MAX_SEARCH_PAGES = 10

/**
 * Finds `wanted` in the registry at `base`: the latest version of the server of that exact name,
 * else the server of that exact name a search finds, else (a word without "/", not a full name)
 * the single server a search finds. The search's pages are followed (`metadata.nextCursor`, at
 * most MAX_SEARCH_PAGES) before a match is taken as the only one. Returns the server.json object;
 * a name matching nothing or several servers is a `UsageError` listing them.
 */
export async function fromRegistry(base, wanted, { timeout = 15000, signal } = {}) {
  const fullName = wanted.includes("/")
  if (fullName) {
    const latest = await getJson(`${base}/v0.1/servers/${encodeURIComponent(wanted)}/versions/latest`, { timeout, signal })
    if (latest !== null) return parseDocument(JSON.stringify(latest), `the registry's ${wanted}`)
  }
  // One entry per name: the one the registry marks latest, else the last listed.
  const byName = new Map()
  let cursor
  let more = false
  for (let page = 0; page < MAX_SEARCH_PAGES; page++) {
    const query = `search=${encodeURIComponent(wanted)}${cursor !== undefined ? `&cursor=${encodeURIComponent(cursor)}` : ""}`
    const found = await getJson(`${base}/v0.1/servers?${query}`, { timeout, signal })
    for (const item of Array.isArray(found?.servers) ? found.servers : []) {
      const server = item?.server ?? item
      if (typeof server?.name !== "string") continue
      const latest = item?._meta?.["io.modelcontextprotocol.registry/official"]?.isLatest
      if (!byName.has(server.name) || latest === true) byName.set(server.name, server)
    }
    const next = found?.metadata?.nextCursor
    more = typeof next === "string" && next !== "" && next !== cursor
    if (!more || byName.has(wanted)) break
    cursor = next
  }
  const exact = byName.get(wanted)
  if (exact) return exact
  const list = (names) => names.slice(0, 20).map((s) => `  ${s.name}${typeof s.description === "string" ? `  ${s.description}` : ""}`)
  if (byName.size === 0) throw new UsageError(`toolnexus add: the registry at ${base} has no server matching "${wanted}"`)
  if (fullName) {
    // A full name is taken only as written: a search hit of another name is not it.
    throw new UsageError(`toolnexus add: the registry at ${base} has no server named "${wanted}"; servers whose names hold it:\n${list([...byName.values()]).join("\n")}`)
  }
  if (byName.size === 1 && !more) return [...byName.values()][0]
  const count = `${byName.size}${more ? " or more" : ""}`
  throw new UsageError(`toolnexus add: "${wanted}" matches ${count} servers in the registry at ${base}; name one:\n${list([...byName.values()]).join("\n")}`)
}
