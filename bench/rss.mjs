// Prints the resident memory (MB) of this process once `who` holds `n` connected servers:
//   node bench/rss.mjs toolnexus|sdk|floor|bare 50 [toolnexusCheckout]
import path from "node:path"
import { pathToFileURL } from "node:url"
import { serverCommand, FloorClient, root } from "./lib.mjs"

const [who, count, checkout = root] = process.argv.slice(2)
const n = Number(count)
const command = serverCommand()
let close = async () => {}
if (who === "toolnexus") {
  const { loadMcp } = await import(pathToFileURL(path.join(checkout, "index.js")).href)
  const source = await loadMcp(Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, { command }])))
  if (source.tools.length !== 3 * n) throw new Error(JSON.stringify(source.errors))
  close = () => source.close()
} else if (who === "sdk") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js")
  const clients = await Promise.all(Array.from({ length: n }, async () => {
    const client = new Client({ name: "bench", version: "1.0.0" })
    await client.connect(new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore" }))
    await client.listTools()
    return client
  }))
  close = () => Promise.all(clients.map((c) => c.close()))
} else if (who === "floor") {
  const clients = await Promise.all(Array.from({ length: n }, async () => {
    const client = await FloorClient.connect(command)
    await client.listTools()
    return client
  }))
  close = () => Promise.all(clients.map((c) => c.close()))
}
globalThis.gc?.()
console.log((process.memoryUsage().rss / 1e6).toFixed(1))
await close()
