// Compiled (never run) with no ambient types at all (`types: []`, `skipLibCheck: false`): a
// consumer without @types/node, or one that lists only its own types, can still import the
// package's public types (index.d.ts and binding.d.ts) without an error in them.
import { createToolkit, defineTool, listMcpTools, loadMcp, type McpSource, type ServeOptions, type ToolInfo } from "toolnexus"

export async function consumer(): Promise<string[]> {
  const inventory = await listMcpTools({ mcpServers: {} })
  const source: McpSource = await loadMcp({ mcpServers: {} })
  const info: ToolInfo[] = Object.values(inventory.tools).flat()
  const tool = defineTool({ name: "x", description: "x", inputSchema: { type: "object" }, run: () => "ok" })
  const tk = await createToolkit({ mcpConfig: { mcpServers: {} }, extraTools: [tool] })
  const options: ServeOptions = { stateKey: [new Uint8Array(32)] }
  const served = await tk.serve("127.0.0.1:0", options)
  await served.stop()
  await source.close()
  return [...info.map((t) => t.name), tool.name]
}
