// `toolnexus serve [<config>] [--addr host:port | --stdio] [--watch] [--tools a,b] [--name n]
// [--tool-search …]`: one MCP gateway over every server of a config, served as streamable HTTP
// (or stdio) until SIGINT/SIGTERM (or the end of stdin).
import fs from "node:fs"
import { createRequire } from "node:module"
import path from "node:path"
import { configLocations, resolveServers } from "./discover.mjs"
import { ArgumentError, UsageError, messageOf, tn } from "./inventory.mjs"
import { MARK } from "./term.mjs"

export const SERVE_HELP = `Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]
                       [--tools a,b] [--name n] [--stateless]
                       [--allowed-hosts h1,h2] [--allowed-origins o1,o2]
                       [--session-idle-timeout ms] [--max-sessions n]
                       [--auth-token-env NAME]… [--auth-token-file PATH] [--auth-file PATH]
                       [--oauth-issuer URL [--oauth-audience URL] [--oauth-scopes a,b]
                       [--oauth-jwks-uri URL]] [--no-auth] [--access-log] [--log-calls]
                       [--state-key-file PATH | --state-key-env NAME…] [--replica-url URL]
                       [--tool-search [--tool-search-limit n] [--tool-search-always a,b]]

Connects to every enabled server of <config> (without it, of the client configs
\`toolnexus configs\` finds) and serves the union of their tools as one MCP server:
over streamable HTTP (POST <url>/mcp), or with --stdio over stdin/stdout, so one
entry in Claude Desktop or Cursor stands for every server of the config:

  { "mcpServers": { "all": { "command": "npx", "args": ["toolnexus", "serve", "--stdio"] } } }

Tools are named <server>_<tool>, as loadMcp names them. Over HTTP, prints one line on
stdout once serving:

  toolnexus: serving <N> tools at http://127.0.0.1:8808/mcp

With --stdio nothing but the protocol goes to stdout. Server statuses go to stderr, and
one line per tool call when stderr is a terminal or with --log-calls. When a server's tools change, clients in a session are
sent notifications/tools/list_changed. SIGINT or SIGTERM (or, with --stdio, the end
of stdin) stops serving, closes every server (no child process is left) and exits 0.

Options:
  --addr host:port  address to listen on (default 127.0.0.1:8808; port 0 picks a free one)
  --stdio           serve over stdin/stdout instead of HTTP
  --watch           reload the config file(s) when they change: new servers are started,
                    removed ones closed, changed ones restarted, clients notified
  --tools a,b       expose only these tools (names as above; unknown names are ignored
                    with a warning)
  --name n          the server name announced to clients (default toolnexus)
  --stateless       no sessions for handshake-era clients either, so replicas can stand
                    behind a load balancer with no affinity (2026-07-28 clients are
                    always served statelessly)
  --allowed-hosts h1,h2
                    Host names clients use to reach the server, besides the loopback ones;
                    required when --addr is not a loopback address ("*" accepts any)
  --allowed-origins o1,o2
                    browser origins accepted besides the loopback ones (e.g.
                    https://app.example.com); other Origins are refused with 403
  --session-idle-timeout ms
                    a session no request names for this long expires and is answered 404
                    from then on, so its client opens a new one (default 300000: 5 minutes)
  --max-sessions n  sessions alive at once at most; a new one beyond it ends the idlest
                    (default 500)
  --auth-token-env NAME
                    accept \`Authorization: Bearer <token>\` with the token held by the
                    environment variable NAME (its subject is NAME); repeatable
  --auth-token-file PATH
                    accept the tokens of PATH, one per line (blank lines and # comments
                    ignored); tokens are never taken from the command line
  --auth-file PATH  JSON { tokens, oauth, tools, prompts, resources } as toolkit.serve's
                    auth option takes it (per-scope tool policy: "tools": { "<scope>":
                    ["github_*"] }); the flags above and below add to it
  --oauth-issuer URL
                    accept access tokens of this OAuth authorisation server (JWTs checked
                    against its keys) and serve /.well-known/oauth-protected-resource
  --oauth-audience URL
                    the audience tokens must name (default: the served URL, <url>/mcp;
                    behind a proxy, the public URL clients use)
  --oauth-scopes a,b
                    scopes every request needs (else 403 insufficient_scope)
  --oauth-jwks-uri URL
                    the issuer's key set (default: from the issuer's metadata)
  --no-auth         serve a non-loopback --addr without auth: anyone who can reach it may
                    use every tool (without auth flags, only loopback addresses serve)
  --log-calls       one line per tool call on stderr (name, ms) even when stderr is not a
                    terminal (on a terminal it is always written)
  --access-log      one JSON line per request on stderr (time, principal, method, tool,
                    status, ms; never arguments or tokens)
  --state-key-file PATH
                    the state key replicas share, so that any replica serves any request
                    (with --stateless, behind a load balancer with no affinity) even when a
                    tool asks the client for input: each line of PATH is one key (at least
                    16 bytes; \`openssl rand -base64 32\`; a line base64:<…> is the bytes it
                    encodes), the first sealing and every one opening, so a key rotates by
                    putting the new one first; blank lines and # comments are ignored. A file
                    of exactly 32 bytes that are not text is one raw key. Keys are never taken
                    from the command line
  --state-key-env NAME
                    the state key held by the environment variable NAME (removed from the
                    environment of the servers this command starts); repeatable, the first
                    sealing
  --replica-url URL the http(s) origin other replicas reach this one at (e.g.
                    http://10.0.0.5:8808), so an answer to its request that reaches another
                    replica is handed to it; needs a state key
  --tool-search     list two tools instead of the whole catalog: search_tools (query,
                    limit), which answers the best matches' names, descriptions and input
                    schemas, and call_tool (name, arguments), which calls one of them; every
                    tool stays callable by its own name, and auth policies still apply
  --tool-search-limit n
                    matches search_tools answers when the client names no limit (1 to 50,
                    default 5)
  --tool-search-always a,b
                    tools listed beside search_tools and call_tool (names as above)
  -h, --help        show this help

GET /healthz answers 200 while serving; GET /readyz 200 once every server is connected,
else 503. Both are outside auth.

Exit status: 0 stopped by a signal (or end of input), 1 could not start serving, 2
usage or config error.
`

const log = (line) => process.stderr.write(`${line}\n`)

function reportStatuses(toolkit) {
  const statuses = Object.entries(toolkit.mcpStatus())
  const errors = toolkit.mcpErrors()
  const width = Math.max(0, ...statuses.map(([server]) => server.length))
  for (const [server, status] of statuses) {
    const detail = status === "failed" ? errors[server] ?? status : status
    log(`${MARK[status] ?? "?"} ${server.padEnd(width)}  ${detail}`)
  }
}

/**
 * Calls `onChange` (debounced) when any of `files` changes, is created or removed. Watches
 * their folders, since editors replace a file rather than write it in place.
 */
function watchFiles(files, onChange) {
  const names = new Map()
  for (const file of files) {
    const dir = path.dirname(path.resolve(file))
    names.set(dir, [...(names.get(dir) ?? []), path.basename(file)])
  }
  let timer
  const watchers = []
  for (const [dir, basenames] of names) {
    try {
      watchers.push(
        fs.watch(dir, (_event, name) => {
          if (name !== null && !basenames.includes(String(name))) return
          clearTimeout(timer)
          timer = setTimeout(onChange, 150)
        }),
      )
    } catch (err) {
      log(`toolnexus: --watch: cannot watch ${dir}: ${messageOf(err)}`)
    }
  }
  return () => {
    clearTimeout(timer)
    for (const w of watchers) w.close()
  }
}

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
    const http = [...given, ...["no-auth", "access-log"].filter((flag) => values[flag])]
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

const STATE_KEY_FLAGS = ["state-key-file", "state-key-env", "replica-url"]
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
  try {
    createRequire(import.meta.url)("../../lib/serve-options.js").serveOptions({ stateKey, replicaUrl })
  } catch (err) {
    const words = messageOf(err).replace(/^toolnexus: replicaUrl/, "--replica-url").replace(/^toolnexus: stateKey/, "the state key").replace(/^toolnexus: /, "")
    throw new UsageError(`toolnexus serve: ${words}`)
  }
  return { stateKey, replicaUrl }
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

export async function serve({ positionals, values }) {
  const [config] = positionals
  // Auth and search flags first: a usage error is exit 2 before anything starts.
  const { auth, accessLog } = authFromFlags(values)
  const { stateKey, replicaUrl } = stateKeyFromFlags(values)
  const toolSearch = toolSearchFromFlags(values)
  const addr = values.addr ?? "127.0.0.1:8808"
  const list = (value) => (value === undefined ? undefined : value.split(",").map((s) => s.trim()).filter(Boolean))
  const only = list(values.tools)
  // A malformed config is exit 2, before anything starts.
  const resolved = resolveServers(config)
  // Without <config>, every place a client keeps its config is watched (whose folder exists),
  // so a config created later is read too.
  const watched = config !== undefined ? [config] : [...new Set(configLocations().map((l) => l.file))].filter((f) => fs.existsSync(path.dirname(f)))
  const mcpConfigOf = (r) => (config !== undefined ? config : { mcpServers: r.servers })
  if (typeof tn.createToolkit !== "function") {
    log("toolnexus: this build of toolnexus has no createToolkit, so it cannot serve")
    return 1
  }

  // A signal at any point ends the command cleanly: during start-up it aborts the connections,
  // once serving it stops the listener and closes every server.
  const controller = new AbortController()
  let stopping = null
  let shutdown = null
  const onSignal = (sig) => {
    if (stopping) {
      log(`toolnexus: ${sig} again, exiting now`)
      process.exit(1)
    }
    stopping = sig
    controller.abort(new Error(`interrupted by ${sig}`))
    shutdown?.()
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)

  let toolkit
  try {
    toolkit = await tn.createToolkit({ mcpConfig: mcpConfigOf(resolved), builtins: false, signal: controller.signal, toolSearch })
  } catch (err) {
    if (stopping) return 0
    log(`toolnexus: cannot load ${config ?? "the client configs"}: ${messageOf(err)}`)
    return 1
  }

  const mcp = {}
  if (only !== undefined) mcp.tools = only
  if (values.name !== undefined) mcp.name = values.name
  // A line per call costs throughput under load, and off a terminal (a container, a service)
  // nobody reads it unless asked: --log-calls.
  const onCall =
    values["log-calls"] === true || process.stderr.isTTY
      ? ({ name, ms, isError }) => log(`${isError ? MARK.failed : MARK.connected} ${name}  ${Math.round(ms)} ms`)
      : undefined

  let handle
  let serving
  try {
    reportStatuses(toolkit)
    const all = toolkit.tools().map((t) => t.name)
    for (const name of only ?? []) {
      if (!all.includes(name)) log(`toolnexus: --tools: no tool named "${name}" (ignored)`)
    }
    const exposed = only === undefined ? all : all.filter((name) => only.includes(name))
    if (toolSearch !== undefined) {
      const always = toolSearch === true ? [] : toolSearch.always ?? []
      for (const name of always) {
        if (!exposed.includes(name)) log(`toolnexus: --tool-search-always: no tool named "${name}" (ignored)`)
      }
      const kept = always.filter((name) => exposed.includes(name))
      log(`toolnexus: --tool-search: tools/list shows search_tools and call_tool${kept.length > 0 ? ` and ${kept.join(", ")}` : ""}; ${exposed.length} tools searched`)
    }
    if (!stopping && values.stdio) {
      serving = toolkit.serveStdio({ mcp, onCall })
      log(`toolnexus: serving ${exposed.length} tools over stdio`)
    } else if (!stopping) {
      handle = await toolkit.serve(addr, {
        mcp,
        stateless: values.stateless === true,
        allowedHosts: list(values["allowed-hosts"]),
        allowedOrigins: list(values["allowed-origins"]),
        sessionIdleTimeout: values["session-idle-timeout"],
        maxSessions: values["max-sessions"],
        auth,
        accessLog,
        stateKey,
        replicaUrl,
        onCall,
      })
      if (!stopping) process.stdout.write(`toolnexus: serving ${exposed.length} tools at ${handle.url}/mcp\n`)
    }
  } catch (err) {
    log(`toolnexus: cannot serve at ${addr}: ${messageOf(err)}`)
    await toolkit.close()
    return 1
  }

  // --watch: one reload at a time; a change during a reload is read once that one ends.
  let unwatch = () => {}
  let reloading = Promise.resolve()
  if (values.watch && !stopping) {
    let again = false
    let busy = false
    const reload = async () => {
      if (busy) {
        again = true
        return
      }
      busy = true
      try {
        do {
          again = false
          const next = config !== undefined ? config : mcpConfigOf(resolveServers(undefined))
          const { added, removed, restarted } = await toolkit.reload(next)
          if (added.length + removed.length + restarted.length === 0) continue
          const said = [["added", added], ["removed", removed], ["restarted", restarted]].filter(([, names]) => names.length > 0)
          log(`toolnexus: config changed: ${said.map(([what, names]) => `${what} ${names.join(", ")}`).join("; ")}`)
          reportStatuses(toolkit)
        } while (again && !stopping)
      } catch (err) {
        log(`toolnexus: config not reloaded: ${messageOf(err)}`)
      } finally {
        busy = false
      }
    }
    unwatch = watchFiles(watched, () => {
      if (!stopping) reloading = reload()
    })
    log(`toolnexus: watching ${config ?? `the client configs (${resolved.files.map((f) => f.file).join(", ")})`}`)
  }

  if (!stopping) {
    await new Promise((resolve) => {
      shutdown = resolve
      serving?.then(resolve, (err) => {
        log(`toolnexus: ${messageOf(err)}`)
        resolve()
      })
    })
  }
  unwatch()
  log(stopping ? `toolnexus: ${stopping}, stopping` : "toolnexus: end of input, stopping")
  try {
    await reloading
    await handle?.stop()
  } finally {
    await toolkit.close()
  }
  return 0
}
