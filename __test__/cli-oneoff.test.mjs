// One-off targets (issue 42): `list`, `diff`, `call`, `read` and `prompt` given a server on the
// command line instead of a config — `--stdio "<command line>"` (split as a shell would, no
// shell run; --env, --cwd) and a URL (`--header`, `--transport`) — run as real subprocesses
// against the SDK fixture servers, server-everything, and a toolkit served on 127.0.0.1 with a
// static bearer token; usage errors for every mix; header values never shown; nothing left
// running.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { createToolkit, defineTool } from "toolnexus"
import { splitCommandLine, stdioServerName } from "../bin/cli/oneoff.mjs"
import { deferredCleanup, isAlive, nodeFixture, readPid, repoRoot, serverEverything, tmpDir, tmpFile } from "./helpers.mjs"
import { cli } from "./lib/cli.mjs"

const T = { timeout: 60000 }
const defer = deferredCleanup(afterEach)

// Paths relative to the repository root (the CLI runs there), so the command lines read as a user types them.
const FIXTURE = "__test__/fixtures/stdio-server.mjs"
const EVERYTHING = path.relative(repoRoot, serverEverything)
const TOKEN = "tn-oneoff-secret-5d1f0c9a7b"

// ---------------------------------------------------------------------------------------------
// The command-line splitter and the names it gives

test("splitCommandLine: words as a POSIX shell splits them, nothing expanded", () => {
  const cases = [
    ["npx -y @scope/server --flag", ["npx", "-y", "@scope/server", "--flag"]],
    ["  a\t b \n c  ", ["a", "b", "c"]],
    [`node x.mjs --name 'with spaces' "double quoted"`, ["node", "x.mjs", "--name", "with spaces", "double quoted"]],
    [`a'b'"c"d`, ["abcd"]],
    [`'' ""`, ["", ""]],
    [`with\\ space`, ["with space"]],
    [`"a \\" b \\\\ c \\$ d \\x"`, ['a " b \\ c $ d \\x']],
    [`'no \\ escapes "here"'`, ['no \\ escapes "here"']],
    [`$HOME * ~ $(x)`, ["$HOME", "*", "~", "$(x)"]],
    [`a "|" '&&' \\;`, ["a", "|", "&&", ";"]],
    ["line\\\ncontinued", ["linecontinued"]],
    // A backslash before a line break (LF or CRLF) continues the line: no empty word.
    ["npx \\\n  -y pkg", ["npx", "-y", "pkg"]],
    ["npx \\\r\n  -y pkg", ["npx", "-y", "pkg"]],
    ["a\\\r\nb", ["ab"]],
    [`"a\\\r\nb" c`, ["ab", "c"]],
    ["", []],
  ]
  for (const [line, words] of cases) assert.deepEqual(splitCommandLine(line), words, line)
  const errors = [
    [`node 'open`, `--stdio: unterminated ' quote`],
    [`node "open`, `--stdio: unterminated " quote`],
    [`node x \\`, "--stdio: a backslash ends the command line (nothing to escape)"],
    ["a | b", `--stdio: "|" would need a shell, and none is run; quote it to pass it as an argument`],
    ["cd x && y", `--stdio: "&&" would need a shell, and none is run; quote it to pass it as an argument`],
    ["x > out", `--stdio: ">" would need a shell, and none is run; quote it to pass it as an argument`],
    ["x 2>&1", `--stdio: "2>&1" would need a shell, and none is run; quote it to pass it as an argument`],
  ]
  for (const [line, message] of errors) assert.throws(() => splitCommandLine(line), { message }, line)
})

test("stdioServerName: the package, module, script or image a command runs", () => {
  const cases = [
    ["npx -y @scope/server-x@1.2.3 --flag", "server-x"],
    ["npx @modelcontextprotocol/server-everything", "server-everything"],
    [`node ${EVERYTHING} stdio`, "server-everything"],
    ["node path/to/notes.mjs", "notes"],
    ["node server.mjs", "server"],
    ["python3 -m mcp_server_time --local-timezone UTC", "mcp_server_time"],
    ["uvx mcp-server-git --repository .", "mcp-server-git"],
    ["uv run my-server", "my-server"],
    ["pnpm dlx @acme/tools", "tools"],
    ["docker run -i --rm -e TOKEN=x ghcr.io/github/github-mcp-server:latest", "github-mcp-server"],
    // A backslash escapes as in a shell: a Windows path is quoted.
    ["'C:\\tools\\weather.exe' --port 0", "weather"],
    ["./bin/my server", "my"],
    ["npx -y", "stdio"],
    // Inline code is no name: the runner is.
    [`node -e "require('./server.js').start()"`, "node"],
    ["node --eval=x", "node"],
    ["node -p 1", "node"],
    [`python3 -c "import srv; srv.main()"`, "python3"],
  ]
  for (const [line, name] of cases) assert.equal(stdioServerName(splitCommandLine(line)), name, line)
})

// ---------------------------------------------------------------------------------------------
// --stdio

test("list --stdio: a quoted argument with spaces reaches the server; --json is the inventory of one server", T, async () => {
  const command = `node ${FIXTURE} --tools echo,add --name 'fixture with spaces'`
  const json = await cli(["list", "--stdio", command, "--json"])
  assert.equal(json.code, 0, json.stderr)
  assert.equal(json.stderr, "")
  const inventory = JSON.parse(json.stdout)
  assert.deepEqual(inventory.status, { "stdio-server": "connected" })
  assert.deepEqual(inventory.errors, {})
  assert.deepEqual(inventory.tools["stdio-server"].map((t) => t.name), ["echo", "add"])
  assert.equal(inventory.info["stdio-server"].name, "fixture with spaces", "the quoted words are one argument")

  const human = await cli(["list", "--stdio", command])
  assert.equal(human.code, 0, human.stderr)
  const lines = human.stdout.replace(/  \d+ ms  /, "  <ms>  ").split("\n")
  assert.deepEqual(lines, [
    `✓ stdio-server  2 tools  <ms>  fixture with spaces · MCP ${inventory.info["stdio-server"].protocolVersion}`,
    "",
    "stdio-server",
    "  echo  Echo the text back",
    "  add   Add two numbers",
    "",
  ])
})

test("list --stdio: a command line continued with backslash-newline runs as one line", T, async () => {
  const json = await cli(["list", "--stdio", `node \\\n  ${FIXTURE} \\\r\n  --tools echo`, "--json"])
  assert.equal(json.code, 0, json.stderr)
  const inventory = JSON.parse(json.stdout)
  assert.deepEqual(inventory.status, { "stdio-server": "connected" })
  assert.deepEqual(inventory.tools["stdio-server"].map((t) => t.name), ["echo"])
  // Inline code names the server after its runner.
  const code = `process.argv.splice(1, 1, ${JSON.stringify(path.join(repoRoot, FIXTURE))}); await import(process.argv[1])`
  const inline = await cli(["list", "--stdio", `node --input-type=module -e '${code}' x --tools echo`, "--json"])
  assert.equal(inline.code, 0, inline.stderr)
  assert.deepEqual(JSON.parse(inline.stdout).status, { node: "connected" })
})

test("call --stdio: <tool> and key=value with no config or server; --env and --cwd reach the server; it is gone after", T, async () => {
  const echo = await cli(["call", "--stdio", `node ${FIXTURE} --tools echo,add`, "echo", "text=hello   there"])
  assert.deepEqual(echo, { code: 0, signal: null, stdout: "hello   there\n", stderr: "" })

  const pidFile = tmpFile("oneoff.pid")
  const add = await cli(["call", "--cwd", "__test__/fixtures", "--stdio", "node stdio-server.mjs --tools add", "--env", `PID_FILE=${pidFile}`, "add", "a=2", "b=40", "--json"])
  assert.equal(add.code, 0, add.stderr)
  assert.deepEqual(JSON.parse(add.stdout), { content: [{ type: "text", text: "42" }], isError: false })
  const pid = readPid(pidFile)
  assert.ok(pid, "the server ran with --env's PID_FILE (and found its script in --cwd)")
  assert.equal(isAlive(pid), false, "the server is closed after the call")

  // ${VAR} expands from the environment, as in a config (no shell does it).
  const expanded = await cli(["call", "--stdio", "node ${ONEOFF_FIXTURE} --tools echo", "echo", "text=ok"], { env: { ONEOFF_FIXTURE: FIXTURE } })
  assert.deepEqual(expanded, { code: 0, signal: null, stdout: "ok\n", stderr: "" })

  const unknown = await cli(["call", "--stdio", `node ${FIXTURE} --tools echo,add`, "ech", "text=x"])
  assert.deepEqual(unknown, { code: 2, signal: null, stdout: "", stderr: `toolnexus call: server "stdio-server" has no tool "ech"; did you mean "echo"?\n` })

  const missing = await cli(["call", "--stdio", "/nonexistent-toolnexus-oneoff-binary --flag", "anything"])
  assert.deepEqual(missing, {
    code: 3,
    signal: null,
    stdout: "",
    stderr: `toolnexus call: cannot reach "nonexistent-toolnexus-oneoff-binary": cannot start "/nonexistent-toolnexus-oneoff-binary": No such file or directory (os error 2)\n`,
  })
})

test("prompt, read and diff --stdio, against server-everything", T, async () => {
  const everything = `node ${EVERYTHING} stdio`
  const prompt = await cli(["prompt", "--stdio", everything, "args-prompt", "city=Paris"])
  assert.deepEqual(prompt, { code: 0, signal: null, stdout: "user: What's weather in Paris?\n", stderr: "" })

  const read = await cli(["read", "--stdio", everything, "demo://resource/dynamic/text/7"])
  assert.equal(read.code, 0, read.stderr)
  assert.match(read.stdout, /^Resource 7: This is a plaintext resource created at .+\n$/)

  const snapshot = path.join(tmpDir(), "fixture.snapshot.json")
  const command = `node ${FIXTURE} --tools echo,add`
  const listed = await cli(["list", "--stdio", command, "--json"])
  fs.writeFileSync(snapshot, listed.stdout)
  const same = await cli(["diff", "--stdio", command, snapshot])
  assert.deepEqual(same, { code: 0, signal: null, stdout: `no drift: 1 server matches ${snapshot}\n`, stderr: "" })
  const drift = await cli(["diff", "--stdio", `node ${FIXTURE} --tools echo`, snapshot])
  assert.deepEqual(drift, { code: 1, signal: null, stdout: `stdio-server\n  - add\n\ndrift: 1 change in 1 of 1 servers since ${snapshot}\n`, stderr: "" })
})

// ---------------------------------------------------------------------------------------------
// A URL, with a header the server checks

/** A toolkit (the fixture's echo, and whoami) served on 127.0.0.1:0 to the bearer token TOKEN only. */
async function servedWithToken() {
  const whoami = defineTool({ name: "whoami", description: "Who is calling", run: (_args, ctx) => JSON.stringify(ctx.principal ?? null) })
  const tk = await createToolkit({ builtins: false, extraTools: [whoami], mcpConfig: { mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "echo") } } } })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", { auth: { tokens: [{ token: TOKEN, subject: "ci" }] } })
  defer(() => handle.stop())
  return `${handle.url}/mcp`
}

test("a URL target: no header is refused with the header to give, a wrong one is a 401 in words, the right one works; the value is never shown", T, async () => {
  const url = await servedWithToken()
  // A token store of its own, so no stored credential of this machine is used.
  const env = { XDG_CONFIG_HOME: tmpDir(), ONEOFF_TOKEN: TOKEN }
  const runs = []
  const run = async (args) => {
    const r = await cli(args, { env })
    runs.push(r)
    return r
  }

  const none = await run(["call", url, "whoami"])
  assert.deepEqual(none, {
    code: 3,
    signal: null,
    stdout: "",
    stderr: `toolnexus call: cannot reach "127.0.0.1": authorization required: give --header "Authorization: Bearer <token>" (no token is stored for this server)\n`,
  })
  const wrong = await run(["call", url, "whoami", "--header", `Authorization: Bearer ${TOKEN}-wrong`])
  assert.deepEqual(wrong, { code: 3, signal: null, stdout: "", stderr: `toolnexus call: cannot reach "127.0.0.1": HTTP 401 Unauthorized at ${url}\n` })
  const listWrong = await run(["list", url, "--header", `Authorization: Bearer ${TOKEN}-wrong`])
  assert.deepEqual(listWrong, { code: 1, signal: null, stdout: `✗ 127.0.0.1  HTTP 401 Unauthorized at ${url}\n`, stderr: "" })

  const right = await run(["call", url, "whoami", "--header", `Authorization: Bearer ${TOKEN}`])
  assert.deepEqual(right, { code: 0, signal: null, stdout: '{"subject":"ci","scopes":[],"claims":{}}\n', stderr: "" })
  const echo = await run(["call", url, "up_echo", "text=over http", "--header", `authorization:Bearer ${TOKEN}`, "--transport", "streamable-http"])
  assert.deepEqual(echo, { code: 0, signal: null, stdout: "over http\n", stderr: "" })
  // The token from the environment: ${VAR} in a header, kept off the command line.
  const fromEnv = await run(["call", url, "whoami", "--header", "Authorization: Bearer ${ONEOFF_TOKEN}"])
  assert.deepEqual(fromEnv, right)

  const listed = await run(["list", url, "--header", `Authorization: Bearer ${TOKEN}`, "--json"])
  assert.equal(listed.code, 0, listed.stderr)
  const inventory = JSON.parse(listed.stdout)
  assert.deepEqual(inventory.status, { "127.0.0.1": "connected" })
  assert.deepEqual(inventory.tools["127.0.0.1"].map((t) => t.name).sort(), ["up_echo", "whoami"])

  for (const r of runs) {
    for (const text of [r.stdout, r.stderr]) assert.equal(text.includes(TOKEN), false, `the token was shown: ${text}`)
  }
})

// ---------------------------------------------------------------------------------------------
// Usage errors

test("one-off usage errors: exit 2 in words, with the command's usage; header and env values never repeated", T, async () => {
  const usage = (command) => `Usage: ${command}\nRun \`toolnexus ${command.split(" ")[1]} --help\` for details.\n`
  const CALL = "toolnexus call [<config>] <server> <tool> [key=value …] [--args '<json>'] [--json]"
  const LIST = "toolnexus list [<config>] [--json] [--timeout ms]"
  const READ = "toolnexus read [<config>] <server> <uri> [--json] [--timeout ms]"
  const cases = [
    [["call", "--stdio", "node x.mjs"], "toolnexus call: missing <tool>", CALL],
    [["call", "--stdio", "node x.mjs", "mcp.json", "srv", "tool"], 'toolnexus call: unexpected argument "srv" (a one-off target takes no <config> or <server>; arguments are key=value)', CALL],
    [["call", "https://example.com/mcp"], "toolnexus call: missing <tool>", CALL],
    [["call", "https://example.com/mcp", "srv", "tool"], 'toolnexus call: unexpected argument "tool" (a one-off target takes no <config> or <server>; arguments are key=value)', CALL],
    [["call", "https://example.com/mcp", "tool", "--stdio", "node x"], 'toolnexus call: give one target: --stdio "<command>" or a URL, not both', CALL],
    [["call", "--stdio", "", "tool"], "toolnexus call: --stdio needs a command to run", CALL],
    [["call", "--stdio", "node x | tee log", "tool"], 'toolnexus call: --stdio: "|" would need a shell, and none is run; quote it to pass it as an argument', CALL],
    [["call", "--stdio", "node 'x", "tool"], "toolnexus call: --stdio: unterminated ' quote", CALL],
    [["list", "mcp.json", "--stdio", "node x"], 'toolnexus list: unexpected argument "mcp.json" (with --stdio there is no <config> or <server>)', LIST],
    [["list", "--header", `Authorization: Bearer ${TOKEN}`], "toolnexus list: --header goes with a URL target (toolnexus list https://host/mcp …)", LIST],
    [["list", "--transport", "sse"], "toolnexus list: --transport goes with a URL target (toolnexus list https://host/mcp …)", LIST],
    [["list", "--env", `API_KEY=${TOKEN}`], 'toolnexus list: --env goes with --stdio "<command>"', LIST],
    [["list", "--cwd", "/tmp"], 'toolnexus list: --cwd goes with --stdio "<command>"', LIST],
    [["list", "https://example.com/mcp", "--header", TOKEN], 'toolnexus list: --header must be "Name: value" (one was given without a valid name before ":")', LIST],
    [["list", "https://example.com/mcp", "--header", `Bad Name: ${TOKEN}`], 'toolnexus list: --header must be "Name: value" (one was given without a valid name before ":")', LIST],
    [["list", "https://example.com/mcp", "--header", `X-Token: ${TOKEN}\u0007`], "toolnexus list: --header X-Token: the value must not hold a line break, NUL or another control character", LIST],
    [["list", "https://example.com/mcp", "--header", `X-Token: ${TOKEN}\u0085`], "toolnexus list: --header X-Token: the value must not hold a line break, NUL or another control character", LIST],
    [["list", "https://example.com/mcp", "--transport", "ws"], 'toolnexus list: --transport must be sse or streamable-http, got "ws"', LIST],
    [["list", "--stdio", "node x", "--env", TOKEN], 'toolnexus list: --env must be KEY=VALUE (one was given without "=")', LIST],
    [["list", "--stdio", "node x", "--env", `1X=${TOKEN}`], "toolnexus list: --env must be KEY=VALUE with a variable name as KEY (letters, digits, _)", LIST],
    [["list", "https://"], 'toolnexus list: "https://" is not a valid URL', LIST],
    [["read", "--stdio", "node x"], "toolnexus read: missing <uri>", READ],
    [["read", "https://example.com/mcp", "a://b", "c"], 'toolnexus read: unexpected argument "c" (a one-off target takes no <config> or <server>)', READ],
  ]
  for (const [args, message, command] of cases) {
    const r = await cli(args)
    assert.deepEqual(r, { code: 2, signal: null, stdout: "", stderr: `${message}\n${usage(command)}` }, args.join(" "))
  }
})
