// What the loadMcp tests (load-*.test.mjs) share: server-everything's config, a loadMcp that
// remembers every source for the clean-up after each test (which first checks that nothing was
// left running, docs/loading.md), the tools of a source by name, a capture of ToolnexusWarnings, and
// execute in full or in words.
import assert from "node:assert/strict"
import { loadMcp } from "toolnexus"
import { leakCheck, serverEverything } from "../helpers.mjs"

export const T = { timeout: 30000 }
export const everything = () => ({ command: [process.execPath, serverEverything, "stdio"], timeout: 15000 })

/**
 * Registers the clean-up with `afterEach` (docs/loading.md: close() leaves nothing running; whatever a
 * test did, no child of this process survives it; the check comes first, so a test that forgot
 * to close fails) and returns `load(input, opts)`: loadMcp, remembering the source for it.
 */
export function loadHarness(afterEach) {
  const track = leakCheck(afterEach)
  return async (input, opts) => track(await loadMcp(input, opts))
}

/** The tools of a source by name. */
export const byName = (source) => Object.fromEntries(source.tools.map((t) => [t.name, t]))
export const names = (source) => source.tools.map((t) => t.name)

/** Collects ToolnexusWarning messages until stop() (which lets pending emitWarning ticks run). */
export function captureWarnings() {
  const seen = []
  const listener = (w) => {
    if (w.name === "ToolnexusWarning") seen.push(w.message)
  }
  process.on("warning", listener)
  return {
    async stop() {
      await new Promise((resolve) => setImmediate(resolve)) // emitWarning emits on nextTick
      process.off("warning", listener)
      return seen
    },
  }
}

/** Calls execute and fails the test if it rejects (execute must never reject). */
export async function callFull(tool, args, ctx) {
  let result
  try {
    result = await tool.execute(args, ctx)
  } catch (err) {
    assert.fail(`execute rejected (it must never reject): ${err?.stack ?? err}`)
  }
  return result
}

/** The result in words (output, isError, metadata): what the mapping tests compare exactly.
 * The MCP parts (`content`, `structuredContent`) have tests of their own. */
export async function call(tool, args, ctx) {
  const { content, structuredContent, ...words } = await callFull(tool, args, ctx)
  return words
}
