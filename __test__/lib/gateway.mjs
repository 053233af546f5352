// What the serving-auth tests (serve-auth-*, serve-oauth-*) share besides the authorisation
// server (lib/idp.mjs): a challenge parser, a raw MCP POST with a bearer token, an SDK client with
// one, a gateway toolkit over a real stdio server, and `toolnexus serve` as a subprocess.
import path from "node:path"
import { spawn } from "node:child_process"
import { createToolkit, defineTool } from "toolnexus"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { nodeFixture, repoRoot } from "../helpers.mjs"
import { INIT, sseData } from "./serve.mjs"

/** `WWW-Authenticate: Bearer k="v", …` → { scheme, params } (null when the header is absent). */
export function challenge(header) {
  if (header === null || header === undefined) return null
  const scheme = /^\s*(\S+)/.exec(header)[1]
  const params = {}
  for (const m of header.slice(header.indexOf(scheme) + scheme.length).matchAll(/([A-Za-z_]+)="((?:[^"\\]|\\.)*)"/g))
    params[m[1]] = m[2].replaceAll(/\\(.)/g, "$1")
  return { scheme, params }
}

/**
 * POSTs `body` (an object; default an initialize) to `url + path` with `Authorization: Bearer
 * token` (unless `token` is undefined; `authorization` sets the header verbatim). Resolves
 * { status, headers, text, json } (json: the body parsed as JSON or as one SSE message, or null).
 */
export async function mcpPost(url, { token, authorization, body = INIT, headers = {}, path = "/mcp", method = "POST" } = {}) {
  const h = { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
  if (authorization !== undefined) h.authorization = authorization
  else if (token !== undefined) h.authorization = `Bearer ${token}`
  const res = await fetch(`${url}${path}`, { method, headers: h, body: method === "POST" ? JSON.stringify(body) : undefined })
  const text = await res.text()
  const type = res.headers.get("content-type") ?? ""
  let json = null
  try {
    json = type.startsWith("text/event-stream") ? JSON.parse(sseData(text)[0]) : JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, text, json }
}

/** An SDK client of `url + "/mcp"` sending `Authorization: Bearer token`; closed by `defer`. */
export async function bearerSdkClient(defer, url, token, name = "auth-test") {
  const client = new Client({ name, version: "1.0.0" })
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` }
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } })
  defer(() => client.close())
  await client.connect(transport)
  return { client, transport }
}

/** The tools of the stdio upstream the gateway tests serve (plain tools answer their own name). */
export const UPSTREAM_TOOLS = ["add", "read_a", "read_b", "write_a", "admin"]

/**
 * A toolkit over a real stdio MCP server (`up`: __test__/fixtures/stdio-server.mjs with
 * UPSTREAM_TOOLS, so the tools are up_add, up_read_a, …) plus a JS tool `whoami` answering
 * JSON.stringify(ctx.principal ?? null), served on 127.0.0.1:0 with `opts`. Both closed by
 * `defer`. Resolves { tk, handle, url }.
 */
export async function startGateway(defer, opts = {}, { extraServers = {} } = {}) {
  const whoami = defineTool({ name: "whoami", description: "Who is calling", run: (_args, ctx) => JSON.stringify(ctx.principal ?? null) })
  const tk = await createToolkit({
    builtins: false,
    extraTools: [whoami],
    mcpConfig: { mcpServers: { up: { command: nodeFixture("stdio-server", "--tools", UPSTREAM_TOOLS.join(",")) }, ...extraServers } },
  })
  defer(() => tk.close())
  const handle = await tk.serve("127.0.0.1:0", opts)
  defer(() => handle.stop())
  return { tk, handle, url: handle.url }
}

export const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")

/**
 * Runs `toolnexus ...args` (env extended by `env`) under `defer` (killed if still running);
 * `serving` resolves the gateway's base URL from its "serving … at <url>/mcp" line, `exited`
 * { code, signal, stdout, stderr }; `stderr()` is what it wrote so far.
 */
export function startCli(defer, args, { env = {}, prefix = [] } = {}) {
  const argv = [...prefix, process.execPath, BIN, ...args]
  const child = spawn(argv[0], argv.slice(1), { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  const serving = new Promise((resolve, reject) => {
    child.stdout.on("data", () => {
      const m = /serving \d+ tools? at (\S+)\/mcp/.exec(stdout)
      if (m) resolve(m[1])
    })
    child.on("close", (code) => reject(new Error(`toolnexus exited (${code}) before serving; stderr:\n${stderr}`)))
  })
  serving.catch(() => {})
  return { child, serving, exited, stderr: () => stderr, stdout: () => stdout }
}

/** Asserts that none of `secrets` occurs in `text` (what is named in the message: `where`). */
export function assertNoSecret(text, secrets, where) {
  for (const s of secrets) if (s.length > 0 && text.includes(s)) throw new Error(`a token or secret leaked into ${where}: …${s.slice(0, 6)}…`)
}

/**
 * What an MCP client does first, with a bearer token: initialize + notifications/initialized.
 * Resolves the headers later requests carry (session id when one was opened, protocol version).
 */
export async function bearerSession(url, token) {
  const init = await mcpPost(url, { token })
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}: ${init.text}`)
  const headers = { "mcp-protocol-version": init.json.result.protocolVersion }
  const session = init.headers.get("mcp-session-id")
  if (session) headers["mcp-session-id"] = session
  const ack = await mcpPost(url, { token, headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } })
  if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`)
  return headers
}
