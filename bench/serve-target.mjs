// One server under test for bench/serve.mjs, in its own process: prints its URL, serves until
// stdin ends. Both kinds serve `echo` (a JavaScript tool) and `up_echo` (a gateway to the raw
// Python stdio server).
//
//   node bench/serve-target.mjs toolnexus [checkoutDir]   # createToolkit(...).serve
//   node bench/serve-target.mjs sdk                       # the SDK's McpServer, one per session
//
// toolnexus only: BENCH_HOOKS=before, BENCH_SERVE_METRICS=1, BENCH_LIMITS=1, and BENCH_STATE=key (a
// stateKey) or BENCH_STATE=store (the same key and stateStore: BENCH_REDIS_URL), see the comments
// below.
import http from "node:http"
import path from "node:path"
import { randomUUID } from "node:crypto"
import { pathToFileURL } from "node:url"
import { root, serverCommand } from "./lib.mjs"

const [kind, dir = root] = process.argv.slice(2)
const upstream = serverCommand()
const echo = ({ message }) => String(message)
/** BENCH_STATE's stateKey: a fixed 32-byte test key (the same on both sides of a comparison). */
const STATE_KEY = Buffer.from("toolnexus-bench-state-key-32-byt", "utf8")

async function toolnexus() {
  const tn = await import(pathToFileURL(path.join(path.resolve(dir), "index.js")).href)
  const tool = tn.defineTool({
    name: "echo",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
    run: echo,
  })
  // BENCH_HOOKS=before: one beforeCall hook that lets every call through, for a hook's cost.
  const hooks = process.env.BENCH_HOOKS === "before" ? { beforeCall: () => undefined } : undefined
  const toolkit = await tn.createToolkit({ mcpConfig: { up: { command: upstream } }, extraTools: [tool], ...(hooks ? { hooks } : {}) })
  if (!toolkit.get("up_echo")) throw new Error(JSON.stringify(toolkit.mcpErrors()))
  // BENCH_SERVE_METRICS=1: /metrics served (durations kept for it), for telemetry's cost.
  const options = process.env.BENCH_SERVE_METRICS === "1" ? { metrics: true } : {}
  // BENCH_STATE=key: a stateKey (portable sessions, sealed state); BENCH_STATE=store: the same key
  // and stateStore: BENCH_REDIS_URL (a shared store, one Redis round trip per session request).
  const state = process.env.BENCH_STATE
  if (state !== undefined && state !== "" && state !== "key" && state !== "store") throw new Error(`BENCH_STATE=${state}: expected key or store`)
  if (state === "key" || state === "store") options.stateKey = STATE_KEY
  if (state === "store") {
    if (!process.env.BENCH_REDIS_URL) throw new Error("BENCH_STATE=store needs BENCH_REDIS_URL (redis://127.0.0.1:<port>)")
    options.stateStore = process.env.BENCH_REDIS_URL
  }
  // BENCH_LIMITS=1: a caller's and the overall rate so high nothing is refused, so each request
  // takes its tokens (with BENCH_STATE=store, from the shared store: one script per request).
  if (process.env.BENCH_LIMITS === "1") {
    const never = { callsPerMinute: 1e9, burst: 1e9 }
    options.limits = { ...never, overall: never }
  }
  const handle = await toolkit.serve("127.0.0.1:0", options)
  return { url: `${handle.url}/mcp`, close: () => toolkit.close() }
}

async function sdk() {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js")
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js")
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js")
  const { z } = await import("zod")
  const up = new Client({ name: "gateway", version: "1.0.0" })
  await up.connect(new StdioClientTransport({ command: upstream[0], args: upstream.slice(1), stderr: "ignore" }))
  const transports = new Map()
  const httpServer = http.createServer(async (req, res) => {
    const chunks = []
    for await (const c of req) chunks.push(c)
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined
    const sid = req.headers["mcp-session-id"]
    let transport = sid ? transports.get(sid) : undefined
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => transports.set(id, transport),
        onsessionclosed: (id) => transports.delete(id),
      })
      const server = new McpServer({ name: "sdk", version: "1.0.0" })
      const inputSchema = { message: z.string() }
      server.registerTool("echo", { inputSchema }, (args) => ({ content: [{ type: "text", text: echo(args) }] }))
      server.registerTool("up_echo", { inputSchema }, (args) => up.callTool({ name: "echo", arguments: args }))
      await server.connect(transport)
    }
    await transport.handleRequest(req, res, body)
  })
  await new Promise((r) => httpServer.listen(0, "127.0.0.1", r))
  return {
    url: `http://127.0.0.1:${httpServer.address().port}/mcp`,
    close: async () => {
      for (const t of transports.values()) await t.close()
      httpServer.closeAllConnections()
      await new Promise((r) => httpServer.close(r))
      await up.close()
    },
  }
}

const server = kind === "sdk" ? await sdk() : await toolnexus()
console.log(server.url)
process.stdin.resume()
process.stdin.on("end", async () => {
  await server.close()
  process.exit(0)
})
