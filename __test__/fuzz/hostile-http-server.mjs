// A hostile streamable-HTTP MCP server on 127.0.0.1, its every answer drawn from a seed: mostly
// the protocol (JSON or an SSE stream, with a session id), and now and then a status of any
// kind, a wrong or missing content type, an SSE stream of garbage or one that never ends, a
// head drip-fed byte by byte, a truncated or over-large body, a redirect, or a dropped
// connection.
import http from "node:http"
import { rng } from "./rng.mjs"

export async function startHostileHttp(seed) {
  const r = rng(seed)
  const wildness = r.pick([0, 0, 0.01, 0.03, 0.1, 0.3])
  const sse = r.chance(0.5)
  const pages = r.pick([1, 2, 5])
  const endless = r.chance(0.1)
  const sockets = new Set()
  const timers = new Set()
  const later = (ms, fn) => {
    const t = setTimeout(() => { timers.delete(t); fn() }, ms)
    timers.add(t)
  }

  const send = (req, res, id, result) => {
    const message = JSON.stringify({ jsonrpc: "2.0", id, result })
    const headers = { "mcp-session-id": r.chance(0.97) ? "s-1" : r.pick(["", "\u00ff", "x".repeat(5000)]) }
    if (!r.chance(wildness)) {
      if (sse) {
        res.writeHead(200, { ...headers, "content-type": "text/event-stream" })
        res.end(`id: 1\ndata:\n\nevent: message\ndata: ${message}\n\n`)
      } else {
        res.writeHead(200, { ...headers, "content-type": "application/json" })
        res.end(message)
      }
      return
    }
    switch (r.int(12)) {
      case 0: return res.writeHead(r.pick([400, 401, 403, 404, 405, 406, 415, 429, 500, 502, 503])).end(r.string())
      case 1: return res.writeHead(401, { "www-authenticate": r.pick(['Bearer resource_metadata="http://127.0.0.1:1/x"', "Bearer", "Basic", r.string()]) }).end()
      case 2: return res.writeHead(200, { "content-type": r.pick(["text/html", "application/octet-stream", ""]) }).end(message)
      case 3: res.writeHead(200, { ...headers, "content-type": "text/event-stream" }); return res.end(`data: ${r.string()}\n\nevent: x\ndata: {\n\n`)
      case 4: res.writeHead(200, { ...headers, "content-type": "text/event-stream" }); res.write(": keep\n\n"); return // never ends
      case 5: { // head drip-fed
        let at = 0
        const head = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${"x-drip: .\r\n".repeat(200)}\r\n`
        const tick = () => { if (!req.socket.destroyed && at < head.length) { req.socket.write(head[at++]); later(50, tick) } }
        return tick()
      }
      case 6: res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": String(message.length + 50) }); res.write(message.slice(0, message.length >> 1)); return req.socket.destroy()
      case 7: res.writeHead(200, { ...headers, "content-type": "application/json" }); return res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"pad":"${"x".repeat(r.pick([1 << 20, 20 << 20]))}"}}`)
      case 8: return res.writeHead(r.pick([301, 302, 307, 308]), { location: r.pick(["/mcp", "http://127.0.0.1:1/mcp", "file:///etc/passwd", ""]) }).end()
      case 9: return req.socket.destroy()
      case 10: res.writeHead(200, { ...headers, "content-type": "application/json" }); return res.end(JSON.stringify(r.value(3)))
      default: res.writeHead(200, { ...headers, "content-type": "application/json" }); return res.end(JSON.stringify({ jsonrpc: "2.0", id, error: r.value(2) }))
    }
  }

  const server = http.createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (c) => { if (body.length < 1 << 20) body += c })
    req.on("end", () => {
      if (req.method === "DELETE") return r.chance(wildness) ? send(req, res, null, {}) : res.writeHead(200).end()
      if (req.method === "GET") return r.chance(0.5) ? res.writeHead(405).end() : send(req, res, null, {})
      let message
      try { message = JSON.parse(body) } catch { return res.writeHead(400).end("bad json") }
      const { id, method, params } = message ?? {}
      if (id === undefined) return res.writeHead(202).end()
      const reply = (result) => (wildness && r.chance(0.1) ? later(r.int(300), () => send(req, res, id, result)) : send(req, res, id, result))
      switch (method) {
        case "initialize":
          return reply({ protocolVersion: params?.protocolVersion ?? "2025-11-25", capabilities: { tools: { listChanged: r.chance(0.5) } }, serverInfo: { name: "hostile-http", version: "1" } })
        case "server/discover":
          // Mostly a handshake-era server that does not know discover; now and then nonsense.
          return r.chance(0.85) ? res.writeHead(r.pick([400, 404])).end() : send(req, res, id, r.value(2))
        case "tools/list": {
          const page = params?.cursor ? Number(String(params.cursor).slice(1)) || 0 : 0
          const tools = Array.from({ length: r.pick([0, 2, 5]) }, (_, i) => ({ name: `h${page}_${i}`, inputSchema: r.chance(0.95) ? { type: "object" } : r.value(1) }))
          const next = endless || page + 1 < pages ? `p${page + 1}` : undefined
          return reply(next ? { tools, nextCursor: next } : { tools })
        }
        case "tools/call":
          return reply({ content: [{ type: "text", text: `called ${params?.name}` }] })
        default:
          return reply({})
      }
    })
  })
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)) })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close: () => new Promise((resolve) => {
      for (const t of timers) clearTimeout(t)
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    }),
  }
}
