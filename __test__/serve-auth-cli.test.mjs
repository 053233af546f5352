// Serving with auth out of process (issue 22): the refusal to serve a non-loopback address
// without auth (in a network namespace of its own), and `toolnexus serve --auth-token-env/-file,
// --auth-file, --no-auth`, with no token in any output.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { nodeFixture, deferredCleanup, repoRoot, tmpConfig, tmpFile } from "./helpers.mjs"
import { assertNoSecret, bearerSdkClient, mcpPost, startCli } from "./lib/gateway.mjs"
import { TOKEN_A, TOKEN_B, call } from "./lib/serve-auth.mjs"

const defer = deferredCleanup(afterEach)
const T = { timeout: 90_000 }

const LOOPBACK_MESSAGE =
  'toolnexus: serving on 0.0.0.0:8080 (not a loopback address) needs auth: { tokens } or { oauth }, or auth: "none" to let anyone who can reach it use every tool (--no-auth on the CLI)'

/** Runs `node --input-type=module -e code` in a network namespace of its own (lo up only). */
function inNetns(code, env = {}) {
  return new Promise((resolve) => {
    execFile(
      "unshare",
      ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "x", process.execPath, "--input-type=module", "-e", code],
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }),
    )
  })
}

test("a non-loopback bind needs auth: refused without it, served with tokens or an explicit auth: \"none\" (in a network namespace)", T, async () => {
  const index = JSON.stringify(path.join(repoRoot, "index.mjs"))
  const code = `
    const { createToolkit, defineTool } = await import(${index})
    const tk = await createToolkit({ builtins: false, extraTools: [defineTool({ name: "t", description: "t", run: () => "t" })] })
    const out = {}
    const cases = { missing: { allowedHosts: ["*"] }, none: { allowedHosts: ["*"], auth: "none" }, tokens: { allowedHosts: ["*"], auth: { tokens: [process.env.TN_NS_TOKEN] } } }
    for (const [name, opts] of Object.entries(cases)) {
      try {
        const h = await tk.serve("0.0.0.0:8080", opts)
        const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ns", version: "1" } } }
        const post = (headers) => fetch("http://127.0.0.1:8080/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(init) }).then((r) => r.status)
        out[name] = { served: true, anonymous: await post({}), withToken: await post({ authorization: "Bearer " + process.env.TN_NS_TOKEN }) }
        await h.stop()
      } catch (e) {
        out[name] = { served: false, type: e.constructor.name, message: e.message }
      }
    }
    await tk.close()
    console.log(JSON.stringify(out))`
  const run = await inNetns(code, { TN_NS_TOKEN: TOKEN_A })
  assert.equal(run.code, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  assert.equal(out.missing.served, false)
  assert.equal(out.missing.message, LOOPBACK_MESSAGE)
  assert.deepEqual(out.none, { served: true, anonymous: 200, withToken: 200 })
  assert.deepEqual(out.tokens, { served: true, anonymous: 401, withToken: 200 })
  assertNoSecret(run.stdout + run.stderr, [TOKEN_A], "the namespaced run")

  // The CLI: refused (exit 1) with the same words; --no-auth serves.
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const prefix = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "x"]
  const refused = startCli(defer, ["serve", config, "--addr", "0.0.0.0:8080", "--allowed-hosts", "*"], { prefix })
  const end = await refused.exited
  assert.equal(end.code, 1, end.stderr)
  assert.ok(end.stderr.includes(LOOPBACK_MESSAGE), end.stderr)
  const open = startCli(defer, ["serve", config, "--addr", "0.0.0.0:8080", "--allowed-hosts", "*", "--no-auth"], { prefix })
  await open.serving
  open.child.kill("SIGTERM")
  assert.equal((await open.exited).code, 0)
})

test("toolnexus serve --auth-token-env / --auth-token-file: tokens never in argv or output; bad token sources are exit 2", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add") } } })
  const file = tmpFile("tokens.txt")
  const FILE_X = "tn-file-x-93ab71c2e4d5"
  const FILE_Y = "tn-file-y-1d2e3f4a5b6c"
  fs.writeFileSync(file, `# the gateway's tokens\n${FILE_X}\n\n#${FILE_Y}-commented\n${FILE_Y}\n`)
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--auth-token-env", "TN_TOKEN_ONE", "--auth-token-env", "TN_TOKEN_TWO", "--auth-token-file", file, "--access-log"], {
    env: { TN_TOKEN_ONE: TOKEN_A, TN_TOKEN_TWO: TOKEN_B },
  })
  const url = await gw.serving
  // The servers it started never see its tokens in their environment (--auth-token-env
  // removes the variable once read).
  const tasks = fs.readdirSync(`/proc/${gw.child.pid}/task`)
  const children = tasks.flatMap((t) => fs.readFileSync(`/proc/${gw.child.pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
  assert.ok(children.length >= 1, "the config's server runs")
  for (const pid of children) assertNoSecret(fs.readFileSync(`/proc/${pid}/environ`, "utf8"), [TOKEN_A, TOKEN_B], `the environment of server ${pid}`)
  const cmdline = fs.readFileSync(`/proc/${gw.child.pid}/cmdline`, "utf8")
  assertNoSecret(cmdline, [TOKEN_A, TOKEN_B, FILE_X, FILE_Y], "argv")
  assert.equal((await mcpPost(url)).status, 401)
  for (const token of [TOKEN_A, TOKEN_B, FILE_X, FILE_Y]) assert.equal((await mcpPost(url, { token })).status, 200, token)
  for (const token of ["# the gateway's tokens", `#${FILE_Y}-commented`, "", "wrong"]) assert.equal((await mcpPost(url, { token })).status, 401, token)
  const { client } = await bearerSdkClient(defer, url, FILE_Y)
  assert.deepEqual((await client.callTool({ name: "up_add", arguments: { a: 20, b: 22 } })).content, [{ type: "text", text: "42" }])
  await client.close()
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  const log = end.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
  const keys = ["http", "method", "ms", "path", "principal", "status", "time"]
  assert.ok(log.length >= 10, end.stderr)
  for (const e of log) {
    const own = [...keys, ...(e.tool === undefined ? [] : ["tool"]), ...(e.error === undefined ? [] : ["error"])].sort()
    assert.deepEqual(Object.keys(e).sort(), own, JSON.stringify(e))
  }
  assert.ok(log.some((e) => e.method === "tools/call" && e.tool === "up_add" && e.status === 200 && typeof e.principal === "string"), end.stderr)
  assertNoSecret(end.stdout + end.stderr, [TOKEN_A, TOKEN_B, FILE_X, FILE_Y], "toolnexus serve's output")

  // Bad sources: exit 2 before serving, naming the problem, never the contents.
  const empty = tmpFile("empty.txt")
  fs.writeFileSync(empty, "# nothing here\n\n")
  const absent = tmpFile("absent.txt")
  const usage = "Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]\nRun `toolnexus serve --help` for details.\n"
  for (const [args, env, message] of [
    [["--auth-token-file", empty], {}, `toolnexus serve: --auth-token-file ${empty} holds no token (one per line; blank lines and # comments are ignored)\n`],
    [["--auth-token-file", absent], {}, `toolnexus serve: cannot read --auth-token-file ${absent}: no such file\n`],
    [["--no-auth", "--auth-token-env", "TN_TOKEN_ONE"], { TN_TOKEN_ONE: TOKEN_A }, `toolnexus serve: --no-auth cannot be combined with --auth-token-env\n${usage}`],
    [["--no-auth", "--oauth-issuer", "https://idp.example.com"], {}, `toolnexus serve: --no-auth cannot be combined with --oauth-issuer\n${usage}`],
  ]) {
    const bad = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", ...args], { env })
    const r = await bad.exited
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stdout, "")
    assert.equal(r.stderr, message)
  }
})

test("toolnexus serve --auth-file: tokens with subjects and scopes, and the per-scope tool policy", T, async () => {
  const config = tmpConfig({ mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", "add,read_a,write_a") } } })
  const OPS = "tn-ops-4c5d6e7f8a9b"
  const VIEWER = "tn-viewer-0f1e2d3c4b5a"
  const authFile = tmpConfig(
    { tokens: [{ token: OPS, subject: "ops", scopes: ["admin"] }, { token: VIEWER, subject: "viewer", scopes: ["read"] }], tools: { admin: ["*"], read: ["up_read_*"], "*": ["up_add"] } },
    { name: "auth.json" },
  )
  const gw = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--auth-file", authFile])
  const url = await gw.serving
  const viewer = (await bearerSdkClient(defer, url, VIEWER)).client
  assert.deepEqual((await viewer.listTools()).tools.map((t) => t.name), ["up_add", "up_read_a"])
  await assert.rejects(viewer.callTool({ name: "up_write_a", arguments: {} }), (err) => err.code === -32602 && /Unknown tool: up_write_a/.test(err.message))
  const ops = (await bearerSdkClient(defer, url, OPS)).client
  assert.deepEqual((await ops.listTools()).tools.map((t) => t.name), ["up_add", "up_read_a", "up_write_a"])
  assert.deepEqual((await ops.callTool({ name: "up_write_a", arguments: {} })).content, [{ type: "text", text: "write_a" }])
  await viewer.close()
  await ops.close()
  gw.child.kill("SIGTERM")
  const end = await gw.exited
  assert.equal(end.code, 0, end.stderr)
  assertNoSecret(end.stdout + end.stderr, [OPS, VIEWER], "toolnexus serve's output")
})
