// docs/listing.md, docs/loading.md: Node exiting without close() — naturally, through process.exit(), or killed by a
// signal it handles — must not leave a stdio server (or its grandchildren) running.
import { test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { fixture, isAlive, readPid, runNode, tmpDir, waitFor } from "./helpers.mjs"

const T = { timeout: 30000 }

function script(dir, ending) {
  const file = path.join(dir, "leave.mjs")
  fs.writeFileSync(
    file,
    `import { loadMcp } from "toolnexus"
const source = await loadMcp({ g: { command: ["node", ${JSON.stringify(fixture("grandchild-server.mjs"))}],
  environment: { PID_FILE: ${JSON.stringify(path.join(dir, "child.pid"))}, GRANDCHILD_PID_FILE: ${JSON.stringify(path.join(dir, "grandchild.pid"))} } } })
if (source.status.g !== "connected") throw new Error(JSON.stringify(source.errors))
console.log("loaded")
${ending}
`,
  )
  return file
}

for (const [name, ending, code] of [
  ["returns from its last statement", "", 0],
  ["calls process.exit(0)", "process.exit(0)", 0],
  ["throws an uncaught error", 'throw new Error("boom")', 1],
]) {
  test(`a loaded server dies with Node when the script ${name}`, T, async () => {
    const dir = tmpDir()
    // The script lives in the repository so that `toolnexus` resolves to this package.
    const file = script(dir, ending)
    const local = path.join(import.meta.dirname, `_exit_${path.basename(dir)}.mjs`)
    fs.copyFileSync(file, local)
    try {
      const r = await runNode(local)
      assert.match(r.stdout, /^loaded$/m, r.stderr)
      assert.equal(r.code, code, r.stderr)
      const pids = [readPid(path.join(dir, "child.pid")), readPid(path.join(dir, "grandchild.pid"))]
      await waitFor(() => pids.every((pid) => !isAlive(pid)), {
        timeout: 5000,
        message: `server processes ${pids} gone after Node exited`,
      })
    } finally {
      fs.rmSync(local, { force: true })
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
}

test("a worker thread ending kills its own servers and leaves the main thread's running", T, async () => {
  const dir = tmpDir()
  const local = path.join(import.meta.dirname, `_exit_worker_${path.basename(dir)}.mjs`)
  const server = (name) => ({
    command: ["node", fixture("stdio-server.mjs"), "--tools", "echo"],
    environment: { PID_FILE: path.join(dir, `${name}.pid`) },
  })
  fs.writeFileSync(
    local,
    `import { Worker } from "node:worker_threads"
import { loadMcp } from "toolnexus"
const main = await loadMcp({ main: ${JSON.stringify(server("main"))} })
const worker = new Worker(\`
  const { loadMcp } = require("toolnexus")
  const { parentPort } = require("node:worker_threads")
  loadMcp({ w: ${JSON.stringify(server("worker")).replaceAll("\\", "\\\\")} }).then((s) => parentPort.postMessage(s.status.w))
\`, { eval: true })
const status = await new Promise((resolve) => worker.once("message", resolve))
await worker.terminate()
console.log("worker", status)
const r = await main.tools[0].execute({ text: "still here" })
console.log("main", r.isError ? "error " + r.output : "ok")
await main.close()
`,
  )
  try {
    const r = await runNode(local)
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^worker connected$/m, r.stderr)
    assert.match(r.stdout, /^main ok$/m, r.stdout + r.stderr)
    const workerPid = readPid(path.join(dir, "worker.pid"))
    await waitFor(() => !isAlive(workerPid), { timeout: 5000, message: "the worker's server gone" })
  } finally {
    fs.rmSync(local, { force: true })
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
