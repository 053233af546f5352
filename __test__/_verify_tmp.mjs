import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import path from "node:path"
import fs from "node:fs"
import { startStreamableHttp, startLegacySse, startStatus } from "./fixtures/http-servers.mjs"
const F = (n) => path.join(import.meta.dirname, "fixtures", n)
const node = process.execPath

async function stdio(args, env = {}, caps = {}) {
  const t = new StdioClientTransport({ command: node, args, env: { ...process.env, ...env }, stderr: "pipe" })
  const c = new Client({ name: "v", version: "1" }, { capabilities: caps })
  let err = ""
  t.stderr?.on("data", (d) => { err += d })
  await c.connect(t)
  return { c, t, err: () => err }
}
async function listAll(c) {
  const out = []; let cursor; let pages = 0
  do { const r = await c.listTools(cursor ? { cursor } : {}); out.push(...r.tools); cursor = r.nextCursor; pages++ } while (cursor && pages < 10)
  return { out, pages }
}
const which = process.argv[2]
if (which === "stdio") {
  const { c, t } = await stdio([F("stdio-server.mjs")], { FIXTURE_EVENT_FILE: "/tmp/tnv/events" }, { elicitation: { form: {} } })
  c.setRequestHandler(ElicitRequestSchema, async (req) => ({ action: "accept", content: { name: "Ada" } }))
  const { out } = await listAll(c)
  console.log(out.map((t) => t.name).join(","))
  console.log(JSON.stringify(out.find((t) => t.name === "add").inputSchema), JSON.stringify(out.find((t) => t.name === "bare")))
  console.log(JSON.stringify(await c.callTool({ name: "add", arguments: { a: 2, b: 3 } })))
  console.log(JSON.stringify(await c.callTool({ name: "echo", arguments: { text: "hi" } })))
  console.log(JSON.stringify(await c.callTool({ name: "structured", arguments: {} })))
  console.log(JSON.stringify(await c.callTool({ name: "fail", arguments: {} })))
  console.log(JSON.stringify(await c.callTool({ name: "fail-empty", arguments: {} })))
  console.log(JSON.stringify(await c.callTool({ name: "mixed", arguments: {} })))
  console.log(JSON.stringify(await c.callTool({ name: "bare", arguments: {} })))
  const progress = []
  const t0 = Date.now()
  console.log(JSON.stringify(await c.callTool({ name: "slow", arguments: { steps: 4, intervalMs: 150 } }, undefined, { onprogress: (p) => progress.push(p), timeout: 300, resetTimeoutOnProgress: true })), progress.length, Date.now() - t0)
  console.log(JSON.stringify(await c.callTool({ name: "elicit", arguments: {} })))
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 100)
  try { await c.callTool({ name: "sleep", arguments: { ms: 5000 } }, undefined, { signal: ac.signal }) } catch (e) { console.log("sleep aborted:", e.message) }
  await new Promise((r) => setTimeout(r, 200))
  console.log("events:", fs.readFileSync("/tmp/tnv/events", "utf8").trim())
  try { await c.callTool({ name: "crash", arguments: {} }) } catch (e) { console.log("crash:", e.message) }
  await c.close()
} else if (which === "plain") {
  const { c } = await stdio([F("stdio-server.mjs"), "--tools", "a,b,c,weird.name"], {})
  console.log((await listAll(c)).out.map((t) => `${t.name}:${t.description}`).join(","))
  console.log(JSON.stringify(await c.callTool({ name: "b", arguments: {} })))
  await c.close()
} else if (which === "grandchild") {
  const { c, t } = await stdio([F("grandchild-server.mjs")], { GRANDCHILD_PID_FILE: "/tmp/tnv/gc", PID_FILE: "/tmp/tnv/child" })
  console.log((await listAll(c)).out.map((t) => t.name), fs.readFileSync("/tmp/tnv/gc", "utf8"), fs.readFileSync("/tmp/tnv/child", "utf8"), t.pid)
  const gc = Number(fs.readFileSync("/tmp/tnv/gc", "utf8"))
  const stat = (p) => { try { return fs.readFileSync(`/proc/${p}/stat`, "utf8") } catch { return null } }
  console.log("gc stat:", stat(gc)); console.log("child stat:", stat(t.pid))
  await c.close()
  await new Promise((r) => setTimeout(r, 3000))
  console.log("after close: child", stat(t.pid)?.slice(0, 40), "gc", stat(gc)?.slice(0, 40))
  process.kill(gc, "SIGKILL")
} else if (which === "flood") {
  const t0 = Date.now()
  const { c, err } = await stdio([F("flood-server.mjs")], {})
  console.log((await listAll(c)).out.map((t) => t.name), Date.now() - t0)
  await new Promise((r) => setTimeout(r, 1000))
  console.log("stderr bytes", err().length, JSON.stringify(err().slice(-100)))
  await c.close()
} else if (which === "crash" || which === "crash-immediate") {
  const t = new StdioClientTransport({ command: node, args: [F("crash-server.mjs"), ...(which === "crash" ? [] : ["--immediate"])], stderr: "pipe" })
  let err = ""; t.stderr.on("data", (d) => { err += d })
  const c = new Client({ name: "v", version: "1" })
  t.onclose = () => console.log("transport closed")
  try { await c.connect(t, { timeout: 3000 }) } catch (e) { console.log("connect failed:", e.message) }
  console.log("stderr:", JSON.stringify(err))
} else if (which === "hang") {
  const t = new StdioClientTransport({ command: node, args: [F("hang-server.mjs")], env: { ...process.env, PID_FILE: "/tmp/tnv/hang" }, stderr: "pipe" })
  const c = new Client({ name: "v", version: "1" })
  const t0 = Date.now()
  try { await c.connect(t, { timeout: 500 }) } catch (e) { console.log("connect failed:", e.message, Date.now() - t0) }
  const pid = Number(fs.readFileSync("/tmp/tnv/hang", "utf8"))
  process.kill(pid, "SIGTERM"); t.stdin?.end?.()
  await new Promise((r) => setTimeout(r, 500))
  console.log("alive after SIGTERM:", fs.existsSync(`/proc/${pid}`), fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2])
  process.kill(pid, "SIGKILL")
  await new Promise((r) => setTimeout(r, 200))
  console.log("after SIGKILL:", fs.existsSync(`/proc/${pid}`) ? fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2] : "gone")
  process.exit(0)
} else if (which.startsWith("liar")) {
  const mode = process.argv.slice(3)
  const { c } = await stdio([F("liar-server.mjs"), ...mode])
  try {
    const { out, pages } = await listAll(c)
    console.log(mode, pages, JSON.stringify(out))
  } catch (e) { console.log(mode, "error:", e.message.slice(0, 300)) }
  await c.close()
} else if (which === "http") {
  const s = await startStreamableHttp({ tools: 250, pageSize: 100 })
  const c = new Client({ name: "v", version: "1" })
  const t = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: { Authorization: "Bearer x" } } })
  await c.connect(t)
  const { out, pages } = await listAll(c)
  console.log(out.length, pages, out[0].name, out[249].name, out.every((x, i) => x.name === `tool${String(i + 1).padStart(3, "0")}`))
  console.log(JSON.stringify(await c.callTool({ name: "tool007", arguments: {} })))
  await t.terminateSession()
  await c.close()
  console.log(JSON.stringify({ http: s.stats.http, rpc: s.stats.rpc, sessions: s.stats.sessions }), s.stats.requests[0].headers.authorization)
  await s.close()
  console.log("closed")
} else if (which === "sse") {
  const s = await startLegacySse()
  // attempt streamable first, like an auto client
  try {
    const c0 = new Client({ name: "v", version: "1" })
    await c0.connect(new StreamableHTTPClientTransport(new URL(s.url)))
    console.log("streamable unexpectedly worked")
  } catch (e) { console.log("streamable failed:", e.message.slice(0, 120)) }
  const c = new Client({ name: "v", version: "1" })
  await c.connect(new SSEClientTransport(new URL(s.url)))
  console.log((await listAll(c)).out.map((t) => t.name))
  console.log(JSON.stringify(await c.callTool({ name: "beta", arguments: {} })))
  await c.close()
  await new Promise((r) => setTimeout(r, 100))
  console.log(JSON.stringify({ http: s.stats.http, rpc: s.stats.rpc, sessions: s.stats.sessions }))
  await s.close(); console.log("closed")
} else if (which === "status") {
  for (const code of [500, 404]) {
    const s = await startStatus(code)
    try {
      const c = new Client({ name: "v", version: "1" })
      await c.connect(new StreamableHTTPClientTransport(new URL(s.url)))
    } catch (e) { console.log(code, "failed:", e.message.slice(0, 150)) }
    console.log(JSON.stringify(s.stats.http))
    await s.close()
  }
} else if (which === "everything") {
  const { c } = await stdio([path.join(import.meta.dirname, "../node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"])
  const { out } = await listAll(c)
  console.log(out.map((t) => t.name).join(","))
  console.log(JSON.stringify(out.find((t) => t.name === "get-sum")?.inputSchema))
  await c.close()
}
