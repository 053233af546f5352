// Build against build, fairly: each build runs in a fresh node process of its own per round
// (bench/compare-one.mjs), never two addons in one process, and the order alternates
// A B, B A, A B, ... so neither build always goes first. Each cell is the median over rounds of
// each process's median of COMPARE_REPS repetitions. A / B is the median of the per-round ratios
// (A and B of one round ran back to back, so they saw about the same machine load), with a 95%
// bootstrap interval of it (rounds resampled), the min–max of the per-round ratios, and the
// ratio of each side's best process (load only ever adds time). An A/A run (the same checkout
// twice) shows what noise alone gives.
// Prints a Markdown table and the load average before and after. Not part of `npm test`.
//
//   node bench/compare.mjs <checkout A> <checkout B>
//   COMPARE_ROUNDS=16 COMPARE_REPS=5 BENCH_CALLS=2000 COMPARE_ONLY=seq,concurrent,list10 COMPARE_RAW=1
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import path from "node:path"
import { promisify } from "node:util"
import { median, percentile, root } from "./lib.mjs"

const run = promisify(execFile)
const [a, b] = process.argv.slice(2).map((p) => p && path.resolve(p))
if (!a || !b) {
  console.error("usage: node bench/compare.mjs <checkout A> <checkout B>")
  process.exit(2)
}
const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 16)
const REPS = Number(process.env.COMPARE_REPS ?? 5)
const CALLS = Number(process.env.BENCH_CALLS ?? 2000)
const JOBS = (process.env.COMPARE_ONLY ?? "seq,concurrent,list10").split(",")
const LABELS = {
  seq: `${CALLS} sequential \`tools/call\``,
  concurrent: `${CALLS} concurrent \`tools/call\``,
  list10: "list 10 stdio servers",
}
const loadavg = () => readFileSync("/proc/loadavg", "utf8").trim().split(" ").slice(0, 3).join(" ")

async function turn(checkout) {
  const script = path.join(root, "bench", "compare-one.mjs")
  const { stdout } = await run(process.execPath, [script, checkout, String(CALLS), String(REPS), JOBS.join(",")], { cwd: root })
  return JSON.parse(stdout)
}

/** A 95% interval of the median per-round ratio, resampling the rounds with a fixed seed. */
function bootstrap(ratios, draws = 2000) {
  let seed = 0x9e3779b9
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const medians = []
  for (let d = 0; d < draws; d++) medians.push(median(Array.from(ratios, () => ratios[Math.floor(random() * ratios.length)])))
  medians.sort((x, y) => x - y)
  return [percentile(medians, 0.025), percentile(medians, 0.975)]
}

const before = loadavg()
console.log(`node ${process.version}; A = ${a}\nB = ${b}`)
console.log(`${ROUNDS} rounds, one fresh process per build per round, order A B, B A, ...; each process: 2000 warm-up calls, then the median of ${REPS} reps`)
console.log(`load average before: ${before}\n`)
const samples = { a: Object.fromEntries(JOBS.map((j) => [j, []])), b: Object.fromEntries(JOBS.map((j) => [j, []])) }
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ["a", "b"] : ["b", "a"]
  for (const side of order) {
    const result = await turn(side === "a" ? a : b)
    for (const job of JOBS) samples[side][job].push(result[job])
  }
}
const ms = (v) => `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ms`
console.log("| job | A | B | A / B | 95% bootstrap | per-round min–max | best A / best B |")
console.log("|---|---|---|---|---|---|---|")
for (const job of JOBS) {
  const as = samples.a[job]
  const bs = samples.b[job]
  const perRound = as.map((v, i) => v / bs[i])
  const [lo, hi] = bootstrap(perRound)
  const f = (v) => v.toFixed(2)
  console.log(`| ${LABELS[job]} | ${ms(median(as))} | ${ms(median(bs))} | ${f(median(perRound))} | ${f(lo)}–${f(hi)} | ${f(Math.min(...perRound))}–${f(Math.max(...perRound))} | ${f(Math.min(...as) / Math.min(...bs))} |`)
}
if (process.env.COMPARE_RAW) console.log(`\n${JSON.stringify(samples)}`)
console.log(`\nload average after: ${loadavg()}`)
