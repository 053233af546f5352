// Tool search for big catalogs (issue 24), against real servers only: source.searchTools
// ranking server-filesystem's (and server-everything's) real tools, its options, and the index
// following notifications/tools/list_changed. (toolkit.searchTools: search-toolkit.test.mjs;
// served toolSearch: search-served.test.mjs and search-clients.test.mjs.)
//
// server-filesystem and server-memory are published packages, devDependencies of the repo.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { loadMcp } from "toolnexus"
import { waitFor } from "./helpers.mjs"
import { everything, filesystem, fixtureServer, names, searchHarness } from "./lib/search.mjs"

const { defer } = searchHarness(afterEach)
const T = { timeout: 120_000 }

// ---------------------------------------------------------------------------------------------
// source.searchTools

test("source.searchTools ranks server-filesystem's real tools: clear requests find the right tool first", T, async () => {
  const source = await loadMcp({ fs: filesystem() })
  defer(() => source.close())
  assert.equal(source.status.fs, "connected", JSON.stringify(source.errors))
  const all = new Map(source.tools.map((t) => [t.name, t]))
  assert.ok(all.has("fs_list_directory") && all.has("fs_move_file"), [...all.keys()].join(", "))

  const first = {
    "create a new directory": "fs_create_directory",
    "move a file to another folder": "fs_move_file",
    "write a file": "fs_write_file",
    "edit a file": "fs_edit_file",
    "get file info": "fs_get_file_info",
    "directory tree": "fs_directory_tree",
  }
  for (const [query, expected] of Object.entries(first)) {
    const found = source.searchTools(query)
    assert.equal(found[0]?.name, expected, `${query}: ${names(found).join(", ")}`)
  }
  const top3 = {
    "list the entries of a directory": "fs_list_directory",
    "which directories am I allowed to access": "fs_list_allowed_directories",
    "search for files matching a pattern": "fs_search_files",
    "read several files at once": "fs_read_multiple_files",
  }
  for (const [query, expected] of Object.entries(top3)) {
    const found = source.searchTools(query, { limit: 3 })
    assert.ok(names(found).includes(expected), `${query}: ${names(found).join(", ")}`)
  }

  // Each match is the tool as source.tools has it, with its server and a score, best first.
  const found = source.searchTools("list the entries of a directory", { limit: 5 })
  assert.ok(found.length >= 1 && found.length <= 5, String(found.length))
  for (const m of found) {
    const tool = all.get(m.name)
    assert.ok(tool, m.name)
    assert.deepEqual(Object.keys(m).sort(), ["description", "inputSchema", "name", "score", "server"])
    assert.equal(m.server, "fs")
    assert.equal(m.description, tool.description)
    assert.deepEqual(m.inputSchema, tool.inputSchema)
    assert.ok(Number.isFinite(m.score) && m.score > 0, String(m.score))
  }
  for (let i = 1; i < found.length; i++) assert.ok(found[i - 1].score >= found[i].score, `ranked best first: ${found.map((m) => m.score)}`)
  // The same search answers the same.
  assert.deepEqual(source.searchTools("list the entries of a directory", { limit: 5 }), found)
  // Nothing to match: no matches (not the whole catalog).
  assert.deepEqual(source.searchTools("zyxwvut qqqq"), [])
  assert.deepEqual(source.searchTools(""), [])
})

test("source.searchTools: limit, the servers filter, and a TypeError for each bad argument", T, async () => {
  const source = await loadMcp({ fs: filesystem(), everything })
  defer(() => source.close())
  assert.deepEqual(source.status, { fs: "connected", everything: "connected" }, JSON.stringify(source.errors))

  // Default 5; `limit` caps it; 1000 is allowed.
  const wide = "file directory echo"
  assert.equal(source.searchTools(wide).length, 5)
  assert.equal(source.searchTools(wide, {}).length, 5)
  assert.equal(source.searchTools(wide, null).length, 5)
  assert.equal(source.searchTools(wide, { limit: 1 }).length, 1)
  assert.deepEqual(source.searchTools(wide, { limit: 1 }), source.searchTools(wide).slice(0, 1))
  const every = source.searchTools(wide, { limit: 1000 })
  assert.ok(every.length > 5 && every.length <= source.tools.length, `${every.length} of ${source.tools.length}`)
  assert.deepEqual(new Set(every.map((m) => m.server)), new Set(["fs", "everything"]))

  // `servers`: only those servers' tools, in the same order as without the filter.
  const onlyFs = source.searchTools(wide, { limit: 1000, servers: ["fs"] })
  assert.ok(onlyFs.length > 0 && onlyFs.every((m) => m.server === "fs"), JSON.stringify(onlyFs.map((m) => [m.name, m.server])))
  assert.deepEqual(names(onlyFs), names(every.filter((m) => m.server === "fs")))
  const onlyEverything = source.searchTools("echo a message back", { servers: ["everything"] })
  assert.equal(onlyEverything[0]?.name, "everything_echo", names(onlyEverything).join(", "))
  assert.ok(onlyEverything.every((m) => m.server === "everything"))
  assert.deepEqual(source.searchTools(wide, { servers: [] }), [])
  assert.deepEqual(source.searchTools(wide, { servers: ["nope"] }), [])
  assert.equal(source.searchTools(wide, { servers: ["fs", "everything"], limit: 1000 }).length, every.length)

  const bad = [
    [[], "toolnexus: searchTools needs a query (a string), got undefined"],
    [[1], "toolnexus: searchTools needs a query (a string), got number"],
    [[null], "toolnexus: searchTools needs a query (a string), got null"],
    [[{ query: "x" }], "toolnexus: searchTools needs a query (a string), got object"],
    [["x", "limit"], "toolnexus: searchTools options must be an object, got string"],
    [["x", 3], "toolnexus: searchTools options must be an object, got number"],
    [["x", { limit: 0 }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 0"],
    [["x", { limit: 1001 }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 1001"],
    [["x", { limit: 2.5 }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 2.5"],
    [["x", { limit: "3" }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got 3"],
    [["x", { limit: NaN }], "toolnexus: searchTools limit must be a whole number from 1 to 1000, got NaN"],
    [["x", { servers: "fs" }], "toolnexus: searchTools servers must be an array of server names"],
    [["x", { servers: ["fs", 1] }], "toolnexus: searchTools servers must be an array of server names"],
  ]
  for (const [args, message] of bad) {
    assert.throws(() => /** @type {any} */ (source.searchTools)(...args), { name: "TypeError", message }, JSON.stringify(args))
  }
})

test("source.searchTools follows notifications/tools/list_changed: a grown tool is found, a shrunk one no longer", T, async () => {
  const source = await loadMcp({ up: fixtureServer("grow", "shrink", "echo") })
  defer(() => source.close())
  assert.deepEqual(names(source.tools), ["up_grow", "up_shrink", "up_echo"])
  assert.deepEqual(source.searchTools("zeppelin"), [])
  const before = source.searchTools("echo the text back")
  assert.equal(before[0]?.name, "up_echo")

  const grow = source.tools.find((t) => t.name === "up_grow")
  assert.equal((await grow.execute({ name: "zeppelin_hangar" })).output, "added zeppelin_hangar")
  await waitFor(() => source.tools.some((t) => t.name === "up_zeppelin_hangar"), { timeout: 10000, message: "the grown tool listed" })
  const grown = source.searchTools("zeppelin")
  assert.deepEqual(names(grown), ["up_zeppelin_hangar"])
  assert.equal(grown[0].server, "up")
  assert.equal(grown[0].description, "zeppelin_hangar")

  const shrink = source.tools.find((t) => t.name === "up_shrink")
  assert.equal((await shrink.execute({ name: "zeppelin_hangar" })).output, "removed zeppelin_hangar")
  await waitFor(() => !source.tools.some((t) => t.name === "up_zeppelin_hangar"), { timeout: 10000, message: "the shrunk tool gone" })
  assert.deepEqual(source.searchTools("zeppelin"), [])
  assert.deepEqual(source.searchTools("echo the text back"), before)
})
