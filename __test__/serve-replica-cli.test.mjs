// `toolnexus serve`'s state-key flags (issue 25): --state-key-file (one key a line, the first
// sealing), --state-key-env (read, then removed from the environment the config's servers
// inherit) and --replica-url. A key is never taken from argv and never printed; a bad source is
// exit 2 in words before any server starts.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { deferredCleanup, nodeFixture, readPid, repoRoot, runNode, tmpConfig, tmpDir, tmpFile } from "./helpers.mjs"
import { assertNoSecret, mcpPost, startCli } from "./lib/gateway.mjs"
import { startRedis } from "./lib/redis.mjs"

const T = { timeout: 60000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const defer = deferredCleanup(afterEach)

const KEY_ONE = "sk-SECRET-one-4f2a9c7e1b3d5f60"
const KEY_TWO = "sk-SECRET-two-0a1b2c3d4e5f6789"
const USAGE = "Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]\nRun `toolnexus serve --help` for details.\n"
const ADVICE = "a key must be at least 16 bytes (32 random bytes are best: openssl rand -base64 32)"

const serveCli = (args, { env = {}, cwd = repoRoot } = {}) =>
  runNode(BIN, { args: ["serve", ...args], env: { ...process.env, ...env }, cwd, timeout: 25000 })

/** The environments of `pid`'s child processes. */
function childEnvironments(pid) {
  const tasks = fs.readdirSync(`/proc/${pid}/task`)
  const children = tasks.flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
  return children.map((child) => ({ pid: child, environ: fs.readFileSync(`/proc/${child}/environ`, "utf8") }))
}

test("toolnexus serve: a bad state-key flag is exit 2 in words, before any server starts, never printing a key", T, async () => {
  const dir = tmpDir()
  const file = (name, text) => {
    const p = path.join(dir, name)
    fs.writeFileSync(p, text)
    return p
  }
  const config = file("mcp.json", JSON.stringify({ mcpServers: {} }))
  const blank = file("blank.txt", "# the replicas' key goes here\n\n   \n")
  const empty = file("empty.txt", "")
  const short = file("short.txt", `# rotated in July\n${KEY_ONE}\n\nSECRET-short\n`)
  const many = file("many.txt", Array.from({ length: 17 }, (_, i) => `${KEY_ONE}-${i}`).join("\n"))
  const good = file("good.txt", `${KEY_ONE}\n`)
  const binary = file("binary.key", Buffer.from([0, 1, 2, 255, 254, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]))
  const badBase64 = file("bad-base64.txt", "base64:not*base64\n")
  const shortBase64 = file("short-base64.txt", `base64:${Buffer.alloc(8, 7).toString("base64")}\n`)
  const missing = path.join(dir, "missing.txt")

  const cases = [
    [["--state-key-file", missing], `toolnexus serve: cannot read --state-key-file ${missing}: no such file\n`],
    [["--state-key-file", dir], `toolnexus serve: cannot read --state-key-file ${dir}: it is a folder\n`],
    [["--state-key-file", blank], `toolnexus serve: --state-key-file ${blank} holds no key (one per line, the sealing one first; blank lines and # comments are ignored)\n`],
    [["--state-key-file", empty], `toolnexus serve: --state-key-file ${empty} holds no key (one per line, the sealing one first; blank lines and # comments are ignored)\n`],
    [["--state-key-file", short], `toolnexus serve: --state-key-file ${short}: the key on line 4 is 12 bytes; ${ADVICE}\n`],
    [["--state-key-file", many], "toolnexus serve: the state key holds 17 keys; at most 16 can be in rotation\n"],
    [
      ["--state-key-file", binary],
      `toolnexus serve: --state-key-file ${binary} is not text (one key a line) nor a raw key of exactly 32 bytes (it holds 20 bytes); write the key as text (openssl rand -base64 32 > FILE), as base64:<key in base64> lines, or as 32 raw bytes (head -c 32 /dev/urandom > FILE)\n`,
    ],
    [["--state-key-file", badBase64], `toolnexus serve: --state-key-file ${badBase64}: line 1 says base64: but what follows is not base64\n`],
    [["--state-key-file", shortBase64], `toolnexus serve: --state-key-file ${shortBase64}: the key on line 1 is 8 bytes; ${ADVICE}\n`],
    [["--state-key-env", "TN_KEY_NOT_SET"], "toolnexus serve: --state-key-env TN_KEY_NOT_SET: the environment variable TN_KEY_NOT_SET is not set\n"],
    [["--state-key-env", "TN_KEY_EMPTY"], "toolnexus serve: --state-key-env TN_KEY_EMPTY: the environment variable TN_KEY_EMPTY is empty\n"],
    [["--state-key-env", "TN_KEY_ONE", "--state-key-env", "TN_KEY_SHORT"], `toolnexus serve: --state-key-env TN_KEY_SHORT: the key is 12 bytes; ${ADVICE}\n`],
    [["--state-key-file", good, "--state-key-env", "TN_KEY_ONE"], `toolnexus serve: --state-key-file and --state-key-env cannot be combined (keep every key in one place, the sealing one first)\n${USAGE}`],
    [["--replica-url", "http://10.0.0.5:8808"], `toolnexus serve: --replica-url needs a state key (--state-key-file or --state-key-env)\n${USAGE}`],
    [["--state-key-file", good, "--replica-url", "http://10.0.0.5:8808/mcp"], "toolnexus serve: --replica-url must be an origin with no path, query or fragment (e.g. http://10.0.0.5:8808, not …/mcp), got http://10.0.0.5:8808 with more after it\n"],
    [["--state-key-file", good, "--replica-url", "10.0.0.5:8808"], "toolnexus serve: --replica-url must be an http:// or https:// URL other replicas reach this one at (e.g. http://10.0.0.5:8808), got a string that is not a URL\n"],
    [["--stdio", "--state-key-file", good], `toolnexus serve: --state-key-file is for HTTP serving, not --stdio\n${USAGE}`],
    [["--stdio", "--replica-url", "http://10.0.0.5:8808"], `toolnexus serve: --replica-url is for HTTP serving, not --stdio\n${USAGE}`],
    [["--state-store", "redis://127.0.0.1:6379"], `toolnexus serve: --state-store needs a state key (--state-key-file or --state-key-env)\n${USAGE}`],
    [["--state-key-file", good, "--state-store", `redis://u:${KEY_TWO}@127.0.0.1:6379`], `toolnexus serve: --state-store must not hold a password (the command line is visible to every user of the machine): put the URL in an environment variable and pass --state-store-env NAME\n${USAGE}`],
    [["--state-key-file", good, "--state-store", "http://127.0.0.1:6379"], "toolnexus serve: --state-store must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), got http://\n"],
    [["--state-key-file", good, "--state-store-env", "TN_KEY_NOT_SET"], "toolnexus serve: --state-store-env TN_KEY_NOT_SET: the environment variable TN_KEY_NOT_SET is not set\n"],
    [["--state-key-file", good, "--state-store-env", "TN_STORE_BAD"], "toolnexus serve: --state-store-env TN_STORE_BAD: the URL must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), got http://\n"],
    [["--state-key-file", good, "--state-store", "redis://127.0.0.1", "--state-store-env", "TN_STORE_BAD"], `toolnexus serve: --state-store and --state-store-env cannot be combined\n${USAGE}`],
    [["--stdio", "--state-store", "redis://127.0.0.1"], `toolnexus serve: --state-store is for HTTP serving, not --stdio\n${USAGE}`],
    // A key on argv is impossible by design: there is no such flag, and the value is not echoed.
    [["--state-key", KEY_ONE], `toolnexus serve: Unknown option '--state-key'\n${USAGE}`],
  ]
  const env = { TN_KEY_ONE: KEY_ONE, TN_KEY_EMPTY: " \n", TN_KEY_SHORT: "SECRET-short", TN_STORE_BAD: `http://u:${KEY_TWO}@127.0.0.1` }
  const runs = await Promise.all(cases.map(([args]) => serveCli([config, "--addr", "127.0.0.1:0", ...args], { env })))
  runs.forEach(({ code, stdout, stderr }, i) => {
    const [args, expected] = cases[i]
    assert.deepEqual({ code, stdout, stderr }, { code: 2, stdout: "", stderr: expected }, args.join(" "))
    assertNoSecret(stderr, [KEY_ONE, KEY_TWO, "SECRET-short"], `stderr of ${args[0]}`)
  })

  // A server in the config is never started when the flags are wrong.
  const pidFile = tmpFile("server.pid")
  const withServer = tmpConfig({ mcpServers: { s: { command: nodeFixture("stdio-server", "--tools", "echo"), env: { PID_FILE: pidFile } } } })
  const run = await serveCli([withServer, "--addr", "127.0.0.1:0", "--state-key-file", short])
  assert.equal(run.code, 2)
  assert.equal(readPid(pidFile), null, "the config's server was started")
})

test("toolnexus serve --state-key-env: it serves with the keys, which never reach the config's servers, argv or output", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--stateless", "--state-key-env", "TN_KEY_NEW", "--state-key-env", "TN_KEY_OLD", "--replica-url", "http://127.0.0.1:9/"], {
    env: { TN_KEY_NEW: `  ${KEY_ONE}\n`, TN_KEY_OLD: KEY_TWO },
  })
  const url = await gw.serving
  const environments = childEnvironments(gw.child.pid)
  assert.ok(environments.length >= 1, "the config's server runs")
  for (const { pid, environ } of environments) {
    assertNoSecret(environ, [KEY_ONE, KEY_TWO], `the environment of server ${pid}`)
    assert.ok(!environ.includes("TN_KEY_NEW=") && !environ.includes("TN_KEY_OLD="), `server ${pid} inherited a key variable`)
  }
  assertNoSecret(fs.readFileSync(`/proc/${gw.child.pid}/cmdline`, "utf8"), [KEY_ONE, KEY_TWO], "argv")
  const init = await mcpPost(url)
  assert.equal(init.status, 200, init.text)
  // With a key, the handshake era gets a portable session: its id is sealed (not a local uuid).
  const session = init.headers.get("mcp-session-id")
  assert.match(session ?? "", /^[A-Za-z0-9_-]{100,}$/)
  const res = await mcpPost(url, { headers: { "mcp-protocol-version": init.json.result.protocolVersion, "mcp-session-id": session }, body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "up_add", arguments: { a: 20, b: 22 } } } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.json.result.content, [{ type: "text", text: "42" }])
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  assertNoSecret(end.stdout + end.stderr, [KEY_ONE, KEY_TWO], "toolnexus serve's output")
})

test("toolnexus serve --state-key-file: keys one a line (comments and blank lines skipped) serve", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const keys = tmpFile("state-keys.txt")
  fs.writeFileSync(keys, `# sealing key first\r\n${KEY_ONE}\r\n\r\n${KEY_TWO}\r\n`)
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--stateless", "--state-key-file", keys])
  const url = await gw.serving
  assert.equal((await fetch(`${url}/healthz`)).status, 200)
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  assertNoSecret(end.stdout + end.stderr, [KEY_ONE, KEY_TWO], "toolnexus serve's output")
})

test("toolnexus serve --state-key-file: a raw 32-byte key file and the same key as a base64: line are one key", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  // Bytes that are not text, a newline and a NUL among them (a text reading would mangle them).
  const raw = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 10) % 256))
  raw[3] = 0
  const rawFile = tmpFile("raw.key")
  fs.writeFileSync(rawFile, raw)
  const b64File = tmpFile("b64.txt")
  fs.writeFileSync(b64File, `# the same key\nbase64:${raw.toString("base64")}\n`)
  const a = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--state-key-file", rawFile])
  const b = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--state-key-file", b64File])
  const [urlA, urlB] = await Promise.all([a.serving, b.serving])
  // A session sealed by one replica opens on the other: they hold the same key.
  const init = await mcpPost(urlA)
  assert.equal(init.status, 200, init.text)
  const headers = { "mcp-protocol-version": init.json.result.protocolVersion, "mcp-session-id": init.headers.get("mcp-session-id") }
  await mcpPost(urlA, { headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } })
  const res = await mcpPost(urlB, { headers, body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "up_add", arguments: { a: 40, b: 2 } } } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.json.result.content, [{ type: "text", text: "42" }])
  for (const gw of [a, b]) {
    gw.child.kill("SIGTERM")
    assert.equal((await gw.exited).code, 0)
  }
})

test("toolnexus serve --state-store-env: the store's URL and password come from the environment, never reach the servers, argv, output or /readyz", T, async () => {
  const PASSWORD = "redis-SECRET-pw-5e6f7a8b"
  const redis = await startRedis(defer, ["--requirepass", PASSWORD])
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const withPassword = `redis://:${PASSWORD}@127.0.0.1:${redis.port}/0`
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--state-key-env", "TN_KEY_NEW", "--state-store-env", "TN_STORE"], {
    env: { TN_KEY_NEW: KEY_ONE, TN_STORE: ` ${withPassword}\n` },
  })
  const url = await gw.serving
  for (const { pid, environ } of childEnvironments(gw.child.pid)) {
    assertNoSecret(environ, [PASSWORD, KEY_ONE], `the environment of server ${pid}`)
    assert.ok(!environ.includes("TN_STORE="), `server ${pid} inherited the store variable`)
  }
  assertNoSecret(fs.readFileSync(`/proc/${gw.child.pid}/cmdline`, "utf8"), [PASSWORD], "argv")
  const ready = await (await fetch(`${url}/readyz`)).json()
  assert.deepEqual({ url: ready.store?.url, status: ready.store?.status }, { url: `redis://127.0.0.1:${redis.port}/0`, status: "ok" }, JSON.stringify(ready))
  const init = await mcpPost(url)
  assert.equal(init.status, 200, init.text)
  const headers = { "mcp-protocol-version": init.json.result.protocolVersion, "mcp-session-id": init.headers.get("mcp-session-id") }
  const res = await mcpPost(url, { headers, body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "up_add", arguments: { a: 20, b: 22 } } } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.json.result.content, [{ type: "text", text: "42" }])
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  assertNoSecret(end.stdout + end.stderr, [PASSWORD, KEY_ONE], "toolnexus serve's output")
})

test("toolnexus serve --help names the state-key flags", T, async () => {
  const { code, stdout } = await serveCli(["--help"], { cwd: tmpDir() })
  assert.equal(code, 0)
  for (const flag of ["[--state-key-file PATH | --state-key-env NAME…] [--replica-url URL]", "  --state-key-file PATH\n", "  --state-key-env NAME\n", "  --replica-url URL ", "[--state-store URL | --state-store-env NAME]", "  --state-store URL ", "  --state-store-env NAME\n"]) {
    assert.ok(stdout.includes(flag), flag)
  }
})
