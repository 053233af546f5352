// A short, fixed-seed run of the hostile fuzzer (__test__/fuzz/run.mjs; `npm run fuzz` runs it
// long, from a fresh seed): hostile stdio and HTTP servers listed, loaded, called and closed, and
// hostile clients against a served toolkit, with every invariant the fuzzer checks.
import { test } from "node:test"
import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import path from "node:path"
import { repoRoot } from "./helpers.mjs"

test("fuzz smoke: 40 hostile stdio servers, 20 hostile HTTP servers, 20 hostile clients, seed 20261201", { timeout: 180000 }, async (t) => {
  const run = path.join(repoRoot, "__test__", "fuzz", "run.mjs")
  const args = [run, "--seed", "20261201", "--stdio", "40", "--http", "20", "--clients", "20"]
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: repoRoot, timeout: 170000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }))
  })
  const lines = stdout.trim().split("\n")
  t.diagnostic(lines.slice(-2, -1).join(""))
  assert.equal(code, 0, `fuzz failed:\n${stdout}\n${stderr.slice(-2000)}`)
  assert.equal(lines.at(-1), "fuzz: 80 passed, 0 failed")
})
