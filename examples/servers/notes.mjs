// A small local MCP server for the demo: a notebook with three tools, over stdio.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const notes = new Map()
const server = new McpServer({ name: "notes", version: "1.0.0" })
server.registerTool(
  "add_note",
  { description: "Store a note under a title", inputSchema: { title: z.string(), body: z.string() } },
  async ({ title, body }) => {
    notes.set(title, body)
    return { content: [{ type: "text", text: `saved ${title}` }] }
  },
)
server.registerTool(
  "get_note",
  { description: "Read a note by title", inputSchema: { title: z.string() } },
  async ({ title }) => ({ content: [{ type: "text", text: notes.get(title) ?? "" }] }),
)
server.registerTool("list_notes", { description: "List note titles" }, async () => ({
  content: [{ type: "text", text: [...notes.keys()].join("\n") }],
}))
await server.connect(new StdioServerTransport())
