// The load generator for the served benchmarks, run as its own process so that it does not share
// an event loop with the server under test:
//
//   node bench/load.mjs <url> <tool> <clients> <seconds> [warmupSeconds]
//
// Each client is a session as a real client makes one (initialize, notifications/initialized,
// then `tools/call` with its Mcp-Session-Id, accepting JSON or SSE answers), calling in a loop
// on a keep-alive connection of its own. Prints {requests, seconds, rps, p50, p99} as JSON.
import http from "node:http"

const [url, tool, clientsArg, secondsArg, warmupArg] = process.argv.slice(2)
const clients = Number(clientsArg)
const seconds = Number(secondsArg)
const warmup = Number(warmupArg ?? 0.5)
const target = new URL(url)
const agent = new http.Agent({ keepAlive: true, maxSockets: clients })

function post(body, session) {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
  }
  if (session) headers["mcp-session-id"] = session
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method: "POST", agent, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(JSON.stringify(body))
  })
}

/** The JSON-RPC answer with `id` in a JSON or SSE body. */
function answer(res, id) {
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`)
  const messages = res.headers["content-type"]?.startsWith("text/event-stream")
    ? res.text.split(/\r?\n/).filter((l) => l.startsWith("data:") && l.slice(5).trim()).map((l) => JSON.parse(l.slice(5)))
    : [JSON.parse(res.text)]
  const found = messages.find((m) => m.id === id)
  if (!found) throw new Error(`no answer to ${id} in ${res.text.slice(0, 200)}`)
  if (found.error) throw new Error(JSON.stringify(found.error))
  return found.result
}

async function session() {
  const init = await post({
    jsonrpc: "2.0", id: 0, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "load", version: "1.0.0" } },
  })
  answer(init, 0)
  const id = init.headers["mcp-session-id"]
  const ack = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, id)
  if (ack.status !== 202) throw new Error(`notifications/initialized: HTTP ${ack.status}`)
  return id
}

const sessions = await Promise.all(Array.from({ length: clients }, session))
let phase = "warmup"
const latencies = []
let next = 1
async function loop(sessionId) {
  while (phase !== "done") {
    const id = next++
    const t0 = performance.now()
    const res = await post({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: { message: "m" } } }, sessionId)
    const result = answer(res, id)
    if (result.isError) throw new Error(JSON.stringify(result))
    if (phase === "measure") latencies.push(performance.now() - t0)
  }
}
const loops = sessions.map(loop)
await new Promise((r) => setTimeout(r, warmup * 1000))
phase = "measure"
const t0 = performance.now()
await new Promise((r) => setTimeout(r, seconds * 1000))
phase = "done"
const elapsed = (performance.now() - t0) / 1000
await Promise.all(loops)
await Promise.all(sessions.map((id) => new Promise((resolve) => {
  const req = http.request(target, { method: "DELETE", agent, headers: { "mcp-session-id": id } }, (res) => res.resume().on("end", resolve))
  req.on("error", resolve)
  req.end()
})))
agent.destroy()
latencies.sort((a, b) => a - b)
const pick = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]
console.log(JSON.stringify({ requests: latencies.length, seconds: elapsed, rps: latencies.length / elapsed, p50: pick(0.5), p99: pick(0.99) }))
