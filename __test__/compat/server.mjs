// buildMcpServer over this process's own stdin/stdout (with --toolkit: createToolkit's
// serveStdio), run by the runtime under test: the compatibility suite loads it with loadMcp.
// Tools: add {a, b}, and whoami (the runtime).
import { runtime, toolnexus } from "./lib.mjs"

const { buildMcpServer, createToolkit, defineTool } = toolnexus
const add = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  run: ({ a, b }) => String(a + b),
})
const whoami = defineTool({ name: "whoami", description: "The runtime serving", run: () => runtime })
const mcp = { name: "compat", version: "1.2.3" }
if (process.argv.includes("--toolkit")) {
  const toolkit = await createToolkit({ extraTools: [add, whoami] })
  await toolkit.serveStdio({ mcp })
  await toolkit.close()
} else {
  await buildMcpServer([add, whoami], mcp).connect()
}
