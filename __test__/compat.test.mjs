// The compatibility suite (__test__/compat/suite.mjs: every public entry point, the stdout
// reader each runtime gets, worker threads, /proc checks) under every runtime toolnexus supports:
// this Node, Node 22 (the conformance runner's, when this one is older), Bun and Deno (both
// devDependencies, run from node_modules/.bin). Each must pass every check and exit cleanly:
// no panic, no hang, nothing left running.
import { test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { descendants, describePids, repoRoot } from "./helpers.mjs"

const suite = path.join(repoRoot, "__test__", "compat", "suite.mjs")
const bin = (name) => path.join(repoRoot, "node_modules", ".bin", name)
const node22 = path.join(repoRoot, "__test__", "conformance", "node22", "node_modules", ".bin", "node")

const runtimes = [
  { name: `node ${process.versions.node}`, command: [process.execPath, suite] },
  ...(Number(process.versions.node.split(".")[0]) < 22 ? [{ name: "node 22", command: [node22, suite], setup: true }] : []),
  { name: "bun", command: [bin("bun"), suite] },
  { name: "deno", command: [bin("deno"), "run", "-A", suite] },
]

function run(command) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), {
      cwd: repoRoot,
      env: { ...process.env, TOOLNEXUS_COMPAT_NODE: process.execPath, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d))
    child.stderr.setEncoding("utf8").on("data", (d) => (out += d))
    // A bound for a hang (the suite bounds each check at 30 s itself).
    const timer = setTimeout(() => child.kill("SIGKILL"), 120000)
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, out })
    })
  })
}

for (const { name, command, setup } of runtimes) {
  test(`compat suite under ${name}: every check passes, and nothing is left running`, { timeout: 150000 }, async (t) => {
    const where = setup ? "run `bash scripts/setup-test-deps.sh`" : "run `npm install` (it is a devDependency)"
    assert.ok(fs.existsSync(command[0]), `${command[0]} is missing: ${where}`)
    const began = performance.now()
    const { code, signal, out } = await run(command)
    t.diagnostic(`${name}: ${((performance.now() - began) / 1000).toFixed(1)} s`)
    const closing = out.trimEnd().split("\n").at(-1)
    assert.equal(signal, null, `killed by ${signal}:\n${out}`)
    assert.match(closing, /^compat \(\w+ [\w.-]+ linux-x64\): \d+ passed, 0 failed$/, out)
    assert.equal(code, 0, out)
    assert.doesNotMatch(out, /panic|fatal/i, out)
    const left = descendants()
    assert.deepEqual(left, [], describePids(left))
  })
}
