// What the fault suite (faults-*.test.mjs, issue 11) shares: its bounds, the fixtures' commands,
// the clean-up after each test (nothing left running, and a healthy canary server still lists:
// Node is alive and so is the engine), the check of a failure reason, an RSS watch, a timed
// listing of one server and a timed call.
import assert from "node:assert/strict"
import { listMcpTools, loadMcp } from "toolnexus"
import { describePids, isAlive, leakCheck, nodeFixture, watchDescendants } from "../helpers.mjs"
import { startStreamableHttp } from "../fixtures/http-servers.mjs"

export const T = { timeout: 60000 }
/** How long past its own timeout a failing server may take to settle (a loaded 2-core machine). */
export const MARGIN = 2000
/** A fault the client can see in what the server sent must fail well before the timeout. */
export const AT_ONCE = 2500
export const AT_ONCE_TIMEOUT = 4000

export const raw = (...args) => nodeFixture("faults/raw-stdio", ...args)
export const sdk = (...args) => nodeFixture("faults/sdk-faults", ...args)
export const names = (infos) => infos.map((t) => t.name)

/**
 * Starts the canary (a healthy server every test lists after its fault: Node is alive and so is
 * the engine), closed by `after`, and lists it; registers with `afterEach` the check that
 * nothing was left running and the canary still lists. Resolves the canary and `load(servers)`:
 * loadMcp of `servers`, closed after the test even when it failed.
 */
export async function faultsHarness({ after, afterEach }) {
  const canary = await startStreamableHttp({ toolNames: ["chirp"] })
  after(() => canary.close())
  const canaryLists = async () => {
    const inv = await listMcpTools({ mcpServers: { canary: { url: canary.url, timeout: 10000 } } })
    assert.deepEqual(inv.status, { canary: "connected" }, inv.errors.canary)
    assert.deepEqual(names(inv.tools.canary), ["chirp"])
  }
  // Once before the first test too: the engine's first HTTP connection in a process costs more
  // (80-250 ms here, seconds on a loaded machine), which no timed case should pay.
  await canaryLists()
  const track = leakCheck(afterEach, { then: canaryLists })
  return { canary, load: async (servers) => track(await loadMcp({ mcpServers: servers })) }
}

// A Rust path (`rmcp::transport::…`), an Option or Result dump, or a smart-pointer type.
export const RUST_NOISE = /\b[a-z_][a-z0-9_]*::[A-Za-z_]|\b(?:Some|Ok|Err)\(|\b(?:Box|Arc|Vec|Option)</

/**
 * A failure reason as the issue requires it: a non-blank string of bounded length, in words
 * (no Rust type names or debug dumps), matching every pattern, leaking none of the secrets.
 */
export function assertReason(reason, patterns = [], { secrets = [], max = 2000 } = {}) {
  assert.equal(typeof reason, "string", "a failed server has a reason")
  assert.ok(reason.trim().length > 0, "the reason is blank")
  assert.ok(reason.length <= max, `the reason is ${reason.length} characters long (at most ${max}): ${reason.slice(0, 300)}…`)
  assert.doesNotMatch(reason, RUST_NOISE, `a Rust type in the reason: ${reason}`)
  for (const secret of secrets) assert.ok(!reason.includes(secret), `the reason leaks ${JSON.stringify(secret)}: ${reason}`)
  for (const pattern of patterns) assert.match(reason, pattern)
}

/** Peak growth of this process's RSS, in MiB, from now until stop(). */
export function watchRss(interval = 10) {
  const base = process.memoryUsage.rss()
  let peak = base
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()))
  // Unreferenced: a test that fails before stop() must not keep the process alive.
  const timer = setInterval(sample, interval).unref()
  return {
    stop() {
      clearInterval(timer)
      sample()
      return (peak - base) / 2 ** 20
    },
  }
}

/**
 * listMcpTools of one server under `name`, timed, watching every process it spawns: it must
 * settle within `bound` ms and leave none of them running (`ignore`: fixture processes the test
 * runs itself). Resolves { status, reason, tools, ms }.
 */
export async function listOne(t, name, spec, { bound, ignore = [] }) {
  const watch = watchDescendants({ interval: 10 })
  const began = performance.now()
  const inv = await listMcpTools({ mcpServers: { [name]: spec } })
  const ms = performance.now() - began
  const seen = watch.stop()
  t.diagnostic(`${name}: ${inv.status[name]} after ${ms.toFixed(0)} ms${inv.errors[name] ? `: ${inv.errors[name].slice(0, 300)}` : ""}`)
  assert.deepEqual(Object.keys(inv.status), [name])
  assert.ok(ms < bound, `${name} settled after ${ms.toFixed(0)} ms (bound ${bound} ms)`)
  const alive = seen.filter((pid) => !ignore.includes(pid) && isAlive(pid))
  assert.deepEqual(alive, [], `still running after listMcpTools settled: ${describePids(alive)}`)
  if (inv.status[name] === "connected") assert.equal(inv.errors[name], undefined)
  else assert.equal(inv.tools[name], undefined)
  return { status: inv.status[name], reason: inv.errors[name], tools: inv.tools[name], ms }
}

/** Runs `execute(args)`, timed. */
export async function timedCall(tool, args = {}, ctx = undefined) {
  const began = performance.now()
  const result = await tool.execute(args, ctx)
  return { result, ms: performance.now() - began }
}

