// A hostile stdio MCP server, its every move drawn from a seed: it mostly speaks the protocol,
// and now and then breaks it in one of the ways real servers do (or worse): garbage and banner
// lines, answers split, late, doubled, with the wrong id or none at all, over-long lines and
// bytes that are not UTF-8, malformed or giant tool listings, cursors that repeat or never
// end, list_changed storms, progress for tokens nobody asked about, requests of its own, and
// exits at any point.
//
// Usage: node hostile-stdio-server.mjs <seed> [pid-file]
import fs from "node:fs"
import { rng } from "./rng.mjs"
import { eachLine } from "../fixtures/lines.mjs"

const seed = Number(process.argv[2])
if (process.argv[3]) fs.writeFileSync(process.argv[3], String(process.pid))
const r = rng(seed)
process.stdout.on("error", () => process.exit(0))

// The server's character, drawn once: how often it misbehaves, and how.
const wildness = r.pick([0, 0, 0.01, 0.03, 0.1, 0.3])
const pages = r.pick([1, 1, 2, 5, 40])
const cursorKind = r.weighted({ plain: 8, repeat: 1, endless: 1 })
const storm = r.chance(0.15)
const slow = r.pick([0, 0, 0, 5, 50, 400])

const write = (text) => process.stdout.write(text)
const line = (message) => write(`${JSON.stringify(message)}\n`)
const answer = (id, result) => line({ jsonrpc: "2.0", id, result })
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function schema() {
  switch (r.weighted({ plain: 6, deep: 1, wide: 1, odd: 2 })) {
    case "deep": {
      let s = { type: "string" }
      for (let i = 0; i < r.pick([10, 200, 2000]); i++) s = { type: "object", properties: { x: s } }
      return s
    }
    case "wide":
      return { type: "object", properties: Object.fromEntries(Array.from({ length: r.pick([100, 2000, 20000]) }, (_, i) => [`p${i}`, { type: "string" }])) }
    case "odd":
      return r.pick([{}, { type: "array" }, { type: "object", properties: r.value(2) }, { $ref: "#/nope" }, { type: "object", required: ["a"], properties: { a: { type: "integer", minimum: 3 } } }])
    default:
      return { type: "object", properties: { text: { type: "string" }, n: { type: "number" } } }
  }
}

function tool(page, i) {
  const t = { name: r.chance(0.9) ? `t${page}_${i}` : r.string(), description: r.chance(0.8) ? `tool ${i}` : r.chance(wildness) ? r.value(1) : undefined, inputSchema: schema() }
  // One broken tool fails its whole listing: break a tool only now and then.
  if (r.chance(wildness / 10)) {
    const breakage = r.int(5)
    if (breakage === 0) delete t.inputSchema
    if (breakage === 1) t.inputSchema = r.value(1)
    if (breakage === 2) t.annotations = r.value(2)
    if (breakage === 3) t.icons = [r.value(1)]
    if (breakage === 4) t.name = r.value(1)
  }
  if (r.chance(0.05)) t.execution = { taskSupport: r.pick(["required", "optional", "forbidden", 7]) }
  return t
}

/** Misbehaves instead of answering `id` with `result` (or answers), as the dice say. */
async function reply(id, result) {
  if (slow) await delay(r.int(slow))
  if (!r.chance(wildness)) return answer(id, result)
  switch (r.int(14)) {
    case 0: return // never answers
    case 1: return write("this is not JSON-RPC\n")
    case 2: { // split in pieces
      const text = `${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`
      const at = r.int(text.length)
      write(text.slice(0, at))
      await delay(r.int(30))
      return write(text.slice(at))
    }
    case 3: return line({ jsonrpc: "2.0", id: typeof id === "number" ? id + 1 : `${id}x`, result })
    case 4: answer(id, result); return answer(id, result)
    case 5: return line({ jsonrpc: "2.0", id, error: { code: r.pick([-32603, -32000, 0, 1e9]), message: r.string() } })
    case 6: return line({ jsonrpc: "2.0", id, error: r.value(2) })
    case 7: return line({ jsonrpc: "2.0", id, result: r.value(2) })
    case 8: return write(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]))
    case 9: return process.exit(r.int(3))
    case 10: { // a line just over the 16 MiB bound, written in pieces
      write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"pad":"`)
      const chunk = "x".repeat(1 << 20)
      for (let i = 0; i < 17; i++) write(chunk)
      return write('"}}\n')
    }
    case 11: line({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: r.pick([id, 0, "nope", 2 ** 40]), progress: r.int(10) } }); return answer(id, result)
    case 12: line({ jsonrpc: "2.0", id: `srv-${r.int(100)}`, method: r.pick(["ping", "roots/list", "sampling/createMessage", "elicitation/create", "no/such"]), params: r.value(2) }); return answer(id, result)
    default: line({ jsonrpc: "2.0", method: r.pick(["notifications/message", "notifications/tools/list_changed", "notifications/whatever"]), params: r.value(2) }); return answer(id, result)
  }
}

async function handle(message) {
  const { id, method, params } = message
  if (id === undefined || method === undefined) return // notifications and answers to our requests
  if (method === "initialize") {
    const version = r.chance(wildness) ? r.pick(["1999-01-01", 7, "2025-11-25"]) : params?.protocolVersion
    return reply(id, { protocolVersion: version, capabilities: { tools: { listChanged: true }, logging: {} }, serverInfo: { name: r.chance(0.9) ? "hostile" : r.string(), version: "1.0.0" } })
  }
  if (method === "tools/list") {
    const page = params?.cursor ? Number(String(params.cursor).slice(1)) || 0 : 0
    const tools = Array.from({ length: r.pick([0, 1, 3, 10]) }, (_, i) => tool(page, i))
    let nextCursor
    if (cursorKind === "endless") nextCursor = `p${page + 1}`
    else if (cursorKind === "repeat" && page > 0) nextCursor = `p${page}`
    else if (page + 1 < pages) nextCursor = `p${page + 1}`
    if (storm) line({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    return reply(id, nextCursor === undefined ? { tools } : { tools, nextCursor })
  }
  if (method === "tools/call") {
    const token = params?._meta?.progressToken
    if (token !== undefined && r.chance(0.3)) {
      for (let i = 0; i < r.pick([1, 5, 200]); i++) line({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: i } })
    }
    const content = r.chance(0.8)
      ? [{ type: "text", text: `called ${params?.name}` }]
      : r.pick([[], [{ type: "image", data: "AAAA", mimeType: "image/png" }], [{ type: "nope" }], r.value(2)])
    return reply(id, { content, isError: r.chance(0.1) })
  }
  if (method === "ping") return reply(id, {})
  return line({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } })
}

let queue = Promise.resolve()
eachLine(process.stdin, (line) => {
  let message
  try {
    message = JSON.parse(line)
  } catch {
    message = {}
  }
  // Mostly in order; a wild server answers concurrent requests out of order.
  if (r.chance(wildness)) handle(message)
  else queue = queue.then(() => handle(message))
})
process.stdin.on("end", () => process.exit(0))
if (r.chance(wildness / 4)) write("banner: hostile server starting\n")
if (r.chance(wildness / 10)) process.exit(1)
