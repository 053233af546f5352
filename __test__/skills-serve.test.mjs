// Skills on the serving side (the skills extension, SEP-2640): a toolkit, buildMcpServer and
// `toolnexus serve --skills` serve a folder of skills or defineSkill's; the server declares the
// extension (with directoryRead), lists each SKILL.md as a text/markdown resource, answers
// skills/list, skills/get (-32602 for an unknown URI) and resources/directory/read, and serves
// a changed file as it is now; a skill that breaks a rule refuses the start, named. Real parts:
// a toolkit served on 127.0.0.1:0, raw JSON-RPC over fetch, loadMcp as the host, the CLI.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { buildMcpServer, createToolkit, defineSkill, loadMcp } from "../index.js"
import { deferredCleanup, tmpDir, waitFor } from "./helpers.mjs"
import { mcpPost, startCli } from "./lib/gateway.mjs"

const defer = deferredCleanup(afterEach)
const sha = (bytes) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const PDF_MD = "---\nname: pdf-processing\ndescription: Extract text and fill forms in PDF files\nlicense: MIT\n---\n# PDF processing\n"
const PDF_UPSTREAM = "---\nname: pdf-processing\ndescription: Extract text and fill forms in PDF files\nlicense: MIT\n---\n# PDF processing\n\nUse references/FORMS.md for forms.\n"
const REVIEW_MD = "---\nname: code-review\ndescription: Review a change\n---\n# Review\n"

/** A folder of skills: pdf-processing (with references/FORMS.md and a hidden file) and acme/code-review. */
function skillsFolder() {
  const root = tmpDir()
  const write = (rel, text) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  write("pdf-processing/SKILL.md", PDF_MD)
  write("pdf-processing/references/FORMS.md", "# Forms\n")
  write("pdf-processing/.secret", "never served")
  write("acme/code-review/SKILL.md", REVIEW_MD)
  return { root, write }
}

/** A toolkit serving `skills` on 127.0.0.1:0: its base URL. */
async function served(skills) {
  const toolkit = await createToolkit({ builtins: false, skills })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.close())
  return handle.url
}

/** One JSON-RPC request in the 2026-07-28 era (no session): its result or error. */
async function rpc(base, method, params = {}) {
  const res = await mcpPost(base, {
    headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(method === "resources/read" && { "mcp-name": params.uri }) },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
  })
  assert.ok(res.json, res.text)
  return res.json
}

test("a folder of skills is served: the extension declared, skills/list, skills/get, resources/list and directory reads", async () => {
  const { root } = skillsFolder()
  const base = await served(root)
  const discovered = await rpc(base, "server/discover")
  assert.deepEqual(discovered.result.capabilities.extensions["io.modelcontextprotocol/skills"], { directoryRead: true })
  assert.ok(discovered.result.capabilities.resources)

  const listed = (await rpc(base, "skills/list")).result
  assert.deepEqual(listed.skills.map((s) => s.uri), ["skill://acme/code-review/SKILL.md", "skill://pdf-processing/SKILL.md"])
  const pdf = listed.skills[1]
  assert.deepEqual(pdf.frontmatter, { name: "pdf-processing", description: "Extract text and fill forms in PDF files", license: "MIT" })
  assert.deepEqual(pdf.resources, [
    { uri: "skill://pdf-processing/SKILL.md", digest: sha(PDF_MD), size: Buffer.byteLength(PDF_MD) },
    { uri: "skill://pdf-processing/references/FORMS.md", digest: sha("# Forms\n"), size: 8 },
  ])
  assert.equal(typeof listed.ttlMs, "number")

  assert.deepEqual((await rpc(base, "skills/get", { uri: "skill://pdf-processing/SKILL.md" })).result.skill, pdf)
  const unknown = await rpc(base, "skills/get", { uri: "skill://nope/SKILL.md" })
  assert.deepEqual(unknown.error, { code: -32602, message: "unknown skill skill://nope/SKILL.md" })

  const resources = (await rpc(base, "resources/list")).result.resources
  assert.deepEqual(
    resources.find((r) => r.uri === "skill://pdf-processing/SKILL.md"),
    { uri: "skill://pdf-processing/SKILL.md", name: "pdf-processing", description: "Extract text and fill forms in PDF files", mimeType: "text/markdown", size: Buffer.byteLength(PDF_MD) },
  )
  const read = (await rpc(base, "resources/read", { uri: "skill://pdf-processing/references/FORMS.md" })).result
  assert.deepEqual(read.contents, [{ uri: "skill://pdf-processing/references/FORMS.md", mimeType: "text/markdown", text: "# Forms\n" }])
  assert.equal((await rpc(base, "resources/read", { uri: "skill://pdf-processing/.secret" })).error.code, -32602)

  const folder = (await rpc(base, "resources/directory/read", { uri: "skill://pdf-processing" })).result
  assert.deepEqual(folder.resources, [
    { uri: "skill://pdf-processing/SKILL.md", name: "SKILL.md", mimeType: "text/markdown", size: Buffer.byteLength(PDF_MD) },
    { uri: "skill://pdf-processing/references", name: "references", mimeType: "inode/directory" },
  ])
  const notDir = await rpc(base, "resources/directory/read", { uri: "skill://pdf-processing/SKILL.md" })
  assert.equal(notDir.error.code, -32602)

  // toolnexus as the host: listed, loaded and checked.
  const source = await loadMcp({ mcpServers: { kit: { url: `${base}/mcp` } } })
  defer(() => source.close())
  const skill = source.skills.find((s) => s.name === "pdf-processing")
  assert.equal((await skill.load()).body, "# PDF processing\n")
  assert.equal((await skill.read("references/FORMS.md")).text, "# Forms\n")
})

test("a changed file is served as it is now, with its new digest", async () => {
  const { root, write } = skillsFolder()
  const base = await served(root)
  write("pdf-processing/references/FORMS.md", "# Forms, second edition\n")
  const digest = async () => (await rpc(base, "skills/get", { uri: "skill://pdf-processing/SKILL.md" })).result.skill.resources[1].digest
  await waitFor(async () => (await digest()) === sha("# Forms, second edition\n"), { message: "the new digest" })
  const read = (await rpc(base, "resources/read", { uri: "skill://pdf-processing/references/FORMS.md" })).result
  assert.equal(read.contents[0].text, "# Forms, second edition\n")
})

test("defineSkill: skills in memory, served by buildMcpServer too; text and bytes", async () => {
  const logo = new Uint8Array([0x89, 0x50, 0xff, 0x00])
  const skill = defineSkill({ files: { "SKILL.md": PDF_MD, "assets/logo.bin": logo } })
  const base = await served([skill, defineSkill({ path: "team/code-review", files: { "SKILL.md": REVIEW_MD } })])
  const listed = (await rpc(base, "skills/list")).result.skills
  assert.deepEqual(listed.map((s) => s.uri), ["skill://pdf-processing/SKILL.md", "skill://team/code-review/SKILL.md"])
  const read = (await rpc(base, "resources/read", { uri: "skill://pdf-processing/assets/logo.bin" })).result.contents[0]
  assert.deepEqual(Buffer.from(read.blob, "base64"), Buffer.from(logo))
  assert.equal(read.mimeType, "application/octet-stream")

  const server = buildMcpServer([], { skills: [skill] })
  assert.equal(typeof server.connect, "function")
})

test("a skill that breaks a rule refuses the start, named, with the rule in words", async () => {
  const refused = async (skills, message) => {
    await assert.rejects(createToolkit({ builtins: false, skills }), { message })
    assert.throws(() => buildMcpServer([], { skills }), { message })
  }
  const md = (name, description = "d") => `---\nname: ${name}\ndescription: ${description}\n---\nbody\n`
  await refused([defineSkill({ path: "tools/pdf", files: { "SKILL.md": md("pdf-processing") } })], "toolnexus: skills: the skill at skill://tools/pdf: skill uri skill://tools/pdf/SKILL.md does not end in the frontmatter name pdf-processing")
  await refused([defineSkill({ files: { "SKILL.md": "no frontmatter" } })], "toolnexus: skills: a skill given without a path: its SKILL.md does not start with a --- frontmatter block")
  await refused([defineSkill({ path: "x", files: { "SKILL.md": "---\nname: x\n---\n" } })], 'toolnexus: skills: the skill at skill://x: its SKILL.md frontmatter has no "description" (a non-empty string)')
  await refused([defineSkill({ files: { "SKILL.md": md("Bad_Name") } })], /^toolnexus: skills: the skill at skill:\/\/Bad_Name: invalid skill name "Bad_Name"/)
  await refused([defineSkill({ files: { "SKILL.md": md("a"), "../b": "x" } })], 'toolnexus: skills: the skill at skill://a: the file "../b" climbs out of its folder, or has an empty or hidden part')
  const many = Object.fromEntries([["SKILL.md", md("many")], ...Array.from({ length: 512 }, (_, i) => [`f${i}.txt`, "x"])])
  await refused([defineSkill({ files: many })], "toolnexus: skills: the skill at skill://many: it has 513 files, over the 512 a skill may have")

  const { root } = skillsFolder()
  fs.symlinkSync("/etc/hostname", path.join(root, "pdf-processing", "link.txt"))
  await refused(root, `toolnexus: skills: ${path.join(root, "pdf-processing", "link.txt")} is a symbolic link: skills are served from the folder's own files only`)
  await refused(path.join(root, "nope"), /^toolnexus: skills: the skills folder .*nope cannot be read: No such file or directory/)
  assert.throws(() => buildMcpServer([], { skills: 5 }), { name: "TypeError", message: "toolnexus: cfg.skills must be a folder of skills (a string) or an array of defineSkill(...)" })
  assert.throws(() => defineSkill({ files: { "SKILL.md": 5 } }), { name: "TypeError", message: 'toolnexus: defineSkill\'s file "SKILL.md" must be a string or a Uint8Array' })
})

test("toolnexus serve --skills DIR serves the folder's skills; a refused skill stops the start, named", async () => {
  const { root } = skillsFolder()
  const config = path.join(tmpDir(), "mcp.json")
  fs.writeFileSync(config, JSON.stringify({ mcpServers: {} }))
  const cli = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--skills", root])
  const base = await cli.serving
  const source = await loadMcp({ mcpServers: { gw: { url: `${base}/mcp` } } })
  defer(() => source.close())
  assert.deepEqual(source.skills.map((s) => s.name), ["code-review", "pdf-processing"])
  assert.equal((await source.skills[1].load()).name, "pdf-processing")

  fs.writeFileSync(path.join(root, "SKILL.md"), "---\nname: root\ndescription: d\n---\n")
  const bad = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--skills", root])
  const { code, stderr } = await bad.exited
  assert.equal(code, 1)
  assert.match(stderr, /^toolnexus: skills: .* has a SKILL\.md of its own: each skill is a folder within it$/m)
})

test("a toolkit's skills() and its load_skill tool: its servers' skills and its own, loaded by name", async () => {
  const own = defineSkill({ files: { "SKILL.md": REVIEW_MD, "checklist.md": "- tests\n" } })
  const toolkit = await createToolkit({
    builtins: false,
    mcpConfig: { mcpServers: { sk: { command: process.execPath, args: [path.join(import.meta.dirname, "fixtures", "skills-server.mjs")] } } },
    skills: [own],
    loadSkillTool: true,
  })
  defer(() => toolkit.close())
  assert.deepEqual(
    toolkit.skills().map((s) => [s.server, s.name]),
    [["sk", "pdf-processing"], ["sk", "code-review"], ["sk", "live-notes"], [undefined, "code-review"]],
  )
  const tool = toolkit.get("load_skill")
  assert.match(tool.description, /\n- sk\/code-review: Review a change like a senior engineer\n/)
  assert.match(tool.description, /\n- pdf-processing: Extract text and fill forms in PDF files\n/)
  const mine = await toolkit.execute("load_skill", { name: "code-review" })
  assert.equal(mine.output, "# Skill: code-review\n\n# Review\n\nThe skill's other files: checklist.md")
  const theirs = await toolkit.execute("load_skill", { name: "sk/code-review" })
  assert.equal(theirs.output, "# Skill: sk/code-review\n\n# Review")
  assert.equal(theirs.isError, false)
  const unknown = await toolkit.execute("load_skill", { name: "nope" })
  assert.deepEqual([unknown.output, unknown.isError], ["no skill named \"nope\"; the skills are: pdf-processing, sk/code-review, live-notes, code-review", true])
  await assert.rejects(createToolkit({ builtins: false, loadSkillTool: "yes" }), { name: "TypeError", message: "toolnexus: loadSkillTool must be a boolean" })
})

test("a gateway relays two servers' skills whose paths clash, each under its server's name: none shadows the other, each checked end to end", async () => {
  const upstream = (...args) => ({ command: process.execPath, args: [path.join(import.meta.dirname, "fixtures", "skills-server.mjs"), ...args] })
  const toolkit = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { a: upstream(), b: upstream("--tamper", "digest") } } })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.close())
  const base = handle.url

  const discovered = await rpc(base, "server/discover")
  assert.deepEqual(discovered.result.capabilities.extensions["io.modelcontextprotocol/skills"], { directoryRead: true })
  const listed = (await rpc(base, "skills/list")).result.skills
  assert.deepEqual(listed.map((s) => s.uri), [
    "skill://a/pdf-processing/SKILL.md",
    "skill://a/acme/review/code-review/SKILL.md",
    "skill://a/live-notes/SKILL.md",
    "skill://b/pdf-processing/SKILL.md",
    "skill://b/acme/review/code-review/SKILL.md",
    "skill://b/live-notes/SKILL.md",
  ])
  assert.deepEqual(listed[0].resources.map((r) => r.uri), ["skill://a/pdf-processing/SKILL.md", "skill://a/pdf-processing/references/FORMS.md", "skill://a/pdf-processing/assets/logo.bin"])
  assert.equal(listed[0].resources[0].digest, sha(PDF_UPSTREAM), "the bytes are the upstream's, so is the digest")
  const resources = (await rpc(base, "resources/list")).result.resources.map((r) => r.uri)
  assert.deepEqual(resources.filter((u) => u.endsWith("pdf-processing/SKILL.md")), ["skill://a/pdf-processing/SKILL.md", "skill://b/pdf-processing/SKILL.md"])
  // skills/get of an upstream's skill not listed: asked of that upstream with its own URI.
  const hidden = (await rpc(base, "skills/get", { uri: "skill://a/hidden-helper/SKILL.md" })).result.skill
  assert.equal(hidden.uri, "skill://a/hidden-helper/SKILL.md")
  assert.deepEqual((await rpc(base, "skills/get", { uri: "skill://c/pdf-processing/SKILL.md" })).error, { code: -32602, message: "unknown skill skill://c/pdf-processing/SKILL.md" })
  const read = (await rpc(base, "resources/read", { uri: "skill://a/pdf-processing/references/FORMS.md" })).result.contents[0]
  assert.deepEqual([read.uri, read.text], ["skill://a/pdf-processing/references/FORMS.md", "# Forms\n\nFill field by field.\n"])

  // A URI with a dot segment is never relayed as a skill's: it could climb out of the folder a
  // scope allows (the upstream is never asked for the un-rooted, climbing URI).
  for (const uri of ["skill://a/pdf-processing/../../secret", "skill://a/pdf-processing/%2E%2E/x"]) {
    assert.equal((await rpc(base, "resources/read", { uri })).error.code, -32602, uri)
  }
  const asked = JSON.parse((await toolkit.execute("a_reads", {})).output)
  assert.deepEqual(asked.filter((u) => !u.startsWith("skill://a/")), ["skill://pdf-processing/references/FORMS.md"])

  // toolnexus as the host, through the gateway: a's skill loads, b's tampered SKILL.md is refused.
  const source = await loadMcp({ mcpServers: { gw: { url: `${base}/mcp` } } })
  defer(() => source.close())
  const [fromA, fromB] = ["a", "b"].map((server) => source.skills.find((s) => s.uri === `skill://${server}/pdf-processing/SKILL.md`))
  assert.equal((await fromA.load()).body, "# PDF processing\n\nUse references/FORMS.md for forms.\n")
  assert.equal((await fromA.read("references/FORMS.md")).text, "# Forms\n\nFill field by field.\n")
  await assert.rejects(fromB.load(), /^Error: loading skill skill:\/\/b\/pdf-processing\/SKILL\.md failed: refused: skill:\/\/b\/pdf-processing\/SKILL\.md has digest sha256:/)
})

test("the server's own skill wins a clash with an upstream's re-rooted one, in every request", async () => {
  const upstream = { command: process.execPath, args: [path.join(import.meta.dirname, "fixtures", "skills-server.mjs")] }
  const own = defineSkill({ path: "a/pdf-processing", files: { "SKILL.md": PDF_MD } })
  const toolkit = await createToolkit({ builtins: false, mcpConfig: { mcpServers: { a: upstream } }, skills: [own] })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.close())
  const uri = "skill://a/pdf-processing/SKILL.md"
  const listed = (await rpc(handle.url, "skills/list")).result.skills.filter((s) => s.uri === uri)
  assert.equal(listed.length, 1)
  assert.equal(listed[0].resources[0].digest, sha(PDF_MD))
  assert.equal((await rpc(handle.url, "skills/get", { uri })).result.skill.resources[0].digest, sha(PDF_MD))
  assert.equal((await rpc(handle.url, "resources/read", { uri })).result.contents[0].text, PDF_MD)
  assert.equal((await rpc(handle.url, "resources/list")).result.resources.filter((r) => r.uri === uri).length, 1)
})
