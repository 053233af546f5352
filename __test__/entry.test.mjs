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

test("builtins (`builtins?: false`, index.d.ts): false or absent is accepted, anything else refused in words", async () => {
  const { createToolkit } = esm
  await (await createToolkit({ builtins: false })).close()
  await (await createToolkit({})).close()
  for (const builtins of [true, { bash: true }, "yes"]) {
    await assert.rejects(createToolkit({ builtins }), {
      name: "TypeError",
      message: "toolnexus: builtins can only be false (toolnexus has no built-in tools)",
    })
  }
})

test("the public entry holds the public API only: no internal class of the binding", () => {
  const cjs = require("toolnexus")
  for (const internal of ["NativeService", "NativeBridge", "NativeSource", "HttpServer", "ToolkitNamer", "callMcpTool", "createService"]) {
    assert.equal(internal in cjs, false, internal)
  }
})
