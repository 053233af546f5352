// The napi boundary under hostile values: cyclic, deep, sparse, huge and wrong-typed values
// (Symbols, BigInts, functions, Proxies and getters that throw, null prototypes, typed arrays)
// thrown at parseMcpConfig, listMcpTools, loadMcp, createToolkit, defineTool + buildMcpServer,
// a loaded tool's execute and the exported mappers, plus config files that are not files.
//
// Each group of cases runs in its own Node process (__test__/fixtures/boundary-cases.mjs), so
// a native crash shows up as that process dying by a signal, a failure here, instead of taking
// the test runner down. Every case must end in a TypeError/Error with the expected message, or
// in a value (a failed status, an isError result) that passes its check.
import assert from "node:assert/strict"
import test from "node:test"
import { groups } from "./fixtures/boundary-cases.mjs"
import { fixture, runNode } from "./helpers.mjs"

const totals = { groups: 0, cases: 0, crashes: 0 }

for (const [group, cases] of Object.entries(groups)) {
  // Generous hang bounds, growing with the number of cases (scripts/fuzz-long.sh plays many).
  const timeout = Math.max(100_000, cases.length * 200)
  test(`boundary: ${group}`, { timeout: timeout + 20_000 }, async (t) => {
    const started = performance.now()
    const run = await runNode(fixture("boundary-cases"), { args: [group], timeout })
    totals.groups++
    if (run.signal !== null || run.code !== 0) totals.crashes++
    assert.equal(run.signal, null, `the case process died by ${run.signal}; stderr:\n${run.stderr.slice(-3000)}`)
    assert.equal(run.code, 0, `the case process exited ${run.code}; stderr:\n${run.stderr.slice(-3000)}`)
    const results = run.stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line))
    assert.deepEqual(
      results.map((r) => r.name),
      cases.map((c) => c.name),
      "every case ran, in order",
    )
    for (const [i, c] of cases.entries()) {
      const r = results[i]
      totals.cases++
      if (c.expect.check) {
        assert.equal(r.outcome, "returned", `${c.name}: expected a value, got ${r.error}: ${r.message}`)
        assert.ok(r.ok, `${c.name}: the value fails its check: ${r.value}`)
      } else {
        assert.equal(r.outcome, "threw", `${c.name}: expected ${c.expect.error}, got the value ${r.value}`)
        assert.equal(r.error, c.expect.error, `${c.name}: ${r.message}`)
        assert.match(r.message, c.expect.message, `${c.name}: ${r.message}`)
        // A message quotes a bounded part of what it was given, never all of it.
        assert.ok(r.message.length < 600, `${c.name}: message of ${r.message.length} characters`)
      }
    }
    t.diagnostic(`${cases.length} cases in ${Math.round(performance.now() - started)} ms`)
  })
}

test("boundary: totals", () => {
  const expected = Object.values(groups).reduce((n, cases) => n + cases.length, 0)
  console.log(`# boundary fuzz: ${totals.cases} cases in ${totals.groups} processes, crashes=${totals.crashes}`)
  assert.equal(totals.crashes, 0)
  assert.equal(totals.cases, expected)
})
