// The main job on the bundled example config: list every server's tools and status.
// Run from the repository root: `npm run demo` (it builds the addon first if needed).
import { listMcpTools } from "toolnexus"

const config = process.argv[2] ?? "examples/mcp.json"
const started = performance.now()
const inventory = await listMcpTools(config, { deadline: 60_000 })
const ms = Math.round(performance.now() - started)

console.log(`${config}: ${Object.keys(inventory.status).length} servers in ${ms} ms\n`)
for (const [server, status] of Object.entries(inventory.status)) {
  const mark = { connected: "✓", failed: "✗", disabled: "–" }[status]
  const detail =
    status === "connected"
      ? `${inventory.tools[server].length} tools`
      : status === "failed"
        ? inventory.errors[server]
        : "disabled"
  console.log(`${mark} ${server}  ${detail}`)
  for (const tool of inventory.tools[server] ?? []) {
    const line = tool.description.split("\n")[0]
    console.log(`    ${tool.name}${line ? `  ${line.slice(0, 70)}` : ""}`)
  }
}
