// `toolnexus call [<config>] <server> <tool> [key=value …] [--args '<json>'] [--json]`: connect
// one server, call one tool, print what it answered, close.
import { resolveServers } from "./discover.mjs"
import fs from "node:fs"
import { ArgumentError, UsageError, messageOf, tn } from "./inventory.mjs"

export const CALL_HELP = `Usage: toolnexus call [<config>] <server> <tool> [key=value …] [--args '<json>'] [--json]

Connects only <server> of <config> (without <config>, of the client configs found: see
\`toolnexus configs\`), calls <tool> once and closes; nothing is left running.

Arguments: each key=value sets one argument. The value is read as JSON when it parses
as JSON (n=3, on=true, tags='["a","b"]'), else taken as a string (q=hello). --args
gives a JSON object of arguments; key=value pairs are applied on top of it.

Prints the result's text parts; images, audio and resources are summarised
([image image/png, 1.2 kB]). A tool that does not exist is named with the closest
tools the server has.

Options:
  --args json   the arguments as one JSON object
  --json        print the whole MCP result ({ content, structuredContent?, isError, _meta? })
  --timeout ms  bound on connecting and on the call (default: the server's timeout)
  -h, --help    show this help

Exit status: 0 success, 1 the tool returned isError, 2 usage or config error (an
unknown server or tool), 3 the server could not be reached.
`

/**
 * Head positionals (up to the first key=value) are [config?] server tool; the rest are pairs.
 * `command` and `what` name the command and its last head argument in messages (`prompt`,
 * `<prompt>`).
 */
export function splitCallArgs(positionals, command = "call", what = "<tool>") {
  const firstPair = positionals.findIndex((a) => /^[^=]+=/.test(a))
  const head = firstPair < 0 ? positionals : positionals.slice(0, firstPair)
  const pairs = firstPair < 0 ? [] : positionals.slice(firstPair)
  if (head.length < 2) throw new ArgumentError(`toolnexus ${command}: missing ${head.length === 0 ? `<server> and ${what}` : what}`)
  if (head.length > 3) throw new ArgumentError(`toolnexus ${command}: unexpected argument "${head[3]}" (arguments are key=value)`)
  // `call mcp.json server` names a config and a server, not a server and a tool.
  if (head.length === 2 && isFile(head[0])) throw new ArgumentError(`toolnexus ${command}: missing ${what}`)
  const [config, server, tool] = head.length === 3 ? head : [undefined, ...head]
  for (const pair of pairs) {
    if (!/^[^=]+=/.test(pair)) throw new ArgumentError(`toolnexus ${command}: argument "${pair}" is not key=value`)
  }
  return { config, server, tool, pairs }
}

export function isFile(file) {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * `--args` and key=value pairs as one arguments object. A value is read as JSON when it parses,
 * unless `strings` (prompt arguments are strings: every value is taken as it is).
 */
export function callArguments(argsJson, pairs, command = "call", strings = false) {
  let args = {}
  if (argsJson !== undefined) {
    try {
      args = JSON.parse(argsJson)
    } catch (err) {
      throw new UsageError(`toolnexus ${command}: --args is not valid JSON: ${err.message}`)
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      throw new UsageError(`toolnexus ${command}: --args must be a JSON object`)
    }
  }
  for (const pair of pairs) {
    const at = pair.indexOf("=")
    const raw = pair.slice(at + 1)
    let value = raw
    if (!strings) {
      try {
        value = JSON.parse(raw)
      } catch {
        value = raw
      }
    }
    args[pair.slice(0, at)] = value
  }
  return args
}

/** Levenshtein distance, for "did you mean". */
function distance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = row
  }
  return prev[b.length]
}

/** The names closest to `wanted` (within a third of its length, or containing it), best first. */
export function closeMatches(wanted, names, limit = 3) {
  const bound = Math.max(2, Math.floor(wanted.length / 3))
  return names
    .map((name) => ({ name, d: name.includes(wanted) || wanted.includes(name) ? 0.5 : distance(wanted, name) }))
    .filter(({ d }) => d <= bound)
    .sort((x, y) => x.d - y.d || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map(({ name }) => name)
}

/** "; did you mean "a", "b"?" or "; it has a, b" (or `none`): what to say of a missing name. */
export function missingHint(wanted, names, none) {
  const close = closeMatches(wanted, names)
  return close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(", ")}?` : names.length > 0 ? `; it has ${names.join(", ")}` : none
}

/**
 * Loads only `server` of `config` and runs `run(source)`, then closes it: an unknown or disabled
 * server is a UsageError (exit 2, the closest names suggested), one that cannot be reached exit
 * 3, and a failure of `run` is printed as `toolnexus <command>: …` (exit 1).
 */
export async function withServer(command, { config, server, values, signal }, run) {
  const { servers } = resolveServers(config)
  if (!(server in servers)) {
    const names = Object.keys(servers)
    const close = closeMatches(server, names)
    const hint = close.length > 0 ? ` (did you mean ${close.map((n) => `"${n}"`).join(", ")}?)` : names.length > 0 ? ` (servers: ${names.join(", ")})` : ""
    throw new UsageError(`toolnexus ${command}: no server named "${server}"${hint}`)
  }
  if (servers[server].enabled === false) throw new UsageError(`toolnexus ${command}: server "${server}" is disabled in its config`)

  const opts = { signal }
  if (values.timeout !== undefined) opts.deadline = values.timeout
  const source = await tn.loadMcp({ mcpServers: { [server]: servers[server] } }, opts)
  try {
    if (source.status[server] !== "connected") {
      process.stderr.write(`toolnexus ${command}: cannot reach "${server}": ${source.errors[server] ?? source.status[server]}\n`)
      return 3
    }
    return await run(source)
  } catch (err) {
    if (signal?.aborted) throw err
    process.stderr.write(`toolnexus ${command}: ${messageOf(err)}\n`)
    return 1
  } finally {
    await source.close()
  }
}

export async function call({ positionals, values }, { signal }) {
  const { config, server, tool, pairs } = splitCallArgs(positionals)
  const args = callArguments(values.args, pairs)
  return withServer("call", { config, server, values, signal }, async (source) => {
    // loadMcp names tools <server>_<tool>; the user names the tool as its server does.
    const prefix = `${tn.sanitize(server)}_`
    const original = (t) => (t.name.startsWith(prefix) ? t.name.slice(prefix.length) : t.name)
    const wantedName = `${prefix}${tn.sanitize(tool)}`
    const found = source.tools.find((t) => t.name === wantedName) ?? source.tools.find((t) => t.name === tool)
    if (!found) {
      const hint = missingHint(tool, source.tools.map(original), "; it has no tools")
      process.stderr.write(`toolnexus call: server "${server}" has no tool "${tool}"${hint}\n`)
      return 2
    }
    const ctx = {}
    if (values.timeout !== undefined) ctx.timeout = values.timeout
    if (signal) ctx.signal = signal
    const result = await found.execute(args, ctx)
    if (signal?.aborted) throw signal.reason
    if (values.json) {
      // The result as the server sent it; a call that got no result (a timeout, a lost
      // connection) shows its reason as a text part.
      const mcp = { content: result.content ?? [{ type: "text", text: result.output }] }
      if (result.structuredContent !== undefined) mcp.structuredContent = result.structuredContent
      mcp.isError = result.isError
      if (result._meta !== undefined) mcp._meta = result._meta
      process.stdout.write(`${JSON.stringify(mcp, null, 2)}\n`)
    } else {
      // Text, with images and resources summarised in place by the library.
      const text = result.isError || !Array.isArray(result.content) || result.content.length === 0 ? result.output : tn.describeContent(result.content)
      const out = result.isError ? process.stderr : process.stdout
      out.write(text.endsWith("\n") || text === "" ? text : `${text}\n`)
    }
    return result.isError ? 1 : 0
  })
}
