// A Node script that serves a toolkit and prints, like `toolnexus serve`, "serving <N> tools at
// <url>/mcp" (the replica fixture, the scale-out servers), started for a test and stopped
// (`stopAll`), and a bounded wait for a condition (`until`): for the tests of replicas and fleets
// (replicas, fleet-store, fleet-tasks, fleet-limits).
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import path from "node:path"

/**
 * Starts `argv` (a Node script and its arguments) with `env` added to the environment, killed
 * by `defer`'s cleanup. Resolves nothing itself; returns { child, url, exited, count(line),
 * stderr() }: `url` resolves to its URL (without `/mcp`) once printed, `exited` to { code,
 * signal, stderr } at its exit, `count(line)` is how many of its stderr lines so far are `line`.
 */
export function startServing(defer, argv, env = {}) {
  const child = spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr })))
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  const url = new Promise((resolve, reject) => {
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d) => {
      out += d
      const m = /serving \d+ tools at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(out)
      if (m) resolve(m[1])
    })
    child.on("exit", (code) => reject(new Error(`${env.REPLICA_NAME ?? path.basename(argv[0])} exited (${code}) before serving:\n${stderr}`)))
  })
  const count = (line) => stderr.split("\n").filter((l) => l === line).length
  return { child, url, exited, count, stderr: () => stderr }
}

/** SIGTERM to each of `servings` (from `startServing`), then each must exit 0. */
export async function stopAll(servings) {
  for (const s of servings) s.child.kill("SIGTERM")
  for (const s of servings) {
    const end = await s.exited
    assert.equal(end.code, 0, end.stderr)
  }
}

/** Calls `attempt` every `every` ms until `done(result)`, or fails with the last result past `bound` ms. */
export async function until(what, attempt, done, bound, every = 50) {
  const deadline = Date.now() + bound
  for (;;) {
    const result = await attempt()
    if (done(result)) return result
    if (Date.now() > deadline) assert.fail(`${what} within ${bound} ms; last: ${JSON.stringify(result)}`)
    await new Promise((r) => setTimeout(r, every))
  }
}
