#!/usr/bin/env node
// Runs the Node suite (scripts/node-suite.sh) several times and prints each test's failure count:
// the way to find a test that fails only sometimes, or only on a busy machine.
//
//   npm run test:repeat -- <runs> [--load] [file.test.mjs ...]
//
// --load keeps every core busy beside the suite (one spinning process a core, at the suite's
// priority) for every run. With files, only those run (still one at a time). The log of each run
// that failed is kept in target/test-repeat/ (the table says which). Exits 1 when any run failed.
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"

const root = path.join(path.dirname(new URL(import.meta.url).pathname), "..")
const args = process.argv.slice(2)
const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? "NaN")
const load = args.includes("--load")
const files = args.filter((a) => a.endsWith(".mjs"))
const unknown = args.filter((a) => !/^\d+$/.test(a) && a !== "--load" && !a.endsWith(".mjs"))
if (!Number.isInteger(runs) || runs < 1 || unknown.length > 0) {
  console.error("usage: npm run test:repeat -- <runs> [--load] [file.test.mjs ...]")
  process.exit(2)
}

const logs = path.join(root, "target", "test-repeat")
fs.mkdirSync(logs, { recursive: true })

/** One busy process a core, for as long as the runs last. */
function hog() {
  const cores = os.availableParallelism?.() ?? os.cpus().length
  const spinners = Array.from({ length: cores }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }))
  const stop = () => spinners.forEach((s) => s.kill("SIGKILL"))
  process.on("exit", stop)
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))
  return stop
}

/** Runs the suite once; resolves to its failures ({ file, name } each) and how long it took. */
function runOnce(n) {
  const failures = path.join(logs, `run-${n}.failures.jsonl`)
  const log = path.join(logs, `run-${n}.log`)
  fs.rmSync(failures, { force: true })
  const started = Date.now()
  const command =
    files.length > 0
      ? [
          process.execPath,
          [
            "--test",
            "--test-concurrency=1",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            "--test-reporter=./scripts/failures-reporter.mjs",
            `--test-reporter-destination=${failures}`,
            ...files,
          ],
        ]
      : ["bash", ["scripts/node-suite.sh", failures]]
  return new Promise((resolve) => {
    const out = fs.openSync(log, "w")
    const child = spawn(command[0], command[1], { cwd: root, stdio: ["ignore", out, out] })
    child.on("exit", (code, signal) => {
      fs.closeSync(out)
      const lines = fs.existsSync(failures) ? fs.readFileSync(failures, "utf8").split("\n").filter(Boolean) : []
      const failed = lines.map((line) => JSON.parse(line))
      // A run that failed with no test named (a crash, a file that would not load) still counts.
      if (failed.length === 0 && code !== 0) failed.push({ file: "(the run itself)", name: `exit ${code ?? signal}` })
      if (failed.length === 0) fs.rmSync(log, { force: true })
      resolve({ failed, seconds: (Date.now() - started) / 1000, log })
    })
  })
}

const stopHog = load ? hog() : () => {}
/** @type {Map<string, number[]>} test → the runs it failed in */
const counts = new Map()
const times = []
for (let n = 1; n <= runs; n++) {
  const { failed, seconds, log } = await runOnce(n)
  times.push(seconds)
  const seen = new Set()
  for (const { file, name } of failed) {
    const key = `${file} › ${name}`
    if (seen.has(key)) continue
    seen.add(key)
    if (!counts.has(key)) counts.set(key, [])
    counts.get(key).push(n)
  }
  const verdict = failed.length === 0 ? "passed" : `${failed.length} failed (log: ${path.relative(root, log)})`
  console.log(`run ${n}/${runs}${load ? " under load" : ""}: ${verdict} in ${seconds.toFixed(0)} s`)
}
stopHog()

console.log(`\n${runs} run(s)${load ? " beside a CPU hog on every core" : ""}; ${times.map((t) => t.toFixed(0)).join(", ")} s`)
if (counts.size === 0) {
  console.log("no test failed")
} else {
  console.log("failures  test (runs it failed in)")
  for (const [key, which] of [...counts].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`${`${which.length}/${runs}`.padStart(8)}  ${key} (${which.join(", ")})`)
  }
}
process.exitCode = counts.size === 0 ? 0 : 1
