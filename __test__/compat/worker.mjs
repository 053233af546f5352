// A worker thread of the compatibility suite: loads a stdio server, calls it in sequence and
// concurrently, reports, and closes (or, with `leave`, leaves a call in flight and ends).
import { parentPort, workerData } from "node:worker_threads"
import { toolnexus } from "./lib.mjs"

const source = await toolnexus.loadMcp({ mcpServers: { w: workerData.server } })
const echo = source.tools.find((t) => t.name === "w_echo")
const outputs = []
for (let i = 0; i < 20; i++) outputs.push((await echo.execute({ text: `s${i}` })).output)
const together = await Promise.all(Array.from({ length: 50 }, (_, i) => echo.execute({ text: `c${i}` })))
outputs.push(...together.map((r) => r.output))
if (workerData.leave) {
  source.tools.find((t) => t.name === "w_sleep").execute({ ms: 30000 })
  parentPort.postMessage({ status: source.status, outputs })
} else {
  await source.close()
  parentPort.postMessage({ status: source.status, outputs })
}
