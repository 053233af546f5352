// Finding the MCP configs that clients keep for this user and this project: the path table per
// platform, reading a fake home folder holding configs of several clients (each in its own
// dialect), and `toolnexus configs` / `list` / `call` / `diff` without a <config>, run as real
// subprocesses with that fake HOME.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { configLocations, discover } from "../bin/cli/discover.mjs"
import { deferredCleanup, nodeFixture, repoRoot, runNode, tmpDir } from "./helpers.mjs"

const T = { timeout: 60000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
deferredCleanup(afterEach)

const put = (file, content) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2))
}
const fixture = (...tools) => ({ command: nodeFixture("stdio-server", "--tools", tools.join(","))[0], args: nodeFixture("stdio-server", "--tools", tools.join(",")).slice(1) })
const fileOf = (locations, client, scope) => locations.filter((l) => l.client === client && l.scope === scope).map((l) => l.file)

test("the path table: each client's files per platform, derived from HOME, XDG_CONFIG_HOME and APPDATA", () => {
  const linux = configLocations({ platform: "linux", env: { HOME: "/h" }, cwd: "/p" })
  assert.deepEqual(fileOf(linux, "Claude Desktop", "user"), ["/h/.config/Claude/claude_desktop_config.json"])
  assert.deepEqual(fileOf(linux, "VS Code", "user"), ["/h/.config/Code/User/mcp.json", "/h/.config/Code/User/settings.json"])
  assert.deepEqual(fileOf(linux, "VS Code", "project"), ["/p/.vscode/mcp.json"])
  assert.deepEqual(fileOf(linux, "Claude Code", "project"), ["/p/.mcp.json"])
  assert.deepEqual(fileOf(linux, "Claude Code", "user"), ["/h/.claude.json"])
  assert.deepEqual(fileOf(linux, "Zed", "user"), ["/h/.config/zed/settings.json"])
  assert.deepEqual(fileOf(linux, "Cline", "user"), ["/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"])
  assert.deepEqual(fileOf(linux, "Windsurf", "user"), ["/h/.codeium/windsurf/mcp_config.json"])
  assert.deepEqual(fileOf(linux, "Amazon Q", "user"), ["/h/.aws/amazonq/mcp.json"])
  const xdg = configLocations({ platform: "linux", env: { HOME: "/h", XDG_CONFIG_HOME: "/x" }, cwd: "/p" })
  assert.deepEqual(fileOf(xdg, "opencode", "user"), ["/x/opencode/opencode.json", "/x/opencode/opencode.jsonc"])
  assert.deepEqual(fileOf(xdg, "Claude Desktop", "user"), ["/x/Claude/claude_desktop_config.json"])

  const mac = configLocations({ platform: "darwin", env: { HOME: "/Users/u" }, cwd: "/p" })
  assert.deepEqual(fileOf(mac, "Claude Desktop", "user"), ["/Users/u/Library/Application Support/Claude/claude_desktop_config.json"])
  assert.deepEqual(fileOf(mac, "VS Code", "user"), ["/Users/u/Library/Application Support/Code/User/mcp.json", "/Users/u/Library/Application Support/Code/User/settings.json"])
  assert.deepEqual(fileOf(mac, "Zed", "user"), ["/Users/u/.config/zed/settings.json"])
  assert.deepEqual(fileOf(mac, "Cursor", "user"), ["/Users/u/.cursor/mcp.json"])

  const win = configLocations({ platform: "win32", env: { USERPROFILE: "C:\\Users\\u", APPDATA: "C:\\Users\\u\\AppData\\Roaming" }, cwd: "C:\\p" })
  assert.deepEqual(fileOf(win, "Claude Desktop", "user"), ["C:\\Users\\u\\AppData\\Roaming\\Claude\\claude_desktop_config.json"])
  assert.deepEqual(fileOf(win, "VS Code", "user"), ["C:\\Users\\u\\AppData\\Roaming\\Code\\User\\mcp.json", "C:\\Users\\u\\AppData\\Roaming\\Code\\User\\settings.json"])
  assert.deepEqual(fileOf(win, "Zed", "user"), ["C:\\Users\\u\\AppData\\Roaming\\Zed\\settings.json"])
  assert.deepEqual(fileOf(win, "Cursor", "user"), ["C:\\Users\\u\\.cursor\\mcp.json"])
  assert.deepEqual(fileOf(win, "Cursor", "project"), ["C:\\p\\.cursor\\mcp.json"])
  assert.deepEqual(fileOf(win, "Kiro", "user"), ["C:\\Users\\u\\.kiro\\settings\\mcp.json"])
  // Every client of the issue has a place on every platform.
  const clients = ["Claude Desktop", "Claude Code", "Cursor", "VS Code", "Windsurf", "Gemini CLI", "opencode", "Zed", "Cline", "Roo", "Kiro", "Amazon Q"]
  for (const table of [linux, mac, win]) assert.deepEqual([...new Set(table.map((l) => l.client))].sort(), [...clients].sort())
})

/** A fake home and project holding configs of several clients, each in its own dialect. */
function fakeMachine(platform = "linux") {
  const home = tmpDir()
  const project = tmpDir()
  const apps = platform === "darwin" ? path.join(home, "Library", "Application Support") : path.join(home, ".config")
  put(path.join(project, ".mcp.json"), { mcpServers: { fix: fixture("ping") } })
  put(path.join(project, ".vscode", "mcp.json"), `{
  // VS Code: "servers", JSONC
  "servers": { "vs": { "type": "stdio", "command": "node", "args": ["v.js"], }, },
  "inputs": [],
}`)
  put(path.join(home, ".claude.json"), {
    numStartups: 3,
    mcpServers: { fix: { command: "other" }, user_level: { command: "u" } },
    projects: { [project]: { mcpServers: { local_one: { command: "l" } } }, "/elsewhere": { mcpServers: { not_here: { command: "n" } } } },
  })
  put(path.join(home, ".cursor", "mcp.json"), { mcpServers: { remote: { url: "http://127.0.0.1:9/mcp" } } })
  put(path.join(apps, "Code", "User", "settings.json"), `{
  "editor.fontSize": 14,
  "workbench.colorTheme": { "x": 1 },
  "mcp": { "servers": { "settings_srv": { "command": "s" } } }
}`)
  put(path.join(home, ".codeium", "windsurf", "mcp_config.json"), { mcpServers: { wind: { serverUrl: "http://127.0.0.1:9/sse" } } })
  put(path.join(platform === "darwin" ? path.join(home, ".config") : apps, "zed", "settings.json"), `{ "theme": "One Dark", "context_servers": { "zed_srv": { "command": { "path": "z", "args": [] } } } }`)
  put(path.join(home, ".gemini", "settings.json"), { theme: "x", mcpServers: { gem: { httpUrl: "http://127.0.0.1:9/mcp" } } })
  put(path.join(home, ".config", "opencode", "opencode.json"), { $schema: "https://opencode.ai/config.json", mcp: { oc: { type: "local", command: ["o"] } } })
  put(path.join(home, ".aws", "amazonq", "mcp.json"), "{ not json")
  return { home, project }
}

for (const platform of ["linux", "darwin"]) {
  test(`discover (${platform}): every client's file with its servers, project first, the first of a name wins`, () => {
    const { home, project } = fakeMachine(platform)
    const found = discover({ platform, env: { HOME: home }, cwd: project })
    const rel = (f) => path.relative(home, f).startsWith("..") ? `<project>/${path.relative(project, f)}` : `~/${path.relative(home, f)}`
    const apps = platform === "darwin" ? "Library/Application Support" : ".config"
    const zed = platform === "darwin" ? ".config" : apps
    assert.deepEqual(
      found.files.map((f) => [f.client, f.scope, rel(f.file), f.servers, f.error ?? null]),
      [
        ["Claude Code", "project", "<project>/.mcp.json", ["fix"], null],
        ["Claude Code", "local", "~/.claude.json", ["local_one"], null],
        ["VS Code", "project", "<project>/.vscode/mcp.json", ["vs"], null],
        ["Claude Code", "user", "~/.claude.json", ["fix", "user_level"], null],
        ["Cursor", "user", "~/.cursor/mcp.json", ["remote"], null],
        ["VS Code", "user", `~/${apps}/Code/User/settings.json`, ["settings_srv"], null],
        ["Windsurf", "user", "~/.codeium/windsurf/mcp_config.json", ["wind"], null],
        ["Gemini CLI", "user", "~/.gemini/settings.json", ["gem"], null],
        ["opencode", "user", "~/.config/opencode/opencode.json", ["oc"], null],
        ["Zed", "user", `~/${zed}/zed/settings.json`, ["zed_srv"], null],
        ["Amazon Q", "user", "~/.aws/amazonq/mcp.json", [], `invalid MCP config ${path.join(home, ".aws", "amazonq", "mcp.json")}:1:3: key must be a string`],
      ],
    )
    assert.deepEqual(Object.keys(found.servers), ["fix", "local_one", "vs", "user_level", "remote", "settings_srv", "wind", "gem", "oc", "zed_srv"])
    assert.deepEqual(found.duplicates, [{ name: "fix", kept: path.join(project, ".mcp.json"), ignored: path.join(home, ".claude.json") }])
    assert.equal(found.origins.fix, path.join(project, ".mcp.json"))
    // Each dialect normalised by the library's parser.
    assert.equal(found.servers.vs.type, "local")
    assert.equal(found.servers.wind.type, "remote")
    assert.deepEqual(found.servers.zed_srv.command, ["z"])
    assert.deepEqual(found.servers.oc.command, ["o"])
  })
}

const envFor = (home) => {
  const env = { ...process.env, HOME: home }
  for (const key of ["XDG_CONFIG_HOME", "APPDATA", "USERPROFILE", "NO_COLOR", "FORCE_COLOR"]) delete env[key]
  return env
}

test("toolnexus configs / list / call / diff with no <config> read the clients' configs of a fake HOME", T, async () => {
  const { home, project } = fakeMachine()
  const run = (args) => runNode(BIN, { args, cwd: project, env: envFor(home), timeout: 25000 })

  const configs = await run(["configs"])
  assert.equal(configs.code, 0, configs.stderr)
  const lines = configs.stdout.trimEnd().split("\n")
  assert.equal(lines.length, 12, configs.stdout)
  assert.match(lines[0], new RegExp(`^Claude Code \\(project\\) {2}${path.join(project, ".mcp.json")} +1 server {3}fix$`))
  assert.match(lines[3], new RegExp(`^Claude Code \\(user\\) {5}${path.join(home, ".claude.json")} +2 servers {2}fix, user_level$`))
  // One column each: label, file, count.
  assert.equal(new Set(lines.slice(0, 10).map((l) => l.indexOf(" 1 server") >= 0 ? l.indexOf(" 1 server") : l.indexOf(" 2 servers"))).size, 1, configs.stdout)
  assert.match(lines[10], /^Amazon Q \(user\) .* {2}unreadable: invalid MCP config .*mcp\.json:1:3: key must be a string$/)
  assert.equal(lines[11], `duplicate: "fix" in ${path.join(home, ".claude.json")} is ignored (${path.join(project, ".mcp.json")} comes first)`)
  const json = JSON.parse((await run(["configs", "--json"])).stdout)
  assert.equal(json.files.length, 11)
  assert.deepEqual(json.duplicates, [{ name: "fix", kept: path.join(project, ".mcp.json"), ignored: path.join(home, ".claude.json") }])

  // Only the real fixture is reachable; the point is each server shown with its file.
  fs.writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ mcpServers: { fix: { command: "other" } } }))
  for (const file of [".vscode/mcp.json"]) fs.rmSync(path.join(project, file))
  for (const dir of [".cursor", ".config", ".codeium", ".gemini", ".aws"]) fs.rmSync(path.join(home, dir), { recursive: true })
  const list = await run(["list", "--json"])
  assert.equal(list.code, 0, list.stderr)
  const inv = JSON.parse(list.stdout)
  assert.deepEqual(inv.status, { fix: "connected" })
  assert.deepEqual(inv.sources, { fix: path.join(project, ".mcp.json") })
  assert.equal(list.stderr, `toolnexus: server "fix" is defined in ${path.join(project, ".mcp.json")} and ${path.join(home, ".claude.json")}; using ${path.join(project, ".mcp.json")}\n`)
  const human = await run(["list"])
  assert.equal(human.code, 0, human.stderr)
  assert.ok(human.stdout.startsWith(`from ${path.join(project, ".mcp.json")}: fix\n`), human.stdout)

  const call = await run(["call", "fix", "ping"])
  assert.equal(call.code, 0, call.stderr)
  assert.equal(call.stdout, "ping\n")

  const snapshot = path.join(project, "snap.json")
  fs.writeFileSync(snapshot, list.stdout)
  const diff = await run(["diff", snapshot])
  assert.equal(diff.code, 0, diff.stdout + diff.stderr)

  // Nothing anywhere: a clear usage error.
  const empty = tmpDir()
  const none = await runNode(BIN, { args: ["list"], cwd: empty, env: envFor(empty), timeout: 25000 })
  assert.equal(none.code, 2)
  assert.equal(none.stderr, "toolnexus: no <config> given and no MCP client config found (see `toolnexus configs --help`)\n")
  const noneConfigs = await runNode(BIN, { args: ["configs"], cwd: empty, env: envFor(empty), timeout: 25000 })
  assert.deepEqual([noneConfigs.code, noneConfigs.stdout], [0, "no MCP client config found\n"])
})
