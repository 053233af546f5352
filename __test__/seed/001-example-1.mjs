import assert from "node:assert"
import { listMcpTools } from "toolnexus"

const inv = await listMcpTools({
  search: { type: "remote", url: "https://example.com/mcp", enabled: false },
})

assert.deepEqual(inv.status, { search: "disabled" })
assert.deepEqual(inv.tools, {})

console.log("ok:", JSON.stringify(inv.status))
