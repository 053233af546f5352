// Where MCP clients keep their server configs, per platform, and reading every one that exists
// into one server map (first definition of a name wins; the others are reported).
//
// Every path is derived from the environment handed in (HOME / USERPROFILE, APPDATA,
// XDG_CONFIG_HOME) and the project folder, never from os.homedir(), so tests can fake a home.
import fs from "node:fs"
import path from "node:path"
import { UsageError, messageOf, tn } from "./inventory.mjs"

/**
 * The config files clients read for `platform` ("linux" | "darwin" | "win32"), in the order they
 * are merged: project files first (they are what this folder asked for), then the user's.
 * Each entry: { client, scope, file, at } — `at` is the key path of the servers in that file
 * (only that part is read: settings files hold much else).
 */
export function configLocations({ platform = process.platform, env = process.env, cwd = process.cwd() } = {}) {
  const p = platform === "win32" ? path.win32 : path.posix
  const home = env.HOME || env.USERPROFILE || (platform === "win32" ? "C:\\" : "/")
  const xdg = env.XDG_CONFIG_HOME || p.join(home, ".config")
  const appData = env.APPDATA || p.join(home, "AppData", "Roaming")
  // Where desktop apps keep per-user settings.
  const apps = platform === "win32" ? appData : platform === "darwin" ? p.join(home, "Library", "Application Support") : xdg
  const vscodeUser = p.join(apps, "Code", "User")
  const zedUser = platform === "win32" ? p.join(appData, "Zed") : p.join(xdg, "zed")
  const project = (client, file, at = ["mcpServers"]) => ({ client, scope: "project", file: p.join(cwd, ...file), at })
  const user = (client, file, at = ["mcpServers"]) => ({ client, scope: "user", file, at })
  return [
    project("Claude Code", [".mcp.json"]),
    // Claude Code's "local" scope: servers it keeps per project folder in ~/.claude.json.
    { client: "Claude Code", scope: "local", file: p.join(home, ".claude.json"), at: ["projects", cwd, "mcpServers"] },
    project("Cursor", [".cursor", "mcp.json"]),
    project("VS Code", [".vscode", "mcp.json"], ["servers"]),
    project("Gemini CLI", [".gemini", "settings.json"]),
    project("opencode", ["opencode.json"], ["mcp"]),
    project("opencode", ["opencode.jsonc"], ["mcp"]),
    project("Zed", [".zed", "settings.json"], ["context_servers"]),
    project("Roo", [".roo", "mcp.json"]),
    project("Kiro", [".kiro", "settings", "mcp.json"]),
    project("Amazon Q", [".amazonq", "mcp.json"]),
    user("Claude Desktop", p.join(apps, "Claude", "claude_desktop_config.json")),
    user("Claude Code", p.join(home, ".claude.json")),
    user("Cursor", p.join(home, ".cursor", "mcp.json")),
    user("VS Code", p.join(vscodeUser, "mcp.json"), ["servers"]),
    user("VS Code", p.join(vscodeUser, "settings.json"), ["mcp", "servers"]),
    user("Windsurf", p.join(home, ".codeium", "windsurf", "mcp_config.json")),
    user("Gemini CLI", p.join(home, ".gemini", "settings.json")),
    user("opencode", p.join(xdg, "opencode", "opencode.json"), ["mcp"]),
    user("opencode", p.join(xdg, "opencode", "opencode.jsonc"), ["mcp"]),
    user("Zed", p.join(zedUser, "settings.json"), ["context_servers"]),
    user("Cline", p.join(vscodeUser, "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")),
    user("Roo", p.join(vscodeUser, "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json")),
    user("Kiro", p.join(home, ".kiro", "settings", "mcp.json")),
    user("Amazon Q", p.join(home, ".aws", "amazonq", "mcp.json")),
  ]
}

/** The servers one location holds, as a normalised map; `null` when the file does not exist. */
function readLocation(location) {
  try {
    if (!fs.statSync(location.file).isFile()) return null
  } catch {
    return null
  }
  try {
    return { servers: tn.parseMcpConfig(location.file, { at: location.at }) }
  } catch (err) {
    return { error: messageOf(err).replace(/^toolnexus: /, "") }
  }
}

/**
 * Reads every location that exists. Returns
 *   { files: [{ client, scope, file, servers: [names], error? }],
 *     servers: { name: spec },          (merged, first definition wins)
 *     origins: { name: file },
 *     duplicates: [{ name, kept, ignored }] }
 */
export function discover(options = {}) {
  const files = []
  const servers = {}
  const origins = {}
  const duplicates = []
  for (const location of configLocations(options)) {
    const found = readLocation(location)
    if (found === null) continue
    const entry = { client: location.client, scope: location.scope, file: location.file, servers: Object.keys(found.servers ?? {}) }
    if (found.error !== undefined) entry.error = found.error
    // ~/.claude.json exists for every Claude Code user; it counts only where it defines servers.
    if (location.scope === "local" && entry.servers.length === 0 && !entry.error) continue
    files.push(entry)
    for (const [name, spec] of Object.entries(found.servers ?? {})) {
      if (name in servers) {
        duplicates.push({ name, kept: origins[name], ignored: location.file })
        continue
      }
      servers[name] = spec
      origins[name] = location.file
    }
  }
  return { files, servers, origins, duplicates }
}

/**
 * The servers a command works on: those of `config` when given, else of every client config
 * found (duplicates reported on stderr). `{ servers, origins?, files? }`; no config found at all
 * is a `UsageError`.
 */
export function resolveServers(config, options = {}) {
  if (config !== undefined) {
    try {
      return { servers: tn.parseMcpConfig(config), config }
    } catch (err) {
      throw new UsageError(messageOf(err))
    }
  }
  const found = discover(options)
  for (const file of found.files) {
    if (file.error) process.stderr.write(`toolnexus: skipping ${file.file} (${file.client}): ${file.error}\n`)
  }
  for (const { name, kept, ignored } of found.duplicates) {
    process.stderr.write(`toolnexus: server "${name}" is defined in ${kept} and ${ignored}; using ${kept}\n`)
  }
  if (found.files.length === 0) {
    throw new UsageError("toolnexus: no <config> given and no MCP client config found (see `toolnexus configs --help`)")
  }
  return { servers: found.servers, origins: found.origins, files: found.files }
}

export const CONFIGS_HELP = `Usage: toolnexus configs [--json]

Lists the MCP config files of the clients installed for this user and this project
(the current folder), with how many servers each holds. These are what \`list\`,
\`diff\`, \`call\` and \`serve\` read when given no <config>: project files first, then
the user's; when a server name is defined twice the first definition wins.

Clients: Claude Desktop, Claude Code (.mcp.json, ~/.claude.json with its per-project
entries), Cursor, VS Code (.vscode/mcp.json, user mcp.json and settings.json),
Windsurf, Gemini CLI, opencode, Zed, Cline, Roo, Kiro, Amazon Q. User folders come
from HOME (USERPROFILE), XDG_CONFIG_HOME on Linux, APPDATA on Windows.

Options:
  --json      print { "files": [{ "client", "scope", "file", "servers": [names],
              "error"? }], "duplicates": [{ "name", "kept", "ignored" }] }
  -h, --help  show this help

Exit status: 0 (also when no file is found), 2 usage error.
`

export function configs({ values }) {
  const found = discover()
  const out = process.stdout
  if (values.json) {
    out.write(`${JSON.stringify({ files: found.files, duplicates: found.duplicates }, null, 2)}\n`)
    return 0
  }
  if (found.files.length === 0) {
    out.write("no MCP client config found\n")
    return 0
  }
  const label = (f) => `${f.client} (${f.scope})`
  const count = (f) => (f.error ? `unreadable: ${f.error}` : `${f.servers.length} ${f.servers.length === 1 ? "server" : "servers"}`)
  const width = (column) => Math.max(...found.files.map((f) => column(f).length))
  const [labels, files, counts] = [width(label), width((f) => f.file), width((f) => (f.error ? "" : count(f)))]
  for (const f of found.files) {
    const names = f.servers.length > 0 ? `  ${f.servers.join(", ")}` : ""
    out.write(`${label(f).padEnd(labels)}  ${f.file.padEnd(files)}  ${count(f).padEnd(counts)}${names}`.trimEnd() + "\n")
  }
  for (const { name, kept, ignored } of found.duplicates) {
    out.write(`duplicate: "${name}" in ${ignored} is ignored (${kept} comes first)\n`)
  }
  return 0
}
