// Every code example of the documentation runs: each ```js and ```mjs fenced block of README.md and
// docs/*.md is run as an ES module program with this very `node`, from the repository root (so
// `import … from "toolnexus"` resolves to this package), and must exit 0 within EXAMPLE_TIMEOUT.
//
// Conventions for the examples (keep them when you write one):
//   - Every js/mjs block is a complete program: it imports what it uses, and closes what it
//     opens (sources, toolkits, served endpoints) so that the process exits by itself. There is
//     no way to mark a block "do not run". A fragment that cannot run alone is not js: show a
//     shape as a ```ts type signature, a command as ```sh, a config as ```json/```jsonc.
//   - Examples use only servers that run offline here: examples/mcp.json, the fixtures in
//     __test__/fixtures/, @modelcontextprotocol/server-everything from node_modules, or a server
//     the example serves itself on 127.0.0.1 port 0. Nothing binds another address, nothing
//     reaches the network (checked below for serve() addresses and URLs).
//   - Checks inside an example use node:assert, so a wrong claim in the docs fails here.
//   - Fences may be indented (inside a list item); the indentation is removed.
//   - A block whose first line is `// file: <path>` shows that file of the repository: it must be
//     the file's exact contents (so the file a page shows is the one other examples run).
//
// Each example runs with TOOLNEXUS_DOCS_EXAMPLE=<id> in its environment, which every process it
// starts inherits: after it exits, no process carrying that id may be left running.
import { test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { repoRoot } from "./helpers.mjs"

/** How long one example may run. */
const EXAMPLE_TIMEOUT = 40_000
/** Examples run at once. */
const CONCURRENCY = 4

/** The documentation files whose examples run: README.md and every docs/*.md. */
function docFiles() {
  const docs = path.join(repoRoot, "docs")
  const pages = fs.existsSync(docs) ? fs.readdirSync(docs).filter((f) => f.endsWith(".md")).sort().map((f) => path.join("docs", f)) : []
  return ["README.md", ...pages]
}

/** Every ```js / ```mjs block of `file`: { file, line, info, code }. */
export function examplesOf(file) {
  const lines = fs.readFileSync(path.join(repoRoot, file), "utf8").split("\n")
  const found = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,})(\S*)(.*)$/.exec(lines[i])
    if (!open) continue
    const [, indent, fence, lang, rest] = open
    let end = i + 1
    while (end < lines.length && !(lines[end].startsWith(indent + fence) && lines[end].trim() === fence)) end++
    assert.ok(end < lines.length, `${file}:${i + 1}: a fence that is never closed`)
    if (lang === "js" || lang === "mjs") {
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join("\n")
      found.push({ file, line: i + 1, info: rest.trim(), code })
    }
    i = end
  }
  return found
}

/** Pids of live processes whose environment holds TOOLNEXUS_DOCS_EXAMPLE=<id>. */
function processesOf(id) {
  const marker = `\0TOOLNEXUS_DOCS_EXAMPLE=${id}\0`
  const pids = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.startsWith("Z")) continue
      if (`\0${fs.readFileSync(`/proc/${entry}/environ`, "latin1")}`.includes(marker)) pids.push(Number(entry))
    } catch {}
  }
  return pids
}

/** Runs `code` as `node --input-type=module -` from the repository root. */
function runExample(code, id) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-"], {
      cwd: repoRoot,
      env: { ...process.env, TOOLNEXUS_DOCS_EXAMPLE: id, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    const began = performance.now()
    const timer = setTimeout(() => child.kill("SIGKILL"), EXAMPLE_TIMEOUT)
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, ms: performance.now() - began })
    })
    child.stdin.end(code)
  })
}

const examples = docFiles().flatMap(examplesOf)

test("the docs have examples, and each follows the conventions", () => {
  assert.ok(examples.length > 20, `only ${examples.length} examples found`)
  for (const { file, line, info, code } of examples) {
    const where = `${file}:${line}`
    assert.equal(info, "", `${where}: no fence options: every js/mjs block runs (use ts, sh or json for what cannot)`)
    for (const [, addr] of code.matchAll(/\.serve\(\s*["'`]([^"'`]*)["'`]/g)) {
      assert.match(addr, /^127\.0\.0\.1:0$/, `${where}: serve on 127.0.0.1:0 only, not ${addr}`)
    }
    for (const [url] of code.matchAll(/\bhttps?:\/\/[^\s"'`)]+/g)) {
      // Example hosts may be named (an allowedHosts entry, an audience) but never fetched.
      assert.ok(/^https?:\/\/(127\.0\.0\.1|[a-z0-9.-]*example\.com)([:/]|$)/.test(url), `${where}: a URL that is neither loopback nor example.com: ${url}`)
    }
    assert.doesNotMatch(code, /\bSPEC §/, `${where}: no references to SPEC`)
    const shown = /^\/\/ file: (\S+)\n/.exec(code)
    if (shown) assert.equal(code.trimEnd(), fs.readFileSync(path.join(repoRoot, shown[1]), "utf8").trimEnd(), `${where}: differs from ${shown[1]}`)
  }
})

test("no docs page, and no source or test file, cites a spec outside the repository", () => {
  const sources = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(rel)
      } else if (/\.(rs|js|mjs|cjs|ts)$/.test(entry.name) && rel !== path.join("__test__", "docs.test.mjs")) sources.push(rel)
    }
  }
  for (const dir of ["src", "crates", "lib", "bin", "__test__", "scripts", "bench"]) walk(dir)
  assert.ok(sources.length > 100, `${sources.length} source files`)
  for (const file of [...docFiles(), ...sources, "index.d.ts"]) {
    assert.doesNotMatch(fs.readFileSync(path.join(repoRoot, file), "utf8"), /SPEC §/, file)
  }
})

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces as dashes. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replaceAll(" ", "-")

test("every relative link of the docs reaches a file, and its #anchor a heading there", () => {
  const headings = (file) =>
    new Set([...fs.readFileSync(file, "utf8").replace(/^( *)(`{3,})[^]*?^\1\2 *$/gm, "").matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1])))
  for (const file of [...docFiles(), "ARCHITECTURE.md"]) {
    for (const [, link] of fs.readFileSync(path.join(repoRoot, file), "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(link)) continue
      const [target, anchor] = link.split("#")
      const resolved = target ? path.join(repoRoot, path.dirname(file), target) : path.join(repoRoot, file)
      assert.ok(fs.existsSync(resolved), `${file}: a link to ${link}, which does not exist`)
      if (anchor && resolved.endsWith(".md")) assert.ok(headings(resolved).has(anchor), `${file}: a link to ${link}, whose heading does not exist`)
    }
  }
})

test("every example runs and exits 0, leaving nothing running", { concurrency: CONCURRENCY, timeout: 240_000 }, async (t) => {
  await Promise.all(
    examples.map(({ file, line, code }, n) =>
      t.test(`${file}:${line}`, async () => {
        const id = `${process.pid}-${n}`
        const r = await runExample(code, id)
        // A watchdog or a dying child may take a moment after the example's exit.
        let left = processesOf(id)
        for (let waited = 0; left.length > 0 && waited < 3000; waited += 50) {
          await delay(50)
          left = processesOf(id)
        }
        for (const pid of left) {
          try {
            process.kill(pid, "SIGKILL")
          } catch {}
        }
        const output = `\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`
        assert.equal(r.signal, null, `${file}:${line} did not exit within ${EXAMPLE_TIMEOUT} ms${output}`)
        assert.equal(r.code, 0, `${file}:${line} exited ${r.code}${output}`)
        assert.deepEqual(left, [], `${file}:${line} left processes running`)
      }),
    ),
  )
})
