// Process-tree inspection through /proc and hang bounds, written only against what Node, Bun
// and Deno share (node:fs, timers): the compatibility suite (lib.mjs) and the Node suite
// (__test__/helpers.mjs) both use these, so there is one copy.
import fs from "node:fs"

/** `/proc/<pid>/stat` as { pid, comm, state, ppid, pgrp }, or null when the process is gone. */
export function procStat(pid) {
  let raw
  try {
    raw = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return null
  }
  // comm may contain spaces and parentheses: it ends at the last ")".
  const close = raw.lastIndexOf(")")
  const comm = raw.slice(raw.indexOf("(") + 1, close)
  const [state, ppid, pgrp] = raw.slice(close + 2).split(" ")
  return { pid: Number(pid), comm, state, ppid: Number(ppid), pgrp: Number(pgrp) }
}

/** Every process /proc shows, as procStat records. */
export function allProcesses() {
  const out = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const st = procStat(entry)
    if (st) out.push(st)
  }
  return out
}

/** Whether `pid` is toolnexus's per-host watchdog shell (argv "toolnexus-watchdog"). */
export function isWatchdog(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("toolnexus-watchdog")
  } catch {
    return false
  }
}

/** True when `pid` exists and is not a zombie. */
export function isAlive(pid) {
  const st = procStat(pid)
  return st !== null && st.state !== "Z"
}

/**
 * Every live (non-zombie) descendant of `pid`, found by following ppid links, sorted; with
 * `watchdog: false`, toolnexus's own watchdog shell is left out (its children are not).
 */
export function liveDescendants(pid = process.pid, { watchdog = true } = {}) {
  const children = new Map()
  for (const p of allProcesses()) {
    if (!children.has(p.ppid)) children.set(p.ppid, [])
    children.get(p.ppid).push(p)
  }
  const found = []
  const queue = [Number(pid)]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      queue.push(child.pid)
      if (child.state !== "Z" && (watchdog || !isWatchdog(child.pid))) found.push(child.pid)
    }
  }
  return found.sort((a, b) => a - b)
}

/**
 * Polls `predicate` every `interval` ms until it returns a truthy value (which is returned) or
 * `timeout` ms have passed (then throws `failure`): a bound that detects a hang, not a sleep.
 */
export async function pollUntil(predicate, { timeout, interval = 5, failure }) {
  const start = performance.now()
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (performance.now() - start > timeout) throw new Error(failure)
    await new Promise((resolve) => setTimeout(resolve, interval))
  }
}

/** Rejects with `what` if `promise` has not settled within `ms` (a hang detector, not a sleep). */
export function within(promise, ms, what) {
  let timer
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms)
  })
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer))
}
