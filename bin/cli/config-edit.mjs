// Format-preserving edits of one MCP config file, in the file's own dialect: enable or disable a
// server, set its `tools` allowlist, add, replace or remove an entry. Everything outside the
// entry that changes is kept byte for byte (comments, key order, indentation, trailing commas):
// the edits are text edits computed by Microsoft's jsonc-parser (what VS Code edits its own
// settings with), vendored in ../vendor/jsonc-parser so the package keeps no dependencies.
//
// Used by `toolnexus add` / `toolnexus remove` and by the `toolnexus ui` editor.
import fs from "node:fs"
import { createRequire } from "node:module"
import path from "node:path"

const require = createRequire(import.meta.url)
/** @type {typeof import("../vendor/jsonc-parser/main.js")} */
const jsonc = require("../vendor/jsonc-parser/main.js")

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true }

// Environment references, per dialect (checked against each client's documentation):
// - mcpServers: `${VAR}`. Claude Code expands `${VAR}` and `${VAR:-default}` in command, args, env,
//   url and headers of .mcp.json (code.claude.com/docs/en/mcp, "Environment variable expansion");
//   Gemini CLI expands `$VAR`/`${VAR}` in settings.json; toolnexus expands `${VAR}`.
//   Claude Desktop expands nothing: there the reference reaches the server as written.
// - VS Code (mcp.json, settings.json): `${env:VAR}`, one of VS Code's predefined variables
//   (code.visualstudio.com/docs/reference/variables-reference); toolnexus expands it too.
// - opencode: `{env:VAR}` (opencode.ai/docs/config, "Variables"). toolnexus keeps that form
//   literally (toolnexus expands only `${…}`), so a toolnexus run needs the value another way.
// - Zed: its settings.json documents no variable expansion at all; `${VAR}` is what toolnexus
//   expands, and a note says that Zed itself will pass it through as written.
const ENV_REFS = {
  mcpServers: (name) => `\${${name}}`,
  vscode: (name) => `\${env:${name}}`,
  "vscode-settings": (name) => `\${env:${name}}`,
  opencode: (name) => `{env:${name}}`,
  zed: (name) => `\${${name}}`,
}

// Per dialect: where its servers live, the `type` written for a local (stdio) and a streamable
// HTTP entry (null: the dialect writes none), and the key that switches a server off.
const DIALECTS = {
  mcpServers: { at: ["mcpServers"], local: null, remote: "http", disabledKey: "disabled" },
  vscode: { at: ["servers"], local: "stdio", remote: "http", disabledKey: "disabled" },
  "vscode-settings": { at: ["mcp", "servers"], local: "stdio", remote: "http", disabledKey: "disabled" },
  opencode: { at: ["mcp"], local: "local", remote: "remote", disabledKey: "enabled" },
  zed: { at: ["context_servers"], local: null, remote: null, disabledKey: "enabled" },
}

/** Who reads a dialect's files, for notes. */
const CLIENTS = {
  mcpServers: "Claude, Cursor, Windsurf, Gemini CLI and the other clients of this file",
  vscode: "VS Code",
  "vscode-settings": "VS Code",
  opencode: "opencode",
  zed: "Zed",
}

/** The longest server name accepted, and what a name may not hold (control characters). */
const MAX_NAME = 128

/**
 * Throws unless `name` is a sane server key: a non-empty string of at most 128 characters with no
 * control characters, not starting or ending with a space, and not a path (`/`, `\`, `..`).
 */
export function checkServerName(name) {
  if (typeof name !== "string" || name === "") throw new Error("a server name must be a non-empty string")
  if (name.length > MAX_NAME) throw new Error(`the server name "${name.slice(0, 40)}…" is longer than ${MAX_NAME} characters`)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new Error(`the server name ${JSON.stringify(name)} holds control characters`)
  if (name.trim() !== name) throw new Error(`the server name "${name}" starts or ends with a space`)
  if (/[/\\]/.test(name) || name === "." || name === "..") throw new Error(`the server name "${name}" looks like a path; use letters, digits, "-", "_" or "."`)
}

/** The dialect a new (or empty) file gets from its name and folder. */
function dialectByFileName(file = "") {
  const parts = path.resolve(String(file)).split(/[/\\]/)
  const base = parts.at(-1)
  const parent = parts.at(-2) ?? ""
  if (/^opencode\.jsonc?$/.test(base)) return "opencode"
  if (base === "mcp.json" && (parent === ".vscode" || (parent === "User" && parts.at(-3) === "Code"))) return "vscode"
  if (base === "settings.json") {
    if (parent === ".zed" || parent === "zed" || parent === "Zed") return "zed"
    if (parent === "User" && parts.at(-3) === "Code") return "vscode-settings"
  }
  return "mcpServers"
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

/** Like the engine: a map under a wrapper key that itself looks like one server is not a wrapper. */
const looksLikeServer = (map) => ["command", "url", "serverUrl", "httpUrl", "type"].some((k) => k in map && !isObject(map[k]))

function describe(name) {
  return { name, ...DIALECTS[name], at: [...DIALECTS[name].at], envRef: ENV_REFS[name] }
}

/**
 * The dialect of a config file: `{ name, at, remote, local, disabledKey, envRef }`.
 * `name`: "mcpServers" | "vscode" | "vscode-settings" | "opencode" | "zed". `at`: the key path of
 * the server map. `local` / `remote`: the `type` written for a local (stdio) / a streamable HTTP
 * entry, null when the dialect writes none. `disabledKey`: "disabled" (true switches off) or
 * "enabled" (false switches off). `envRef(VAR)`: how the dialect refers to an environment variable.
 * Read from the wrapper key the text uses (in the engine's order: mcpServers, servers, mcp,
 * context_servers); an empty or new file gets one from its name (`.vscode/mcp.json`,
 * `opencode.json(c)`, Zed's and VS Code's `settings.json`, else mcpServers).
 */
export function dialectOf(text, file) {
  let top
  try {
    top = text && text.trim() !== "" ? jsonc.parse(text, [], PARSE_OPTIONS) : undefined
  } catch {
    top = undefined
  }
  if (isObject(top)) {
    for (const [key, name] of [
      ["mcpServers", "mcpServers"],
      ["servers", "vscode"],
      ["mcp", "opencode"],
      ["context_servers", "zed"],
    ]) {
      const map = top[key]
      if (map === undefined || (isObject(map) && looksLikeServer(map))) continue
      if (key === "mcp" && isObject(map) && Object.keys(map).length === 1 && isObject(map.servers) && !looksLikeServer(map.servers)) {
        return describe("vscode-settings")
      }
      return describe(name)
    }
  }
  return describe(dialectByFileName(file))
}

/** The indentation and line ending a file already uses (2 spaces and \n for a new file). */
function formattingOf(text) {
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  const indented = /^([ \t]+)\S/m.exec(text)
  if (indented && indented[1].startsWith("\t")) return { insertSpaces: false, tabSize: 4, eol }
  return { insertSpaces: true, tabSize: indented ? Math.min(indented[1].length, 8) : 2, eol }
}

/** Parses `text`, throwing with file:line:column on a syntax error. Returns the tree (or undefined). */
function parseTree(text, file) {
  const errors = []
  const tree = jsonc.parseTree(text, errors, PARSE_OPTIONS)
  if (errors.length > 0) {
    const { error, offset } = errors[0]
    const before = text.slice(0, offset).split(/\r?\n/)
    throw new Error(`${file ?? "config"}:${before.length}:${before.at(-1).length + 1}: ${jsonc.printParseErrorCode(error)}; the file is not valid JSON (with comments)`)
  }
  if (tree !== undefined && tree.type !== "object") throw new Error(`${file ?? "config"}: the file holds a JSON ${tree.type}, not an object`)
  return tree
}

/** Whether `text` holds a comment (scanned, so `//` inside strings does not count). */
function hasComment(text) {
  const scanner = jsonc.createScanner(text, false)
  for (let kind = scanner.scan(); kind !== jsonc.SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === jsonc.SyntaxKind.LineCommentTrivia || kind === jsonc.SyntaxKind.BlockCommentTrivia) return true
  }
  return false
}

/**
 * `text` with the value at `keys` set (or, `undefined`, removed). jsonc-parser's own formatting
 * re-formats the whole lines an insertion touches, the neighbour entry on that line included; so
 * the raw edit is applied and only the inserted text is formatted, with the blank gaps at its
 * edges (so the brace after it goes on its own line, in the file's indentation and line ending).
 */
function modify(text, keys, value, formattingOptions) {
  const edits = jsonc.modify(text, keys, value, {})
  if (edits.length === 0) return text
  const [edit] = edits
  const out = jsonc.applyEdits(text, [edit])
  if (value === undefined || edit.content === "") return out
  let [start, end] = [edit.offset, edit.offset + edit.content.length]
  while (start > 0 && /\s/.test(out[start - 1])) start--
  while (end < out.length && /\s/.test(out[end])) end++
  const range = { offset: Math.max(0, start - 1), length: Math.min(out.length, end + 1) - Math.max(0, start - 1) }
  return jsonc.applyEdits(out, jsonc.format(out, range, { ...formattingOptions, keepLines: false }))
}

/** The server map at `at` in the parsed value (an object, or {} when absent). */
function serverMap(value, at) {
  let node = value
  for (const key of at) node = isObject(node) ? node[key] : undefined
  // Plain objects (jsonc-parser builds them without a prototype).
  return isObject(node) ? JSON.parse(JSON.stringify(node)) : {}
}

/**
 * Applies one edit to the text of a config file and returns `{ text, notes }`; pure.
 * `edit`: `{ tools: { [tool]: boolean } | null }` sets (or, null, removes) the per-server `tools`
 * allowlist; `{ enabled: boolean }` switches the server on or off with the key the entry already
 * has, else the dialect's; `{ add: entry, replace?: true }` adds a dialect entry (an existing name
 * is refused unless `replace`); `{ remove: true }` removes the entry. `notes` are sentences for the
 * user about what the dialect cannot keep or what its clients will not read.
 * `options.at` overrides the server map's key path (Claude Code's per-project entries of
 * ~/.claude.json are at ["projects", <folder>, "mcpServers"]).
 */
export function editConfigText(text, file, name, edit, options = {}) {
  text = text ?? ""
  checkServerName(name)
  if (!isObject(edit)) throw new Error("an edit must be an object: { tools }, { enabled }, { add } or { remove }")
  const tree = parseTree(text, file)
  const dialect = dialectOf(text, file)
  const at = options.at ?? dialect.at
  const servers = serverMap(tree ? jsonc.getNodeValue(tree) : undefined, at)
  const exists = Object.hasOwn(servers, name)
  const where = file ? ` in ${file}` : ""
  const unknown = () => {
    const names = Object.keys(servers)
    return new Error(`no server named "${name}"${where}${names.length > 0 ? ` (it has ${names.join(", ")})` : " (it has no servers)"}`)
  }
  const notes = []
  const formattingOptions = formattingOf(text)
  const change = (keys, value) => modify(text, keys, value, formattingOptions)
  let out

  if ("add" in edit) {
    if (!isObject(edit.add)) throw new Error(`the entry for "${name}" must be an object`)
    if (exists && edit.replace !== true) throw new Error(`a server named "${name}" already exists${where}; choose another name or replace it`)
    if (exists) {
      const node = jsonc.findNodeAtLocation(tree, [...at, name])
      if (node && hasComment(text.slice(node.offset, node.offset + node.length))) {
        notes.push(`The comments inside the old "${name}" entry were dropped with it.`)
      }
    }
    out = change([...at, name], edit.add)
    // A new file ends with a line break, as editors write them.
    if (text.trim() === "") out += formattingOptions.eol
  } else if (edit.remove === true) {
    if (!exists) throw unknown()
    const node = jsonc.findNodeAtLocation(tree, [...at, name])
    if (node?.parent && hasComment(text.slice(node.parent.offset, node.parent.offset + node.parent.length))) {
      notes.push(`Any comment inside the "${name}" entry was removed with it.`)
    }
    const property = node?.parent
    const map = property?.parent
    if (map?.type === "object" && map.children.length === 1 && !hasComment(text.slice(map.offset, map.offset + map.length))) {
      // The last server gone: an empty map reads `{}`, not `{` and a blank line and `}`.
      out = text.slice(0, map.offset) + "{}" + text.slice(map.offset + map.length)
    } else if (map?.type === "object" && map.children.length === 1) {
      // The only server, among comments that stay: jsonc-parser would leave a trailing comma
      // behind it alone in the map; take the property, its comma and its line.
      let start = property.offset
      while (start > 0 && /[ \t]/.test(text[start - 1])) start--
      let end = property.offset + property.length
      const scanner = jsonc.createScanner(text.slice(end), true)
      if (scanner.scan() === jsonc.SyntaxKind.CommaToken) end += scanner.getTokenOffset() + scanner.getTokenLength()
      const rest = /^[ \t]*(\r?\n)/.exec(text.slice(end))
      if (rest && /\n$/.test(text.slice(0, start))) end += rest[0].length
      out = text.slice(0, start) + text.slice(end)
    } else {
      out = change([...at, name], undefined)
    }
  } else if ("tools" in edit) {
    if (!exists) throw unknown()
    const tools = edit.tools
    if (tools !== null) {
      if (!isObject(tools) || !Object.values(tools).every((v) => typeof v === "boolean")) {
        throw new Error(`the tools of "${name}" must be an object of tool name → true or false`)
      }
      // opencode rejects a config whose mcp entries hold keys it does not know.
      if (dialect.name === "opencode" && options.at === undefined) {
        throw new Error(`opencode refuses unknown keys in an mcp entry, so a "tools" list cannot be kept in ${file ?? "this file"}; use opencode's own top-level "tools" setting ("${name}_*": false) instead`)
      }
      notes.push(`${CLIENTS[dialect.name]} ${dialect.name === "mcpServers" ? "do" : "does"} not read "tools": only toolnexus applies this list.`)
      out = change([...at, name, "tools"], tools)
    } else {
      out = isObject(servers[name]) && "tools" in servers[name] ? change([...at, name, "tools"], undefined) : text
    }
  } else if ("enabled" in edit) {
    if (!exists) throw unknown()
    if (typeof edit.enabled !== "boolean") throw new Error(`"enabled" must be true or false`)
    const entry = isObject(servers[name]) ? servers[name] : {}
    // Keep the key the entry already uses; else the dialect's own.
    const key = "enabled" in entry ? "enabled" : "disabled" in entry ? "disabled" : dialect.disabledKey
    const value = key === "enabled" ? edit.enabled : !edit.enabled
    if (!(key in entry) && edit.enabled) {
      out = text // on by default: nothing to write
    } else {
      out = change([...at, name, key], value)
      if (key === "disabled" && (dialect.name === "vscode" || dialect.name === "vscode-settings")) {
        notes.push(`VS Code keeps its own on/off switch for servers and does not document "disabled" in this file; toolnexus honours it.`)
      }
    }
  } else {
    throw new Error("an edit must be one of { tools }, { enabled }, { add } or { remove }")
  }
  // A guard: an edit must leave a file that parses.
  parseTree(out, file)
  return { text: out, notes }
}

/**
 * The file's text, dialect and servers (raw entries by name, as written); a missing file reads
 * as empty, with the dialect its name implies. `at` overrides where the servers are (as
 * `editConfigText`'s `options.at`).
 */
export function readConfigFile(file, at) {
  let text = ""
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (err) {
    if (err.code !== "ENOENT") throw err
  }
  const tree = parseTree(text, file)
  const dialect = dialectOf(text, file)
  return { text, dialect, servers: serverMap(tree ? jsonc.getNodeValue(tree) : undefined, at ?? dialect.at) }
}

/**
 * Writes `text` to `file` atomically: a temporary file in the same folder, then a rename over
 * the old one (a symlink is followed, so the link stays). The file keeps its mode; a missing
 * file (and its folder) is created.
 */
export function writeConfigFile(file, text) {
  let target = path.resolve(file)
  let mode
  try {
    target = fs.realpathSync(target)
    mode = fs.statSync(target).mode & 0o7777
  } catch (err) {
    if (err.code !== "ENOENT") throw err
    fs.mkdirSync(path.dirname(target), { recursive: true })
  }
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${Date.now().toString(36)}.tmp`)
  try {
    fs.writeFileSync(temp, text, { flag: "wx", mode: mode ?? 0o666 })
    if (mode !== undefined) fs.chmodSync(temp, mode) // the umask may have narrowed it
    fs.renameSync(temp, target)
  } catch (err) {
    fs.rmSync(temp, { force: true })
    throw err
  }
}

const nonEmpty = (o) => (o && Object.keys(o).length > 0 ? o : undefined)

/** `{ a: 1, b: undefined }` → `{ a: 1 }`, so entries hold only what was given. */
const compact = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/**
 * The entry a dialect writes for a canonical server:
 * `{ type: "local", command: string[], env?, cwd? }` or
 * `{ type: "remote", url, transport?: "streamable-http" | "sse", headers? }`.
 * `dialect`: a dialect name or what `dialectOf` returns. Empty env, args and headers are left out.
 * - mcpServers: `{ command, args, env, cwd }` / `{ type: "http" | "sse", url, headers }` (Claude
 *   Code needs `type` for a remote server; toolnexus and Cursor read it too).
 * - VS Code: `{ type: "stdio", command, args, env, cwd }` / `{ type: "http" | "sse", url, headers }`.
 * - opencode: `{ type: "local", command: [...], environment }` / `{ type: "remote", url, headers }`
 *   (opencode tries streamable HTTP then SSE by itself, and has no working-directory key).
 * - Zed: `{ command, args, env }` / `{ url, headers }`.
 */
export function entryFor(dialect, canonical) {
  const name = typeof dialect === "string" ? dialect : dialect?.name
  if (!(name in DIALECTS)) throw new Error(`unknown config dialect "${name}"`)
  if (!isObject(canonical)) throw new Error("a server must be an object")
  if (canonical.type === "local") {
    const { command, env, cwd } = canonical
    if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === "string")) {
      throw new Error("a local server's command must be a non-empty array of strings")
    }
    const [program, ...args] = command
    if (cwd !== undefined && (name === "opencode" || name === "zed")) {
      throw new Error(`${CLIENTS[name]} entries have no working-directory setting; leave cwd out`)
    }
    if (name === "opencode") {
      return compact({ type: "local", command: [...command], environment: nonEmpty(env) })
    }
    const local = DIALECTS[name].local
    return compact({ type: local ?? undefined, command: program, args: args.length > 0 ? args : undefined, env: nonEmpty(env), cwd })
  }
  if (canonical.type === "remote") {
    const { url, transport = "streamable-http", headers } = canonical
    if (typeof url !== "string" || url === "") throw new Error("a remote server needs a url")
    if (transport !== "streamable-http" && transport !== "sse") throw new Error(`transport must be "streamable-http" or "sse", got ${JSON.stringify(transport)}`)
    if (name === "opencode") return compact({ type: "remote", url, headers: nonEmpty(headers) })
    if (name === "zed") return compact({ url, headers: nonEmpty(headers) })
    return compact({ type: transport === "sse" ? "sse" : "http", url, headers: nonEmpty(headers) })
  }
  throw new Error(`a server's type must be "local" or "remote", got ${JSON.stringify(canonical.type)}`)
}
