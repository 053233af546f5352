// listMcpTools's config input and the pure config helpers (docs/listing.md; seed 000): JSON, JSONC
// and files, wrong-type fields, variable expansion; parseMcpConfig for each client's shape;
// sanitize and expandEnvHeaders.
// Every server is a real process or a real HTTP server built with @modelcontextprotocol/sdk;
// see __test__/fixtures/.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { expandEnvHeaders, listMcpTools, parseMcpConfig, sanitize } from "toolnexus"
import { descendants, fixture, leakCheck, nodeFixture, rejection, tmpConfig, tmpFile, withEnv } from "./helpers.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"

const T = { timeout: 20000 }
const names = (infos) => infos.map((t) => t.name)

// docs/listing.md "Nothing left running": whatever a test did, no child of this process survives it.
leakCheck(afterEach)

// ---------------------------------------------------------------------------------------------
// Config input

test("malformed JSON text rejects before anything is spawned", T, async () => {
  const err = await rejection(listMcpTools("{not valid json"))
  assert.ok(err instanceof Error, `rejected with ${err}`)
  const marker = tmpFile("spawned")
  const text = `{"mcpServers": {"a": {"command": ["sh", "-c", "echo > '${marker}'; exec sleep 30"]}}, oops}`
  const err2 = await rejection(listMcpTools(text))
  assert.ok(err2 instanceof Error)
  assert.deepEqual(descendants(), [])
  assert.equal(fs.existsSync(marker), false)
})

test("a JSONC file with comments and trailing commas lists fine, by absolute and relative path", T, async () => {
  const command = JSON.stringify(nodeFixture("stdio-server", "--tools", "a,b"))
  const file = tmpConfig(
    `// an editor-style config
{
  /* block comment */
  "mcpServers": {
    "srv": { "command": ${command}, }, // trailing comma inside
  },
}
`,
    { name: "mcp.json" },
  )
  for (const input of [file, path.relative(process.cwd(), file)]) {
    const inv = await listMcpTools(input)
    assert.equal(inv.status.srv, "connected", inv.errors.srv)
    assert.deepEqual(names(inv.tools.srv), ["a", "b"])
  }
})

test("a syntax error in a file names the file and line:column", T, async () => {
  // The stray "@" is line 3, column 19 (1-based).
  const file = tmpConfig(`{
  // servers
  "mcpServers": { @ }
}
`)
  const err = await rejection(listMcpTools(file))
  assert.ok(err instanceof Error)
  assert.ok(err.message.includes(`${file}:3:19`), err.message)
  assert.throws(
    () => parseMcpConfig(file),
    (e) => e instanceof Error && e.message.includes(`${file}:3:19`),
  )
  assert.deepEqual(descendants(), [])
})

test("a missing config file rejects, naming the file", T, async () => {
  const file = path.join(path.dirname(tmpFile()), "no-such-mcp.json")
  const err = await rejection(listMcpTools(file))
  assert.ok(err instanceof Error)
  assert.ok(err.message.includes("no-such-mcp.json"), err.message)
})

test("a wrong-type field fails only that server; non-object entries are skipped", T, async () => {
  const inv = await listMcpTools({
    mcpServers: {
      good: { command: nodeFixture("stdio-server", "--tools", "a") },
      bad: { command: 42 },
      junk: "not an object",
      numeric: 7,
      slowpoke: { command: nodeFixture("stdio-server", "--tools", "a"), timeout: "soon" },
    },
  })
  assert.deepEqual(Object.keys(inv.status), ["good", "bad", "slowpoke"])
  assert.deepEqual(inv.status, { good: "connected", bad: "failed", slowpoke: "failed" })
  assert.deepEqual(Object.keys(inv.tools), ["good"])
  assert.ok(inv.errors.bad.includes("mcpServers.bad.command"), inv.errors.bad)
  assert.ok(inv.errors.slowpoke.includes("mcpServers.slowpoke.timeout"), inv.errors.slowpoke)
})

test("variables expand in command, args, env values and url", T, async (t) => {
  const s = await startStreamableHttp({ tools: 1 })
  t.after(() => s.close())
  const port = new URL(s.url).port
  const inv = await withEnv(
    { TNX_NODE: process.execPath, TNX_TOOLS: "x,y", TNX_ENV_TOOLS: "e1", TNX_PORT: port, TNX_MISSING: undefined },
    () =>
      listMcpTools({
        mcpServers: {
          args: { command: ["${TNX_NODE}", fixture("stdio-server"), "--tools", "${TNX_TOOLS}"] },
          env: { command: "${env:TNX_NODE}", args: [fixture("stdio-server")], env: { FIXTURE_TOOLS: "${TNX_ENV_TOOLS}" } },
          dflt: { command: [process.execPath, fixture("stdio-server"), "--tools", "${TNX_MISSING:-d1,d2}"] },
          web: { url: "http://127.0.0.1:${TNX_PORT}/mcp" },
        },
      }),
  )
  assert.deepEqual(inv.status, { args: "connected", env: "connected", dflt: "connected", web: "connected" }, JSON.stringify(inv.errors))
  assert.deepEqual(names(inv.tools.args), ["x", "y"])
  assert.deepEqual(names(inv.tools.env), ["e1"])
  assert.deepEqual(names(inv.tools.dflt), ["d1", "d2"])
  assert.deepEqual(names(inv.tools.web), ["tool1"])
})

test("opencode's {env:VAR} expands in its mcp entries (command, environment, url), and stays literal elsewhere", T, async (t) => {
  const s = await startStreamableHttp({ tools: 1 })
  t.after(() => s.close())
  const port = new URL(s.url).port
  const inv = await withEnv({ TNX_NODE: process.execPath, TNX_TOOLS: "o1,o2", TNX_OC_PORT: port, TNX_OC_MISSING: undefined }, () =>
    listMcpTools({
      $schema: "https://opencode.ai/config.json",
      mcp: {
        local: { type: "local", command: ["{env:TNX_NODE}", fixture("stdio-server")], environment: { FIXTURE_TOOLS: "{env:TNX_TOOLS}", FIXTURE_NAME: "n-{env:TNX_OC_MISSING}" } },
        remote: { type: "remote", url: "http://127.0.0.1:{env:TNX_OC_PORT}/mcp" },
      },
    }),
  )
  assert.deepEqual(inv.status, { local: "connected", remote: "connected" }, JSON.stringify(inv.errors))
  assert.deepEqual(names(inv.tools.local), ["o1", "o2"])
  // Unset: empty, as opencode has it (and warned of, as any unset variable is).
  assert.equal(inv.info.local.name, "n-")
  assert.deepEqual(names(inv.tools.remote), ["tool1"])
  // Not an opencode config: the same text is not a reference.
  const other = parseMcpConfig({ mcpServers: { a: { command: "x", env: { K: "{env:TNX_TOOLS}" } } } })
  assert.deepEqual(other.a.environment, { K: "{env:TNX_TOOLS}" })
})

test("listMcpTools accepts parseMcpConfig's normalised output", T, async () => {
  const normalised = parseMcpConfig({
    mcpServers: { srv: { command: process.execPath, args: [fixture("stdio-server"), "--tools", "n1"] } },
  })
  const inv = await listMcpTools(normalised)
  assert.deepEqual(inv.status, { srv: "connected" })
  assert.deepEqual(names(inv.tools.srv), ["n1"])
})

test("a server named like a reserved key survives parseMcpConfig and connects", T, async () => {
  const server = { command: process.execPath, args: [fixture("stdio-server"), "--tools", "b1"] }
  const normalised = parseMcpConfig({ mcpServers: { builtins: server, agents: { ...server, enabled: false } } })
  assert.deepEqual(Object.keys(normalised), ["builtins", "agents"])
  assert.deepEqual(plain(parseMcpConfig(normalised)), plain(normalised))
  const inv = await listMcpTools(normalised)
  assert.deepEqual(inv.status, { builtins: "connected", agents: "disabled" })
  assert.deepEqual(names(inv.tools.builtins), ["b1"])
})

// ---------------------------------------------------------------------------------------------
// parseMcpConfig (pure: nothing is spawned or expanded)

/** Drops properties whose value is undefined, so an absent optional field compares as absent. */
const plain = (value) => JSON.parse(JSON.stringify(value))

test("parseMcpConfig: Claude mcpServers with command + args + env", () => {
  const out = parseMcpConfig({
    mcpServers: {
      fs: { command: "npx", args: ["-y", "@scope/server", "${HOME}/data"], env: { TOKEN: "${TOKEN}" } },
      py: { command: "python", args: [], cwd: "${PROJECT}/srv", timeout: 1234, tools: { read: true, write: false } },
    },
  })
  assert.deepEqual(Object.keys(out), ["fs", "py"])
  assert.deepEqual(plain(out), {
    fs: {
      type: "local",
      command: ["npx", "-y", "@scope/server", "${HOME}/data"],
      environment: { TOKEN: "${TOKEN}" },
      enabled: true,
      timeout: 30000,
    },
    py: {
      type: "local",
      command: ["python"],
      environment: {},
      cwd: "${PROJECT}/srv",
      enabled: true,
      timeout: 1234,
      tools: { read: true, write: false },
    },
  })
})

test("parseMcpConfig: VS Code servers with type http / sse / stdio", () => {
  const out = parseMcpConfig({
    inputs: [{ type: "promptString", id: "token", password: true }],
    servers: {
      gh: { type: "http", url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: "Bearer ${input:token}" } },
      old: { type: "sse", url: "http://localhost:8080/sse" },
      local: { type: "stdio", command: "node", args: ["server.js"], env: { A: "1" } },
    },
  })
  assert.deepEqual(Object.keys(out), ["gh", "old", "local"])
  // VS Code's "http" means streamable HTTP (with SSE fallback in VS Code itself): either
  // "streamable-http" or "auto" is a faithful reading; docs/listing.md does not pin it.
  assert.ok(["streamable-http", "auto"].includes(out.gh.transport), out.gh.transport)
  assert.deepEqual(plain(out), {
    gh: {
      type: "remote",
      url: "https://api.githubcopilot.com/mcp/",
      transport: out.gh.transport,
      headers: { Authorization: "Bearer ${input:token}" },
      enabled: true,
      timeout: 30000,
    },
    old: { type: "remote", url: "http://localhost:8080/sse", transport: "sse", headers: {}, enabled: true, timeout: 30000 },
    local: { type: "local", command: ["node", "server.js"], environment: { A: "1" }, enabled: true, timeout: 30000 },
  })
})

test("parseMcpConfig: Windsurf serverUrl and Gemini httpUrl", () => {
  const out = parseMcpConfig({
    mcpServers: {
      wind: { serverUrl: "https://wind.example.com/mcp", headers: { "X-Key": "${WIND_KEY}" } },
      gem: { httpUrl: "https://gem.example.com/mcp", timeout: 5000 },
      streamy: { type: "streamableHttp", url: "https://s.example.com/mcp" },
      streamy2: { type: "streamable-http", url: "https://s2.example.com/mcp" },
      plainUrl: { url: "https://p.example.com/mcp" },
    },
  })
  assert.deepEqual(Object.keys(out), ["wind", "gem", "streamy", "streamy2", "plainUrl"])
  // Gemini's httpUrl is streamable HTTP in Gemini CLI; "auto" would also connect to it.
  assert.ok(["streamable-http", "auto"].includes(out.gem.transport), out.gem.transport)
  assert.deepEqual(plain(out), {
    wind: { type: "remote", url: "https://wind.example.com/mcp", transport: "auto", headers: { "X-Key": "${WIND_KEY}" }, enabled: true, timeout: 30000 },
    gem: { type: "remote", url: "https://gem.example.com/mcp", transport: out.gem.transport, headers: {}, enabled: true, timeout: 5000 },
    streamy: { type: "remote", url: "https://s.example.com/mcp", transport: "streamable-http", headers: {}, enabled: true, timeout: 30000 },
    streamy2: { type: "remote", url: "https://s2.example.com/mcp", transport: "streamable-http", headers: {}, enabled: true, timeout: 30000 },
    plainUrl: { type: "remote", url: "https://p.example.com/mcp", transport: "auto", headers: {}, enabled: true, timeout: 30000 },
  })
})

test("parseMcpConfig: Zed context_servers", () => {
  const out = parseMcpConfig({
    context_servers: {
      "zed-srv": { source: "custom", command: "npx", args: ["-y", "some-mcp"], env: { X: "1" } },
    },
  })
  assert.deepEqual(plain(out), {
    "zed-srv": { type: "local", command: ["npx", "-y", "some-mcp"], environment: { X: "1" }, enabled: true, timeout: 30000 },
  })
})

test("parseMcpConfig: opencode mcp with environment, enabled and remote", () => {
  const out = parseMcpConfig({
    $schema: "https://opencode.ai/config.json",
    mcp: {
      local: { type: "local", command: ["bun", "x", "my-mcp"], environment: { KEY: "{env:KEY}", B: "${B}" }, enabled: true },
      remote: { type: "remote", url: "https://mcp.example.com/mcp", headers: { "X-Api": "${API}" }, enabled: false, timeout: 5000 },
    },
  })
  assert.deepEqual(Object.keys(out), ["local", "remote"])
  assert.deepEqual(plain(out), {
    // opencode's {env:KEY} given back as the ${KEY} it means (so the entries load back alike)
    local: { type: "local", command: ["bun", "x", "my-mcp"], environment: { KEY: "${KEY}", B: "${B}" }, enabled: true, timeout: 30000 },
    remote: { type: "remote", url: "https://mcp.example.com/mcp", transport: "auto", headers: { "X-Api": "${API}" }, enabled: false, timeout: 5000 },
  })
})

test("parseMcpConfig: env and environment merge (environment wins), disabled, bare map, reserved keys", () => {
  const out = parseMcpConfig({
    both: { command: ["srv"], env: { A: "env", B: "env" }, environment: { B: "environment", C: "environment" } },
    off: { command: "srv", disabled: true },
    builtins: { bash: true },
    agents: { helper: { prompt: "x" } },
    a2a: { url: "https://a2a.example.com" },
    mcpServer: { name: "me" },
  })
  assert.deepEqual(Object.keys(out), ["both", "off"])
  assert.deepEqual(plain(out), {
    both: { type: "local", command: ["srv"], environment: { A: "env", B: "environment", C: "environment" }, enabled: true, timeout: 30000 },
    off: { type: "local", command: ["srv"], environment: {}, enabled: false, timeout: 30000 },
  })
})

test("parseMcpConfig: JSON text, a file path, and inputs without any server map", () => {
  const cfg = { mcpServers: { a: { command: ["x", "--flag"] } } }
  const expected = { a: { type: "local", command: ["x", "--flag"], environment: {}, enabled: true, timeout: 30000 } }
  assert.deepEqual(plain(parseMcpConfig(JSON.stringify(cfg))), expected)
  assert.deepEqual(plain(parseMcpConfig(`  \n ${JSON.stringify(cfg)}`)), expected)
  assert.deepEqual(plain(parseMcpConfig(tmpConfig(cfg))), expected)
  assert.deepEqual(plain(parseMcpConfig({ mcpServers: {} })), {})
  assert.deepEqual(plain(parseMcpConfig({ tools: ["ls", "cat"] })), {})
  assert.deepEqual(plain(parseMcpConfig({})), {})
  assert.throws(() => parseMcpConfig("{not valid json"), Error)
})

// ---------------------------------------------------------------------------------------------
// sanitize, expandEnvHeaders

test("sanitize: one underscore per UTF-16 code unit outside [A-Za-z0-9_-]", () => {
  assert.equal(sanitize("😀"), "__")
  assert.equal(sanitize("my server.v2/tool"), "my_server_v2_tool")
  assert.equal(sanitize("Ok_name-1"), "Ok_name-1")
  assert.equal(sanitize("é"), "_")
  assert.equal(sanitize(""), "")
})

test("expandEnvHeaders: ${VAR}, ${VAR:-default}, ${env:VAR}, missing, undefined", async () => {
  await withEnv({ TOKEN: "s3cret", MISSING: undefined }, () => {
    assert.deepEqual(expandEnvHeaders({ Authorization: "Bearer ${TOKEN}" }), { Authorization: "Bearer s3cret" })
    assert.deepEqual(expandEnvHeaders({ "X-Default": "${MISSING:-dflt}" }), { "X-Default": "dflt" })
    assert.deepEqual(expandEnvHeaders({ "X-Env": "${env:TOKEN}" }), { "X-Env": "s3cret" })
    assert.deepEqual(expandEnvHeaders({ "X-Gone": "a${MISSING}b" }), { "X-Gone": "ab" })
    assert.deepEqual(expandEnvHeaders({ "X-Plain": "no variables" }), { "X-Plain": "no variables" })
    assert.deepEqual(expandEnvHeaders({}), {})
  })
  assert.equal(expandEnvHeaders(undefined), undefined)
  assert.equal(expandEnvHeaders(), undefined)
})
