// Shared helpers for the toolnexus Node tests: process-tree inspection through /proc,
// a bounded polling helper, temporary config files and fixture paths.
import assert from "node:assert/strict"
import { execFile, spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { allProcesses, isAlive, isWatchdog, liveDescendants, pollUntil } from "./compat/proc.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))

export { isAlive, isWatchdog, procStat, within } from "./compat/proc.mjs"

/** Every live (non-zombie) descendant of `pid`, found by following ppid links, sorted. */
export const descendants = (pid = process.pid) => liveDescendants(pid)

/** Live (non-zombie) members of process group `pgid`, sorted. */
export function processGroupMembers(pgid) {
  return allProcesses()
    .filter((p) => p.pgrp === Number(pgid) && p.state !== "Z")
    .map((p) => p.pid)
    .sort((a, b) => a - b)
}

/** A readable description of the given pids (for assertion messages). */
export function describePids(pids) {
  return pids
    .map((pid) => {
      let cmd = ""
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()
      } catch {}
      return `${pid} ${cmd}`
    })
    .join("; ")
}

/**
 * Polls `predicate` every `interval` ms until it returns a truthy value (which is returned) or
 * `timeout` ms have passed (then throws). Meant as a generous bound that detects hangs, not as a
 * stand-in for a sleep.
 */
export const waitFor = (predicate, { timeout = 5000, interval = 5, message = "condition" } = {}) =>
  pollUntil(predicate, { timeout, interval, failure: `waitFor: ${message} not met within ${timeout} ms` })

let tmpRoot
/** A fresh temporary directory (removed when the process exits). */
export function tmpDir() {
  if (!tmpRoot) {
    tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-test-"))
    process.on("exit", () => fs.rmSync(tmpRoot, { recursive: true, force: true }))
  }
  return fs.mkdtempSync(path.join(tmpRoot, "d-"))
}

/**
 * Writes a config file and returns its absolute path. An object is written as JSON; a string is
 * written verbatim (for JSONC or deliberately broken files).
 */
export function tmpConfig(obj, { name = typeof obj === "string" ? "mcp.jsonc" : "mcp.json" } = {}) {
  const file = path.join(tmpDir(), name)
  fs.writeFileSync(file, typeof obj === "string" ? obj : JSON.stringify(obj, null, 2))
  return file
}

/** A path inside a fresh temporary directory (for pid files and event logs). */
export function tmpFile(name = "file") {
  return path.join(tmpDir(), name)
}

/** Absolute path of a fixture in __test__/fixtures (".mjs" may be omitted). */
export function fixture(name) {
  return path.join(here, "fixtures", name.endsWith(".mjs") ? name : `${name}.mjs`)
}

/** `command` array running a fixture with this very node binary. */
export function nodeFixture(name, ...args) {
  return [process.execPath, fixture(name), ...args]
}

/** Absolute path of @modelcontextprotocol/server-everything's entry point. */
export const serverEverything = path.join(here, "..", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")

/** The repository root (the package directory). */
export const repoRoot = path.join(here, "..")

/** Reads a pid written by a fixture into `file`, or null if it is not there (yet). */
export function readPid(file) {
  try {
    const n = Number(fs.readFileSync(file, "utf8").trim())
    return Number.isInteger(n) && n > 0 ? n : null
  } catch {
    return null
  }
}

/**
 * Runs `node <file>` (or another Node binary: `node`) as a subprocess and resolves with { code, signal, stdout, stderr } once it
 * has exited. A subprocess still running after `timeout` ms is killed (and reported by `signal`).
 */
export function runNode(file, { cwd = repoRoot, env = process.env, timeout = 15000, args = [], node = process.execPath } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [file, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout)
    child.on("error", (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** SIGKILLs every given pid that is still alive (cleanup after a failed assertion). */
export function killAll(pids) {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {}
  }
}

/**
 * Records every live descendant seen while a call is in flight (polling /proc every `interval`
 * ms), so a test can check afterwards that each of them is gone, even one that was spawned
 * and torn down before it could announce itself. `stop()` ends the watch and returns the pids.
 */
export function watchDescendants({ interval = 2 } = {}) {
  const seen = new Set()
  // The host's watchdog is a child of its starting shell for a moment when the first server
  // starts (then it belongs to init): it is toolnexus's own, meant to outlive the call.
  const scan = () => {
    for (const pid of descendants()) if (!isWatchdog(pid)) seen.add(pid)
  }
  scan()
  const timer = setInterval(scan, interval)
  return {
    stop() {
      clearInterval(timer)
      return [...seen].sort((a, b) => a - b)
    },
  }
}

/** Awaits `promise`, expecting a rejection; returns the rejection value itself. */
export async function rejection(promise) {
  let settled
  await promise.then(
    (value) => (settled = { ok: true, value }),
    (err) => (settled = { ok: false, err }),
  )
  assert.equal(settled.ok, false, `expected a rejection, got ${JSON.stringify(settled.value)}`)
  return settled.err
}

/**
 * docs/listing.md: `start(config, { signal })` (listMcpTools or loadMcp) with an already-aborted signal
 * rejects at once with `signal.reason` itself — for the default reason, an Error and a plain
 * string — and spawns nothing.
 */
export async function assertAbortedBeforeStart(start) {
  for (const reason of [undefined, new Error("already"), "plain string"]) {
    const marker = tmpFile("spawned")
    const ac = new AbortController()
    ac.abort(reason)
    const began = performance.now()
    const command = ["sh", "-c", `echo > '${marker}'; exec '${process.execPath}' '${fixture("hang-server")}'`]
    const err = await rejection(start({ mcpServers: { h: { command } } }, { signal: ac.signal }))
    const elapsed = performance.now() - began
    assert.strictEqual(err, ac.signal.reason)
    if (reason !== undefined) assert.strictEqual(err, reason)
    assert.ok(elapsed < 200, `an already-aborted signal took ${elapsed} ms to reject`)
    assert.deepEqual(descendants(), [])
    // Observation window for a spawn that slipped through after the rejection (not a sync).
    await delay(300)
    assert.equal(fs.existsSync(marker), false, "a server was spawned despite the aborted signal")
    assert.deepEqual(descendants(), [])
  }
}

/**
 * docs/listing.md: aborting `start(config, opts)` (listMcpTools or loadMcp) while a stdio server, an
 * HTTP server and a hung server are connecting rejects with `signal.reason` itself, promptly,
 * with the hung child gone, no descendant left and the HTTP session closed.
 */
export async function assertAbortMidway(t, start, reason, opts = {}) {
  const pidFile = tmpFile("hang.pid")
  const s = await startStreamableHttp({ tools: 2 })
  t.after(() => s.close())
  const ac = new AbortController()
  const pending = start(
    {
      mcpServers: {
        ok: { command: nodeFixture("stdio-server", "--tools", "a") },
        web: { url: s.url },
        hang: { command: nodeFixture("hang-server"), env: { PID_FILE: pidFile }, timeout: 60000 },
      },
    },
    { ...opts, signal: ac.signal },
  )
  let outcome
  pending.then(
    () => (outcome = "resolved"),
    () => (outcome = "rejected"),
  )
  const pid = await waitFor(
    () => {
      const p = readPid(pidFile)
      return p !== null && descendants().includes(p) ? p : null
    },
    { timeout: 10000, message: "hang server running" },
  )
  // The HTTP server has been listed, so its session is known to the client (an abort while its
  // initialize is in flight leaves a session the client never heard of, which it cannot close).
  await waitFor(() => s.stats.rpc["tools/list"] >= 1, { timeout: 10000, message: "HTTP server listed" })
  assert.equal(outcome, undefined, "settled before the hang server timed out")
  const began = performance.now()
  ac.abort(reason)
  const err = await rejection(pending)
  const latency = performance.now() - began
  t.diagnostic(`abort -> rejection latency: ${latency.toFixed(2)} ms`)
  assert.strictEqual(err, ac.signal.reason)
  if (reason !== undefined) assert.strictEqual(err, reason)
  assert.ok(latency < 1000, `rejection took ${latency} ms after abort`)
  assert.equal(isAlive(pid), false, `hang server ${pid} still alive after abort`)
  assert.deepEqual(descendants(), [])
  // The HTTP session that did come up is closed too.
  await waitFor(() => s.stats.sessions.closed === s.stats.sessions.opened, { timeout: 3000, message: "HTTP session closed" })
}

/** The test virtualenv's Python (scripts/setup-test-deps.sh), with the official `mcp` SDK. */
export const PYTHON = path.join(here, "..", ".venv", "bin", "python")

/** Runs the Python client (`__test__/python/client.py`) and resolves its JSON report. */
export function pythonClient(url, mode, calls = 1, tool = "add") {
  const script = path.join(here, "python", "client.py")
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [script, url, mode, String(calls), tool], { timeout: 45000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python client (${mode}) failed: ${error.message}\n${stderr}`))
      else resolve({ report: JSON.parse(stdout), stderr })
    })
  })
}

/**
 * Registers, with node:test's `afterEach`, a cleanup that runs whatever the test deferred (in
 * reverse order, errors ignored), then asserts no descendant process is left (killing any, so
 * one failure does not cascade). Returns `defer(fn)`.
 */
export function deferredCleanup(afterEach) {
  const cleanups = []
  afterEach(async () => {
    while (cleanups.length > 0) {
      try {
        await cleanups.pop()()
      } catch {}
    }
    const left = descendants()
    killAll(left)
    assert.deepEqual(left, [], `processes left running after the test: ${describePids(left)}`)
  })
  return (fn) => cleanups.push(fn)
}

/**
 * Registers, with node:test's `afterEach`, the check that a test left no descendant process
 * running. The check comes first, so a test that forgot to close what it opened fails; then
 * every tracked source is closed, any process left is killed (so one failure does not cascade)
 * and the assertion is made. `then`, when given, runs last (a check of its own). Returns
 * `track(source)`, which remembers `source` for that clean-up and returns it.
 */
export function leakCheck(afterEach, { then } = {}) {
  const opened = []
  afterEach(async () => {
    const left = descendants()
    await Promise.all(opened.splice(0).map((s) => s.close()))
    killAll(left)
    assert.deepEqual(left, [], `processes left running after the test: ${describePids(left)}`)
    await then?.()
  })
  return (source) => {
    opened.push(source)
    return source
  }
}

/** Runs `fn` with process.env temporarily extended by `vars` (undefined deletes a variable). */
export async function withEnv(vars, fn) {
  const saved = {}
  for (const [k, v] of Object.entries(vars)) {
    saved[k] = process.env[k]
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  try {
    return await fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

/**
 * Starts a server process that prints "PORT <n>" (on `stream`) once it listens on 127.0.0.1;
 * resolves { port, close() }, where close() ends it and waits for its exit.
 */
export async function startListening(command, args, { env = {}, stream = "stdout" } = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  let output = ""
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no PORT line within 15 s: ${output}`)), 15000)
    child[stream].setEncoding("utf8").on("data", (chunk) => {
      output += chunk
      const m = /PORT (\d+)/.exec(output)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.once("exit", (code) => reject(new Error(`exited (${code}) before listening: ${output}`)))
  })
  child.stdout.resume()
  child.stderr.resume()
  return {
    port,
    async close() {
      child.kill("SIGKILL")
      await exited
    },
  }
}
