// Shared pieces of the benchmarks: the fixture server, the floor client, alternating rounds and
// the table printer.
import { spawn } from "node:child_process"
import { once } from "node:events"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const PYTHON = path.join(root, ".venv", "bin", "python")
export const RAW_SERVER = path.join(root, "bench", "servers", "raw_server.py")

/** The command of the raw Python stdio server (`bench/servers/raw_server.py`). */
export function serverCommand(...flags) {
  return [PYTHON, RAW_SERVER, ...flags]
}

export const INIT_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "floor", version: "1.0.0" },
}

/**
 * The floor: the least any client can do on the same pipe. Spawn, write a line, read a line,
 * JSON.parse; requests matched to answers by id, nothing else (no schema checks, no timeouts).
 */
export class FloorClient {
  constructor(command) {
    this.child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "ignore"] })
    this.exited = once(this.child, "exit")
    this.pending = new Map()
    this.nextId = 1
    let buffered = ""
    this.child.stdout.setEncoding("utf8")
    this.child.stdout.on("data", (chunk) => {
      buffered += chunk
      let end
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        const message = JSON.parse(line)
        const settle = this.pending.get(message.id)
        if (settle) {
          this.pending.delete(message.id)
          settle(message)
        }
      }
    })
  }

  request(method, params) {
    const id = this.nextId++
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
    return new Promise((resolve) => this.pending.set(id, resolve))
  }

  notify(method, params) {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`)
  }

  static async connect(command) {
    const client = new FloorClient(command)
    await client.request("initialize", INIT_PARAMS)
    client.notify("notifications/initialized")
    return client
  }

  async listTools() {
    const tools = []
    let cursor
    do {
      const { result } = await this.request("tools/list", cursor === undefined ? {} : { cursor })
      tools.push(...result.tools)
      cursor = result.nextCursor
    } while (cursor !== undefined)
    return tools
  }

  callTool(name, args) {
    return this.request("tools/call", { name, arguments: args })
  }

  /** Ends stdin and waits for the child to exit (as toolnexus does before it resolves). */
  async close() {
    this.child.stdin.end()
    await this.exited
  }
}

/**
 * A toolnexus client in a runtime of its own (bench/runtime-calls.mjs under node, bun or deno):
 * `run("seq" | "concurrent")` resolves with the milliseconds that job took there.
 */
export class RuntimeClient {
  constructor(command, env = {}) {
    this.child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, NO_COLOR: "1", ...env } })
    this.exited = once(this.child, "exit")
    this.waiting = []
    let buffered = ""
    this.child.stdout.setEncoding("utf8").on("data", (chunk) => {
      buffered += chunk
      let end
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        this.waiting.shift()?.(line)
      }
    })
    this.exited.then(([code]) => {
      for (const resolve of this.waiting.splice(0)) resolve(`exited with code ${code}`)
    })
  }

  next() {
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  static async start(command, env) {
    const client = new RuntimeClient(command, env)
    const ready = await client.next()
    if (ready !== "ready") throw new Error(`${command.join(" ")}: ${ready}`)
    return client
  }

  async run(job) {
    const answer = this.next()
    this.child.stdin.write(`${job}\n`)
    const ms = Number(await answer)
    if (!Number.isFinite(ms)) throw new Error(`${job}: ${await answer}`)
    return ms
  }

  async close() {
    this.child.stdin.end()
    await this.exited
  }
}

export async function time(fn) {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

export function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

/**
 * The order of turns in round `round`: `names` rotated by the round, so that over the rounds each
 * contestant takes each position alike (none always goes first, or always follows the same one).
 */
export function turnOrder(names, round) {
  const shift = round % names.length
  return [...names.slice(shift), ...names.slice(0, shift)]
}

/**
 * Runs each contestant once per round, in turn (so machine load hits all of them alike), in an
 * order rotated each round (turnOrder), and returns each one's median over the rounds.
 * `contestants`: { name: async () => number | void } (a returned number is the sample; else the
 * elapsed time is).
 */
export async function alternate(rounds, contestants) {
  const samples = Object.fromEntries(Object.keys(contestants).map((k) => [k, []]))
  for (let round = 0; round < rounds; round++) {
    for (const name of turnOrder(Object.keys(contestants), round)) {
      const run = contestants[name]
      const t0 = performance.now()
      const value = await run()
      samples[name].push(typeof value === "number" ? value : performance.now() - t0)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]))
}

const fmt = (v, unit) => (v === undefined ? "–" : `${v >= 100 ? v.toFixed(0) : v.toFixed(unit === "MB" ? 1 : 2)} ${unit}`)
const ratio = (a, b) => (a === undefined || b === undefined ? "–" : (a / b).toFixed(2))

/** Prints a Markdown table row: job | toolnexus | SDK | floor | ours/SDK | ours/floor. */
export function row(job, { toolnexus, sdk, floor, baseline }, unit = "ms") {
  console.log(`| ${job} | ${fmt(toolnexus, unit)} | ${fmt(sdk, unit)} | ${fmt(floor, unit)} | ${ratio(toolnexus, sdk)} | ${ratio(toolnexus, floor)} |`)
  if (baseline !== undefined) {
    console.log(`| ↳ baseline build | ${fmt(baseline, unit)} | | | ${ratio(baseline, sdk)} | ${ratio(baseline, floor)} |`)
  }
}

export function header() {
  console.log("| job | toolnexus | SDK | floor | ours / SDK | ours / floor |")
  console.log("|---|---|---|---|---|---|")
}
