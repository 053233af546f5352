// bin/cli/config-edit.mjs: format-preserving edits of a config file in its own dialect, checked
// on exact texts; atomic writes on real files; the vendored jsonc-parser is the installed one.
import { test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { dialectOf, editConfigText, entryFor, readConfigFile, writeConfigFile } from "../bin/cli/config-edit.mjs"
import { repoRoot, tmpDir } from "./helpers.mjs"
import toolnexus from "../index.js"

const CLAUDE = `{
  // my servers
  "mcpServers": {
    "a": { "command": "x" }, // trailing
    /* before b */
    "b": {
      "command": "y",
      "disabled": true,
    },
  },
  "other": 1
}
`

test("the vendored jsonc-parser is byte-identical to the installed package's lib/umd", () => {
  const installed = path.join(repoRoot, "node_modules", "jsonc-parser")
  const vendored = path.join(repoRoot, "bin", "vendor", "jsonc-parser")
  const files = (dir) => fs.readdirSync(dir, { recursive: true }).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort()
  const umd = path.join(installed, "lib", "umd")
  assert.deepEqual(files(vendored), [...files(umd), "LICENSE.md", "README.md"].sort())
  for (const f of files(umd)) assert.ok(fs.readFileSync(path.join(umd, f)).equals(fs.readFileSync(path.join(vendored, f))), f)
  assert.ok(fs.readFileSync(path.join(installed, "LICENSE.md")).equals(fs.readFileSync(path.join(vendored, "LICENSE.md"))))
  const { version } = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8"))
  assert.match(fs.readFileSync(path.join(vendored, "README.md"), "utf8"), new RegExp(`\\*\\*${version.replaceAll(".", "\\.")}\\*\\*`))
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
  assert.equal(pkg.dependencies, undefined)
  assert.equal(typeof pkg.devDependencies["jsonc-parser"], "string")
})

test("dialectOf reads the wrapper key, else the file name", () => {
  const pick = (text, file, keys) => {
    const { name, at, local, remote, disabledKey, envRef } = dialectOf(text, file, keys)
    return { name, at, local, remote, disabledKey, ref: envRef("TOKEN") }
  }
  assert.deepEqual(pick(CLAUDE, "x.json"), { name: "mcpServers", at: ["mcpServers"], local: null, remote: "http", disabledKey: "disabled", ref: "${TOKEN}" })
  assert.deepEqual(pick(`{"servers": {}}`, "x.json"), { name: "vscode", at: ["servers"], local: "stdio", remote: "http", disabledKey: "disabled", ref: "${env:TOKEN}" })
  assert.deepEqual(pick(`{"mcp": {"servers": {}}}`, "x.json"), {
    name: "vscode-settings",
    at: ["mcp", "servers"],
    local: "stdio",
    remote: "http",
    disabledKey: "disabled",
    ref: "${env:TOKEN}",
  })
  assert.deepEqual(pick(`{"mcp": {"a": {"type": "local", "command": ["x"]}}}`, "x.json"), {
    name: "opencode",
    at: ["mcp"],
    local: "local",
    remote: "remote",
    disabledKey: "enabled",
    ref: "{env:TOKEN}",
  })
  assert.deepEqual(pick(`{"theme": "One", "context_servers": {}}`, "x.json"), { name: "zed", at: ["context_servers"], local: null, remote: null, disabledKey: "enabled", ref: "${TOKEN}" })
  // New or empty files: by name.
  const byName = (file) => dialectOf("", file).name
  assert.equal(byName("/p/.vscode/mcp.json"), "vscode")
  assert.equal(byName("/h/.config/Code/User/mcp.json"), "vscode")
  assert.equal(byName("/h/.config/Code/User/settings.json"), "vscode-settings")
  assert.equal(byName("/p/opencode.json"), "opencode")
  assert.equal(byName("/p/opencode.jsonc"), "opencode")
  assert.equal(byName("/p/.zed/settings.json"), "zed")
  assert.equal(byName("/h/.config/zed/settings.json"), "zed")
  assert.equal(byName("/p/.mcp.json"), "mcpServers")
  assert.equal(byName("/h/.gemini/settings.json"), "mcpServers")
  // VS Code's settings.json: "mcp" with "inputs" beside "servers" is VS Code's, whatever the file
  // name; an opencode server named "servers" (it has a type) is opencode's.
  assert.equal(pick(`{"mcp": {"inputs": [], "servers": {"a": {"type": "stdio", "command": "a"}}}}`, "x.json").name, "vscode-settings")
  assert.equal(pick(`{"mcp": {"inputs": [{"id": "k"}], "servers": {}}}`, "x.json").name, "vscode-settings")
  assert.equal(pick(`{"mcp": {"servers": {"type": "local", "command": ["x"]}, "b": {"type": "remote", "url": "u"}}}`, "x.json").name, "opencode")
  assert.equal(pick(`{"mcp": {"servers": {"enabled": false}}}`, "x.json").name, "opencode")
  // The file name of VS Code's user settings, and an explicit key path, win over the text.
  assert.equal(pick(`{"mcp": {}}`, "/h/.config/Code/User/settings.json").name, "vscode-settings")
  assert.equal(pick(`{"mcp": {"a": {"type": "local", "command": ["x"]}}}`, "/h/.config/Code/User/settings.json").name, "vscode-settings")
  assert.deepEqual(pick(`{"servers": {}}`, "/h/.claude.json", ["projects", "/p", "mcpServers"]), {
    name: "mcpServers",
    at: ["projects", "/p", "mcpServers"],
    local: null,
    remote: "http",
    disabledKey: "disabled",
    ref: "${TOKEN}",
  })
  // A settings file without servers yet keeps its name's dialect.
  assert.equal(dialectOf(`{"theme": "One"}`, "/h/.config/zed/settings.json").name, "zed")
})

test("add and remove keep everything else byte for byte", () => {
  const entry = entryFor("mcpServers", { type: "local", command: ["npx", "-y", "pkg"], env: { KEY: "${KEY}" } })
  const added = editConfigText(CLAUDE, "c.json", "new", { add: entry })
  assert.deepEqual(added.notes, [])
  assert.equal(
    added.text,
    `{
  // my servers
  "mcpServers": {
    "a": { "command": "x" }, // trailing
    /* before b */
    "b": {
      "command": "y",
      "disabled": true,
    },
    "new": {
      "command": "npx",
      "args": [
        "-y",
        "pkg"
      ],
      "env": {
        "KEY": "\${KEY}"
      }
    },
  },
  "other": 1
}
`,
  )
  assert.equal(editConfigText(added.text, "c.json", "new", { remove: true }).text, CLAUDE)
  assert.deepEqual(toolnexus.parseMcpConfig(added.text).new.command, ["npx", "-y", "pkg"])

  // Tabs and CRLF are the file's; they stay.
  const tabs = `{\r\n\t"servers": {\r\n\t\t"a": {\r\n\t\t\t"command": "x"\r\n\t\t}\r\n\t}\r\n}\r\n`
  const remote = entryFor("vscode", { type: "remote", url: "https://h/mcp", headers: { Authorization: "Bearer ${env:T}" } })
  const withRemote = editConfigText(tabs, ".vscode/mcp.json", "r", { add: remote }).text
  assert.equal(
    withRemote,
    `{\r\n\t"servers": {\r\n\t\t"a": {\r\n\t\t\t"command": "x"\r\n\t\t},\r\n\t\t"r": {\r\n\t\t\t"type": "http",\r\n\t\t\t"url": "https://h/mcp",\r\n\t\t\t"headers": {\r\n\t\t\t\t"Authorization": "Bearer \${env:T}"\r\n\t\t\t}\r\n\t\t}\r\n\t}\r\n}\r\n`,
  )
  assert.equal(editConfigText(withRemote, ".vscode/mcp.json", "r", { remove: true }).text, tabs)

  // A new file gets the wrapper of its name; removing the last server leaves `{}`.
  const fresh = editConfigText("", "/p/opencode.json", "o", { add: entryFor("opencode", { type: "local", command: ["uvx", "srv"], env: { A: "1" } }) }).text
  assert.equal(fresh, `{\n  "mcp": {\n    "o": {\n      "type": "local",\n      "command": [\n        "uvx",\n        "srv"\n      ],\n      "environment": {\n        "A": "1"\n      }\n    }\n  }\n}\n`)
  assert.equal(editConfigText(fresh, "/p/opencode.json", "o", { remove: true }).text, `{\n  "mcp": {}\n}\n`)
})

test("removing the only server among comments keeps the comments and leaves valid JSONC", () => {
  const text = `{\n  "mcpServers": {\n    // ours\n    "a": { "command": "x" }, // trailing\n  }\n}\n`
  const removed = editConfigText(text, "c.json", "a", { remove: true })
  // The comment on the entry's line goes with it; the one above stays.
  assert.equal(removed.text, `{\n  "mcpServers": {\n    // ours\n  }\n}\n`)
  assert.deepEqual(removed.notes, ['Any comment inside the "a" entry or after it on its line was removed with it.'])
  assert.deepEqual(toolnexus.parseMcpConfig(removed.text), {})
})

test("add refuses an existing name unless replace; replacing drops the entry's comments with a note", () => {
  assert.throws(() => editConfigText(CLAUDE, "c.json", "a", { add: { command: "z" } }), {
    message: 'a server named "a" already exists in c.json; choose another name or replace it',
  })
  const text = `{
  "mcpServers": {
    "a": {
      // why
      "command": "x"
    }
  }
}
`
  const replaced = editConfigText(text, "c.json", "a", { add: { url: "https://h" }, replace: true })
  assert.equal(replaced.text, `{\n  "mcpServers": {\n    "a": {\n      "url": "https://h"\n    }\n  }\n}\n`)
  assert.deepEqual(replaced.notes, ['The comments inside the old "a" entry were dropped with it.'])
})

test("enabled keeps the entry's own key, else writes the dialect's", () => {
  // "b" already says disabled: true; enabling flips that key.
  const on = editConfigText(CLAUDE, "c.json", "b", { enabled: true })
  assert.equal(on.text, CLAUDE.replace('"disabled": true,', '"disabled": false,'))
  // "a" has none: mcpServers writes `disabled`.
  assert.equal(
    editConfigText(CLAUDE, "c.json", "a", { enabled: false }).text,
    CLAUDE.replace('"a": { "command": "x" },', '"a": { "command": "x",\n      "disabled": true\n    },'),
  )
  // Enabling an entry with no key writes nothing.
  assert.equal(editConfigText(CLAUDE, "c.json", "a", { enabled: true }).text, CLAUDE)
  // opencode: `enabled`.
  const oc = `{\n  "mcp": {\n    "s": {\n      "type": "remote",\n      "url": "https://h"\n    }\n  }\n}\n`
  assert.equal(
    editConfigText(oc, "opencode.json", "s", { enabled: false }).text,
    `{\n  "mcp": {\n    "s": {\n      "type": "remote",\n      "url": "https://h",\n      "enabled": false\n    }\n  }\n}\n`,
  )
  const vs = editConfigText(`{"servers": {"s": {"command": "x"}}}`, ".vscode/mcp.json", "s", { enabled: false })
  assert.deepEqual(vs.notes, ['VS Code keeps its own on/off switch for servers and does not document "disabled" in this file; toolnexus honours it.'])
  assert.equal(toolnexus.parseMcpConfig(vs.text).s.enabled, false)
})

test("tools sets or removes the allowlist, and says who reads it", () => {
  const set = editConfigText(CLAUDE, "c.json", "b", { tools: { read: true, write: false } })
  assert.equal(set.text, CLAUDE.replace('"disabled": true,\n', '"disabled": true,\n      "tools": {\n        "read": true,\n        "write": false\n      },\n'))
  assert.deepEqual(set.notes, ['Claude, Cursor, Windsurf, Gemini CLI and the other clients of this file do not read "tools": only toolnexus applies this list.'])
  assert.deepEqual(toolnexus.parseMcpConfig(set.text).b.tools, { read: true, write: false })
  assert.equal(editConfigText(set.text, "c.json", "b", { tools: null }).text, CLAUDE)
  assert.equal(editConfigText(CLAUDE, "c.json", "b", { tools: null }).text, CLAUDE)
  assert.throws(() => editConfigText(`{"mcp": {"s": {"type": "local", "command": ["x"]}}}`, "opencode.json", "s", { tools: { a: true } }), {
    message: 'opencode refuses unknown keys in an mcp entry, so a "tools" list cannot be kept in opencode.json; use opencode\'s own top-level "tools" setting ("s_*": false) instead',
  })
  assert.throws(() => editConfigText(CLAUDE, "c.json", "b", { tools: { a: "yes" } }), { message: 'the tools of "b" must be an object of tool name → true or false' })
})

test("bad input is refused in words", () => {
  assert.throws(() => editConfigText(CLAUDE, "c.json", "nope", { remove: true }), { message: 'no server named "nope" in c.json (it has a, b)' })
  assert.throws(() => editConfigText(`{"mcpServers": {}}`, "c.json", "nope", { enabled: true }), { message: 'no server named "nope" in c.json (it has no servers)' })
  assert.throws(() => editConfigText(`{"mcpServers": {`, "c.json", "a", { remove: true }), { message: "c.json:1:17: CloseBraceExpected; the file is not valid JSON (with comments)" })
  assert.throws(() => editConfigText(`[1]`, "c.json", "a", { remove: true }), { message: "c.json: the file holds a JSON array, not an object" })
  assert.throws(() => editConfigText(CLAUDE, "c.json", "../x", { add: {} }), { message: 'the server name "../x" looks like a path; use letters, digits, "-", "_" or "."' })
  assert.throws(() => editConfigText(CLAUDE, "c.json", "a\nb", { add: {} }), { message: 'the server name "a\\nb" holds control characters' })
  assert.throws(() => editConfigText(CLAUDE, "c.json", "a", { rename: "b" }), { message: "an edit must be one of { tools }, { enabled }, { add } or { remove }" })
})

test("entryFor writes each dialect's shape", () => {
  const local = { type: "local", command: ["docker", "run", "-i", "img"], env: { A: "1" } }
  const remote = { type: "remote", url: "https://h/sse", transport: "sse", headers: { H: "v" } }
  assert.deepEqual(entryFor("mcpServers", local), { command: "docker", args: ["run", "-i", "img"], env: { A: "1" } })
  assert.deepEqual(entryFor("mcpServers", remote), { type: "sse", url: "https://h/sse", headers: { H: "v" } })
  assert.deepEqual(entryFor("vscode", local), { type: "stdio", command: "docker", args: ["run", "-i", "img"], env: { A: "1" } })
  assert.deepEqual(entryFor(dialectOf("", "settings.json"), { ...remote, transport: undefined }), { type: "http", url: "https://h/sse", headers: { H: "v" } })
  assert.deepEqual(entryFor("opencode", local), { type: "local", command: ["docker", "run", "-i", "img"], environment: { A: "1" } })
  assert.deepEqual(entryFor("opencode", remote), { type: "remote", url: "https://h/sse", headers: { H: "v" } })
  assert.deepEqual(entryFor("zed", { type: "local", command: ["srv"], env: {} }), { command: "srv" })
  assert.deepEqual(entryFor("zed", remote), { url: "https://h/sse", headers: { H: "v" } })
  assert.throws(() => entryFor("opencode", { ...local, cwd: "/w" }), { message: "opencode entries have no working-directory setting; leave cwd out" })
  // What toolnexus reads back from each.
  for (const dialect of ["mcpServers", "vscode", "opencode", "zed"]) {
    const text = editConfigText("", dialect === "vscode" ? ".vscode/mcp.json" : dialect === "opencode" ? "opencode.json" : dialect === "zed" ? ".zed/settings.json" : "m.json", "s", {
      add: entryFor(dialect, local),
    }).text
    const parsed = toolnexus.parseMcpConfig(text).s
    assert.deepEqual([parsed.type, parsed.command, parsed.environment], ["local", ["docker", "run", "-i", "img"], { A: "1" }], dialect)
  }
})

test("files: read, atomic write keeping the mode, created with their folder", () => {
  const dir = tmpDir()
  const file = path.join(dir, "deep", ".vscode", "mcp.json")
  assert.deepEqual(readConfigFile(file).servers, {})
  assert.equal(readConfigFile(file).dialect.name, "vscode")
  writeConfigFile(file, `{"servers": {"s": {"command": "x"}}}\n`)
  assert.deepEqual(readConfigFile(file).servers, { s: { command: "x" } })
  fs.chmodSync(file, 0o600)
  writeConfigFile(file, `{"servers": {}}\n`)
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  assert.equal(fs.readFileSync(file, "utf8"), `{"servers": {}}\n`)
  assert.deepEqual(fs.readdirSync(path.dirname(file)), ["mcp.json"])
  // A symlinked config stays a link; its target changes.
  const target = path.join(dir, "real.json")
  fs.writeFileSync(target, "{}")
  const link = path.join(dir, "link.json")
  fs.symlinkSync(target, link)
  writeConfigFile(link, `{"mcpServers": {}}`)
  assert.ok(fs.lstatSync(link).isSymbolicLink())
  assert.equal(fs.readFileSync(target, "utf8"), `{"mcpServers": {}}`)
})

test("VS Code settings.json with mcp.inputs: add writes a VS Code entry under mcp.servers, remove takes it out", () => {
  const settings = `{\n  "editor.fontSize": 12,\n  "mcp": {\n    "inputs": [],\n    "servers": {\n      "a": { "type": "stdio", "command": "a" }\n    }\n  }\n}\n`
  const file = "/h/.config/Code/User/settings.json"
  for (const name of [file, "/p/settings.json"]) {
    const entry = entryFor(dialectOf(settings, name), { type: "local", command: ["npx", "-y", "pkg"] })
    assert.deepEqual(entry, { type: "stdio", command: "npx", args: ["-y", "pkg"] })
    const added = editConfigText(settings, name, "b", { add: entry })
    assert.equal(
      added.text,
      `{\n  "editor.fontSize": 12,\n  "mcp": {\n    "inputs": [],\n    "servers": {\n      "a": { "type": "stdio", "command": "a" },\n      "b": {\n        "type": "stdio",\n        "command": "npx",\n        "args": [\n          "-y",\n          "pkg"\n        ]\n      }\n    }\n  }\n}\n`,
    )
    assert.deepEqual(Object.keys(toolnexus.parseMcpConfig(added.text)), ["a", "b"])
    assert.equal(editConfigText(added.text, name, "b", { remove: true }).text, settings)
  }
})

test("remove takes whole lines: the first of several, the last (its comma before goes), CRLF", () => {
  const text = `{\n  "mcpServers": {\n    "a": { "command": "a" }, // about a\n    "b": { "command": "b" }\n  }\n}\n`
  const first = editConfigText(text, "c.json", "a", { remove: true })
  assert.equal(first.text, `{\n  "mcpServers": {\n    "b": { "command": "b" }\n  }\n}\n`)
  assert.deepEqual(first.notes, ['Any comment inside the "a" entry or after it on its line was removed with it.'])
  assert.equal(editConfigText(text, "c.json", "b", { remove: true }).text, `{\n  "mcpServers": {\n    "a": { "command": "a" } // about a\n  }\n}\n`)
  const three = `{\n  "mcpServers": {\n    "a": 1,\n    // c is next\n    "b": {\n      "command": "b"\n    },\n    "c": 3\n  }\n}\n`
  assert.equal(editConfigText(three, "c.json", "b", { remove: true }).text, `{\n  "mcpServers": {\n    "a": 1,\n    // c is next\n    "c": 3\n  }\n}\n`)
  const crlf = `{\r\n  "mcpServers": {\r\n    "a": { "command": "a" },\r\n    "b": { "command": "b" }\r\n  }\r\n}\r\n`
  assert.equal(editConfigText(crlf, "c.json", "a", { remove: true }).text, `{\r\n  "mcpServers": {\r\n    "b": { "command": "b" }\r\n  }\r\n}\r\n`)
  assert.equal(editConfigText(crlf, "c.json", "b", { remove: true }).text, `{\r\n  "mcpServers": {\r\n    "a": { "command": "a" }\r\n  }\r\n}\r\n`)
})

test("add: a comment on the last entry's line stays there; the map's closing brace does not move; comment lines give no indent", () => {
  const tail = `{\n  "mcpServers": {\n    "a": { "command": "a" } // tail a\n  }\n}\n`
  assert.equal(
    editConfigText(tail, "c.json", "b", { add: { command: "x" } }).text,
    `{\n  "mcpServers": {\n    "a": { "command": "a" }, // tail a\n    "b": {\n      "command": "x"\n    }\n  }\n}\n`,
  )
  const flat = `{\n  "mcpServers": {\n  "a": { "command": "a" }\n  }\n}\n`
  assert.equal(editConfigText(flat, "c.json", "b", { add: { command: "x" } }).text, `{\n  "mcpServers": {\n  "a": { "command": "a" },\n  "b": {\n    "command": "x"\n  }\n  }\n}\n`)
  const header = `/*\n * my servers\n */\n{\n    "mcpServers": {\n        "a": { "command": "a" }\n    }\n}\n`
  assert.equal(
    editConfigText(header, "c.json", "b", { add: { command: "x", args: ["y"] } }).text,
    `/*\n * my servers\n */\n{\n    "mcpServers": {\n        "a": { "command": "a" },\n        "b": {\n            "command": "x",\n            "args": [\n                "y"\n            ]\n        }\n    }\n}\n`,
  )
})

test("a file of only comments keeps them at the top; a BOM is kept; a null map becomes an object", () => {
  assert.equal(editConfigText(`// my config\n`, "c.json", "b", { add: { command: "x" } }).text, `// my config\n{\n  "mcpServers": {\n    "b": {\n      "command": "x"\n    }\n  }\n}\n`)
  assert.equal(editConfigText(`/* c */`, "c.json", "b", { add: { command: "x" } }).text, `/* c */\n{\n  "mcpServers": {\n    "b": {\n      "command": "x"\n    }\n  }\n}\n`)
  const bom = `\uFEFF{\n  "mcpServers": {}\n}\n`
  const added = editConfigText(bom, "c.json", "b", { add: { command: "x" } }).text
  assert.equal(added, `\uFEFF{\n  "mcpServers": {\n    "b": {\n      "command": "x"\n    }\n  }\n}\n`)
  assert.equal(editConfigText(added, "c.json", "b", { remove: true }).text, bom)
  assert.equal(editConfigText(added, "c.json", "b", { enabled: false }).text, added.replace(`"x"\n`, `"x",\n      "disabled": true\n`))
  assert.equal(editConfigText(`{\n  "mcpServers": null\n}\n`, "c.json", "b", { add: { command: "x" } }).text, `{\n  "mcpServers": {\n    "b": {\n      "command": "x"\n    }\n  }\n}\n`)
  assert.throws(() => editConfigText(`{\n  "mcpServers": []\n}\n`, "c.json", "b", { add: { command: "x" } }), {
    message: '"mcpServers" in c.json is an array, not an object; fix it by hand',
  })
  assert.throws(() => editConfigText(`{"mcpServers": {"a": "str"}}`, "c.json", "a", { enabled: false }), {
    message: 'the entry "a" in c.json is a string, not an object; fix it by hand',
  })
})

test("enabled sets both keys when an entry has both; a name written twice is refused in words", () => {
  assert.equal(
    editConfigText(`{"mcpServers":{"a":{"command":"a","enabled":false,"disabled":true}}}`, "c.json", "a", { enabled: true }).text,
    `{"mcpServers":{"a":{"command":"a","enabled":true,"disabled":false}}}`,
  )
  assert.equal(
    editConfigText(`{"mcpServers":{"a":{"command":"a","enabled":true,"disabled":true}}}`, "c.json", "a", { enabled: true }).text,
    `{"mcpServers":{"a":{"command":"a","enabled":true,"disabled":false}}}`,
  )
  assert.equal(
    editConfigText(`{"mcpServers":{"a":{"command":"a","enabled":true,"disabled":false}}}`, "c.json", "a", { enabled: false }).text,
    `{"mcpServers":{"a":{"command":"a","enabled":false,"disabled":true}}}`,
  )
  const twice = `{\n  "mcpServers": {\n    "a": { "command": "a" },\n    "a": { "command": "b" }\n  }\n}\n`
  for (const edit of [{ remove: true }, { enabled: false }, { tools: { x: true } }, { add: { command: "c" }, replace: true }]) {
    assert.throws(() => editConfigText(twice, "c.json", "a", edit), {
      message: 'the server "a" is written 2 times in c.json; keep one (toolnexus and most clients read the last) and try again',
    })
  }
})

test("a new config file is created readable by its owner only", () => {
  const dir = tmpDir()
  const file = path.join(dir, "new", "mcp.json")
  const umask = process.umask(0o022)
  try {
    writeConfigFile(file, `{"mcpServers": {}}\n`)
  } finally {
    process.umask(umask)
  }
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  // BOM files read as their JSON.
  fs.writeFileSync(path.join(dir, "bom.json"), `\uFEFF{"mcpServers": {"s": {"command": "x"}}}`)
  assert.deepEqual(readConfigFile(path.join(dir, "bom.json")).servers, { s: { command: "x" } })
})
