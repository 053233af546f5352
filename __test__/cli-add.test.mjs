// `toolnexus add` / `toolnexus remove` (issue 42, part 3): the real CLI writes real published
// server.json documents (__test__/fixtures/server-json, see its README) into configs of three
// dialects, keeping everything else byte for byte; names come from a registry served on
// 127.0.0.1; bad documents are refused with reasons. No server is ever started.
import { test, after, before } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import toolnexus from "../index.js"
import { BIN, envWith } from "./lib/cli.mjs"
import { startRegistry } from "./lib/registry.mjs"
import { repoRoot, runNode, tmpDir } from "./helpers.mjs"

const FIXTURES = path.join(repoRoot, "__test__", "fixtures", "server-json")
const fixture = (name) => path.join(FIXTURES, `${name}.server.json`)
const doc = (name) => JSON.parse(fs.readFileSync(fixture(name), "utf8"))

/** Runs the CLI in `cwd` with HOME (and the XDG folder) inside `home`, so no real config is seen. */
function run(args, { cwd, home = cwd } = {}) {
  const env = envWith({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), APPDATA: path.join(home, "AppData") })
  return runNode(BIN, { args, cwd, env, timeout: 20000 })
}

/** A fresh folder holding `files` ({ relative path: text }). */
function folder(files = {}) {
  const dir = tmpDir()
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  return dir
}

const CLAUDE = `{
  // Claude Code project servers
  "mcpServers": {
    /* the local one */
    "local": { "command": "node", "args": ["server.mjs"] }, // stays
  },
  "permissions": { "allow": [] },
}
`

const VSCODE = `{
\t// workspace servers
\t"inputs": [],
\t"servers": {
\t\t"files": {
\t\t\t"type": "stdio",
\t\t\t"command": "node",
\t\t\t"args": ["files.mjs"]
\t\t}
\t}
}
`

const OPENCODE = `{
  "$schema": "https://opencode.ai/config.json",
  "theme": "opencode", // the look
  "mcp": {}
}
`

let registry
before(async () => {
  registry = await startRegistry([doc("brave"), doc("apify"), doc("serena")])
})
after(() => registry?.close())

test("an npm package with a secret, into a Claude-style mcpServers file with comments", async () => {
  const dir = folder({ ".mcp.json": CLAUDE })
  const file = path.join(dir, ".mcp.json")
  const r = await run(["add", fixture("brave"), "--config", file], { cwd: dir })
  assert.equal(r.stderr, "")
  assert.equal(r.code, 0)
  const entry = `    "brave-search-mcp-server": {
      "command": "npx",
      "args": [
        "-y",
        "@brave/brave-search-mcp-server@2.1.3"
      ],
      "env": {
        "BRAVE_API_KEY": "\${BRAVE_API_KEY}"
      }
    }`
  assert.equal(fs.readFileSync(file, "utf8"), CLAUDE.replace(`["server.mjs"] }, // stays`, `["server.mjs"] },\n${entry}, // stays`))
  assert.equal(
    r.stdout,
    `added "brave-search-mcp-server" (io.github.brave/brave-search-mcp-server 2.1.3) to ${file} (mcpServers):
{
  "brave-search-mcp-server": {
    "command": "npx",
    "args": [
      "-y",
      "@brave/brave-search-mcp-server@2.1.3"
    ],
    "env": {
      "BRAVE_API_KEY": "\${BRAVE_API_KEY}"
    }
  }
}
set this variable in the environment the client starts with:
  BRAVE_API_KEY (secret)  Your API key for the service
`,
  )
  const parsed = toolnexus.parseMcpConfig(file)["brave-search-mcp-server"]
  assert.deepEqual([parsed.type, parsed.command, parsed.environment], ["local", ["npx", "-y", "@brave/brave-search-mcp-server@2.1.3"], { BRAVE_API_KEY: "${BRAVE_API_KEY}" }])

  const removed = await run(["remove", "brave-search-mcp-server", "--config", file], { cwd: dir })
  assert.equal(removed.code, 0, removed.stderr)
  assert.match(removed.stdout, /^removed "brave-search-mcp-server" from .*\.mcp\.json:\n\{\n {2}"brave-search-mcp-server": \{/)
  assert.equal(fs.readFileSync(file, "utf8"), CLAUDE)
})

test("a remote with a secret header, into .vscode/mcp.json (tabs kept)", async () => {
  const dir = folder({ ".vscode/mcp.json": VSCODE })
  const file = path.join(dir, ".vscode", "mcp.json")
  const r = await run(["add", fixture("apify"), "--config", file], { cwd: dir })
  assert.equal(r.code, 0, r.stderr)
  assert.equal(
    fs.readFileSync(file, "utf8"),
    VSCODE.replace(
      `\t\t\t"args": ["files.mjs"]\n\t\t}\n`,
      `\t\t\t"args": ["files.mjs"]\n\t\t},\n\t\t"apify-mcp-server": {\n\t\t\t"type": "http",\n\t\t\t"url": "https://mcp.apify.com/",\n\t\t\t"headers": {\n\t\t\t\t"Authorization": "\${env:APIFY_MCP_SERVER_AUTHORIZATION}"\n\t\t\t}\n\t\t}\n`,
    ),
  )
  assert.match(r.stdout, /\n {2}APIFY_MCP_SERVER_AUTHORIZATION \(secret\) {2}Apify API token for authentication with Apify platform services\. For example 'Bearer <apify-api-token>'\n$/)
  const parsed = toolnexus.parseMcpConfig(file)["apify-mcp-server"]
  assert.deepEqual([parsed.type, parsed.url, parsed.headers], ["remote", "https://mcp.apify.com/", { Authorization: "${env:APIFY_MCP_SERVER_AUTHORIZATION}" }])
  assert.equal((await run(["remove", "apify-mcp-server", "--config", file], { cwd: dir })).code, 0)
  assert.equal(fs.readFileSync(file, "utf8"), VSCODE)
})

test("a pypi package with runtime arguments, into opencode.jsonc", async () => {
  const dir = folder({ "opencode.jsonc": OPENCODE })
  const file = path.join(dir, "opencode.jsonc")
  const r = await run(["add", fixture("serena"), "--config", file], { cwd: dir })
  assert.equal(r.code, 0, r.stderr)
  assert.equal(
    fs.readFileSync(file, "utf8"),
    OPENCODE.replace(
      `"mcp": {}`,
      `"mcp": {
    "serena": {
      "type": "local",
      "command": [
        "uvx",
        "-p",
        "3.13",
        "start-mcp-server",
        "--project-from-cwd",
        "--context",
        "desktop-app",
        "serena-agent==1.7.0"
      ]
    }
  }`,
    ),
  )
  const parsed = toolnexus.parseMcpConfig(file).serena
  assert.deepEqual(parsed.command, ["uvx", "-p", "3.13", "start-mcp-server", "--project-from-cwd", "--context", "desktop-app", "serena-agent==1.7.0"])
  // --set gives an input a value; a secret's value is written only with --secret-values.
  const again = await run(["add", fixture("serena"), "--config", file, "--force", "--set", "context=ide"], { cwd: dir })
  assert.equal(again.code, 0, again.stderr)
  assert.deepEqual(toolnexus.parseMcpConfig(file).serena.command.slice(5, 7), ["--context", "ide"])
  assert.equal((await run(["remove", "serena", "--config", file], { cwd: dir })).code, 0)
  assert.equal(fs.readFileSync(file, "utf8"), OPENCODE)
})

test("secrets: references unless --secret-values; values given then are masked in the output", async () => {
  const dir = folder()
  const file = path.join(dir, "mcp.json")
  const ignored = await run(["add", fixture("brave"), "--config", file, "--set", "BRAVE_API_KEY=sk-123-secret"], { cwd: dir })
  assert.equal(ignored.code, 0, ignored.stderr)
  assert.ok(!fs.readFileSync(file, "utf8").includes("sk-123-secret"))
  assert.ok(!ignored.stdout.includes("sk-123-secret"))
  assert.match(ignored.stdout, /\nnote: --set BRAVE_API_KEY was not written: it is a secret \(add --secret-values to write it in clear\)\.\n$/)
  const clear = await run(["add", fixture("brave"), "--config", file, "--force", "--secret-values", "--set", "BRAVE_API_KEY=sk-123-secret"], { cwd: dir })
  assert.equal(clear.code, 0, clear.stderr)
  assert.equal(toolnexus.parseMcpConfig(file)["brave-search-mcp-server"].environment.BRAVE_API_KEY, "sk-123-secret")
  assert.ok(!clear.stdout.includes("sk-123-secret"))
  assert.match(clear.stdout, /"BRAVE_API_KEY": "••••"/)
  // A new file: written whole, with a line break at the end.
  assert.equal(
    fs.readFileSync(file, "utf8"),
    `{\n  "mcpServers": {\n    "brave-search-mcp-server": {\n      "command": "npx",\n      "args": [\n        "-y",\n        "@brave/brave-search-mcp-server@2.1.3"\n      ],\n      "env": {\n        "BRAVE_API_KEY": "sk-123-secret"\n      }\n    }\n  }\n}\n`,
  )
})

test("--registry: a search, an exact name, an ambiguous and an unknown one", async () => {
  const dir = folder()
  const file = path.join(dir, ".mcp.json")
  registry.requests.length = 0
  const searched = await run(["add", "brave", "--registry", registry.url, "--config", file], { cwd: dir })
  assert.equal(searched.code, 0, searched.stderr)
  assert.deepEqual(registry.requests, ["/v0.1/servers?search=brave"])
  assert.deepEqual(toolnexus.parseMcpConfig(file)["brave-search-mcp-server"].command, ["npx", "-y", "@brave/brave-search-mcp-server@2.1.3"])

  registry.requests.length = 0
  const exact = await run(["add", "com.apify/apify-mcp-server", "--registry", `${registry.url}/`, "--config", file], { cwd: dir })
  assert.equal(exact.code, 0, exact.stderr)
  assert.deepEqual(registry.requests, ["/v0.1/servers/com.apify%2Fapify-mcp-server/versions/latest"])
  assert.match(exact.stdout, /^added "apify-mcp-server" \(com\.apify\/apify-mcp-server 0\.17\.4\) to /)

  const ambiguous = await run(["add", "io.github", "--registry", registry.url, "--config", file], { cwd: dir })
  assert.equal(ambiguous.code, 2)
  assert.equal(
    ambiguous.stderr,
    `toolnexus add: "io.github" matches 2 servers in the registry at ${registry.url}; name one:
  io.github.brave/brave-search-mcp-server  Brave Search MCP Server: web results, images, videos, rich results, AI summaries, and more.
  io.github.oraios/serena  A powerful toolkit for coding, providing semantic retrieval and editing capabilities.
`,
  )
  const unknown = await run(["add", "io.example/nothing", "--registry", registry.url, "--config", file], { cwd: dir })
  assert.equal(unknown.code, 2)
  assert.equal(unknown.stderr, `toolnexus add: the registry at ${registry.url} has no server matching "io.example/nothing"\n`)

  // A registry that does not answer: exit 1, in words.
  const closed = await startRegistry([])
  await closed.close()
  const down = await run(["add", "brave", "--registry", closed.url, "--config", file], { cwd: dir })
  assert.equal(down.code, 1)
  assert.match(down.stderr, new RegExp(`^toolnexus add: cannot reach the registry at ${closed.url.replaceAll(".", "\\.")}: `))
})

test("a document that fails the published schema is refused with each reason", async () => {
  const dir = folder()
  const file = path.join(dir, ".mcp.json")
  const r = await run(["add", fixture("invalid"), "--config", file], { cwd: dir })
  assert.equal(r.code, 2)
  assert.equal(
    r.stderr,
    `toolnexus add: ${fixture("invalid")} does not fit the server.json schema (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json):
  /name: "no-namespace" does not match "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"
  /packages/0: "transport" is a required property
  /packages/0/environmentVariables/0: "name" is a required property
  /remotes/0: {"type":"websocket","url":"wss://example.com/mcp"} is not valid under any of the schemas listed in the 'anyOf' keyword
`,
  )
  assert.equal(fs.existsSync(file), false)
})

test("hostile documents and names get clear errors", async () => {
  const dir = folder({ ".mcp.json": CLAUDE })
  const file = path.join(dir, ".mcp.json")
  const write = (name, value) => {
    const p = path.join(dir, name)
    fs.writeFileSync(p, typeof value === "string" ? value : JSON.stringify(value))
    return p
  }
  const brave = doc("brave")
  const cases = [
    [write("huge.json", `{"name": "a/b", "description": "${"x".repeat(1024 * 1024)}"}`), `toolnexus add: ${path.join(dir, "huge.json")} is larger than 1024 kB; a server.json is far smaller\n`],
    [write("types.json", { ...brave, name: 42, packages: "npm" }), null],
    [
      write("shell.json", { ...brave, packages: [{ ...brave.packages[0], packageArguments: [{ type: "positional", value: "x; rm -rf ~" }] }] }),
      `toolnexus add: packages[0].packageArguments[0].value "x; rm -rf ~" holds the shell character ";"; toolnexus add does not write such values (some clients run commands through a shell)\n`,
    ],
    [
      write("dash.json", { ...brave, packages: [{ ...brave.packages[0], identifier: "--registry=https://evil.example" }] }),
      `toolnexus add: packages[0].identifier "--registry=https://evil.example" is not a package name\n`,
    ],
    [
      write("env.json", { ...brave, packages: [{ ...brave.packages[0], environmentVariables: [{ name: "A B", isSecret: true }] }] }),
      `toolnexus add: packages[0].environmentVariables[0].name "A B" is not an environment variable name\n`,
    ],
    [write("array.json", "[1]"), `toolnexus add: ${path.join(dir, "array.json")} must hold a JSON object (a server.json)\n`],
    [write("broken.json", "{"), null],
  ]
  for (const [source, expected] of cases) {
    const r = await run(["add", source, "--config", file], { cwd: dir })
    assert.equal(r.code, 2, `${source}: ${r.stderr}`)
    if (expected !== null) assert.equal(r.stderr, expected)
  }
  const types = await run(["add", path.join(dir, "types.json"), "--config", file], { cwd: dir })
  assert.equal(
    types.stderr,
    `toolnexus add: ${path.join(dir, "types.json")} does not fit the server.json schema (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json):
  /name: 42 is not of type "string"
  /packages: "npm" is not of type "array"
`,
  )
  assert.match((await run(["add", path.join(dir, "broken.json"), "--config", file], { cwd: dir })).stderr, /^toolnexus add: .*broken\.json is not JSON: /)
  const badName = await run(["add", fixture("brave"), "--config", file, "--name", "../escape"], { cwd: dir })
  assert.equal(badName.code, 2)
  assert.equal(badName.stderr, `toolnexus add: the server name "../escape" looks like a path; use letters, digits, "-", "_" or "."\n`)
  // A clash is refused, and --force replaces.
  const clash = await run(["add", fixture("brave"), "--config", file, "--name", "local"], { cwd: dir })
  assert.equal(clash.code, 2)
  assert.equal(clash.stderr, `toolnexus add: a server named "local" already exists in ${file}; choose another name or replace it (--force replaces it, or --name picks another name)\n`)
  assert.equal(fs.readFileSync(file, "utf8"), CLAUDE)
  const forced = await run(["add", fixture("brave"), "--config", file, "--name", "local", "--force"], { cwd: dir })
  assert.equal(forced.code, 0, forced.stderr)
  assert.deepEqual(toolnexus.parseMcpConfig(file).local.command, ["npx", "-y", "@brave/brave-search-mcp-server@2.1.3"])
  const gone = await run(["remove", "nothing", "--config", file], { cwd: dir })
  assert.equal(gone.code, 2)
  assert.equal(gone.stderr, `toolnexus remove: no server named "nothing" in ${file} (it has local)\n`)
})

test("docker, HTTP packages and a choice among several", async () => {
  const dir = folder()
  const file = path.join(dir, ".mcp.json")
  const brave = doc("brave")
  const several = path.join(dir, "several.json")
  fs.writeFileSync(
    several,
    JSON.stringify({
      ...brave,
      packages: [
        brave.packages[0],
        { registryType: "oci", identifier: "docker.io/mcp/brave-search", version: "2.1.3", transport: { type: "stdio" }, environmentVariables: [{ name: "BRAVE_API_KEY", isSecret: true, isRequired: true }, { name: "LOG_LEVEL", default: "info" }] },
        {
          registryType: "npm",
          identifier: "@brave/brave-search-mcp-server",
          version: "2.1.3",
          transport: { type: "streamable-http", url: "http://localhost:{PORT}/mcp" },
          packageArguments: [{ type: "named", name: "--port", value: "{PORT}", variables: { PORT: { default: "8080" } } }],
          environmentVariables: [{ name: "PORT", default: "8080" }],
        },
      ],
    }),
  )
  const choose = await run(["add", several, "--config", file], { cwd: dir })
  assert.equal(choose.code, 2)
  assert.equal(
    choose.stderr,
    `toolnexus add: io.github.brave/brave-search-mcp-server offers several ways to run it; choose one:
  --package 1  npm @brave/brave-search-mcp-server 2.1.3
  --package 2  oci docker.io/mcp/brave-search 2.1.3
  --package 3  npm @brave/brave-search-mcp-server 2.1.3
`,
  )
  const docker = await run(["add", several, "--config", file, "--package", "2", "--name", "docker"], { cwd: dir })
  assert.equal(docker.code, 0, docker.stderr)
  const parsed = toolnexus.parseMcpConfig(file).docker
  assert.deepEqual(parsed.command, ["docker", "run", "-i", "--rm", "-e", "BRAVE_API_KEY", "-e", "LOG_LEVEL", "docker.io/mcp/brave-search:2.1.3"])
  assert.deepEqual(parsed.environment, { BRAVE_API_KEY: "${BRAVE_API_KEY}", LOG_LEVEL: "info" })

  const httpPackage = await run(["add", several, "--config", file, "--package", "3", "--name", "http"], { cwd: dir })
  assert.equal(httpPackage.code, 0, httpPackage.stderr)
  const remote = toolnexus.parseMcpConfig(file).http
  assert.deepEqual([remote.type, remote.url], ["remote", "http://localhost:8080/mcp"])
  assert.match(
    httpPackage.stdout,
    /\nnote: This package serves MCP over HTTP \(streamable-http\); an MCP config cannot start it, so start it yourself and keep it running:\n {4}PORT="8080" npx -y @brave\/brave-search-mcp-server@2\.1\.3 --port 8080\n$/,
  )
  const bad = await run(["add", several, "--config", file, "--package", "4"], { cwd: dir })
  assert.equal(bad.stderr, `toolnexus add: --package must be 1-3, got "4"\n`)
  const noRemote = await run(["add", several, "--config", file, "--remote"], { cwd: dir })
  assert.match(noRemote.stderr, /^toolnexus add: io\.github\.brave\/brave-search-mcp-server has no remote endpoint; it offers:\n {2}--package 1 /)
})

test("without --config: the one config found here, else a clear error", async () => {
  const empty = folder()
  const none = await run(["add", fixture("brave")], { cwd: empty })
  assert.equal(none.code, 2)
  assert.equal(none.stderr, "toolnexus add: no MCP client config found here; name the file to write with --config <file> (it is created when missing)\n")

  const one = folder({ ".cursor/mcp.json": `{ "mcpServers": {} }\n` })
  const r = await run(["add", fixture("brave")], { cwd: one })
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual(Object.keys(toolnexus.parseMcpConfig(path.join(one, ".cursor", "mcp.json"))), ["brave-search-mcp-server"])
  // remove finds the file that defines the name.
  const removed = await run(["remove", "brave-search-mcp-server"], { cwd: one })
  assert.equal(removed.code, 0, removed.stderr)
  assert.equal(fs.readFileSync(path.join(one, ".cursor", "mcp.json"), "utf8"), `{ "mcpServers": {} }\n`)

  const two = folder({ ".mcp.json": CLAUDE, ".vscode/mcp.json": VSCODE })
  const ambiguous = await run(["add", fixture("brave")], { cwd: two })
  assert.equal(ambiguous.code, 2)
  assert.equal(
    ambiguous.stderr,
    `toolnexus add: several MCP configs are here; choose one with --config <file>:
  ${path.join(two, ".mcp.json")} (Claude Code, project)
  ${path.join(two, ".vscode", "mcp.json")} (VS Code, project)
`,
  )
  // remove needs no --config when only one of them defines the name.
  const removedLocal = await run(["remove", "local", "--dry-run"], { cwd: two })
  assert.equal(removedLocal.code, 0, removedLocal.stderr)
  assert.match(removedLocal.stdout, /^would remove "local" from .*\.mcp\.json:\n/)
  assert.equal(fs.readFileSync(path.join(two, ".mcp.json"), "utf8"), CLAUDE)
})
