// file: examples/servers/calc.mjs
// An MCP server of your own over stdio, in a few lines. stdout carries the protocol: no console.log.
import { buildMcpServer, defineTool } from "toolnexus"

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  run: ({ a, b }) => String(a + b),
})

// Serves this process's stdin/stdout; resolves when the input ends.
await buildMcpServer([add], { name: "calc" }).connect()
