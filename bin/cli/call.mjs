// `toolnexus call [<config>] <server> <tool> [key=value …] [--args '<json>'] [--json]`: connect
// one server, call one tool, print what it answered, close.
import { resolveServers } from "./discover.mjs"
import fs from "node:fs"
import { createRequire } from "node:module"
import { ELICIT_HELP, terminalElicitation } from "./elicit.mjs"
import { ArgumentError, UsageError, messageOf, tn } from "./inventory.mjs"
import { oneOffHelp, oneOffOptionsHelp, oneOffReason, oneOffTarget } from "./oneoff.mjs"

/** The names closest to a wanted one, best first (lib/source.js: one "did you mean" for the library and the CLI). */
export const { closeMatches } = createRequire(import.meta.url)("../../lib/source.js")

export const CALL_HELP = `Usage: toolnexus call [<config>] <server> <tool> [key=value …] [--args '<json>'] [--json]
       toolnexus call --stdio "<command line>" <tool> [key=value …] [options]
       toolnexus call <http(s)://url> <tool> [key=value …] [--header "Name: value" …] [options]

Connects only <server> of <config> (without <config>, of the client configs found: see
\`toolnexus configs\`), calls <tool> once and closes; nothing is left running.

${oneOffHelp("call", "<tool> [key=value …] ")}

Arguments: each key=value sets one argument. The value is read as JSON when it parses
as JSON (n=3, on=true, tags='["a","b"]'), else taken as a string (q=hello). --args
gives a JSON object of arguments; key=value pairs are applied on top of it.

Prints the result's text parts; images, audio and resources are summarised
([image image/png, 1.2 kB]). A tool that does not exist is named with the closest
tools the server has.

${ELICIT_HELP}

Options:
  --args json          the arguments as one JSON object
  --json               print the whole MCP result ({ content, structuredContent?, isError, _meta? })
  --timeout ms         bound on connecting and on the call, answering questions included
                       (default: the server's timeout)
  --no-browser         print a URL a server asks to open instead of opening the browser
${oneOffOptionsHelp(23)}
  -h, --help           show this help

Exit status: 0 success, 1 the tool returned isError, 2 usage or config error (an
unknown server or tool), 3 the server could not be reached.
`

/**
 * Head positionals (up to the first key=value) are [config?] server tool; the rest are pairs.
 * `command` and `what` name the command and its last head argument in messages (`prompt`,
 * `<prompt>`).
 */
export function splitCallArgs(positionals, command = "call", what = "<tool>", target = null) {
  const firstPair = positionals.findIndex((a) => /^[^=]+=/.test(a))
  const head = firstPair < 0 ? positionals : positionals.slice(0, firstPair)
  const pairs = firstPair < 0 ? [] : positionals.slice(firstPair)
  for (const pair of pairs) {
    if (!/^[^=]+=/.test(pair)) throw new ArgumentError(`toolnexus ${command}: argument "${pair}" is not key=value`)
  }
  if (target) {
    // A one-off target is the server: only the tool (or prompt) is left to name.
    if (head.length === 0) throw new ArgumentError(`toolnexus ${command}: missing ${what}`)
    if (head.length > 1) throw new ArgumentError(`toolnexus ${command}: unexpected argument "${head[1]}" (a one-off target takes no <config> or <server>; arguments are key=value)`)
    return { server: target.name, tool: head[0], pairs }
  }
  if (head.length < 2) throw new ArgumentError(`toolnexus ${command}: missing ${head.length === 0 ? `<server> and ${what}` : what}`)
  if (head.length > 3) throw new ArgumentError(`toolnexus ${command}: unexpected argument "${head[3]}" (arguments are key=value)`)
  // `call mcp.json server` names a config and a server, not a server and a tool.
  if (head.length === 2 && isFile(head[0])) throw new ArgumentError(`toolnexus ${command}: missing ${what}`)
  const [config, server, tool] = head.length === 3 ? head : [undefined, ...head]
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

/** "; did you mean "a", "b"?" or "; it has a, b" (or `none`): what to say of a missing name. */
export function missingHint(wanted, names, none) {
  const close = closeMatches(wanted, names)
  return close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(", ")}?` : names.length > 0 ? `; it has ${names.join(", ")}` : none
}

/**
 * Loads only `server` of `config` (or of `servers`, a one-off target's) and runs
 * `run(source, elicitation)`, then closes it: an unknown or disabled server is a UsageError
 * (exit 2, the closest names suggested), one that cannot be reached exit 3, and a failure of
 * `run` is printed as `toolnexus <command>: …` (exit 1). At a terminal the server's questions
 * are asked there (elicit.mjs; `elicitation.asked()` tells whether one came, `close()` ends one
 * still open, before the outcome is printed); elsewhere they are declined.
 */
export async function withServer(command, { config, server, servers: given, values, signal }, run) {
  const { servers } = given ? { servers: given } : resolveServers(config)
  if (!(server in servers)) {
    const names = Object.keys(servers)
    const close = closeMatches(server, names)
    const hint = close.length > 0 ? ` (did you mean ${close.map((n) => `"${n}"`).join(", ")}?)` : names.length > 0 ? ` (servers: ${names.join(", ")})` : ""
    throw new UsageError(`toolnexus ${command}: no server named "${server}"${hint}`)
  }
  if (servers[server].enabled === false) throw new UsageError(`toolnexus ${command}: server "${server}" is disabled in its config`)

  const opts = { signal }
  if (values.timeout !== undefined) opts.deadline = values.timeout
  const elicitation = terminalElicitation({ signal, browser: !values["no-browser"] })
  if (elicitation) opts.waitFor = elicitation.waitFor
  const source = await tn.loadMcp({ mcpServers: { [server]: servers[server] } }, opts)
  try {
    if (source.status[server] !== "connected") {
      const reason = source.errors[server] ?? source.status[server]
      process.stderr.write(`toolnexus ${command}: cannot reach "${server}": ${given ? oneOffReason(reason) : reason}\n`)
      return 3
    }
    return await run(source, elicitation ?? { asked: () => false, close() {} })
  } catch (err) {
    elicitation?.close()
    if (signal?.aborted) throw err
    process.stderr.write(`toolnexus ${command}: ${messageOf(err)}${timeoutHint(err, elicitation)}\n`)
    return 1
  } finally {
    elicitation?.close()
    await source.close()
  }
}

/** After questions were asked, a timeout says that answering counted (and how to get longer). */
export function timeoutHint(reason, elicitation) {
  if (!elicitation?.asked() || !/timed out/.test(messageOf(reason))) return ""
  return " (the time spent answering counts: give more with --timeout ms)"
}

export async function call({ positionals, values }, { signal }) {
  const target = oneOffTarget("call", positionals, values)
  const { config, server, tool, pairs } = splitCallArgs(target?.positionals ?? positionals, "call", "<tool>", target)
  const args = callArguments(values.args, pairs)
  return withServer("call", { config, server, servers: target?.servers, values, signal }, async (source, elicitation) => {
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
    elicitation.close() // a question still open (the call timed out) ends before the result shows
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
      let text = result.isError || !Array.isArray(result.content) || result.content.length === 0 ? result.output : tn.describeContent(result.content)
      if (result.isError && result.content === undefined) text += timeoutHint(text, elicitation)
      const out = result.isError ? process.stderr : process.stdout
      out.write(text.endsWith("\n") || text === "" ? text : `${text}\n`)
    }
    return result.isError ? 1 : 0
  })
}
