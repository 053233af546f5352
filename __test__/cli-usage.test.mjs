// The `toolnexus` command line (bin/toolnexus.mjs), run as a real subprocess: a malformed config
// and usage errors are exit 2, --help is exit 0.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { leakCheck, repoRoot, tmpConfig } from "./helpers.mjs"
import { ANSI, cli, usageLine } from "./lib/cli.mjs"

const T = { timeout: 30000 }

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

// ---------------------------------------------------------------------------------------------
// config and usage errors

const BROKEN_JSONC = `{
  // comments are fine, this missing comma is not
  "mcpServers": {
    "fix": { "command": "node", }
    "other": { "command": "node" }
  }
}
`

test("a malformed JSONC config is exit 2 with file:line:col on stderr, for every command", T, async () => {
  const config = tmpConfig(BROKEN_JSONC)
  const snapshot = tmpConfig({ tools: {}, status: {}, errors: {} })
  for (const args of [["list", config], ["list", config, "--json"], ["diff", config, snapshot], ["serve", config, "--addr", "127.0.0.1:0"]]) {
    const r = await cli(args)
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stdout, "", args.join(" "))
    assert.ok(r.stderr.includes(`${config}:5:5`), `${args.join(" ")}: ${r.stderr}`)
  }
  const r = await cli(["list", path.join(path.dirname(config), "no-such-mcp.json")])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /cannot read MCP config .*no-such-mcp\.json/)
})

test("usage errors are exit 2 with the usage on stderr and nothing on stdout", T, async () => {
  const config = tmpConfig({ mcpServers: {} })
  const cases = [
    [],
    ["nope"],
    ["list", config, "extra"],
    ["list", config, "--bogus"],
    ["list", config, "--timeout"],
    ["list", config, "--timeout", "soon"],
    ["list", config, "--timeout", "0"],
    ["diff"],
    ["diff", config, config, config],
    ["diff", config, config, "--addr", "x:1"],
    ["serve", config, "extra"],
    ["serve", config, "--addr", "no-port"],
    ["serve", config, "--addr", "127.0.0.1:99999"],
    ["serve", config, "--json"],
    ["help", "nope"],
    ["call"],
    ["call", "server"],
    ["call", config, "server"],
    ["call", config, "s", "t", "--bogus"],
    ["configs", "extra"],
  ]
  for (const args of cases) {
    const r = await cli(args)
    const label = `toolnexus ${args.join(" ")}`
    assert.equal(r.code, 2, `${label}: ${r.stderr}`)
    assert.equal(r.stdout, "", label)
    assert.match(r.stderr, usageLine, label)
  }
})

test("--help for the top level and each command is exit 0 on stdout", T, async () => {
  const cases = [
    [["--help"], "Usage: toolnexus <command>"],
    [["-h"], "Usage: toolnexus <command>"],
    [["help"], "Usage: toolnexus <command>"],
    [["list", "--help"], "Usage: toolnexus list [<config>]"],
    [["list", "-h"], "Usage: toolnexus list [<config>]"],
    [["help", "list"], "Usage: toolnexus list [<config>]"],
    [["diff", "--help"], "Usage: toolnexus diff [<config>] <snapshot.json>"],
    [["help", "diff"], "Usage: toolnexus diff [<config>] <snapshot.json>"],
    [["serve", "--help"], "Usage: toolnexus serve [<config>]"],
    [["serve", "whatever.json", "-h"], "Usage: toolnexus serve [<config>]"],
    [["call", "--help"], "Usage: toolnexus call [<config>] <server> <tool>"],
    [["help", "call"], "Usage: toolnexus call [<config>] <server> <tool>"],
    [["configs", "--help"], "Usage: toolnexus configs [--json]"],
  ]
  for (const [args, head] of cases) {
    const r = await cli(args)
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`)
    assert.equal(r.stderr, "")
    assert.ok(r.stdout.startsWith(head), `${args.join(" ")}: ${r.stdout.slice(0, 80)}`)
    assert.doesNotMatch(r.stdout, ANSI)
  }
  const diffHelp = (await cli(["diff", "--help"])).stdout
  for (const key of ['"servers"', '"status"', '"from"', '"to"', '"added"', '"removed"', '"changed"', '"fields"', '"drift"']) {
    assert.ok(diffHelp.includes(key), `diff --help documents ${key}`)
  }
  const version = await cli(["--version"])
  assert.equal(version.code, 0)
  assert.equal(version.stdout, `${JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version}\n`)
})
