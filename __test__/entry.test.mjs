// The ESM entry (index.mjs) re-exports the CommonJS loader's exports by name: the two lists must
// agree, or an `import { x } from "toolnexus"` of a new export would fail.
import { test } from "node:test"
import assert from "node:assert/strict"
import { createRequire } from "node:module"
import * as esm from "toolnexus"

const require = createRequire(import.meta.url)

test("import and require see the same exports, the very same values", () => {
  const cjs = require("toolnexus")
  assert.deepEqual(Object.keys(esm).filter((k) => k !== "default").sort(), Object.keys(cjs).sort())
  for (const key of Object.keys(cjs)) assert.equal(esm[key], cjs[key], key)
  assert.equal(esm.default, cjs)
})

test("import resolves to the ESM entry, require to the CommonJS loader", () => {
  assert.match(import.meta.resolve("toolnexus"), /\/index\.mjs$/)
  assert.match(require.resolve("toolnexus"), /\/index\.js$/)
})
