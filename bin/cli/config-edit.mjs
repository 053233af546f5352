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
// - opencode: `{env:VAR}` (opencode.ai/docs/config, "Variables"); toolnexus expands it too, in
//   an opencode config's `mcp` entries.
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

/**
 * Like the engine: a map under a wrapper key that itself looks like one server is not a wrapper
 * (its `type` is a string, or its `command`/`url`/… are neither objects nor null).
 */
const looksLikeServer = (map) =>
  typeof map.type === "string" || ["command", "url", "serverUrl", "httpUrl"].some((k) => k in map && map[k] !== null && !isObject(map[k]))

/**
 * Like the engine: VS Code's settings.json `"mcp": { "servers": {…}, "inputs": […] }` — `servers`
 * is a map of entries (every value an object), not itself one entry (an opencode server named
 * "servers" has type/command/url).
 */
const isVsCodeMcp = (map) => isObject(map.servers) && !looksLikeServer(map.servers) && Object.values(map.servers).every(isObject)

function describe(name) {
  return { name, ...DIALECTS[name], at: [...DIALECTS[name].at], envRef: ENV_REFS[name] }
}

/** The dialect a server map's key path implies (`options.at`), or undefined. */
function dialectByPath(at) {
  if (!Array.isArray(at) || at.length === 0) return undefined
  const last = at.at(-1)
  if (last === "servers") return at.at(-2) === "mcp" ? "vscode-settings" : "vscode"
  return { mcpServers: "mcpServers", mcp: "opencode", context_servers: "zed" }[last]
}

/**
 * The dialect of a config file: `{ name, at, remote, local, disabledKey, envRef }`.
 * `name`: "mcpServers" | "vscode" | "vscode-settings" | "opencode" | "zed". `at`: the key path of
 * the server map. `local` / `remote`: the `type` written for a local (stdio) / a streamable HTTP
 * entry, null when the dialect writes none. `disabledKey`: "disabled" (true switches off) or
 * "enabled" (false switches off). `envRef(VAR)`: how the dialect refers to an environment variable.
 * `at` (a key path, as `editConfigText`'s `options.at`) wins when given, then VS Code's user
 * settings.json by its name (Code/User/settings.json); else the wrapper key the text uses (in the
 * engine's order: mcpServers, servers, mcp, context_servers; `mcp` is VS Code's when it holds a
 * `servers` map beside its other keys, opencode's otherwise); an empty or new file gets one from its
 * name (`.vscode/mcp.json`, `opencode.json(c)`, Zed's settings.json, else mcpServers).
 */
export function dialectOf(text, file, at) {
  const byPath = dialectByPath(at)
  if (byPath) return { ...describe(byPath), at: [...at] }
  const byName = dialectByFileName(file)
  if (byName === "vscode-settings") return describe(byName)
  let top
  try {
    top = text && text.trim() !== "" ? jsonc.parse(stripBom(text), [], PARSE_OPTIONS) : undefined
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
      if (key === "mcp" && isObject(map) && isVsCodeMcp(map)) return describe("vscode-settings")
      return describe(name)
    }
  }
  return describe(byName)
}

const stripBom = (text) => (text.startsWith("\uFEFF") ? text.slice(1) : text)

/**
 * The indentation and line ending a file already uses (2 spaces and \n for a new file): the
 * indentation of the first line whose first token is JSON (comment lines do not count: a
 * ` * ` inside a block comment is no indentation).
 */
function formattingOf(text) {
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  let indent
  const scanner = jsonc.createScanner(text, false)
  let lineStart = true
  for (let kind = scanner.scan(); kind !== jsonc.SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === jsonc.SyntaxKind.LineBreakTrivia) {
      lineStart = true
      continue
    }
    if (kind === jsonc.SyntaxKind.Trivia) continue
    if (kind === jsonc.SyntaxKind.LineCommentTrivia || kind === jsonc.SyntaxKind.BlockCommentTrivia) {
      lineStart = false
      continue
    }
    if (lineStart) {
      const offset = scanner.getTokenOffset()
      const lead = text.slice(text.lastIndexOf("\n", offset - 1) + 1, offset)
      if (lead !== "" && /^[ \t]+$/.test(lead)) {
        indent = lead
        break
      }
    }
    lineStart = false
  }
  if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 4, eol, unit: "\t" }
  const tabSize = indent ? Math.min(indent.length, 8) : 2
  return { insertSpaces: true, tabSize, eol, unit: " ".repeat(tabSize) }
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

// ---------------------------------------------------------------------------------------------
// Text edits. Each takes the text and a node of its parse tree and returns the new text; only
// the property it adds, replaces or removes changes (its whole lines, when it has lines of its
// own), so the lines around it, the map's closing brace and the comments of other entries stay
// where they are. jsonc-parser's `modify` (with its formatter on the inserted text only) is the
// fallback for objects written on one line.

/** The properties named `key` of an object node. */
const propertiesOf = (object, key) => (object?.children ?? []).filter((p) => p.children?.[0]?.value === key)

/** The leading white space of the line `offset` is on, and whether only white space precedes it there. */
function lineLead(text, offset) {
  const start = text.lastIndexOf("\n", offset - 1) + 1
  const lead = text.slice(start, offset)
  return { start, lead: lead.replace(/\S.*$/s, ""), own: !/\S/.test(lead) }
}

/**
 * What follows a node up to its line's end: `comma` (offset of a comma right after it), `comment`
 * (a comment on the same line), `lineEnd` (offset of the line break), `next` (offset after the
 * line break), or `lineEnd` undefined when something else follows on the line.
 */
function afterNode(text, end) {
  const scanner = jsonc.createScanner(text.slice(end), false)
  const out = { comma: undefined, comment: false, lineEnd: undefined, next: undefined }
  for (let kind = scanner.scan(); ; kind = scanner.scan()) {
    const offset = end + scanner.getTokenOffset()
    if (kind === jsonc.SyntaxKind.Trivia) continue
    if (kind === jsonc.SyntaxKind.CommaToken && out.comma === undefined && !out.comment) {
      out.comma = offset
      continue
    }
    if (kind === jsonc.SyntaxKind.LineCommentTrivia || (kind === jsonc.SyntaxKind.BlockCommentTrivia && !/[\r\n]/.test(scanner.getTokenValue()))) {
      out.comment = true
      continue
    }
    if (kind === jsonc.SyntaxKind.LineBreakTrivia) {
      out.lineEnd = offset
      out.next = offset + scanner.getTokenLength()
    } else if (kind === jsonc.SyntaxKind.EOF) {
      out.lineEnd = out.next = offset
    }
    return out
  }
}

/** `value` as JSON in the file's indentation, its inner lines starting with `lead`. */
function stringify(value, fmt, lead) {
  return JSON.stringify(value, null, fmt.unit).split("\n").join(fmt.eol + lead)
}

/** jsonc-parser's edit, with only the inserted text formatted. */
function jsoncModify(text, keys, value, fmt) {
  const edits = jsonc.modify(text, keys, value, {})
  if (edits.length === 0) return text
  const [edit] = edits
  const out = jsonc.applyEdits(text, [edit])
  if (value === undefined || edit.content === "") return out
  let [start, end] = [edit.offset, edit.offset + edit.content.length]
  while (start > 0 && /\s/.test(out[start - 1])) start--
  while (end < out.length && /\s/.test(out[end])) end++
  const range = { offset: Math.max(0, start - 1), length: Math.min(out.length, end + 1) - Math.max(0, start - 1) }
  return jsonc.applyEdits(out, jsonc.format(out, range, { ...fmt, keepLines: false }))
}

/** Replaces the value node `node` (a property's value) with `value`. */
function replaceValue(text, node, value, fmt) {
  const { lead } = lineLead(text, node.parent?.offset ?? node.offset)
  return text.slice(0, node.offset) + stringify(value, fmt, lead) + text.slice(node.offset + node.length)
}

/** Adds `"key": value` to the object node `object` (which has no property `key`), as its last property. */
function insertProperty(text, object, key, value, fmt, keys) {
  const props = object.children ?? []
  const property = (lead) => `${JSON.stringify(key)}: ${stringify(value, fmt, lead)}`
  if (props.length === 0) {
    const close = object.offset + object.length - 1
    const inside = text.slice(object.offset + 1, close)
    const { lead } = lineLead(text, object.offset)
    const closing = lineLead(text, close)
    if (hasComment(inside) && closing.own) {
      // Comments stay above the new property, the brace on its own line.
      const indent = lineLead(text, object.offset + 1 + inside.search(/\S/)).lead || lead + fmt.unit
      return text.slice(0, closing.start) + indent + property(indent) + fmt.eol + text.slice(closing.start)
    }
    if (hasComment(inside)) return jsoncModify(text, keys, value, fmt)
    return `${text.slice(0, object.offset)}{${fmt.eol}${lead}${fmt.unit}${property(lead + fmt.unit)}${fmt.eol}${lead}}${text.slice(object.offset + object.length)}`
  }
  const last = props.at(-1)
  const end = last.offset + last.length
  const after = afterNode(text, end)
  const { lead, own } = lineLead(text, last.offset)
  if (!own || after.lineEnd === undefined || after.next === after.lineEnd) return jsoncModify(text, keys, value, fmt)
  // The last property keeps its line (and a comment on it); the new one goes on the next line.
  if (after.comma !== undefined) {
    // Trailing commas are the file's style: the new property gets one too.
    return text.slice(0, after.lineEnd) + fmt.eol + lead + property(lead) + "," + text.slice(after.lineEnd)
  }
  return text.slice(0, end) + "," + text.slice(end, after.lineEnd) + fmt.eol + lead + property(lead) + text.slice(after.lineEnd)
}

/**
 * Removes the property node `property`: its whole lines (a comment on its last line goes with it;
 * comment lines above it stay, they may speak of more than this entry), and the comma before it
 * when it was the last one and had none of its own.
 */
function removeProperty(text, property, fmt, keys) {
  const end = property.offset + property.length
  const after = afterNode(text, end)
  const { start, own } = lineLead(text, property.offset)
  if (!own || after.lineEnd === undefined) return jsoncModify(text, keys, undefined, fmt)
  let out = text.slice(0, start) + text.slice(after.next)
  const siblings = property.parent.children
  const i = siblings.indexOf(property)
  if (after.comma === undefined && i > 0) {
    // The one before is the last now: its comma goes (strict JSON readers refuse a trailing one).
    const before = afterNode(text, siblings[i - 1].offset + siblings[i - 1].length)
    if (before.comma !== undefined && before.comma < start) out = out.slice(0, before.comma) + out.slice(before.comma + 1)
  }
  return out
}

/** Words for a JSON node's type. */
const kindOf = (node) => (node.type === "null" ? "null" : node.type === "array" ? "an array" : `a ${node.type}`)

/**
 * Sets `keys` (a key path) to `value` in `text`, or with `value` undefined removes it. Missing
 * objects on the way are created; a `null` on the way is replaced by an object; any other
 * non-object is refused in words (`where` names it).
 */
function setPath(text, file, keys, value, fmt) {
  const tree = parseTree(text, file)
  let node = tree
  for (const [i, key] of keys.entries()) {
    const found = propertiesOf(node, key)
    if (found.length > 1) throw new Error(`"${keys.slice(0, i + 1).join(".")}" is written ${found.length} times in ${file ?? "the config"}; keep one (most clients read the last) and try again`)
    const rest = keys.slice(i + 1)
    if (found.length === 0) {
      if (value === undefined) return text
      let nested = value
      for (const k of [...rest].reverse()) nested = { [k]: nested }
      return insertProperty(text, node, key, nested, fmt, keys.slice(0, i + 1))
    }
    const child = found[0].children[1]
    if (rest.length === 0) return value === undefined ? removeProperty(text, found[0], fmt, keys) : replaceValue(text, child, value, fmt)
    if (child.type === "null" && value !== undefined) {
      let nested = value
      for (const k of [...rest].reverse()) nested = { [k]: nested }
      return replaceValue(text, child, nested, fmt)
    }
    if (child.type !== "object") {
      if (value === undefined && child.type === "null") return text
      throw new Error(`"${keys.slice(0, i + 1).join(".")}" in ${file ?? "the config"} is ${kindOf(child)}, not an object; fix it by hand`)
    }
    node = child
  }
  return text
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
 * allowlist; `{ enabled: boolean }` switches the server on or off with the key(s) the entry
 * already has (both `enabled` and `disabled` when it has both), else the dialect's; `{ add: entry,
 * replace?: true }` adds a dialect entry (an existing name is refused unless `replace`);
 * `{ remove: true }` removes the entry (its lines; comment lines above it stay). A name written
 * twice in the map is refused. `notes` are sentences for the user about what the dialect cannot
 * keep or what its clients will not read.
 * `options.at` overrides the server map's key path (Claude Code's per-project entries of
 * ~/.claude.json are at ["projects", <folder>, "mcpServers"]) and so the dialect.
 * A byte order mark is kept; a file of only comments keeps them above the new object.
 */
export function editConfigText(text, file, name, edit, options = {}) {
  text = text ?? ""
  checkServerName(name)
  if (!isObject(edit)) throw new Error("an edit must be an object: { tools }, { enabled }, { add } or { remove }")
  const bom = text.startsWith("\uFEFF") ? "\uFEFF" : ""
  text = text.slice(bom.length)
  const tree = parseTree(text, file)
  const dialect = dialectOf(text, file, options.at)
  const at = dialect.at
  const servers = serverMap(tree ? jsonc.getNodeValue(tree) : undefined, at)
  const exists = Object.hasOwn(servers, name)
  const where = file ? ` in ${file}` : ""
  const unknown = () => {
    const names = Object.keys(servers)
    return new Error(`no server named "${name}"${where}${names.length > 0 ? ` (it has ${names.join(", ")})` : " (it has no servers)"}`)
  }
  // The map node, and the entry's property node(s).
  let map = tree
  for (const key of at) {
    const [property] = propertiesOf(map, key)
    map = property?.children?.[1]
    if (!map) break
  }
  const copies = map?.type === "object" ? propertiesOf(map, name) : []
  if (copies.length > 1) {
    throw new Error(`the server "${name}" is written ${copies.length} times${where}; keep one (toolnexus and most clients read the last) and try again`)
  }
  const entryNode = copies[0]?.children?.[1]
  const notes = []
  const fmt = formattingOf(text)
  let out = text
  const change = (keys, value) => {
    out = setPath(out, file, keys, value, fmt)
  }
  const entryMustBeObject = () => {
    if (entryNode && entryNode.type !== "object") throw new Error(`the entry "${name}"${where} is ${kindOf(entryNode)}, not an object; fix it by hand`)
  }

  if ("add" in edit) {
    if (!isObject(edit.add)) throw new Error(`the entry for "${name}" must be an object`)
    if (exists && edit.replace !== true) throw new Error(`a server named "${name}" already exists${where}; choose another name or replace it`)
    if (entryNode && hasComment(text.slice(entryNode.offset, entryNode.offset + entryNode.length))) {
      notes.push(`The comments inside the old "${name}" entry were dropped with it.`)
    }
    if (tree === undefined) {
      // An empty file, or one of only comments: they stay at the top, the object below them.
      const comments = text.trimEnd()
      out = `${comments}${comments === "" ? "" : fmt.eol}{}`
      change([...at, name], edit.add)
      out += fmt.eol
    } else {
      change([...at, name], edit.add)
    }
  } else if (edit.remove === true) {
    if (!exists) throw unknown()
    const property = copies[0]
    const end = afterNode(text, property.offset + property.length)
    const own = text.slice(property.offset, end.lineEnd ?? property.offset + property.length)
    if (hasComment(own)) notes.push(`Any comment inside the "${name}" entry or after it on its line was removed with it.`)
    change([...at, name], undefined)
    // The last server gone: an empty map reads `{}`, not `{`, a blank line and `}`.
    const after = parseTree(out, file)
    let node = after
    for (const key of at) node = propertiesOf(node, key)[0]?.children?.[1]
    if (node?.type === "object" && (node.children ?? []).length === 0 && !hasComment(out.slice(node.offset, node.offset + node.length))) {
      out = `${out.slice(0, node.offset)}{}${out.slice(node.offset + node.length)}`
    }
  } else if ("tools" in edit) {
    if (!exists) throw unknown()
    entryMustBeObject()
    const tools = edit.tools
    if (tools !== null) {
      if (!isObject(tools) || !Object.values(tools).every((v) => typeof v === "boolean")) {
        throw new Error(`the tools of "${name}" must be an object of tool name → true or false`)
      }
      // opencode rejects a config whose mcp entries hold keys it does not know.
      if (dialect.name === "opencode") {
        throw new Error(`opencode refuses unknown keys in an mcp entry, so a "tools" list cannot be kept in ${file ?? "this file"}; use opencode's own top-level "tools" setting ("${name}_*": false) instead`)
      }
      notes.push(`${CLIENTS[dialect.name]} ${dialect.name === "mcpServers" ? "do" : "does"} not read "tools": only toolnexus applies this list.`)
      change([...at, name, "tools"], tools)
    } else if (isObject(servers[name]) && "tools" in servers[name]) {
      change([...at, name, "tools"], undefined)
    }
  } else if ("enabled" in edit) {
    if (!exists) throw unknown()
    entryMustBeObject()
    if (typeof edit.enabled !== "boolean") throw new Error(`"enabled" must be true or false`)
    const entry = isObject(servers[name]) ? servers[name] : {}
    // Keep the key(s) the entry already uses, all of them agreeing; else the dialect's own.
    const keys = ["enabled", "disabled"].filter((k) => k in entry)
    if (keys.length === 0 && edit.enabled) {
      // On by default: nothing to write.
    } else {
      for (const key of keys.length > 0 ? keys : [dialect.disabledKey]) {
        const value = key === "enabled" ? edit.enabled : !edit.enabled
        if (entry[key] !== value) change([...at, name, key], value)
      }
      if (out !== text && (keys.includes("disabled") || (keys.length === 0 && dialect.disabledKey === "disabled")) && (dialect.name === "vscode" || dialect.name === "vscode-settings")) {
        notes.push(`VS Code keeps its own on/off switch for servers and does not document "disabled" in this file; toolnexus honours it.`)
      }
    }
  } else {
    throw new Error("an edit must be one of { tools }, { enabled }, { add } or { remove }")
  }
  // A guard: an edit must leave a file that parses.
  parseTree(out, file)
  return { text: bom + out, notes }
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
  const tree = parseTree(stripBom(text), file)
  const dialect = dialectOf(text, file, at)
  return { text, dialect, servers: serverMap(tree ? jsonc.getNodeValue(tree) : undefined, dialect.at) }
}

/**
 * Writes `text` to `file` atomically: a temporary file in the same folder, then a rename over
 * the old one (a symlink is followed, so the link stays). The file keeps its mode; a missing
 * file (and its folder) is created, readable by its owner only (0600: configs hold tokens).
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
    fs.writeFileSync(temp, text, { flag: "wx", mode: mode ?? 0o600 })
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
