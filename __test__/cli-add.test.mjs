// `toolnexus add` / `toolnexus remove` (issue 42, part 3): the real CLI writes real published
// server.json documents (__test__/fixtures/server-json, see its README) into configs of three
// dialects, keeping everything else byte for byte; names come from a registry served on
// 127.0.0.1; bad documents are refused with reasons. Then what was written is used: `toolnexus
// list` starts the npx and uvx entries (through PATH shims that exec a fixture MCP server) and
// reaches a remote entry (a toolkit served on 127.0.0.1 with a bearer token); and values are
// asked at a real pseudo-terminal.
import { test, after, afterEach, before } from "node:test"
import assert from "node:assert/strict"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { createToolkit, defineTool } from "toolnexus"
import toolnexus from "../index.js"
import { BIN, envWith } from "./lib/cli.mjs"
import { inPty as runInPty } from "./lib/pty.mjs"
import { startRegistry } from "./lib/registry.mjs"
import { deferredCleanup, repoRoot, runNode, tmpDir } from "./helpers.mjs"

const FIXTURES = path.join(repoRoot, "__test__", "fixtures", "server-json")
const fixture = (name) => path.join(FIXTURES, `${name}.server.json`)
const doc = (name) => JSON.parse(fs.readFileSync(fixture(name), "utf8"))
const reEscape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Runs the CLI in `cwd` with HOME (and the XDG folder) inside `home`, so no real config is seen;
 * `env` adds variables, and a variable given as undefined is taken out.
 */
function run(args, { cwd, home = cwd, env: extra = {} } = {}) {
  const env = envWith({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), APPDATA: path.join(home, "AppData"), ...extra })
  for (const [key, value] of Object.entries(extra)) if (value === undefined) delete env[key]
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

const defer = deferredCleanup(afterEach)

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
  // The comment on the last entry's line stays on that line.
  assert.equal(fs.readFileSync(file, "utf8"), CLAUDE.replace(`["server.mjs"] }, // stays`, `["server.mjs"] }, // stays\n${entry},`))
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
      `toolnexus add: packages[0].packageArguments[0].value holds the shell character ";"; toolnexus add does not write such values (some clients run commands through a shell)\n`,
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
    /\nnote: This package serves MCP over HTTP \(streamable-http\); an MCP config cannot start it, so start it yourself and keep it running:\n {4}PORT=8080 npx -y @brave\/brave-search-mcp-server@2\.1\.3 --port 8080\n$/,
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

// ---------------------------------------------------------------------------------------------
// Review fixes: VS Code settings.json, secrets never printed, URLs checked as URLs, repeated
// arguments, registry names taken exactly, duplicate keys.

/** A server.json written into `dir` as `name`, returning its path. */
function writeDoc(dir, name, doc) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, JSON.stringify(doc))
  return file
}

const SCHEMA_ID = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

/** A remote whose URL has a query (`&`) and a variable in its host, with two headers. */
const REMOTE = {
  $schema: SCHEMA_ID,
  name: "io.github.x/remote",
  description: "d",
  version: "1.0.0",
  remotes: [
    {
      type: "streamable-http",
      url: "https://{tenant}.example.com/mcp?region=eu&key={key}",
      variables: { tenant: { description: "tenant", isRequired: true }, key: { description: "key", isRequired: true, isSecret: true } },
      headers: [
        { name: "X-Api-Key", description: "k", isRequired: true, isSecret: true },
        { name: "X-Other", description: "o", isRequired: true },
      ],
    },
  ],
}

/** An npm package serving HTTP, with secret and repeated arguments and a secret variable. */
const HTTP_PACKAGE = {
  $schema: SCHEMA_ID,
  name: "io.github.x/httppkg",
  description: "d",
  version: "1.0.0",
  packages: [
    {
      registryType: "npm",
      identifier: "httppkg",
      version: "1.0.0",
      transport: { type: "streamable-http", url: "http://localhost:{PORT}/mcp" },
      packageArguments: [
        { type: "named", name: "--token", isRequired: true, isSecret: true },
        { type: "named", name: "--tag", isRepeated: true, valueHint: "tag", isRequired: true },
        { type: "positional", valueHint: "dir", isRequired: true, isRepeated: true },
      ],
      environmentVariables: [
        { name: "API_KEY", isRequired: true, isSecret: true },
        { name: "PORT", default: "8080" },
      ],
    },
  ],
}

test("VS Code settings.json with mcp.inputs beside mcp.servers: add writes a VS Code entry there, remove takes it out", async () => {
  const settings = `{\n  "editor.fontSize": 12,\n  "mcp": {\n    "inputs": [],\n    "servers": {\n      "files": { "type": "stdio", "command": "node", "args": ["files.mjs"] }\n    }\n  }\n}\n`
  const home = folder({ ".config/Code/User/settings.json": settings })
  const dir = folder()
  // Named by its place (Code/User/settings.json) and by a plain name: both read the text's "mcp".
  for (const file of [path.join(home, ".config", "Code", "User", "settings.json"), path.join(dir, "settings.json")]) {
    fs.writeFileSync(file, settings)
    const r = await run(["add", fixture("brave"), "--config", file], { cwd: dir, home })
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /\(VS Code settings mcp\.servers\):\n/)
    assert.equal(
      fs.readFileSync(file, "utf8"),
      settings.replace(
        `["files.mjs"] }\n`,
        `["files.mjs"] },\n      "brave-search-mcp-server": {\n        "type": "stdio",\n        "command": "npx",\n        "args": [\n          "-y",\n          "@brave/brave-search-mcp-server@2.1.3"\n        ],\n        "env": {\n          "BRAVE_API_KEY": "\${env:BRAVE_API_KEY}"\n        }\n      }\n`,
      ),
    )
    assert.deepEqual(Object.keys(toolnexus.parseMcpConfig(file)), ["files", "brave-search-mcp-server"])
    const removed = await run(["remove", "brave-search-mcp-server", "--config", file], { cwd: dir, home })
    assert.equal(removed.code, 0, removed.stderr)
    assert.equal(fs.readFileSync(file, "utf8"), settings)
  }
})

test("secrets are never printed: the HTTP package's start command, a refused value, remove and --dry-run; new files are 0600", async () => {
  const dir = folder()
  const file = path.join(dir, "mcp.json")
  const source = writeDoc(dir, "httppkg.json", HTTP_PACKAGE)
  const r = await run(
    ["add", source, "--config", file, "--secret-values", "--set", "API_KEY=sk-SECRET-1", "--set", "token=tok-SECRET-2", "--set", "tag=a", "--set", "tag=b c", "--set", "dir=/d"],
    { cwd: dir },
  )
  assert.equal(r.code, 0, r.stderr)
  assert.equal(
    r.stdout,
    `added "httppkg" (io.github.x/httppkg 1.0.0) to ${file} (mcpServers):
{
  "httppkg": {
    "type": "http",
    "url": "http://localhost:8080/mcp"
  }
}
note: This package serves MCP over HTTP (streamable-http); an MCP config cannot start it, so start it yourself (with API_KEY, HTTPPKG_TOKEN set in its environment) and keep it running:
    API_KEY="\${API_KEY}" PORT=8080 npx -y httppkg@1.0.0 --token "\${HTTPPKG_TOKEN}" --tag a --tag 'b c' /d
`,
  )
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)

  // A refused value is not repeated: the field and the character are named.
  const shell = await run(["add", source, "--config", file, "--force", "--set", "tag=x;rm -rf ~", "--set", "dir=/d"], { cwd: dir })
  assert.equal(shell.code, 2)
  assert.equal(
    shell.stderr,
    `toolnexus add: packages[0].packageArguments[1].value holds the shell character ";"; toolnexus add does not write such values (some clients run commands through a shell)\n`,
  )

  // remove and --dry-run mask environment and header values, and a URL's query.
  const config = path.join(dir, "secrets.json")
  fs.writeFileSync(
    config,
    `{"mcpServers": {"s": {"command": "x", "env": {"TOKEN": "tok-SECRET-3", "REF": "\${REF}"}}, "r": {"url": "https://h/mcp?key=k-SECRET-4", "headers": {"Authorization": "Bearer SECRET-5"}}}}\n`,
  )
  const dry = await run(["remove", "s", "--config", config, "--dry-run"], { cwd: dir })
  assert.equal(dry.stdout, `would remove "s" from ${config}:\n{\n  "s": {\n    "command": "x",\n    "env": {\n      "TOKEN": "••••",\n      "REF": "\${REF}"\n    }\n  }\n}\n`)
  const removed = await run(["remove", "r", "--config", config], { cwd: dir })
  assert.equal(
    removed.stdout,
    `removed "r" from ${config}:\n{\n  "r": {\n    "url": "https://h/mcp?key=xxxx",\n    "headers": {\n      "Authorization": "••••"\n    }\n  }\n}\n`,
  )
})

test("URLs are checked as URLs: a query with & is written, variables are percent-encoded, the host cannot be changed; header values hold no line breaks", async () => {
  const dir = folder()
  const file = path.join(dir, "mcp.json")
  const source = writeDoc(dir, "remote.json", REMOTE)
  const ok = await run(["add", source, "--config", file, "--secret-values", "--set", "tenant=acme", "--set", "key=a&b=c#d", "--set", "X-Api-Key=k2", "--set", "X-Other=o"], { cwd: dir })
  assert.equal(ok.code, 0, ok.stderr)
  assert.deepEqual(toolnexus.parseMcpConfig(file).remote.url, "https://acme.example.com/mcp?region=eu&key=a%26b%3Dc%23d")
  // The secret is masked in what is printed, encoded as in the URL too.
  assert.match(ok.stdout, /"url": "https:\/\/acme\.example\.com\/mcp\?region=eu&key=••••",\n/)
  assert.equal(ok.stdout.includes("a%26b"), false)
  const referenced = await run(["add", source, "--config", file, "--force", "--set", "tenant=acme"], { cwd: dir })
  assert.equal(referenced.code, 0, referenced.stderr)
  assert.equal(toolnexus.parseMcpConfig(file).remote.url, "https://acme.example.com/mcp?region=eu&key=${REMOTE_KEY}")

  const refusals = [
    ["tenant=evil.com/x", `toolnexus add: remotes[0].url: the value of {tenant} goes in the host, so it may not be empty or hold "/", "?", "#", "@", ":", "\\", "%" or white space\n`],
    ["tenant=evil.com#", `toolnexus add: remotes[0].url: the value of {tenant} goes in the host, so it may not be empty or hold "/", "?", "#", "@", ":", "\\", "%" or white space\n`],
    ["tenant=a@evil.com", `toolnexus add: remotes[0].url: the value of {tenant} goes in the host, so it may not be empty or hold "/", "?", "#", "@", ":", "\\", "%" or white space\n`],
  ]
  for (const [set, message] of refusals) {
    const r = await run(["add", source, "--config", file, "--force", "--set", set], { cwd: dir })
    assert.deepEqual([r.code, r.stderr], [2, message], set)
  }
  const crlf = await run(["add", source, "--config", file, "--force", "--set", "tenant=acme", "--set", "X-Other=o\r\nX-Evil: 1"], { cwd: dir })
  assert.deepEqual([crlf.code, crlf.stderr], [2, "toolnexus add: remotes[0].headers[1] (X-Other) holds a line break or another control character; a header value may not\n"])
  const twice = await run(["add", source, "--config", file, "--force", "--set", "tenant=a", "--set", "tenant=b"], { cwd: dir })
  assert.deepEqual([twice.code, twice.stderr], [2, "toolnexus add: --set tenant was given 2 times, but tenant takes one value\n"])
  assert.equal(toolnexus.parseMcpConfig(file).remote.url, "https://acme.example.com/mcp?region=eu&key=${REMOTE_KEY}")
})

test("registry: a full name is taken only as written; search pages are followed before a match counts as the only one", async () => {
  const brave = doc("brave")
  const serena = doc("serena")
  const paged = await startRegistry([brave, serena, { ...brave, name: "io.github.brave/brave-clone" }], { pageSize: 1 })
  try {
    const dir = folder()
    const file = path.join(dir, ".mcp.json")
    // A near name: the latest-version lookup misses, the search finds another server: refused.
    const near = await run(["add", "io.github.brave/brave-search", "--registry", paged.url, "--config", file], { cwd: dir })
    assert.equal(near.code, 2)
    assert.equal(
      near.stderr,
      `toolnexus add: the registry at ${paged.url} has no server named "io.github.brave/brave-search"; servers whose names hold it:
  io.github.brave/brave-search-mcp-server  Brave Search MCP Server: web results, images, videos, rich results, AI summaries, and more.
`,
    )
    assert.equal(fs.existsSync(file), false)
    // One server per page: the first page alone would look unique.
    paged.requests.length = 0
    const ambiguous = await run(["add", "brave", "--registry", paged.url, "--config", file], { cwd: dir })
    assert.equal(ambiguous.code, 2)
    assert.equal(
      ambiguous.stderr,
      `toolnexus add: "brave" matches 2 servers in the registry at ${paged.url}; name one:
  io.github.brave/brave-search-mcp-server  Brave Search MCP Server: web results, images, videos, rich results, AI summaries, and more.
  io.github.brave/brave-clone  Brave Search MCP Server: web results, images, videos, rich results, AI summaries, and more.
`,
    )
    assert.deepEqual(paged.requests, ["/v0.1/servers?search=brave", "/v0.1/servers?search=brave&cursor=1"])
    const unique = await run(["add", "serena", "--registry", paged.url, "--config", file], { cwd: dir })
    assert.equal(unique.code, 0, unique.stderr)
    assert.deepEqual(Object.keys(toolnexus.parseMcpConfig(file)), ["serena"])
  } finally {
    await paged.close()
  }
})

test("remove refuses a name the file holds twice, in words, and leaves the file", async () => {
  const text = `{\n  "mcpServers": {\n    "a": { "command": "a" },\n    "a": { "command": "b" }\n  }\n}\n`
  const dir = folder({ "mcp.json": text })
  const file = path.join(dir, "mcp.json")
  const r = await run(["remove", "a", "--config", file], { cwd: dir })
  assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", `toolnexus remove: the server "a" is written 2 times in ${file}; keep one (toolnexus and most clients read the last) and try again\n`])
  assert.equal(fs.readFileSync(file, "utf8"), text)
})

// ---------------------------------------------------------------------------------------------
// The resulting entries list: what `add` wrote is started (npx, uvx) or reached (a remote) by
// `toolnexus list`, and connects.

/** sha256 of a text, hex: how the shims report a secret without writing it anywhere. */
const digest = (text) => crypto.createHash("sha256").update(text).digest("hex")

/**
 * A folder holding executable `npx` and `uvx` shims (for the front of PATH). Each appends one
 * JSON line to `log` — { shim, argv, braveKey: sha256 of $BRAVE_API_KEY or null when unset } —
 * then execs the stdio fixture server serving `echo`, named `<shim>-fixture`, so the entry
 * connects for real without the package managers or the network.
 */
function shims(log) {
  const dir = tmpDir()
  const logger = path.join(dir, "log-argv.cjs")
  fs.writeFileSync(
    logger,
    `const fs = require("node:fs")
const crypto = require("node:crypto")
const key = process.env.BRAVE_API_KEY
const braveKey = key === undefined ? null : crypto.createHash("sha256").update(key).digest("hex")
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ shim: process.argv[2], argv: process.argv.slice(3), braveKey }) + "\\n")
`,
  )
  const server = path.join(repoRoot, "__test__", "fixtures", "stdio-server.mjs")
  const q = (text) => `'${text.replaceAll("'", `'\\''`)}'`
  for (const shim of ["npx", "uvx"]) {
    fs.writeFileSync(
      path.join(dir, shim),
      `#!/bin/sh\n${q(process.execPath)} ${q(logger)} ${shim} "$@" || exit 1\nexec ${q(process.execPath)} ${q(server)} --tools echo --name ${shim}-fixture\n`,
      { mode: 0o755 },
    )
  }
  return dir
}

/** The lines the shims logged (and the log emptied for the next run). */
function shimLog(log) {
  const lines = fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []
  fs.rmSync(log, { force: true })
  return lines.sort((a, b) => a.shim.localeCompare(b.shim))
}

const ECHO_TOOL = {
  name: "echo",
  description: "Echo the text back",
  inputSchema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execution: { taskSupport: "forbidden" },
}

test("the entries add writes for npm and pypi packages connect: list starts npx and uvx (PATH shims) with exactly the written command line, the secret from the variable its reference names", async () => {
  const dir = folder()
  const log = path.join(tmpDir(), "shims.log")
  const bin = shims(log)
  const BRAVE = ["-y", "@brave/brave-search-mcp-server@2.1.3"]
  const SERENA = ["-p", "3.13", "start-mcp-server", "--project-from-cwd", "--context", "desktop-app", "serena-agent==1.7.0"]
  const KEY = "bsk-list-test-4f1e9a"
  // Two dialects: a Claude-style mcpServers file (${VAR}) and VS Code's (${env:VAR}).
  for (const [file, dialect, reference] of [
    [path.join(dir, ".mcp.json"), "mcpServers", "${BRAVE_API_KEY}"],
    [path.join(dir, ".vscode", "mcp.json"), "VS Code servers", "${env:BRAVE_API_KEY}"],
  ]) {
    for (const name of ["brave", "serena"]) {
      const added = await run(["add", fixture(name), "--config", file], { cwd: dir })
      assert.equal(added.code, 0, added.stderr)
      assert.match(added.stdout, new RegExp(`^added "[^"]+" \\(.*\\) to ${reEscape(file)} \\(${reEscape(dialect)}\\):\\n`))
    }
    const written = toolnexus.parseMcpConfig(file)
    assert.deepEqual(written["brave-search-mcp-server"].command, ["npx", ...BRAVE])
    assert.deepEqual(written["brave-search-mcp-server"].environment, { BRAVE_API_KEY: reference })
    assert.deepEqual(written.serena.command, ["uvx", ...SERENA])

    const PATH = `${bin}${path.delimiter}${process.env.PATH}`
    const listed = await run(["list", file, "--json"], { cwd: dir, env: { PATH, BRAVE_API_KEY: KEY } })
    assert.equal(listed.stderr, "", file)
    assert.equal(listed.code, 0, file)
    assert.equal(listed.stdout.includes(KEY), false)
    const inv = JSON.parse(listed.stdout)
    assert.deepEqual(inv.status, { "brave-search-mcp-server": "connected", serena: "connected" }, file)
    assert.deepEqual(inv.errors, {})
    assert.deepEqual(inv.tools, { "brave-search-mcp-server": [ECHO_TOOL], serena: [ECHO_TOOL] })
    assert.deepEqual(
      [inv.info["brave-search-mcp-server"].name, inv.info.serena.name],
      ["npx-fixture", "uvx-fixture"],
    )
    // Each shim ran once, with exactly the arguments add wrote; the secret arrived as the value
    // of BRAVE_API_KEY, the variable the reference names (an unexpanded reference would have
    // overridden the inherited one). The serena entry sets no environment: it inherits list's.
    assert.deepEqual(shimLog(log), [
      { shim: "npx", argv: BRAVE, braveKey: digest(KEY) },
      { shim: "uvx", argv: SERENA, braveKey: digest(KEY) },
    ])

    // Without the variable: the reference expands to "" (said on stderr), and the server still
    // starts with the command line add wrote.
    const unset = await run(["list", file, "--json"], { cwd: dir, env: { PATH, BRAVE_API_KEY: undefined } })
    assert.equal(unset.code, 0, unset.stderr)
    assert.equal(unset.stderr, `toolnexus: environment variable BRAVE_API_KEY is not set (server "brave-search-mcp-server"); using ""\n`)
    assert.deepEqual(JSON.parse(unset.stdout).status, { "brave-search-mcp-server": "connected", serena: "connected" })
    assert.deepEqual(shimLog(log), [
      { shim: "npx", argv: BRAVE, braveKey: digest("") },
      { shim: "uvx", argv: SERENA, braveKey: null },
    ])
  }
})

test("a remote entry with a secret Authorization header connects to a served toolkit when its variable is set; without it, the 401 in words", async () => {
  const TOKEN = "tn-add-remote-8c2d51e7a9"
  const shout = defineTool({
    name: "shout",
    description: "Upper-cases text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }) => text.toUpperCase(),
  })
  const tk = await createToolkit({ builtins: false, extraTools: [shout] })
  const handle = await tk.serve("127.0.0.1:0", { auth: { tokens: [TOKEN] } })
  try {
    const url = `${handle.url}/mcp`
    const dir = folder()
    // Synthetic: the apify document's shape (a streamable-http remote whose Authorization header
    // is a required secret), pointing at the toolkit served above.
    const apify = doc("apify")
    const source = writeDoc(dir, "synthetic-remote.json", {
      ...apify,
      name: "io.github.toolnexus-test/synthetic-remote",
      description: "A toolkit served by this test",
      version: "1.0.0",
      repository: undefined,
      remotes: [{ ...apify.remotes[0], url, headers: [{ ...apify.remotes[0].headers[0], description: "Bearer <token>" }] }],
    })
    for (const [file, reference] of [
      [path.join(dir, ".mcp.json"), "${SYNTHETIC_REMOTE_AUTHORIZATION}"],
      [path.join(dir, ".vscode", "mcp.json"), "${env:SYNTHETIC_REMOTE_AUTHORIZATION}"],
    ]) {
      const added = await run(["add", source, "--config", file], { cwd: dir })
      assert.equal(added.code, 0, added.stderr)
      assert.match(added.stdout, /\nset this variable in the environment the client starts with:\n {2}SYNTHETIC_REMOTE_AUTHORIZATION \(secret\) {2}Bearer <token>\n$/)
      const entry = toolnexus.parseMcpConfig(file)["synthetic-remote"]
      assert.deepEqual([entry.type, entry.url, entry.headers], ["remote", url, { Authorization: reference }])

      const listed = await run(["list", file, "--json"], { cwd: dir, env: { SYNTHETIC_REMOTE_AUTHORIZATION: `Bearer ${TOKEN}` } })
      assert.equal(listed.stderr, "")
      assert.equal(listed.code, 0)
      assert.equal(listed.stdout.includes(TOKEN), false)
      const inv = JSON.parse(listed.stdout)
      assert.deepEqual(inv.status, { "synthetic-remote": "connected" })
      assert.deepEqual(inv.errors, {})
      assert.deepEqual(inv.tools["synthetic-remote"], [{ name: "shout", description: "Upper-cases text", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }])

      const unset = await run(["list", file, "--json"], { cwd: dir, env: { SYNTHETIC_REMOTE_AUTHORIZATION: undefined } })
      assert.equal(unset.code, 1)
      assert.equal(unset.stderr, `toolnexus: environment variable SYNTHETIC_REMOTE_AUTHORIZATION is not set (server "synthetic-remote"); using ""\n`)
      const refused = JSON.parse(unset.stdout)
      assert.deepEqual([refused.status, refused.errors, refused.tools], [{ "synthetic-remote": "failed" }, { "synthetic-remote": `HTTP 401 Unauthorized at ${url}` }, {}])
      // A token the server does not accept: the same reason, and the token is not repeated.
      const wrong = await run(["list", file, "--json"], { cwd: dir, env: { SYNTHETIC_REMOTE_AUTHORIZATION: "Bearer tn-not-this-one" } })
      assert.equal(wrong.code, 1)
      assert.deepEqual(JSON.parse(wrong.stdout).errors, { "synthetic-remote": `HTTP 401 Unauthorized at ${url}` })
      assert.equal(`${wrong.stdout}${wrong.stderr}`.includes("tn-not-this-one"), false)
    }
  } finally {
    await handle.stop()
    await tk.close()
  }
})

// ---------------------------------------------------------------------------------------------
// Values asked at a terminal: `add` run in a real pseudo-terminal (fixtures/pty-run.py: stdin and
// stderr on the terminal, stdout into a file), as in cli-elicit-pty.test.mjs. Each step waits for
// the prompt's text on the terminal before typing.

/** `toolnexus ...args` in a pseudo-terminal (lib/pty.mjs) in `cwd`, which is HOME too. */
const inPty = (args, { cwd }) =>
  runInPty(args, { defer, cwd, env: { HOME: cwd, XDG_CONFIG_HOME: path.join(cwd, ".config"), APPDATA: path.join(cwd, "AppData") } })

test("--secret-values at a terminal: the secret is asked hidden (naming the dialect's reference), not echoed, written in clear into a new 0600 file, masked when printed", { timeout: 60000 }, async () => {
  const dir = folder()
  const file = path.join(dir, ".vscode", "mcp.json")
  const SECRET = "bsk-typed-at-the-terminal-5d"
  const pty = inPty(["add", fixture("brave"), "--config", file, "--secret-values"], { cwd: dir })
  // VS Code's reference is ${env:VAR}: the prompt names the one an empty answer writes.
  const PROMPT = "BRAVE_API_KEY (Your API key for the service), hidden; empty for a ${env:BRAVE_API_KEY} reference: "
  await pty.expect(PROMPT)
  pty.type(`${SECRET}\r`)
  const { code, stdout, screen, raw } = await pty.exited
  assert.equal(code, 0, screen)
  // Nothing typed is shown: the terminal holds the prompt and the line break after the answer.
  assert.equal(screen, `${PROMPT}\n`)
  assert.equal(raw.includes(SECRET), false)
  assert.equal(
    fs.readFileSync(file, "utf8"),
    `{\n  "servers": {\n    "brave-search-mcp-server": {\n      "type": "stdio",\n      "command": "npx",\n      "args": [\n        "-y",\n        "@brave/brave-search-mcp-server@2.1.3"\n      ],\n      "env": {\n        "BRAVE_API_KEY": "${SECRET}"\n      }\n    }\n  }\n}\n`,
  )
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  assert.equal(
    stdout,
    `added "brave-search-mcp-server" (io.github.brave/brave-search-mcp-server 2.1.3) to ${file} (VS Code servers):
{
  "brave-search-mcp-server": {
    "type": "stdio",
    "command": "npx",
    "args": [
      "-y",
      "@brave/brave-search-mcp-server@2.1.3"
    ],
    "env": {
      "BRAVE_API_KEY": "••••"
    }
  }
}
`,
  )
})

test("Ctrl-C at a question stops add: exit 130, said in words, the config untouched", { timeout: 60000 }, async () => {
  const dir = folder()
  const file = path.join(dir, ".mcp.json")
  const before = '{\n  // mine\n  "mcpServers": {}\n}\n'
  fs.writeFileSync(file, before)
  const pty = inPty(["add", fixture("brave"), "--config", file, "--secret-values"], { cwd: dir })
  await pty.expect("BRAVE_API_KEY (Your API key for the service), hidden; empty for a ${BRAVE_API_KEY} reference: ")
  pty.type("half-typ\x03")
  const { code, stdout, screen } = await pty.exited
  assert.equal(code, 130, screen)
  assert.match(screen, /\ntoolnexus add: cancelled at a question; nothing was written\n$/)
  assert.equal(screen.includes("half-typ"), false)
  assert.equal(stdout, "")
  assert.equal(fs.readFileSync(file, "utf8"), before)
})

/**
 * Synthetic (written for these tests, not a published document): an npm package with a secret
 * environment variable and a required named argument that has no default.
 */
const WORKSPACE_SERVER = {
  $schema: SCHEMA_ID,
  name: "io.github.toolnexus-test/workspace-server",
  description: "d",
  version: "1.0.0",
  packages: [
    {
      registryType: "npm",
      identifier: "@toolnexus-test/workspace-server",
      version: "1.0.0",
      transport: { type: "stdio" },
      environmentVariables: [{ name: "WS_TOKEN", description: "API token", isRequired: true, isSecret: true }],
      packageArguments: [{ type: "named", name: "--workspace", description: "The folder to serve", isRequired: true }],
    },
  ],
}

test("a required input without a default is asked at a terminal (shown as typed); empty answers, secret or not, write references", { timeout: 60000 }, async () => {
  const dir = folder()
  const file = path.join(dir, ".mcp.json")
  const source = writeDoc(dir, "workspace-server.json", WORKSPACE_SERVER)
  const ASK_WORKSPACE = "workspace (The folder to serve); empty for a ${WORKSPACE_SERVER_WORKSPACE} reference: "

  // Without --secret-values only the argument is asked; the secret is referenced.
  const first = inPty(["add", source, "--config", file], { cwd: dir })
  await first.expect(ASK_WORKSPACE)
  first.type("/srv/project\r")
  const one = await first.exited
  assert.equal(one.code, 0, one.screen)
  assert.equal(one.screen, `${ASK_WORKSPACE}/srv/project\n`)
  const entry = toolnexus.parseMcpConfig(file)["workspace-server"]
  assert.deepEqual([entry.command, entry.environment], [["npx", "-y", "@toolnexus-test/workspace-server@1.0.0", "--workspace", "/srv/project"], { WS_TOKEN: "${WS_TOKEN}" }])
  assert.match(one.stdout, /\nset this variable in the environment the client starts with:\n {2}WS_TOKEN \(secret\) {2}API token\n$/)

  // With --secret-values the secret is asked first (hidden); Enter at both writes references.
  const second = inPty(["add", source, "--config", file, "--force", "--secret-values"], { cwd: dir })
  const ASK_TOKEN = "WS_TOKEN (API token), hidden; empty for a ${WS_TOKEN} reference: "
  await second.expect(ASK_TOKEN)
  second.type("\r")
  await second.expect(ASK_WORKSPACE)
  second.type("\r")
  const two = await second.exited
  assert.equal(two.code, 0, two.screen)
  assert.equal(two.screen, `${ASK_TOKEN}\n${ASK_WORKSPACE}\n`)
  const referenced = toolnexus.parseMcpConfig(file)["workspace-server"]
  assert.deepEqual(
    [referenced.command, referenced.environment],
    [["npx", "-y", "@toolnexus-test/workspace-server@1.0.0", "--workspace", "${WORKSPACE_SERVER_WORKSPACE}"], { WS_TOKEN: "${WS_TOKEN}" }],
  )
  assert.match(
    two.stdout,
    /\nset these variables in the environment the client starts with:\n {2}WS_TOKEN \(secret\) {2}API token\n {2}WORKSPACE_SERVER_WORKSPACE {2}The folder to serve\n$/,
  )
})
