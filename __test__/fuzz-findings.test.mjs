// Regressions for what a hostile fuzz run found (issue 27): a listing that panicked on valid
// paging servers, a timeout that bounded each page instead of the listing, a DELETE waited for
// past the server's timeout, and a list_changed storm that re-listed in a tight loop. Every
// server is real: the SDK's low-level Server over stdio (fixtures/pager-server.mjs) or its
// streamable HTTP transport (fixtures/http-servers.mjs).
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools, loadMcp } from "toolnexus"
import { nodeFixture, leakCheck } from "./helpers.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"

const T = { timeout: 60000 }
const pager = (...args) => ({ command: nodeFixture("pager-server", ...args) })

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

test("paging: 60 listings of a 300-page stdio server, 6 at a time, all complete with every tool in order", T, async (t) => {
  const expected = ["t0_0", "t0_1", "t0_2", "listings"]
  for (let page = 1; page < 300; page++) expected.push(`t${page}_0`, `t${page}_1`, `t${page}_2`)
  const failures = []
  let done = 0
  const started = performance.now()
  const worker = async () => {
    while (done < 60) {
      done++
      const inv = await listMcpTools({ mcpServers: { p: { ...pager("--pages", "300"), timeout: 30000 } } })
      if (inv.status.p !== "connected") failures.push(inv.errors.p)
      else assert.deepEqual(inv.tools.p.map((tool) => tool.name), expected)
    }
  }
  await Promise.all(Array.from({ length: 6 }, worker))
  t.diagnostic(`60 listings of 300 pages in ${(performance.now() - started).toFixed(0)} ms`)
  assert.deepEqual(failures, [])
})

test("paging: the server's timeout bounds the whole listing (8 pages of 1.5 s each fail at 2 s)", T, async () => {
  const started = performance.now()
  const inv = await listMcpTools({ mcpServers: { slow: { ...pager("--pages", "8", "--delay", "1500"), timeout: 2000 } } })
  const elapsed = performance.now() - started
  assert.equal(inv.status.slow, "failed")
  assert.match(inv.errors.slow, /^timed out after 2000 ms during tools\/list/)
  // Each page took 1.5 s: a per-page bound would have connected after 12 s.
  assert.ok(elapsed < 6000, `reported after ${elapsed.toFixed(0)} ms`)
})

test("paging: a server that hands out a fresh cursor on every page fails at its timeout", T, async () => {
  const started = performance.now()
  const inv = await listMcpTools({ mcpServers: { endless: { ...pager("--endless", "--delay", "20"), timeout: 1000 } } })
  const elapsed = performance.now() - started
  assert.equal(inv.status.endless, "failed")
  assert.match(inv.errors.endless, /^timed out after 1000 ms during tools\/list/)
  // 1000 pages of 20 ms (the page cap) would take 20 s.
  assert.ok(elapsed < 5000, `reported after ${elapsed.toFixed(0)} ms`)
})

test("close: a session DELETE that is drip-fed is waited for within the server's timeout, not 3 s", T, async (t) => {
  const server = await startStreamableHttp({ tools: 3, dripDeleteMs: 10000 })
  try {
    const started = performance.now()
    const inv = await listMcpTools({ mcpServers: { web: { url: server.url, timeout: 1000 } } })
    const elapsed = performance.now() - started
    t.diagnostic(`reported after ${elapsed.toFixed(0)} ms`)
    assert.equal(inv.status.web, "connected")
    assert.deepEqual(inv.tools.web.map((tool) => tool.name), ["tool1", "tool2", "tool3"])
    assert.equal(server.stats.http.DELETE, 1)
    // Connecting and listing take well under a second here; the DELETE gets at most the 1 s
    // timeout (it used to get a fixed 3 s).
    assert.ok(elapsed < 2600, `reported after ${elapsed.toFixed(0)} ms`)
  } finally {
    await server.close()
  }
})

test("list_changed storm: re-lists are coalesced to about ten a second, calls are unaffected, onToolsChanged stays quiet", T, async (t) => {
  const changes = []
  const source = await loadMcp({ mcpServers: { storm: pager("--pages", "1", "--storm") } }, { onToolsChanged: (c) => changes.push(c) })
  try {
    const listings = source.tools.find((tool) => tool.name === "storm_listings")
    const ping = source.tools.find((tool) => tool.name === "storm_t0_0")
    const count = async () => Number((await listings.execute({})).output)
    const before = await count()
    const window = 2000
    const started = performance.now()
    // Calls keep going while the server storms (each tools/list answer announces a change).
    let calls = 0
    while (performance.now() - started < window) {
      const results = await Promise.all(Array.from({ length: 20 }, () => ping.execute({})))
      for (const result of results) assert.deepEqual([result.output, result.isError], ["t0_0", false])
      calls += results.length
    }
    const elapsed = performance.now() - started
    const relists = (await count()) - before
    t.diagnostic(`${relists} re-lists and ${calls} calls in ${elapsed.toFixed(0)} ms`)
    // At most one re-list every 100 ms, plus the one in flight at each end of the window.
    assert.ok(relists <= Math.ceil(elapsed / 100) + 2, `${relists} re-lists in ${elapsed.toFixed(0)} ms`)
    assert.ok(relists >= 2, `the storm is followed at all (${relists} re-lists)`)
    assert.ok(calls >= 100, `${calls} calls`)
    // The tools never changed: nobody is told they did.
    assert.deepEqual(changes, [])
  } finally {
    await source.close()
  }
})
