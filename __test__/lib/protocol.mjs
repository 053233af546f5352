// What the protocol-*.test.mjs files share: the era fixtures (the Python `mcp` 2.x server over
// stdio or streamable HTTP, and the SDK v1 era-server over stdio), their info, and the wire logs
// and pid files they write.
import fs from "node:fs"
import path from "node:path"
import { PYTHON, fixture, nodeFixture, startListening, tmpFile } from "../helpers.mjs"

export const PY_FIXTURE = path.join(path.dirname(fixture("era-server")), "py-era-server.py")

/** The JSON lines a fixture logged: [{ method, protocolVersion }]. */
export function wireLog(file) {
  if (!fs.existsSync(file)) return []
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}
export const methods = (file) => wireLog(file).map((m) => m.method)
/** The listings beside tools/list, made concurrently with it when a server declares resources and prompts (as Python's MCPServer does). */
export const SURFACE_LISTS = ["resources/list", "resources/templates/list", "prompts/list"]
export const withoutSurface = (list) => list.filter((m) => !SURFACE_LISTS.includes(m))

/** Every pid a fixture appended to `file`, one per process it was started as. */
export const pidsIn = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : [])

/**
 * Runs `body({ url, log })` against the Python `mcp` 2.x fixture over streamable HTTP (logging
 * every JSON-RPC method it receives), which has exited when this resolves.
 */
export async function withPython(body) {
  const log = tmpFile("py-http.log")
  const server = await startListening(PYTHON, [PY_FIXTURE, "http", "--log", log])
  try {
    return await body({ url: `http://127.0.0.1:${server.port}/mcp`, log })
  } finally {
    await server.close()
  }
}

export const PY_INFO = {
  name: "py-era-fixture",
  version: "2.3.4",
  title: "Python era fixture",
  instructions: "Call era to see which protocol revision a request came in",
}
export const ERA_INFO = { name: "era-fixture", version: "1.2.3", title: "Era fixture", instructions: "Ask era for the revision" }

/** The era-server fixture (an SDK v1 stdio server) with a wire log and a pid file. */
export function eraServer(...flags) {
  const log = tmpFile("era.log")
  const pids = tmpFile("era.pids")
  return { log, pids, spec: { command: nodeFixture("era-server", "--log", log, ...flags), env: { PID_FILE: pids } } }
}
