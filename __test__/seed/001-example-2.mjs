import assert from "node:assert"
import fs from "node:fs"
import path from "node:path"
import { listMcpTools } from "toolnexus"

const serverScript = `
import { buildMcpServer, defineTool } from "toolnexus"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
const tools = ["a", "b", "c"].map((n) => defineTool({ name: n, description: n, run: () => n }))
const server = buildMcpServer(tools, { name: "docs-demo" })
await server.connect(new StdioServerTransport())
`
const scriptPath = path.resolve(process.cwd(), "js", `_docs_mcp_list_demo_${Date.now()}.mjs`)
fs.writeFileSync(scriptPath, serverScript)

try {
  const inv = await listMcpTools({
    // A `tools` allowlist here narrows what loadMcp would expose — listMcpTools ignores it.
    srv: { type: "local", command: ["node", scriptPath], tools: { a: true } },
    bad: { type: "local", command: ["node", "/no/such/script.mjs"] },
  })

  assert.deepEqual(inv.tools.srv.map((t) => t.name).sort(), ["a", "b", "c"], "unfiltered, original names")
  assert.equal(inv.status.srv, "connected")
  assert.equal(inv.status.bad, "failed")
  assert.equal(inv.tools.bad, undefined, "a failed server contributes no entry")

  console.log("ok:", inv.tools.srv.map((t) => t.name).join(","), "|", JSON.stringify(inv.status))
} finally {
  fs.rmSync(scriptPath, { force: true })
}
