// loadMcp (docs/loading.md), part 5: tool naming (sanitized, shortened, disambiguated, with
// warnings), the tools filter, and isolation and order across servers.
// Real servers throughout (server-everything, the SDK-built fixtures in __test__/fixtures/, an
// in-process streamable-HTTP server); the shared set-up and clean-up are in lib/load.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { sanitize } from "toolnexus"
import { descendants, describePids, nodeFixture } from "./helpers.mjs"
import { byName, call, captureWarnings, loadHarness, names, T } from "./lib/load.mjs"

const load = loadHarness(afterEach)

/**
 * Loads `cfg` twice, capturing the warnings of each load; `onFirst(source)` checks the first
 * source before it is closed. Resolves the two loads' { names, warnings }.
 */
async function loadTwice(cfg, onFirst) {
  const runs = []
  for (let i = 0; i < 2; i++) {
    const warnings = captureWarnings()
    const source = await load(cfg)
    runs.push({ names: names(source), warnings: await warnings.stop() })
    if (i === 0) await onFirst(source)
    await source.close()
  }
  return runs
}

// ---------------------------------------------------------------------------------------------
// Naming

test("naming: server names with spaces, dots and emoji are sanitized per UTF-16 unit", T, async () => {
  const warnings = captureWarnings()
  const source = await load({
    mcpServers: {
      "my server.v2": { command: nodeFixture("stdio-server", "--tools", "read.file,echo") },
      "😀 bot": { command: nodeFixture("stdio-server", "--tools", "héllo") },
    },
  })
  assert.deepEqual(await warnings.stop(), [])
  assert.deepEqual(names(source), ["my_server_v2_read_file", "my_server_v2_echo", "___bot_h_llo"])
  for (const [server, tool] of [
    ["my server.v2", "read.file"],
    ["😀 bot", "héllo"],
  ]) {
    assert.ok(names(source).includes(`${sanitize(server)}_${sanitize(tool)}`))
  }
  const tools = byName(source)
  // Calls go to the original tool name.
  assert.deepEqual(await call(tools.my_server_v2_read_file, {}), { output: "read.file", isError: false, metadata: { server: "my server.v2" } })
  assert.deepEqual(await call(tools.___bot_h_llo, {}), { output: "héllo", isError: false, metadata: { server: "😀 bot" } })
  await source.close()
})

test("naming: a name over 64 characters is shortened deterministically, with a warning", T, async () => {
  const long = `very_long_tool_name_${"x".repeat(50)}` // 70 characters
  const sibling = `very_long_tool_name_${"x".repeat(49)}y` // same readable head, different tool
  assert.equal(long.length, 70)
  const cfg = { mcpServers: { srv: { command: nodeFixture("stdio-server", "--tools", `${long},${sibling},short`) } } }
  const runs = await loadTwice(cfg, async (source) => {
    const tools = source.tools
    assert.deepEqual(await call(tools[0], {}), { output: long, isError: false, metadata: { server: "srv" } })
    assert.deepEqual(await call(tools[1], {}), { output: sibling, isError: false, metadata: { server: "srv" } })
  })
  const [a, b] = runs
  assert.deepEqual(a.names, b.names, "the same config gives the same names")
  const [n1, n2, n3] = a.names
  assert.equal(n3, "srv_short")
  for (const [n, tool] of [
    [n1, long],
    [n2, sibling],
  ]) {
    assert.equal(n.length, 64, n)
    assert.match(n, /^[A-Za-z0-9_-]{1,64}$/)
    assert.ok(n.startsWith(`srv_${tool}`.slice(0, 40)), `${n} keeps a readable head`)
  }
  assert.notEqual(n1, n2)
  assert.equal(a.warnings.length, 2, a.warnings.join("\n"))
  assert.ok(a.warnings[0].includes(`srv_${long}`), a.warnings[0])
  assert.ok(a.warnings[0].includes(n1), a.warnings[0])
  assert.ok(a.warnings[1].includes(n2), a.warnings[1])
  assert.deepEqual(a.warnings, b.warnings)
})

test("naming: sanitized names that collide across servers are disambiguated, with a warning", T, async () => {
  const cfg = {
    mcpServers: {
      "a.b": { command: nodeFixture("stdio-server", "--tools", "x") },
      a_b: { command: nodeFixture("stdio-server", "--tools", "x") },
    },
  }
  const runs = await loadTwice(cfg, async (source) => {
    const [first, second] = source.tools
    assert.equal(first.name, "a_b_x", "the first tool in config order keeps the plain name")
    assert.notEqual(second.name, first.name)
    assert.match(second.name, /^a_b_x.+/)
    assert.ok(second.name.length <= 64)
    assert.deepEqual(await call(first, {}), { output: "x", isError: false, metadata: { server: "a.b" } })
    assert.deepEqual(await call(second, {}), { output: "x", isError: false, metadata: { server: "a_b" } })
  })
  assert.deepEqual(runs[0].names, runs[1].names, "disambiguation is deterministic")
  assert.equal(runs[0].warnings.length, 1, runs[0].warnings.join("\n"))
  assert.ok(runs[0].warnings[0].includes("a_b_x"), runs[0].warnings[0])
  assert.ok(runs[0].warnings[0].includes(runs[0].names[1]), runs[0].warnings[0])
})

// ---------------------------------------------------------------------------------------------
// tools filter, isolation and order

test("tools filter: allowlist (tool order kept), drop-list, empty map, unknown name warned", T, async () => {
  const all = "add,echo,mixed,fail,bare"
  const warnings = captureWarnings()
  const source = await load({
    mcpServers: {
      allow: { command: nodeFixture("stdio-server", "--tools", all), tools: { echo: true, add: true, mixed: false } },
      drop: { command: nodeFixture("stdio-server", "--tools", all), tools: { fail: false, bare: false } },
      empty: { command: nodeFixture("stdio-server", "--tools", "add,echo"), tools: {} },
      unknown: { command: nodeFixture("stdio-server", "--tools", "add,echo"), tools: { echo: true, nope: true } },
      unknownDrop: { command: nodeFixture("stdio-server", "--tools", "add,echo"), tools: { ghost: false } },
    },
  })
  const seen = await warnings.stop()
  assert.deepEqual(names(source), [
    "allow_add",
    "allow_echo",
    "drop_add",
    "drop_echo",
    "drop_mixed",
    "empty_add",
    "empty_echo",
    "unknown_echo",
    "unknownDrop_add",
    "unknownDrop_echo",
  ])
  assert.equal(seen.length, 2, seen.join("\n"))
  assert.ok(seen[0].includes('"unknown"') && seen[0].includes('"nope"'), seen[0])
  assert.ok(seen[1].includes('"unknownDrop"') && seen[1].includes('"ghost"'), seen[1])
  await source.close()
})

test("isolation and order: failing servers are status/errors only; tools in server then tool order", T, async () => {
  const source = await load({
    mcpServers: {
      zeta: { command: nodeFixture("stdio-server", "--tools", "z2,z1") },
      off: { command: ["true"], enabled: false },
      missing: { command: ["/nonexistent-toolnexus-test-binary"] },
      alpha: { command: nodeFixture("stdio-server", "--tools", "a1") },
      crash: { command: nodeFixture("crash-server") },
      hang: { command: nodeFixture("hang-server"), timeout: 300 },
      beta: { command: nodeFixture("stdio-server", "--tools", "b2,b1,b3") },
    },
  })
  assert.deepEqual(Object.keys(source.status), ["zeta", "off", "missing", "alpha", "crash", "hang", "beta"])
  assert.deepEqual(source.status, {
    zeta: "connected",
    off: "disabled",
    missing: "failed",
    alpha: "connected",
    crash: "failed",
    hang: "failed",
    beta: "connected",
  })
  assert.deepEqual(Object.keys(source.errors), ["missing", "crash", "hang"])
  assert.match(source.errors.missing, /spawn|no such file|not found|enoent/i)
  assert.ok(source.errors.crash.includes("fatal: database missing"), source.errors.crash)
  assert.match(source.errors.hang, /time(d)?[ -]?out/i)
  assert.deepEqual(names(source), ["zeta_z2", "zeta_z1", "alpha_a1", "beta_b2", "beta_b1", "beta_b3"])
  // The failed servers' processes are already gone; the connected ones stay up until close().
  assert.equal(descendants().length, 3, describePids(descendants()))
  assert.deepEqual(await call(byName(source).beta_b1, {}), { output: "b1", isError: false, metadata: { server: "beta" } })
  await source.close()
})
