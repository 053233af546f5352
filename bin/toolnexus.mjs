#!/usr/bin/env node
// The `toolnexus` command: list, diff, call, read, prompt and serve the MCP servers of an mcp.json.
// Argument parsing, help and exit statuses live here; each command lives in ./cli/.
import fs from "node:fs"
import { parseArgs } from "node:util"
import { ADD_HELP, REMOVE_HELP, add, remove } from "./cli/add.mjs"
import { AUTH_HELP, auth } from "./cli/auth.mjs"
import { CALL_HELP, call } from "./cli/call.mjs"
import { DIFF_HELP, diff } from "./cli/diff.mjs"
import { CONFIGS_HELP, configs } from "./cli/discover.mjs"
import { ArgumentError, UsageError, interruptSignal, messageOf } from "./cli/inventory.mjs"
import { LIST_HELP, list } from "./cli/list.mjs"
import { ONE_OFF_OPTIONS } from "./cli/oneoff.mjs"
import { PROMPT_HELP, prompt } from "./cli/prompt.mjs"
import { READ_HELP, read } from "./cli/read.mjs"
import { SERVE_HELP, serve } from "./cli/serve.mjs"
import { routeWarnings } from "./cli/term.mjs"
import { UI_HELP, ui } from "./cli/ui.mjs"
import { TYPES_HELP, types } from "./cli/types.mjs"

const HELP = `Usage: toolnexus <command> [options]

Inspect, check and serve the MCP servers of an mcp.json (Claude, Cursor, VS Code,
Windsurf, Gemini, Zed, opencode and other dialects; comments allowed).

Commands:
  list [<config>] [--json] [--timeout ms]
      every server's status, tools, resources and prompts; --json prints the
      inventory as JSON
  diff [<config>] <snapshot.json> [--json] [--timeout ms]
      compare the live tools, resources and prompts with a saved \`list --json\`
      output; exit 1 on drift
  call [<config>] <server> <tool> [key=value …] [--args json] [--json]
      call one tool of one server and print its result
  read [<config>] <server> <uri> [--json]
      read one resource of one server and print its contents
  prompt [<config>] <server> <name> [key=value …] [--args json] [--json]
      get one prompt of one server and print its messages
  serve [<config>] [--addr 127.0.0.1:8808] [--stdio] [--watch] [--tools a,b] [--stateless]
        [--auth-token-env NAME] [--oauth-issuer URL] [--no-auth] [--access-log] [--metrics] [--log-calls]
        [--state-key-file PATH] [--replica-url URL]
      serve every server's tools as one MCP server (streamable HTTP or stdio)
  auth <config> <name> [--no-browser] | auth --list | auth --logout <name>
      authorise a remote server by OAuth once; list or forget stored credentials
  types [<config>] [--out file] [--timeout ms]
      TypeScript types of every tool's arguments and structured result, for
      loadMcp<McpTools>() and its type-checked source.call()
  ui [<config>] [--port n] [--open]
      a local web page for one config: statuses, tools, calls from generated
      forms, resources, prompts, the allowlist editor (127.0.0.1, token in the URL)
  add <server.json | registry name> [--config file] [--name n] [--package N | --remote]
      write one server (a registry's server.json) into a config, in its own dialect;
      secrets become environment references
  remove <name> [--config file]
      take one server out of a config; the rest of the file is kept as it is
  configs [--json]
      the MCP configs of the clients installed here, and their servers

Without <config>, a command reads the configs \`toolnexus configs\` lists.

One-off targets: list, diff, call, read and prompt also take one server given on the
command line in place of <config> and <server>:
  toolnexus list --stdio "npx -y @scope/server --flag" [--env KEY=VALUE] [--cwd dir]
  toolnexus call https://host/mcp <tool> key=value --header "Authorization: Bearer …"
  toolnexus call --stdio "node server.mjs" <tool> key=value

At a terminal, call, read and prompt ask a server's questions (MCP elicitation) there,
each answer checked against the requested schema; off a terminal they are declined.

Options:
  -h, --help     show this help (\`toolnexus <command> --help\` for a command's)
  -v, --version  print the toolnexus version

Exit status: 0 success, 1 a server failed (list, types), drift (diff), the tool returned
isError (call), the server answered with an error (read, prompt) or serving could
not start (serve), 2 usage or config error, 3 the server could not be reached (call,
read, prompt). Colours only when stdout is a terminal and
NO_COLOR is not set.
`

const TIMEOUT = { timeout: { type: "string" } }
// The commands that may ask a server's questions at the terminal (bin/cli/elicit.mjs).
const ELICIT_OPTIONS = { "no-browser": { type: "boolean" } }
// `arity`: how many positionals; `missing[n]`: what is missing when only n were given (when
// the least is not 0). `stdio`: the same with a one-off --stdio target (no <config>, no
// <server>; bin/cli/oneoff.mjs).
const COMMANDS = {
  auth: {
    run: auth,
    help: AUTH_HELP,
    arity: [0, 2],
    options: { "no-browser": { type: "boolean" }, list: { type: "boolean" }, logout: { type: "string" }, ...TIMEOUT },
  },
  list: { run: list, help: LIST_HELP, arity: [0, 1], stdio: { arity: [0, 0] }, options: { json: { type: "boolean" }, ...TIMEOUT, ...ONE_OFF_OPTIONS } },
  diff: {
    run: diff,
    help: DIFF_HELP,
    arity: [1, 2],
    missing: ["<snapshot.json>"],
    stdio: { arity: [1, 1], missing: ["<snapshot.json>"] },
    options: { json: { type: "boolean" }, ...TIMEOUT, ...ONE_OFF_OPTIONS },
  },
  call: {
    run: call,
    help: CALL_HELP,
    arity: [2, Infinity],
    missing: ["<server> and <tool>", "<tool>"],
    stdio: { arity: [1, Infinity], missing: ["<tool>"] },
    options: { args: { type: "string" }, json: { type: "boolean" }, ...TIMEOUT, ...ELICIT_OPTIONS, ...ONE_OFF_OPTIONS },
  },
  read: {
    run: read,
    help: READ_HELP,
    arity: [2, 3],
    missing: ["<server> and <uri>", "<uri>"],
    stdio: { arity: [1, 1], missing: ["<uri>"] },
    options: { json: { type: "boolean" }, ...TIMEOUT, ...ELICIT_OPTIONS, ...ONE_OFF_OPTIONS },
  },
  prompt: {
    run: prompt,
    help: PROMPT_HELP,
    arity: [2, Infinity],
    missing: ["<server> and <prompt>", "<prompt>"],
    stdio: { arity: [1, Infinity], missing: ["<prompt>"] },
    options: { args: { type: "string" }, json: { type: "boolean" }, ...TIMEOUT, ...ELICIT_OPTIONS, ...ONE_OFF_OPTIONS },
  },
  configs: { run: configs, help: CONFIGS_HELP, arity: [0, 0], options: { json: { type: "boolean" } } },
  add: {
    run: add,
    help: ADD_HELP,
    arity: [1, 1],
    missing: ["<server.json> or a registry name"],
    options: {
      config: { type: "string" },
      name: { type: "string" },
      package: { type: "string" },
      remote: { type: "boolean" },
      set: { type: "string", multiple: true },
      "secret-values": { type: "boolean" },
      force: { type: "boolean" },
      registry: { type: "string" },
      "dry-run": { type: "boolean" },
      ...TIMEOUT,
    },
  },
  remove: {
    run: remove,
    help: REMOVE_HELP,
    arity: [1, 1],
    missing: ["<name>"],
    options: { config: { type: "string" }, "dry-run": { type: "boolean" } },
  },
  ui: { run: ui, help: UI_HELP, arity: [0, 1], options: { port: { type: "string" }, open: { type: "boolean" }, ...TIMEOUT } },
  types: { run: types, help: TYPES_HELP, arity: [0, 1], options: { out: { type: "string" }, ...TIMEOUT } },
  serve: {
    run: serve,
    help: SERVE_HELP,
    arity: [0, 1],
    options: {
      stdio: { type: "boolean" },
      watch: { type: "boolean" },
      addr: { type: "string" },
      tools: { type: "string" },
      name: { type: "string" },
      stateless: { type: "boolean" },
      "allowed-hosts": { type: "string" },
      "allowed-origins": { type: "string" },
      "session-idle-timeout": { type: "string" },
      "max-sessions": { type: "string" },
      "auth-token-env": { type: "string", multiple: true },
      "auth-token-file": { type: "string", multiple: true },
      "auth-file": { type: "string" },
      "oauth-issuer": { type: "string" },
      "oauth-audience": { type: "string" },
      "oauth-scopes": { type: "string" },
      "oauth-jwks-uri": { type: "string" },
      "no-auth": { type: "boolean" },
      "access-log": { type: "boolean" },
      metrics: { type: "boolean" },
      skills: { type: "string" },
      hooks: { type: "string" },
      "tools-config": { type: "string" },
      "log-calls": { type: "boolean" },
      "state-key-file": { type: "string" },
      "state-key-env": { type: "string", multiple: true },
      "replica-url": { type: "string" },
      "state-store": { type: "string" },
      "state-store-env": { type: "string" },
      "tool-search": { type: "boolean" },
      "tool-search-limit": { type: "string" },
      "tool-search-always": { type: "string" },
    },
  },
}

/** `host:port` or `[v6]:port`, as toolkit.serve takes it. */
function validAddr(addr) {
  const m = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(addr)
  return m !== null && Number(m[1]) <= 65535
}

class Usage extends Error {
  constructor(message, help) {
    super(message)
    this.help = help
  }
}

function version() {
  const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  return pkg.version
}

/** Parses argv into { command, positionals, values } or { help } / { version }; throws `Usage`. */
function parse(argv) {
  const [first, ...rest] = argv
  if (first === undefined) throw new Usage("toolnexus: missing command", HELP)
  if (first === "-h" || first === "--help") return { help: HELP }
  if (first === "-v" || first === "--version") return { version: true }
  if (first === "help") {
    if (rest.length === 0) return { help: HELP }
    const cmd = COMMANDS[rest[0]]
    if (!cmd || rest.length > 1) throw new Usage(`toolnexus: no help for "${rest.join(" ")}"`, HELP)
    return { help: cmd.help }
  }
  const cmd = COMMANDS[first]
  if (!cmd) throw new Usage(`toolnexus: unknown command "${first}"`, HELP)
  let parsed
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...cmd.options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    })
  } catch (err) {
    // parseArgs appends advice about "--" to unknown options; the first sentence is the point.
    throw new Usage(`toolnexus ${first}: ${err.message.split(/\.\s|\n/)[0]}`, cmd.help)
  }
  if (parsed.values.help) return { help: cmd.help }
  const shape = cmd.stdio && parsed.values.stdio !== undefined ? cmd.stdio : cmd
  const [min, max] = shape.arity
  const n = parsed.positionals.length
  if (n < min) throw new Usage(`toolnexus ${first}: missing ${shape.missing?.[n] ?? "argument"}`, cmd.help)
  const oneOff = shape === cmd ? "" : " (with --stdio there is no <config> or <server>)"
  if (n > max) throw new Usage(`toolnexus ${first}: unexpected argument "${parsed.positionals[max]}"${oneOff}`, cmd.help)
  const { values } = parsed
  const positive = [
    ["timeout", "a positive number of milliseconds"],
    ["session-idle-timeout", "a positive number of milliseconds"],
    ["max-sessions", "a positive whole number"],
  ]
  for (const [key, what] of positive) {
    if (values[key] === undefined) continue
    if (!/^\d+$/.test(values[key]) || Number(values[key]) <= 0) {
      throw new Usage(`toolnexus ${first}: --${key} must be ${what}, got "${values[key]}"`, cmd.help)
    }
    values[key] = Number(values[key])
  }
  if (values.addr !== undefined && !validAddr(values.addr)) {
    throw new Usage(`toolnexus ${first}: --addr must be host:port (port 0-65535), got "${values.addr}"`, cmd.help)
  }
  for (const key of ["addr", "tools", "name", "out"]) {
    if (values[key] === "") throw new Usage(`toolnexus ${first}: --${key} must not be empty`, cmd.help)
  }
  return { command: first, run: cmd.run, positionals: parsed.positionals, values }
}

/** Exits once stdout and stderr have flushed (and even if some handle would keep Node alive). */
function exit(code) {
  process.exitCode = code
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
}

async function main(argv) {
  process.stdout.on("error", (err) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0) // `toolnexus list … | head`
    throw err
  })
  let request
  try {
    request = parse(argv)
  } catch (err) {
    if (!(err instanceof Usage)) throw err
    const usage = err.help.split("\n")[0]
    const more = err.help === HELP ? "toolnexus --help" : `toolnexus ${argv[0]} --help`
    process.stderr.write(`${err.message}\n${usage}\nRun \`${more}\` for details.\n`)
    return 2
  }
  if (request.help) {
    process.stdout.write(request.help)
    return 0
  }
  if (request.version) {
    process.stdout.write(`${version()}\n`)
    return 0
  }
  const warnings = routeWarnings()
  const signal = request.command === "serve" ? undefined : interruptSignal()
  try {
    return await request.run(request, { signal, warnings })
  } catch (err) {
    if (err instanceof ArgumentError) {
      const usage = COMMANDS[request.command].help.split("\n")[0]
      process.stderr.write(`${err.message}\n${usage}\nRun \`toolnexus ${request.command} --help\` for details.\n`)
      return 2
    }
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`)
      return 2
    }
    // A command that stopped on the user's word (Ctrl-C at a question) says so and has its status.
    if (Number.isInteger(err?.exitCode)) {
      process.stderr.write(`${err.message}\n`)
      return err.exitCode
    }
    if (signal?.aborted) {
      process.stderr.write(`toolnexus: ${messageOf(signal.reason)}\n`)
      return signal.reason?.signalName === "SIGTERM" ? 143 : 130
    }
    const message = messageOf(err)
    process.stderr.write(message.startsWith("toolnexus") ? `${message}\n` : `toolnexus: ${message}\n`)
    return 1
  }
}

exit(await main(process.argv.slice(2)))
