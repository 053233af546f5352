// A hostile client of a served toolkit, its every request drawn from a seed: broken JSON,
// batches, giant bodies, unknown methods and tools, random arguments, wrong or missing session
// ids and headers, streams opened and dropped, stray cancellations, half-sent requests and
// garbage bytes on a raw socket. It checks what it can see: every request is answered (or the
// connection closed) within a bound, with an HTTP status, and no answer names a Rust type.
import net from "node:net"
import { rng } from "./rng.mjs"
import { leaksInternals } from "./checks.mjs"

const ANSWER_BOUND = 10000

export async function runHostileClient(url, seed) {
  const r = rng(seed)
  const problems = []
  const { hostname, port, pathname } = new URL(url)
  let session
  let version = "2025-11-25"

  const post = async (body, { headers = {}, accept = "application/json, text/event-stream", keepStream = true } = {}) => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), ANSWER_BOUND)
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept, ...(session ? { "mcp-session-id": session } : {}), "mcp-protocol-version": version, ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
        signal: controller.signal,
      })
      // A stream may stay open by design (an SSE answer, a GET): read what comes within a bound.
      const text = keepStream ? await res.text() : ""
      if (leaksInternals(text)) problems.push(`answer names an internal type: ${text.slice(0, 300)}`)
      return { status: res.status, headers: res.headers, text }
    } catch (err) {
      if (controller.signal.aborted) problems.push(`no answer within ${ANSWER_BOUND} ms to ${String(typeof body === "string" ? body : JSON.stringify(body)).slice(0, 120)}`)
      return { status: 0, text: "", error: err }
    } finally {
      clearTimeout(timer)
    }
  }

  const raw = (bytes, { end = true, hold = 0 } = {}) => new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname)
    const timer = setTimeout(() => { socket.destroy(); resolve() }, hold || ANSWER_BOUND)
    socket.on("error", () => {})
    socket.on("close", () => { clearTimeout(timer); resolve() })
    socket.on("data", (d) => { if (leaksInternals(String(d))) problems.push(`raw answer names an internal type: ${String(d).slice(0, 200)}`) })
    socket.write(bytes)
    if (end) socket.end()
  })

  if (r.chance(0.8)) {
    version = r.pick(["2025-11-25", "2025-06-18", "2025-03-26"])
    const init = await post({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: version, capabilities: r.chance(0.8) ? {} : r.value(2), clientInfo: { name: "hostile", version: "1" } } })
    session = init.headers?.get("mcp-session-id") ?? undefined
    if (r.chance(0.9)) await post({ jsonrpc: "2.0", method: "notifications/initialized" })
  }
  const tools = ["fz_echo", "fz_slow", "nope", r.string()]
  const steps = r.pick([1, 5, 20])
  for (let i = 1; i <= steps; i++) {
    switch (r.weighted({ call: 6, method: 2, badJson: 1, batch: 1, big: 1, session: 1, headers: 1, stream: 1, cancel: 1, delete: 1, rawHalf: 1, rawGarbage: 1 })) {
      case "call": await post({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: r.pick(tools), arguments: r.chance(0.7) ? { text: r.string(), ms: r.int(50) } : r.value(2), ...(r.chance(0.2) ? { _meta: { progressToken: r.value(0) } } : {}) } }); break
      case "method": await post({ jsonrpc: "2.0", id: r.chance(0.8) ? i : r.value(1), method: r.pick(["tools/list", "ping", "resources/list", "prompts/list", "logging/setLevel", "completion/complete", "initialize", "server/discover", r.string()]), params: r.value(2) }); break
      case "badJson": await post(r.pick(["{", "[]", "null", "\"x\"", "{\"jsonrpc\":\"2.0\"}", "\u0000", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}"])); break
      case "batch": await post(Array.from({ length: r.pick([0, 2, 50]) }, (_, k) => ({ jsonrpc: "2.0", id: 1000 + k, method: "tools/call", params: { name: "fz_echo", arguments: { text: "b" } } }))); break
      case "big": await post(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"fz_echo","arguments":{"text":"${"x".repeat(r.pick([1 << 20, 8 << 20]))}"}}}`); break
      case "session": { const saved = session; session = r.pick(["", "nope", "x".repeat(10000), undefined]); await post({ jsonrpc: "2.0", id: i, method: "tools/list" }); session = saved; break }
      case "headers": await post({ jsonrpc: "2.0", id: i, method: "tools/list" }, { accept: r.pick(["", "text/html", "*/*", "text/event-stream"]), headers: r.chance(0.5) ? { "mcp-protocol-version": r.pick(["1999-01-01", "", "2026-07-28"]) } : { "content-type": r.pick(["text/plain", ""]) } }); break
      case "stream": {
        const controller = new AbortController()
        const opened = fetch(url, { method: "GET", headers: { accept: "text/event-stream", ...(session ? { "mcp-session-id": session } : {}) }, signal: controller.signal }).then((res) => res.status, () => 0)
        setTimeout(() => controller.abort(), r.int(200))
        await opened
        break
      }
      case "cancel": await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: r.value(0), reason: r.string() } }); break
      case "delete": await fetch(url, { method: "DELETE", headers: session ? { "mcp-session-id": session } : {} }).catch(() => {}); if (r.chance(0.5)) session = undefined; break
      case "rawHalf": await raw(`POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"jsonrpc"`, { end: false, hold: r.int(300) + 1 }); break
      default: await raw(r.pick([Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff]), `GET / HTTP/1.1\r\nhost: ${"h".repeat(20000)}\r\n\r\n`, "\r\n\r\n\r\n", `POST ${pathname} HTTP/1.1\r\ntransfer-encoding: chunked\r\nhost: x\r\n\r\nzz\r\n`]), { hold: 2000 })
    }
  }
  if (session && r.chance(0.5)) await fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } }).catch(() => {})
  return problems
}
