// A real redis-server on loopback (Debian's, installed by scripts/setup-test-deps.sh), for the
// tests of a fleet of replicas sharing a state store (fleet-store.test.mjs): started on a free
// port of 127.0.0.1 with nothing kept on disk, stopped, and started again on the same port.
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import { freePort } from "./nginx.mjs"

const REDIS = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((p) => fs.existsSync(p)) ?? "redis-server"

/** Whether 127.0.0.1:`port` answers a PING with +PONG. */
const pongs = (port) =>
  new Promise((resolve) => {
    let answer = ""
    const s = net.connect(port, "127.0.0.1", () => s.write("PING\r\n"))
    s.setEncoding("utf8")
    s.on("data", (d) => {
      answer += d
      if (answer.includes("\r\n")) {
        s.destroy()
        // With a password, an answer that asks for it is a server up too.
        resolve(answer.startsWith("+PONG") || answer.startsWith("-NOAUTH"))
      }
    })
    s.on("error", () => resolve(false))
  })

/**
 * A redis-server on 127.0.0.1 (`--save '' --appendonly no`, then `args`), killed by `defer`'s
 * cleanup; resolves { url, port, stop(), start(), pause(), resume() }: `stop` waits for its exit,
 * `start` runs it again on the same port (empty: it kept nothing) and resolves once it answers;
 * `pause` freezes it (SIGSTOP: connections stay open, nothing answers), `resume` thaws it.
 */
export async function startRedis(defer, args = []) {
  const port = await freePort()
  /** @type {import("node:child_process").ChildProcess | null} */
  let child = null
  /** @type {Promise<unknown> | null} */
  let exited = null
  const start = async () => {
    const argv = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", ...args]
    const proc = spawn(REDIS, argv, { stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    proc.stderr.setEncoding("utf8").on("data", (d) => (err += d))
    child = proc
    exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })))
    const deadline = Date.now() + 20000
    while (!(await pongs(port))) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on ${port}: ${err}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await exited
  }
  defer(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  await start()
  const pause = () => child?.kill("SIGSTOP")
  const resume = () => child?.kill("SIGCONT")
  return { url: `redis://127.0.0.1:${port}`, port, stop, start, pause, resume }
}
