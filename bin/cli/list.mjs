// `toolnexus list [<config>] [--json] [--timeout ms]`: what does this config give me?
import { withConfig } from "./auth.mjs"
import { resolveServers } from "./discover.mjs"
import { ArgumentError, liveInventory } from "./inventory.mjs"
import { oneOffHelp, oneOffOptionsHelp, oneOffReason, oneOffTarget } from "./oneoff.mjs"
import { LiveView, MARK, OrderedLines, colorEnabled, fit, palette } from "./term.mjs"

export const LIST_HELP = `Usage: toolnexus list [<config>] [--json] [--timeout ms]
       toolnexus list --stdio "<command line>" [--env KEY=VALUE …] [--cwd dir] [--json] [--timeout ms]
       toolnexus list <http(s)://url> [--header "Name: value" …] [--transport t] [--json] [--timeout ms]

Connects to every enabled server of <config> concurrently, lists its tools,
resources, resource templates, prompts and skills, then disconnects; nothing is left running.
On a terminal, a live view shows one line per server while they connect (✓ connected
with its counts — "13 tools · 7 resources · 4 prompts" —, time, server name and the
protocol revision it speaks, ✗ failed with its reason, – disabled), then each
server's tools with a one-line description, and its resources, templates, prompts and skills.

<config>  an mcp.json path (JSONC accepted; mcpServers, servers, mcp, context_servers).
          Without it, the configs of the clients installed here (\`toolnexus configs\`):
          each server is shown with the file it came from.

${oneOffHelp("list", "")}

Options:
  --json        print only the inventory, as JSON, on stdout (the shape listMcpTools
                returns; keys in config order). Save it as a snapshot for \`toolnexus diff\`:
                  { "tools":  { "<server>": [{ "name", "description", "inputSchema" }] },
                    "resources": { "<server>": [{ "uri", "name", "description"?, "mimeType"? }] },
                    "resourceTemplates": { "<server>": [{ "uriTemplate", "name", … }] },
                    "prompts": { "<server>": [{ "name", "description"?, "arguments"? }] },
                    "skills": { "<server>": [{ "uri", "name", "description", "frontmatter",
                                                "files" }] },
                    "status": { "<server>": "connected" | "disabled" | "failed" },
                    "errors": { "<server>": "<why it failed>" },
                    "info":   { "<server>": { "protocolVersion", "name", "version",
                                              "title"?, "instructions"? } } }
  --timeout ms  overall deadline; a server still connecting then fails with
                "toolnexus: MCP list deadline exceeded" (each server's own "timeout"
                field still bounds each of its phases)
${oneOffOptionsHelp(16)}
  -h, --help    show this help

Exit status: 0 no server failed, 1 at least one server failed, 2 usage or config
error (a parse error names file:line:col).
`

/** "everything-server · MCP 2025-11-25": who answered, and in which protocol revision. */
function serverAbout(info) {
  if (!info) return ""
  const era = `MCP ${info.protocolVersion}`
  return info.name ? `${info.name} · ${era}` : era
}

/** "13 tools · 7 resources · 4 prompts · 1 skill": tools always, the others when there are any. */
export function counts(result) {
  const count = (n, one) => `${n} ${n === 1 ? one : `${one}s`}`
  const parts = [count(result.tools.length, "tool")]
  if (result.resources?.length) parts.push(count(result.resources.length, "resource"))
  if (result.prompts?.length) parts.push(count(result.prompts.length, "prompt"))
  if (result.skills?.length) parts.push(count(result.skills.length, "skill"))
  return parts.join(" · ")
}

/** Renders one server's status line; `result.pending` holds a spinner frame while connecting. */
function statusLine(c, nameWidth) {
  return (name, result, width) => {
    const padded = name.padEnd(nameWidth)
    const budget = Math.max(width - nameWidth - 4, 10)
    if (result.pending) return `${c.cyan(result.pending)} ${padded}  ${c.dim(`connecting… ${(result.ms / 1000).toFixed(1)} s`)}`
    if (result.status === "connected") {
      const count = counts(result)
      const head = `${c.green(MARK.connected)} ${padded}  ${count}  ${c.dim(`${result.ms} ms`)}`
      const about = serverAbout(result.info)
      if (!about) return head
      const used = nameWidth + count.length + String(result.ms).length + 11
      return `${head}  ${c.dim(fit(about, Math.max(width - used, 10)))}`
    }
    if (result.status === "disabled") return `${c.dim(MARK.disabled)} ${padded}  ${c.dim("disabled")}`
    return `${c.red(MARK.failed)} ${padded}  ${c.red(fit(result.error, budget))}`
  }
}

/** "from <file>: a, b" per discovered file, so each server's origin is on screen. */
function printOrigins(out, origins, c) {
  const byFile = new Map()
  for (const [name, file] of Object.entries(origins)) byFile.set(file, [...(byFile.get(file) ?? []), name])
  for (const [file, names] of byFile) out.write(`${c.dim(`from ${file}:`)} ${names.join(", ")}\n`)
  out.write("\n")
}

/** Rows of `[name, description]`, names padded to one column, descriptions cut to fit. */
function printRows(out, rows, indent, c, width) {
  const nameWidth = Math.max(0, ...rows.map(([name]) => name.length))
  for (const [name, about] of rows) {
    const head = `${indent}${name.padEnd(nameWidth)}`
    const description = fit(about ?? "", Math.max(width - head.length - 2, 10))
    out.write(description ? `${head}  ${c.dim(description)}\n` : `${indent}${name}\n`)
  }
}

/** A prompt as `name(city, state?)`: its arguments, optional ones marked. */
const promptHead = (p) => (Array.isArray(p.arguments) && p.arguments.length > 0 ? `${p.name}(${p.arguments.map((a) => `${a.name}${a.required ? "" : "?"}`).join(", ")})` : p.name)

function printDetails(out, inventory, c, width) {
  for (const [server, status] of Object.entries(inventory.status)) {
    if (status === "connected") {
      const tools = inventory.tools[server]
      out.write(`\n${c.bold(server)}\n`)
      if (tools.length === 0) out.write(`  ${c.dim("(no tools)")}\n`)
      printRows(out, tools.map((t) => [t.name, t.description]), "  ", c, width)
      const sections = [
        ["resources", (inventory.resources?.[server] ?? []).map((r) => [r.uri, r.description ?? r.name])],
        ["resource templates", (inventory.resourceTemplates?.[server] ?? []).map((t) => [t.uriTemplate, t.description ?? t.name])],
        ["prompts", (inventory.prompts?.[server] ?? []).map((p) => [promptHead(p), p.description])],
        ["skills", (inventory.skills?.[server] ?? []).map((s) => [s.name, s.description])],
      ]
      for (const [title, rows] of sections) {
        if (rows.length === 0) continue
        out.write(`  ${c.dim(`${title}:`)}\n`)
        printRows(out, rows, "    ", c, width)
      }
    } else if (status === "failed" && inventory.errors[server].includes("\n")) {
      // The status line showed the first line; a multi-line reason (stderr tail) in full here.
      out.write(`\n${c.bold(server)} ${c.red("failed")}\n`)
      for (const line of inventory.errors[server].split("\n")) out.write(`  ${line}\n`)
    }
  }
}

export async function list({ positionals, values }, { signal, warnings }) {
  const target = oneOffTarget("list", positionals, values)
  if (target && target.positionals.length > 0) throw new ArgumentError(`toolnexus list: unexpected argument "${target.positionals[0]}" (a one-off target takes no <config>)`)
  const [config] = target ? [] : positionals
  const { servers, origins } = target ? { servers: target.servers } : resolveServers(config)
  const names = Object.keys(servers)
  const out = process.stdout
  // The config to name in an authorisation hint: the one given, or the file the server came
  // from; a one-off target has none (its hint is to pass the header).
  const configOf = (name) => config ?? origins?.[name]
  const reasonOf = (name, reason) => (target ? oneOffReason(reason) : withConfig(reason, configOf(name)))

  if (values.json) {
    const { inventory } = await liveInventory(servers, { deadline: values.timeout, signal })
    for (const [name, reason] of Object.entries(inventory.errors)) inventory.errors[name] = reasonOf(name, reason)
    // Discovered servers say where they came from; a named config's output stays a snapshot.
    const shown = origins ? { ...inventory, sources: origins } : inventory
    out.write(`${JSON.stringify(shown, null, 2)}\n`)
    return Object.keys(inventory.errors).length > 0 ? 1 : 0
  }

  const c = palette(colorEnabled(out))
  const width = out.isTTY ? Math.max((out.columns || 80) - 1, 20) : Infinity
  if (names.length === 0) {
    out.write(`${config ?? "the client configs found"}: no MCP servers\n`)
    return 0
  }
  if (origins) printOrigins(out, origins, c)
  const render = statusLine(c, Math.max(...names.map((n) => n.length)))
  const view = LiveView.fits(out, names.length) ? new LiveView(out, names, render) : new OrderedLines(out, names, render, width)
  if (view instanceof LiveView) warnings.hold()
  view.start()
  let inventory
  try {
    ;({ inventory } = await liveInventory(servers, {
      deadline: values.timeout,
      signal,
      // A server that needs authorisation is shown with the command that authorises it.
      onSettle: (name, result) => view.settle(name, result.error ? { ...result, error: reasonOf(name, result.error) } : result),
    }))
  } finally {
    view.stop()
    warnings.release()
  }
  printDetails(out, inventory, c, width)
  return Object.keys(inventory.errors).length > 0 ? 1 : 0
}
