// Why the benchmarks use a raw JSON-RPC Python server: the floor client's 2000 sequential calls
// against bench/servers/raw_server.py and against the same tool on the official Python `mcp`
// SDK (bench/servers/mcp_server.py), alternating. The SDK server's own cost per call would
// dwarf every client difference.
import path from "node:path"
import { alternate, FloorClient, PYTHON, root, serverCommand } from "./lib.mjs"

const CALLS = 2000
const raw = await FloorClient.connect(serverCommand())
const sdk = await FloorClient.connect([PYTHON, path.join(root, "bench", "servers", "mcp_server.py")])
const calls = (client) => async () => {
  for (let i = 0; i < CALLS; i++) {
    const { result, error } = await client.callTool("echo", { message: "m" })
    if (error || result.isError) throw new Error(JSON.stringify(error ?? result))
  }
}
await calls(raw)()
await calls(sdk)()
const t = await alternate(5, { raw: calls(raw), sdk: calls(sdk) })
console.log(`floor client, ${CALLS} sequential calls: raw server ${t.raw.toFixed(1)} ms, Python mcp SDK server ${t.sdk.toFixed(1)} ms (${(t.sdk / t.raw).toFixed(1)}x)`)
await raw.close()
await sdk.close()
