// `toolnexus serve <config> [--addr host:port] [--tools a,b] [--name n]`: one MCP gateway over
// every server of a config, served as streamable HTTP until SIGINT/SIGTERM.
import { messageOf, readConfig, tn } from "./inventory.mjs"
import { MARK } from "./term.mjs"

export const SERVE_HELP = `Usage: toolnexus serve <config> [--addr 127.0.0.1:8808] [--tools a,b] [--name n]
                       [--stateless] [--allowed-hosts h1,h2] [--allowed-origins o1,o2]

Connects to every enabled server of <config> and serves the union of their tools as
one MCP server over streamable HTTP (POST <url>/mcp). Tools are named
<server>_<tool>, as loadMcp names them. Prints one line on stdout once serving:

  toolnexus: serving <N> tools at http://127.0.0.1:8808/mcp

Server statuses (and one line per tool call) go to stderr. SIGINT or SIGTERM stops
serving, closes every server (no child process is left) and exits 0.

Options:
  --addr host:port  address to listen on (default 127.0.0.1:8808; port 0 picks a free one)
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
  -h, --help        show this help

Exit status: 0 stopped by a signal, 1 could not start serving, 2 usage or config error.
`

export async function serve({ positionals, values }) {
  const [config] = positionals
  const addr = values.addr ?? "127.0.0.1:8808"
  const list = (value) => (value === undefined ? undefined : value.split(",").map((s) => s.trim()).filter(Boolean))
  const only = list(values.tools)
  readConfig(config) // a malformed config is exit 2, before anything starts
  if (typeof tn.createToolkit !== "function") {
    process.stderr.write("toolnexus: this build of toolnexus has no createToolkit, so it cannot serve\n")
    return 1
  }

  // A signal at any point ends the command cleanly: during start-up it aborts the connections,
  // once serving it stops the listener and closes every server.
  const controller = new AbortController()
  let stopping = null
  let shutdown = null
  const onSignal = (sig) => {
    if (stopping) {
      process.stderr.write(`toolnexus: ${sig} again, exiting now\n`)
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
    toolkit = await tn.createToolkit({ mcpConfig: config, builtins: false, signal: controller.signal })
  } catch (err) {
    if (stopping) return 0
    process.stderr.write(`toolnexus: cannot load ${config}: ${messageOf(err)}\n`)
    return 1
  }

  let handle
  try {
    const statuses = Object.entries(toolkit.mcpStatus())
    const errors = toolkit.mcpErrors()
    const width = Math.max(0, ...statuses.map(([server]) => server.length))
    for (const [server, status] of statuses) {
      const detail = status === "failed" ? errors[server] ?? status : status
      process.stderr.write(`${MARK[status] ?? "?"} ${server.padEnd(width)}  ${detail}\n`)
    }
    const all = toolkit.tools().map((t) => t.name)
    const exposed = only === undefined ? all : all.filter((name) => only.includes(name))
    for (const name of only ?? []) {
      if (!all.includes(name)) process.stderr.write(`toolnexus: --tools: no tool named "${name}" (ignored)\n`)
    }
    if (!stopping) {
      const mcp = {}
      if (only !== undefined) mcp.tools = only
      if (values.name !== undefined) mcp.name = values.name
      handle = await toolkit.serve(addr, {
        mcp,
        stateless: values.stateless === true,
        allowedHosts: list(values["allowed-hosts"]),
        allowedOrigins: list(values["allowed-origins"]),
        onCall: ({ name, ms, isError }) => process.stderr.write(`${isError ? MARK.failed : MARK.connected} ${name}  ${Math.round(ms)} ms\n`),
      })
      if (!stopping) process.stdout.write(`toolnexus: serving ${exposed.length} tools at ${handle.url}/mcp\n`)
    }
  } catch (err) {
    process.stderr.write(`toolnexus: cannot serve at ${addr}: ${messageOf(err)}\n`)
    await toolkit.close()
    return 1
  }

  if (!stopping) await new Promise((resolve) => (shutdown = resolve))
  process.stderr.write(`toolnexus: ${stopping}, stopping\n`)
  try {
    await handle?.stop()
  } finally {
    await toolkit.close()
  }
  return 0
}
