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
