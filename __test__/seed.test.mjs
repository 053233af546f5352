// Seed 001 examples 2 and 3, verbatim (__test__/seed/), each run as its own process from the
// repository root, the way a user runs them. They serve tools with toolnexus's own
// buildMcpServer/defineTool (docs/serving.md), so they are pending until those exports land: flip
// PENDING to false then. (Example 1 needs only listMcpTools and runs in list-stdio.test.mjs.)
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { repoRoot, runNode, leakCheck } from "./helpers.mjs"

const PENDING = false

const here = path.dirname(fileURLToPath(import.meta.url))
const T = { timeout: 20000, skip: PENDING || false }

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

/** The seed scripts write their server under js/_docs_*; none may be left behind. */
function docsLeftovers() {
  return fs.readdirSync(path.join(repoRoot, "js")).filter((f) => f.startsWith("_docs_"))
}

test("seed 001 example 2: hermetic listing, unfiltered names, failed server has no entry", T, async () => {
  const r = await runNode(path.join(here, "seed", "001-example-2.mjs"), { cwd: repoRoot })
  assert.equal(r.code, 0, `exit ${r.code} ${r.signal ?? ""}\n${r.stderr}`)
  assert.match(r.stdout, /^ok: a,b,c \| \{"srv":"connected","bad":"failed"\}$/m)
  assert.deepEqual(docsLeftovers(), [])
})

test("seed 001 example 3: full ToolInfo shape under a bounding signal", T, async () => {
  const r = await runNode(path.join(here, "seed", "001-example-3.mjs"), { cwd: repoRoot })
  assert.equal(r.code, 0, `exit ${r.code} ${r.signal ?? ""}\n${r.stderr}`)
  const line = r.stdout.split("\n").find((l) => l.startsWith("ok: search "))
  assert.ok(line, r.stdout)
  const schema = JSON.parse(line.slice("ok: search ".length))
  assert.equal(schema.type, "object")
  assert.deepEqual(schema.properties, { q: { type: "string" } })
  assert.deepEqual(schema.required, ["q"])
  assert.deepEqual(docsLeftovers(), [])
})
