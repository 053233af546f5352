// The command line's resources and prompts, run as a real subprocess against the demo config
// (server-everything and the notes server): `list` counts and shows them, `read` prints a
// resource, `prompt` a prompt's messages, and `diff` notices added and removed ones.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { leakCheck, repoRoot, runNode, serverEverything, tmpFile } from "./helpers.mjs"

const T = { timeout: 60000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const CONFIG = path.join(repoRoot, "examples", "mcp.json")
const FEATURES = "demo://resource/static/document/features.md"

// Nothing left running after a test (a process left is killed, so one failure does not cascade).
leakCheck(afterEach)

/** Runs `node bin/toolnexus.mjs ...args` from the repository root, without colours. */
function cli(args) {
  const env = { ...process.env }
  for (const key of ["NO_COLOR", "FORCE_COLOR"]) delete env[key]
  return runNode(BIN, { args, env, timeout: 40000 })
}

test("list: the status line counts tools, resources and prompts; details show them; --json has the three keys", T, async () => {
  const { code, stdout } = await cli(["list", CONFIG])
  assert.equal(code, 1, "the demo's broken server fails") // the deliberately broken server
  const line = (name) => stdout.split("\n").find((l) => l.startsWith(`✓ ${name} `))
  assert.match(line("everything"), /  13 tools · 7 resources · 4 prompts  \d+ ms/)
  assert.match(line("notes"), /  3 tools  \d+ ms/)
  assert.doesNotMatch(line("notes"), /resource|prompt/)
  assert.match(stdout, /\n  resources:\n    demo:\/\/resource\/static\/document\//)
  assert.match(stdout, /\n  resource templates:\n    demo:\/\/resource\/dynamic\/text\/\{resourceId\}/)
  assert.match(stdout, /\n    args-prompt\(city, state\?\) +A prompt with two arguments/)

  const json = await cli(["list", CONFIG, "--json"])
  const inventory = JSON.parse(json.stdout)
  assert.deepEqual(Object.keys(inventory), ["tools", "resources", "resourceTemplates", "prompts", "skills", "status", "errors", "info"])
  assert.equal(inventory.resources.everything.length, 7)
  assert.equal(inventory.resourceTemplates.everything.length, 2)
  assert.equal(inventory.prompts.everything.length, 4)
  assert.deepEqual([inventory.resources.notes, inventory.prompts.notes], [[], []])
})

test("read: prints the resource's text, exit 0; --json the whole result; an unknown server is a usage error", T, async () => {
  const read = await cli(["read", CONFIG, "everything", FEATURES])
  assert.equal(read.code, 0, read.stderr)
  const file = fs.readFileSync(path.join(path.dirname(serverEverything), "docs", "features.md"), "utf8")
  assert.equal(read.stdout, file.endsWith("\n") ? file : `${file}\n`)

  const json = await cli(["read", CONFIG, "everything", "demo://resource/dynamic/blob/3", "--json"])
  assert.equal(json.code, 0, json.stderr)
  const { contents } = JSON.parse(json.stdout)
  assert.equal(contents[0].uri, "demo://resource/dynamic/blob/3")
  assert.match(Buffer.from(contents[0].blob, "base64").toString(), /^Resource 3: This is a base64 blob/)

  const blob = await cli(["read", CONFIG, "everything", "demo://resource/dynamic/blob/3"])
  assert.equal(blob.code, 0, blob.stderr)
  assert.match(blob.stdout, /^\[blob text\/plain, [\d.]+ (B|kB)\]\n$/)

  const unknown = await cli(["read", CONFIG, "everythin", FEATURES])
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /no server named "everythin" \(did you mean "everything"\?\)/)

  const missing = await cli(["read", CONFIG, "everything"])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /^toolnexus read: missing <uri>/)
})

test("prompt: prints the prompt's messages; values are strings; an unknown prompt names the closest", T, async () => {
  const weather = await cli(["prompt", CONFIG, "everything", "args-prompt", "city=Paris"])
  assert.equal(weather.code, 0, weather.stderr)
  assert.equal(weather.stdout, "user: What's weather in Paris?\n")

  const numeric = await cli(["prompt", CONFIG, "everything", "resource-prompt", "resourceType=Text", "resourceId=2"])
  assert.equal(numeric.code, 0, numeric.stderr)
  // The embedded resource is summarised by describeContent, its text after its URI.
  assert.match(numeric.stdout, /^user: .+\nuser: \[resource demo:\/\/resource\/dynamic\/text\/2\]\nResource 2: This is a plaintext resource/s)

  const json = await cli(["prompt", CONFIG, "everything", "simple-prompt", "--json"])
  assert.deepEqual(JSON.parse(json.stdout), {
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt without arguments." } }],
  })

  const unknown = await cli(["prompt", CONFIG, "everything", "args-promt"])
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /server "everything" has no prompt "args-promt"; did you mean "args-prompt"/)
})

test("diff: a snapshot without resources is not compared for them; a removed resource is drift", T, async () => {
  const live = JSON.parse((await cli(["list", CONFIG, "--json"])).stdout)
  const old = { tools: live.tools, status: live.status, errors: live.errors, info: live.info }
  const oldFile = tmpFile("old.json")
  fs.writeFileSync(oldFile, JSON.stringify(old))
  const same = await cli(["diff", CONFIG, oldFile, "--json"])
  assert.equal(same.code, 0, same.stdout)
  assert.equal(JSON.parse(same.stdout).drift, false)

  const gone = live.resources.everything[0].uri
  const fewer = { ...live, resources: { ...live.resources, everything: live.resources.everything.slice(1) } }
  fewer.prompts = { ...live.prompts, everything: live.prompts.everything.map((p) => (p.name === "simple-prompt" ? { ...p, description: "was" } : p)) }
  const fewerFile = tmpFile("fewer.json")
  fs.writeFileSync(fewerFile, JSON.stringify(fewer))
  const drift = await cli(["diff", CONFIG, fewerFile, "--json"])
  assert.equal(drift.code, 1)
  const { servers } = JSON.parse(drift.stdout)
  assert.deepEqual(servers.everything.resources, { added: [gone], removed: [], changed: [] })
  assert.deepEqual(servers.everything.prompts, { added: [], removed: [], changed: [{ key: "simple-prompt", fields: ["description"] }] })
  assert.equal("resourceTemplates" in servers.everything, false)
  assert.equal("resources" in servers.notes, false)

  const text = await cli(["diff", CONFIG, fewerFile])
  assert.equal(text.code, 1)
  assert.match(text.stdout, new RegExp(`\\n  \\+ resource ${gone.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\n`))
  assert.match(text.stdout, /\n  ~ prompt simple-prompt  \(description\)\n/)
})
