// One-off targets: a server named on the command line instead of in a config.
//
//   toolnexus list --stdio "npx -y @scope/server --flag" [--env KEY=VALUE …] [--cwd dir]
//   toolnexus call https://host/mcp <tool> k=v [--header "Name: value" …] [--transport sse]
//
// The --stdio command line is split into words the way a POSIX shell splits them (quotes and
// backslashes), but no shell ever runs it: no pipes, redirections, globs or $VAR. `${VAR}`
// is expanded from the environment by the library, as in any config (so a header can be given
// as 'Authorization: Bearer ${TOKEN}' without the token on the command line).
// Header and --env values are secrets: no message here ever shows them.
import { ArgumentError, UsageError, tn } from "./inventory.mjs"

/** A URL target: the first positional, when it starts with http:// or https://. */
export const isUrlTarget = (word) => typeof word === "string" && /^https?:\/\//i.test(word)

/** Unquoted words a shell would treat as operators: here they would be plain arguments. */
const SHELL_OPERATOR = /^(?:[|&;<>]+|\d>>?|\d>&\d?|&>>?)$/

/**
 * Splits `line` into words as a POSIX shell does, without expanding anything: whitespace
 * separates words; '…' keeps everything literally; "…" keeps everything but \" \\ \$ \` (and a
 * backslash-newline, which disappears); outside quotes a backslash keeps the next character,
 * and a backslash before a line break (\n or \r\n) continues the line: both disappear, no word
 * begins or ends there.
 * `""` is an empty word. Throws a `UsageError` (prefixed with `what`) on an unterminated quote,
 * a trailing backslash, or an unquoted shell operator (| && ; > …), which no shell would run here.
 */
export function splitCommandLine(line, what = "--stdio") {
  const words = []
  let word = null // null between words; "" once a word has begun (even an empty quoted one)
  let quoted = false // the word has a quoted or escaped part (so "|" quoted is an argument)
  const end = () => {
    if (word === null) return
    if (!quoted && SHELL_OPERATOR.test(word)) {
      throw new UsageError(`${what}: "${word}" would need a shell, and none is run; quote it to pass it as an argument`)
    }
    words.push(word)
    word = null
    quoted = false
  }
  let i = 0
  /** The length of a backslash-newline at `at` (2, or 3 with \r\n), else 0. */
  const continuation = (at) => (line[at] !== "\\" ? 0 : line[at + 1] === "\n" ? 2 : line[at + 1] === "\r" && line[at + 2] === "\n" ? 3 : 0)
  while (i < line.length) {
    const ch = line[i]
    if (continuation(i) > 0) {
      i += continuation(i)
      continue
    }
    if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      end()
      i += 1
      continue
    }
    word ??= ""
    if (ch === "'") {
      const close = line.indexOf("'", i + 1)
      if (close < 0) throw new UsageError(`${what}: unterminated ' quote`)
      word += line.slice(i + 1, close)
      quoted = true
      i = close + 1
    } else if (ch === '"') {
      quoted = true
      i += 1
      for (;;) {
        if (i >= line.length) throw new UsageError(`${what}: unterminated " quote`)
        const c = line[i]
        if (c === '"') break
        if (continuation(i) > 0) {
          i += continuation(i)
          continue
        }
        if (c === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) {
          word += line[i + 1]
          i += 2
          continue
        }
        word += c
        i += 1
      }
      i += 1
    } else if (ch === "\\") {
      if (i + 1 >= line.length) throw new UsageError(`${what}: a backslash ends the command line (nothing to escape)`)
      word += line[i + 1]
      quoted = true
      i += 2
    } else {
      word += ch
      i += 1
    }
  }
  end()
  return words
}

/** Words that run the server rather than being it (`npx -y pkg`, `uvx pkg`, `docker run img`). */
const RUNNERS = new Set(["npx", "pnpx", "bunx", "uvx", "pipx", "node", "nodejs", "bun", "deno", "python", "python3", "py", "uv", "pnpm", "yarn", "npm", "docker", "podman", "env"])
const SUBCOMMANDS = new Set(["run", "dlx", "exec", "x", "tool", "start"])

/** Per runner, the flags after which it takes code, not a file (`node -e`, `node -p`, `python -c`). */
const JS_CODE = ["-e", "--eval", "-p", "--print"]
const CODE_FLAGS = { node: JS_CODE, nodejs: JS_CODE, bun: JS_CODE, deno: JS_CODE, python: ["-c"], python3: ["-c"], py: ["-c"] }

/**
 * A server name for a --stdio command: the package, module, script or image it runs, without
 * scope, version, folder or extension (`npx -y @scope/server-x@1.2 --flag` → `server-x`,
 * `node path/to/notes.mjs` → `notes`, `python -m my_server` → `my_server`); inline code
 * (`node -e '…'`, `python -c '…'`) names it after its runner (`node`, `python`); else "stdio".
 */
export function stdioServerName(words) {
  let runner
  for (let i = 0; i < words.length; i++) {
    const w = words[i]
    // `python -m pkg`: the module is the server.
    if (w === "-m" && i + 1 < words.length) return cleanName(words[i + 1])
    // `node -e '<code>'`: the code is no name.
    if (runner !== undefined && CODE_FLAGS[runner]?.includes(w.replace(/=.*$/s, ""))) return cleanName(runner)
    if (w.startsWith("-") || w.includes("=")) continue
    const base = w.split(/[\\/]/).pop().toLowerCase().replace(/\.exe$/, "")
    if (RUNNERS.has(base)) {
      runner = base
      continue
    }
    if (runner !== undefined && SUBCOMMANDS.has(w)) continue
    return cleanName(w)
  }
  return "stdio"
}

/** Script names that say nothing of the server, and the build folders they sit in. */
const GENERIC = new Set(["index", "main", "cli", "server", "app", "start"])
const BUILD_FOLDERS = new Set(["dist", "build", "lib", "src", "bin", "out", "esm", "cjs"])

/**
 * The last path segment of `word`, without @version, :tag or file extension; a generic script
 * (`…/server-everything/dist/index.js`) is named after its package folder. "stdio" if nothing
 * is left.
 */
function cleanName(word) {
  const segments = word.split(/[\\/]/).filter(Boolean)
  let name = segments.pop() ?? ""
  if (GENERIC.has(name.replace(/\.[^.]*$/, "").toLowerCase())) {
    while (segments.length > 0 && BUILD_FOLDERS.has(segments.at(-1).toLowerCase())) segments.pop()
    if (segments.length > 0 && !/^\.+$/.test(segments.at(-1))) name = segments.pop()
  }
  name = name.replace(/(.)@[^@]*$/, "$1") // pkg@1.2.3 (a scope's @ is gone with the folder)
  name = name.replace(/:[^:]*$/, "") // image:tag
  name = name.replace(/\.(?:[cm]?[jt]s|py|exe|sh)$/i, "")
  return name.replace(/[^\w.-]/g, "_").replace(/^[_.-]+|[_.-]+$/g, "") || "stdio"
}

/** A server name for a URL: its host name (`https://mcp.example.com:8443/mcp` → `mcp.example.com`). */
export function urlServerName(url) {
  return url.hostname.replace(/^\[|\]$/g, "") || "remote"
}

/** Options only a one-off target takes, and which kind of target each goes with. */
const STDIO_ONLY = ["env", "cwd"]
const URL_ONLY = ["header", "transport"]

/** A header name as HTTP allows it (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * The one-off server of a command line, or null when it names none (then --env, --cwd,
 * --header and --transport are usage errors). A URL target is the first positional; --stdio
 * gives a command. Returns `{ name, servers: { [name]: normalised spec }, positionals }` with
 * the URL taken out of `positionals`. Every mistake is an `ArgumentError` (exit 2, with usage).
 */
export function oneOffTarget(command, positionals, values) {
  const fail = (message) => {
    throw new ArgumentError(`toolnexus ${command}: ${message}`)
  }
  const url = isUrlTarget(positionals[0]) ? positionals[0] : undefined
  const stdio = values.stdio
  if (stdio !== undefined && url !== undefined) fail(`give one target: --stdio "<command>" or a URL, not both`)
  const given = (key) => (Array.isArray(values[key]) ? values[key].length > 0 : values[key] !== undefined)
  if (url === undefined) {
    for (const key of URL_ONLY) if (given(key)) fail(`--${key} goes with a URL target (toolnexus ${command} https://host/mcp …)`)
  }
  if (stdio === undefined) {
    for (const key of STDIO_ONLY) if (given(key)) fail(`--${key} goes with --stdio "<command>"`)
  }
  if (url === undefined && stdio === undefined) return null

  let name
  let spec
  if (stdio !== undefined) {
    let words
    try {
      words = splitCommandLine(stdio)
    } catch (err) {
      fail(err.message)
    }
    if (words.length === 0 || words[0] === "") fail("--stdio needs a command to run")
    const env = {}
    for (const pair of values.env ?? []) {
      const at = pair.indexOf("=")
      // The value may be a key: only a well-formed name is ever repeated back.
      if (at < 0) fail(`--env must be KEY=VALUE (one was given without "=")`)
      const key = pair.slice(0, at)
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) fail(`--env must be KEY=VALUE with a variable name as KEY (letters, digits, _)`)
      env[key] = pair.slice(at + 1)
    }
    spec = { command: words, env }
    if (values.cwd !== undefined) {
      if (values.cwd === "") fail("--cwd must not be empty")
      spec.cwd = values.cwd
    }
    name = stdioServerName(words)
  } else {
    let parsed
    try {
      parsed = new URL(url)
    } catch {
      fail(`"${url}" is not a valid URL`)
    }
    const headers = {}
    for (const header of values.header ?? []) {
      const colon = header.indexOf(":")
      const key = colon < 0 ? "" : header.slice(0, colon).trim()
      // Never repeat a header back: a malformed one may be a bare token.
      if (!HEADER_NAME.test(key)) fail(`--header must be "Name: value" (one was given without a valid name before ":")`)
      const value = header.slice(colon + 1).trim()
      // eslint-disable-next-line no-control-regex
      if (/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/.test(value)) fail(`--header ${key}: the value must not hold a line break, NUL or another control character`)
      headers[key] = value
    }
    spec = { url, headers }
    if (values.transport !== undefined) {
      if (!["sse", "streamable-http"].includes(values.transport)) fail(`--transport must be sse or streamable-http, got "${values.transport}"`)
      spec.type = values.transport
    }
    name = urlServerName(parsed)
    positionals = positionals.slice(1)
  }
  // Normalised as a config entry would be; what the library cannot use is said in its words.
  const normalised = tn.parseMcpConfig({ mcpServers: { [name]: spec } })[name]
  if (normalised?.type === "invalid") fail(String(normalised.error).replace(/^mcpServers\.\S+ /, ""))
  return { name, servers: { [name]: normalised }, positionals, kind: stdio !== undefined ? "stdio" : "url" }
}

/**
 * A failure reason of a one-off URL target: the library's advice to run \`toolnexus auth
 * <config> …\` (there is no config here) becomes the advice to pass the header.
 */
export function oneOffReason(reason) {
  return String(reason).replace(
    /run "toolnexus auth <config> [^"]*"/,
    'give --header "Authorization: Bearer <token>"',
  )
}

/** The options every command that takes a one-off target accepts (for bin/toolnexus.mjs). */
export const ONE_OFF_OPTIONS = {
  stdio: { type: "string" },
  env: { type: "string", multiple: true },
  cwd: { type: "string" },
  header: { type: "string", multiple: true },
  transport: { type: "string" },
}

/** The help text's paragraph on one-off targets, for `command` with `rest` after the target. */
export function oneOffHelp(command, rest) {
  return `One-off target, in place of <config> and <server>: the server is named after its
package or host.
  toolnexus ${command} --stdio "<command line>" ${rest}[--env KEY=VALUE …] [--cwd dir]
  toolnexus ${command} <http(s)://url> ${rest}[--header "Name: value" …] [--transport t]
The command line is split as a shell would ('…', "…", \\ escapes) but no shell runs it: no
pipes, redirections, globs or $VAR; \${VAR} expands from the environment, as in a config
(--header 'Authorization: Bearer \${TOKEN}' keeps the token off the command line).`
}

/** The options block of one-off targets for a command's help, names padded to `width` columns. */
export function oneOffOptionsHelp(width = 21) {
  const rows = [
    ['--stdio "<command>"', "a one-off stdio server (see above)"],
    ["--env KEY=VALUE", "an environment variable for it (repeatable; never printed)"],
    ["--cwd dir", "its working directory"],
    ['--header "N: v"', "an HTTP header for a URL target (repeatable; never printed)"],
    ["--transport t", "sse or streamable-http for a URL target (default: streamable HTTP, then legacy SSE)"],
  ]
  const indent = " ".repeat(width)
  return rows
    .map(([name, what]) => {
      // Words wrapped at 88 columns; a name too long for its column puts them on the next line.
      const lines = [""]
      for (const word of what.split(" ")) {
        if (lines.at(-1) !== "" && width + lines.at(-1).length + 1 + word.length > 88) lines.push("")
        lines[lines.length - 1] += lines.at(-1) === "" ? word : ` ${word}`
      }
      const head = name.length + 4 <= width ? `  ${name.padEnd(width - 2)}` : `  ${name}\n${indent}`
      return head + lines.join(`\n${indent}`)
    })
    .join("\n")
}
