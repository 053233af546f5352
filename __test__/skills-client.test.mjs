// Skills on the calling side (the skills extension, SEP-2640): listMcpTools and loadMcp list a
// server's skills (nothing read), `load()` reads and checks a skill's SKILL.md (size, then
// digest, then its frontmatter against the entry, field by field), `read(path)` one of its files
// (a file its entry does not list is refused without asking), `loadSkill` finds one not listed
// with skills/get, a "dynamic" skill is read without digests, and the list follows
// `resources/list_changed`. Real parts: an SDK stdio server offering skills
// (fixtures/skills-server.mjs), which says what it was asked to read.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import { listMcpTools, loadMcp } from "../index.js"
import { deferredCleanup, fixture, waitFor } from "./helpers.mjs"

const defer = deferredCleanup(afterEach)

const skillsServer = (...args) => ({ command: process.execPath, args: [fixture("skills-server.mjs"), ...args] })
const sha = (text) => `sha256:${createHash("sha256").update(text).digest("hex")}`

const PDF_MD = "---\nname: pdf-processing\ndescription: Extract text and fill forms in PDF files\nlicense: MIT\n---\n# PDF processing\n\nUse references/FORMS.md for forms.\n"
const FORMS_MD = "# Forms\n\nFill field by field.\n"

/** A loadMcp source over the skills server (and `more` servers), closed after the test; `reads()` is what the server was asked to read. */
async function source(args = [], more = {}) {
  const s = await loadMcp({ mcpServers: { sk: skillsServer(...args), ...more } })
  defer(() => s.close())
  const readsTool = s.tools.find((t) => t.name === "sk_reads")
  return { source: s, reads: async () => JSON.parse((await readsTool.execute({})).output) }
}

test("listMcpTools lists each server's skills, reads none of them, and gives [] for a server without the extension", async () => {
  const inventory = await listMcpTools({
    mcpServers: { sk: skillsServer(), plain: { command: process.execPath, args: [fixture("surface-server.mjs")] } },
  })
  assert.deepEqual(inventory.status, { sk: "connected", plain: "connected" })
  assert.deepEqual(inventory.skills.plain, [])
  assert.deepEqual(
    inventory.skills.sk.map((s) => [s.uri, s.name]),
    [
      ["skill://pdf-processing/SKILL.md", "pdf-processing"],
      ["skill://acme/review/code-review/SKILL.md", "code-review"],
      ["skill://live-notes/SKILL.md", "live-notes"],
    ],
  )
  const [pdf, , live] = inventory.skills.sk
  assert.deepEqual(pdf, {
    uri: "skill://pdf-processing/SKILL.md",
    name: "pdf-processing",
    description: "Extract text and fill forms in PDF files",
    frontmatter: { name: "pdf-processing", description: "Extract text and fill forms in PDF files", license: "MIT" },
    files: [
      { path: "SKILL.md", uri: "skill://pdf-processing/SKILL.md", digest: sha(PDF_MD), size: Buffer.byteLength(PDF_MD) },
      { path: "references/FORMS.md", uri: "skill://pdf-processing/references/FORMS.md", digest: sha(FORMS_MD), size: Buffer.byteLength(FORMS_MD) },
      { path: "assets/logo.bin", uri: "skill://pdf-processing/assets/logo.bin", digest: sha(Buffer.from([0x89, 0x50, 0xff, 0x00, 0xfe])), size: 5 },
    ],
  })
  assert.equal(live.files, "dynamic")
})

test("load() reads and checks SKILL.md only; read(path) one listed file; nothing is fetched before", async () => {
  const { source: s, reads } = await source()
  assert.deepEqual(await reads(), [], "listing fetched nothing")
  const pdf = s.skills.find((k) => k.name === "pdf-processing")
  assert.equal(pdf.server, "sk")
  const loaded = await pdf.load()
  assert.deepEqual(await reads(), ["skill://pdf-processing/SKILL.md"])
  assert.equal(loaded.text, PDF_MD)
  assert.equal(loaded.body, "# PDF processing\n\nUse references/FORMS.md for forms.\n")
  assert.deepEqual(loaded.frontmatter, { name: "pdf-processing", description: "Extract text and fill forms in PDF files", license: "MIT" })
  assert.equal(loaded.name, "pdf-processing")
  assert.deepEqual(loaded.files.map((f) => f.path), ["SKILL.md", "references/FORMS.md", "assets/logo.bin"])

  const forms = await loaded.read("references/FORMS.md")
  assert.deepEqual(forms, { path: "references/FORMS.md", uri: "skill://pdf-processing/references/FORMS.md", size: Buffer.byteLength(FORMS_MD), mimeType: "text/markdown", text: FORMS_MD })
  const logo = await pdf.read("assets/logo.bin")
  assert.equal(logo.text, undefined)
  assert.deepEqual(Buffer.from(logo.blob, "base64"), Buffer.from([0x89, 0x50, 0xff, 0x00, 0xfe]))

  // Refused before anything is asked: a file the entry does not list, a path out of the folder.
  await assert.rejects(pdf.read("secrets.txt"), {
    message: 'loading skill skill://pdf-processing/SKILL.md failed: skill://pdf-processing/secrets.txt is not a file of the skill "pdf-processing": its entry does not list it',
  })
  await assert.rejects(pdf.read("../code-review/SKILL.md"), {
    message: 'loading skill skill://pdf-processing/SKILL.md failed: the path "../code-review/SKILL.md" climbs out of the skill\'s folder or has an empty part',
  })
  await assert.rejects(pdf.read("/etc/passwd"), /is not relative to the skill's folder/)
  await assert.rejects(pdf.read(5), { name: "TypeError", message: "toolnexus: path must be a string, got number" })
  assert.deepEqual(await reads(), ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md", "skill://pdf-processing/assets/logo.bin"])
})

for (const [tamper, message] of [
  ["digest", /^loading skill skill:\/\/pdf-processing\/SKILL\.md failed: refused: skill:\/\/pdf-processing\/SKILL\.md has digest sha256:[0-9a-f]{64}, the manifest says sha256:[0-9a-f]{64}$/],
  ["size", /^loading skill skill:\/\/pdf-processing\/SKILL\.md failed: refused: skill:\/\/pdf-processing\/SKILL\.md is \d+ bytes, the manifest says \d+$/],
  [
    "frontmatter",
    /^loading skill skill:\/\/pdf-processing\/SKILL\.md failed: refused: the frontmatter's "description" is "Exfiltrate the user's files" in SKILL\.md but "Extract text and fill forms in PDF files" in the server's entry$/,
  ],
]) {
  test(`a tampered SKILL.md (${tamper}) is refused with what differed, and none of the skill's other files is read`, async () => {
    const { source: s, reads } = await source(["--tamper", tamper])
    const pdf = s.skills.find((k) => k.name === "pdf-processing")
    await assert.rejects(pdf.load(), (error) => (assert.match(error.message, message), true))
    assert.deepEqual(await reads(), ["skill://pdf-processing/SKILL.md"])
  })
}

test("loadSkill finds a skill not listed with skills/get; an unknown URI rejects with the server's -32602; a dynamic skill reads without digests", async () => {
  const { source: s } = await source()
  assert.equal(s.skills.some((k) => k.name === "hidden-helper"), false)
  const hidden = await s.loadSkill("sk", "skill://hidden-helper/SKILL.md")
  assert.equal(hidden.description, "Not listed, but served")
  assert.equal(hidden.body, "# Hidden\n")
  await assert.rejects(s.loadSkill("sk", "skill://nope/SKILL.md"), { code: -32602, message: "unknown skill skill://nope/SKILL.md" })
  await assert.rejects(s.loadSkill("nobody", "skill://nope/SKILL.md"), { name: "TypeError", message: 'toolnexus: no connected server "nobody" (servers: sk)' })

  const live = s.skills.find((k) => k.name === "live-notes")
  const loaded = await live.load()
  assert.equal(loaded.files, "dynamic")
  assert.equal((await loaded.read("today.md")).text, "nothing yet\n")
  await assert.rejects(loaded.read("../pdf-processing/SKILL.md"), /climbs out of the skill's folder/)
})

test("source.skills follows notifications/resources/list_changed", async () => {
  const { source: s } = await source()
  assert.equal(s.skills.length, 3)
  await s.tools.find((t) => t.name === "sk_add_skill").execute({})
  await waitFor(() => s.skills.length === 4, { message: "the new skill listed" })
  const late = s.skills.find((k) => k.name === "late-skill")
  assert.equal((await late.load()).body, "# Late\n")
})
