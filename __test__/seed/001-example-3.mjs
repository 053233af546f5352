import assert from "node:assert"
import fs from "node:fs"
import path from "node:path"
import { listMcpTools } from "toolnexus"

const serverScript = `
import { buildMcpServer, defineTool } from "toolnexus"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
const tools = [
  defineTool({
    name: "search",
    description: "Search the docs",
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    run: ({ q }) => "results for " + q,
  }),
]
const server = buildMcpServer(tools, { name: "docs-demo" })
await server.connect(new StdioServerTransport())
`
const scriptPath = path.resolve(process.cwd(), "js", `_docs_mcp_list_full_demo_${Date.now()}.mjs`)
fs.writeFileSync(scriptPath, serverScript)

try {
  const inv = await listMcpTools(
    { srv: { type: "local", command: ["node", scriptPath] } },
    { signal: AbortSignal.timeout(10_000) },
  )

  const info = inv.tools.srv[0]
  assert.equal(info.name, "search")
  assert.equal(info.description, "Search the docs")
  assert.deepEqual(info.inputSchema.required, ["q"])
  assert.equal(inv.status.srv, "connected")

  console.log("ok:", info.name, JSON.stringify(info.inputSchema))
} finally {
  fs.rmSync(scriptPath, { force: true })
}
