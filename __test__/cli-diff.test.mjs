// The `toolnexus` command line (bin/toolnexus.mjs), run as a real subprocess against real MCP
// servers: `diff` against a saved snapshot.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { leakCheck, tmpConfig, tmpFile } from "./helpers.mjs"
import { ANSI, cli, disabled, fixtureServer, missing, plain } from "./lib/cli.mjs"

const T = { timeout: 30000 }

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

// ---------------------------------------------------------------------------------------------
// diff

const diffServers = () => ({
  a: fixtureServer(["add", "echo", "bare"]),
  b: fixtureServer(["ping"]),
  off: disabled,
  missing,
})

/** `toolnexus list --json` of `config`, as saved by a user. */
async function snapshotOf(config) {
  const r = await cli(["list", config, "--json"])
  assert.equal(r.code, 1, r.stderr) // `missing` fails, on purpose
  return JSON.parse(r.stdout)
}

test("diff: an identical snapshot is no drift, exit 0 (failure reasons are not compared)", T, async () => {
  const config = tmpConfig({ mcpServers: diffServers() })
  const saved = await snapshotOf(config)
  const snapshot = tmpConfig(saved, { name: "snapshot.json" })

  const json = await cli(["diff", config, snapshot, "--json"])
  assert.equal(json.code, 0, json.stderr)
  const none = { added: [], removed: [], changed: [] }
  assert.deepEqual(JSON.parse(json.stdout), {
    servers: { a: none, b: none, off: none, missing: { error: saved.errors.missing, ...none } },
    drift: false,
  })

  const human = await cli(["diff", config, snapshot])
  assert.equal(human.code, 0, human.stderr)
  assert.equal(human.stdout, `no drift: 4 servers match ${snapshot}\n`)
})

test("diff: a drifted snapshot reports every added, removed, changed tool and status change, exit 1", T, async () => {
  const config = tmpConfig({ mcpServers: diffServers() })
  const saved = await snapshotOf(config)
  const edited = structuredClone(saved)
  const a = edited.tools.a
  const byName = (name) => a.find((t) => t.name === name)
  // a: "echo" is new since the snapshot, "retired" is gone, two tools changed.
  edited.tools.a = a.filter((t) => t.name !== "echo")
  edited.tools.a.push(plain("retired"))
  byName("add").description = "Adds numbers (old wording)"
  // Same schema, keys in another order at every level: not a change.
  const reorder = (v) =>
    Array.isArray(v) ? v.map(reorder) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)])) : v
  byName("add").inputSchema = reorder(byName("add").inputSchema)
  byName("bare").description = "was described"
  byName("bare").inputSchema = { type: "object", properties: { verbose: { type: "boolean" } } }
  // b was disabled, off was connected, gone no longer exists.
  edited.status.b = "disabled"
  delete edited.tools.b
  edited.status.off = "connected"
  edited.tools.off = []
  edited.status.gone = "connected"
  edited.tools.gone = [plain("x")]
  const snapshot = tmpConfig(edited, { name: "drifted.json" })

  const json = await cli(["diff", config, snapshot, "--json"])
  assert.equal(json.code, 1, json.stderr)
  assert.deepEqual(JSON.parse(json.stdout), {
    servers: {
      a: {
        added: ["echo"],
        removed: ["retired"],
        changed: [
          { name: "add", fields: ["description"] },
          { name: "bare", fields: ["description", "inputSchema"] },
        ],
      },
      b: { status: { from: "disabled", to: "connected" }, added: [], removed: [], changed: [] },
      off: { status: { from: "connected", to: "disabled" }, added: [], removed: [], changed: [] },
      missing: { error: saved.errors.missing, added: [], removed: [], changed: [] },
      gone: { status: { from: "connected", to: "absent" }, added: [], removed: [], changed: [] },
    },
    drift: true,
  })

  const human = await cli(["diff", config, snapshot])
  assert.equal(human.code, 1, human.stderr)
  assert.doesNotMatch(human.stdout, ANSI)
  assert.equal(
    human.stdout,
    [
      "a",
      "  + echo",
      "  - retired",
      "  ~ add  (description)",
      "  ~ bare  (description, inputSchema)",
      "b",
      "  status disabled → connected",
      "off",
      "  status connected → disabled",
      "gone",
      "  status connected → absent",
      "",
      `drift: 7 changes in 4 of 5 servers since ${snapshot}`,
      "",
    ].join("\n"),
  )
})

test("diff: an unreadable or foreign snapshot is exit 2 before any server starts", T, async () => {
  const pidFile = tmpFile("diff.pid")
  const config = tmpConfig({ mcpServers: { fix: fixtureServer(["ping"], pidFile) } })
  const cases = [
    [path.join(path.dirname(config), "absent.json"), /cannot read snapshot/],
    [tmpConfig("{ not json", { name: "bad.json" }), /is not valid JSON/],
    [tmpConfig([], { name: "array.json" }), /not a `toolnexus list --json` output: expected an object/],
    [tmpConfig({ tools: {} }, { name: "nostatus.json" }), /"status" must be an object/],
    [tmpConfig({ status: { fix: "connected" }, tools: { fix: {} } }, { name: "tools.json" }), /tools\.fix must be an array/],
  ]
  for (const [snapshot, message] of cases) {
    const r = await cli(["diff", config, snapshot])
    assert.equal(r.code, 2, `${snapshot}: ${r.stderr}`)
    assert.equal(r.stdout, "")
    assert.match(r.stderr, message)
  }
  assert.equal(fs.existsSync(pidFile), false, "no server was started")
})
