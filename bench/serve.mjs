// The served endpoint, side by side in one run: a toolkit served by toolnexus (a JavaScript
// tool, and a gateway tool forwarded to a stdio server inside Rust) against the MCP TypeScript
// SDK's own McpServer on its StreamableHTTPServerTransport, all driven by the SDK client over
// loopback HTTP. Reported per request, as ratios to the SDK server.
//
//   npm run build && node bench/serve.mjs
//   BASELINE=/path/to/another/checkout node bench/serve.mjs   # also an older build, same run
import http from "node:http"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { randomUUID } from "node:crypto"
import { z } from "zod"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const fixture = path.join(root, "__test__", "fixtures", "stdio-server.mjs")
const CALLS = Number(process.env.BENCH_CALLS ?? 2000)
const WARM = Number(process.env.BENCH_WARM ?? 500)
const BURST = 200

async function toolnexusServer(dir) {
  const tn = await import(pathToFileURL(path.join(dir, "index.js")).href)
  const add = tn.defineTool({
    name: "add",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    run: ({ a, b }) => String(a + b),
  })
  const toolkit = await tn.createToolkit({
    mcpConfig: { up: { command: ["node", fixture, "--tools", "add"] } },
    extraTools: [add],
  })
  const handle = await toolkit.serve("127.0.0.1:0")
  return {
    url: `${handle.url}/mcp`,
    tools: { js: "add", gateway: "up_add" },
    close: async () => {
      await handle.stop()
      await toolkit.close()
    },
  }
}

async function sdkServer() {
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
      })
      const server = new McpServer({ name: "sdk", version: "1.0.0" })
      server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
        content: [{ type: "text", text: String(a + b) }],
      }))
      await server.connect(transport)
    }
    await transport.handleRequest(req, res, body)
  })
  await new Promise((r) => httpServer.listen(0, "127.0.0.1", r))
  return {
    url: `http://127.0.0.1:${httpServer.address().port}/mcp`,
    tools: { js: "add" },
    close: async () => {
      for (const t of transports.values()) await t.close()
      httpServer.closeAllConnections()
      await new Promise((r) => httpServer.close(r))
    },
  }
}

async function measure(server, tool) {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
  const call = () => client.callTool({ name: tool, arguments: { a: 1, b: 2 } })
  for (let i = 0; i < WARM; i++) await call()
  const samples = []
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now()
    await call()
    samples.push(performance.now() - t0)
  }
  samples.sort((a, b) => a - b)
  const t0 = performance.now()
  await Promise.all(Array.from({ length: BURST }, call))
  const burst = (performance.now() - t0) / BURST
  await client.close()
  return {
    median: samples[Math.floor(samples.length / 2)],
    p99: samples[Math.floor(samples.length * 0.99)],
    burst,
  }
}

const variants = [["toolnexus", root]]
if (process.env.BASELINE) variants.push(["baseline", path.resolve(process.env.BASELINE)])

const sdk = await sdkServer()
const reference = await measure(sdk, "add")
await sdk.close()
const rows = [["sdk McpServer, JS tool", reference]]
for (const [name, dir] of variants) {
  const server = await toolnexusServer(dir)
  rows.push([`${name}, JS tool`, await measure(server, server.tools.js)])
  rows.push([`${name}, gateway tool`, await measure(server, server.tools.gateway)])
  await server.close()
}

console.log(`node ${process.version}; SDK client over loopback HTTP; ${CALLS} sequential calls after ${WARM} warm-up, then ${BURST} in flight`)
console.log(`ratio is to the SDK's own server (< 1 means faster)\n`)
for (const [name, r] of rows) {
  console.log(
    `${name.padEnd(28)} median ${r.median.toFixed(3).padStart(7)} ms (${(r.median / reference.median).toFixed(2)}x)   p99 ${r.p99.toFixed(3).padStart(7)} ms   in flight ${r.burst.toFixed(3).padStart(7)} ms/call (${(r.burst / reference.burst).toFixed(2)}x)`,
  )
}
