// What the compatibility suite needs, written only against APIs that Node, Bun and Deno share
// (node:fs, node:child_process, fetch): which runtime this is, how it runs a script, /proc
// checks of this process's children (proc.mjs), and a bare streamable-HTTP MCP client.
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { liveDescendants, pollUntil } from "./proc.mjs"

export { isAlive, within } from "./proc.mjs"

export const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.join(here, "..", "..")
/**
 * The addon, through its CommonJS loader (as `import "toolnexus"` reaches it too): this
 * checkout's, or (TOOLNEXUS_COMPAT_PACKAGE, `npm run platforms`) a copy installed from the packed
 * tarballs, which finds its platform package as a user's install does.
 */
export const toolnexus = createRequire(import.meta.url)(process.env.TOOLNEXUS_COMPAT_PACKAGE || path.join(repoRoot, "index.js"))

/** "node", "bun" or "deno". */
export const runtime = globalThis.Deno ? "deno" : process.versions.bun ? "bun" : "node"

/**
 * What starts this runtime's binary: itself, or (TOOLNEXUS_COMPAT_EMULATOR, e.g. `qemu-aarch64
 * -L /usr/aarch64-linux-gnu` where no binfmt handler runs a foreign binary) an emulator.
 */
const emulator = (process.env.TOOLNEXUS_COMPAT_EMULATOR || "").split(" ").filter(Boolean)

/** The command that runs `script` with this very runtime. */
export function runtimeCommand(script, ...args) {
  return runtime === "deno" ? [process.execPath, "run", "-A", script, ...args] : [...emulator, process.execPath, script, ...args]
}

/** The MCP test servers run on Node (the runner passes its own binary), whatever runs the suite. */
export const NODE = process.env.TOOLNEXUS_COMPAT_NODE || "node"
export const fixture = (name, ...args) => [NODE, path.join(repoRoot, "__test__", "fixtures", `${name}.mjs`), ...args]

/** Live descendants of this process (toolnexus's own watchdog shell aside). */
export const descendants = () => liveDescendants(process.pid, { watchdog: false })

/** This process's threads named `name` (`/proc/self/task/<tid>/comm`). */
export const threadsNamed = (name) =>
  fs.readdirSync("/proc/self/task").filter((tid) => {
    try {
      return fs.readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === name
    } catch {
      return false
    }
  })

/** Bytes this process's main thread (the JavaScript thread) has read. */
export const readByMainThread = () =>
  Number(/^rchar: (\d+)$/m.exec(fs.readFileSync(`/proc/self/task/${process.pid}/io`, "utf8"))[1])

/** Polls `predicate` until it holds; a bound that detects a hang, not a sleep. */
export const waitFor = (predicate, what, timeout = 5000) => pollUntil(predicate, { timeout, failure: `${what}: not within ${timeout} ms` })

export const tmpFile = (name) => path.join(fs.mkdtempSync(path.join(process.env.TMPDIR || "/tmp", "toolnexus-compat-")), name)

/** A session of a handshake-era client on a served endpoint, over fetch (JSON answers first). */
export async function httpSession(url) {
  let session
  let id = 0
  const post = async (message) => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    if (session) headers["mcp-session-id"] = session
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) })
    session ??= response.headers.get("mcp-session-id")
    const body = await response.text()
    if (message.id === undefined) return { status: response.status }
    const type = response.headers.get("content-type") ?? ""
    const text = type.includes("text/event-stream")
      ? body.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).filter(Boolean).at(-1)
      : body
    return JSON.parse(text)
  }
  const request = (method, params) => post({ jsonrpc: "2.0", id: ++id, method, params })
  const init = await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "compat", version: "1.0.0" },
  })
  await post({ jsonrpc: "2.0", method: "notifications/initialized" })
  return {
    init,
    request,
    close: () => fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } }).then((r) => r.text()),
  }
}
