// A node:test reporter that writes one JSON line per failing test, `{ file, name }`, and
// nothing else: scripts/test.sh names the failing files with it, scripts/test-repeat.mjs counts
// each test's failures over many runs. A failing hook or file counts under its own name.
import path from "node:path"

const root = path.join(path.dirname(new URL(import.meta.url).pathname), "..")

export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== "test:fail") continue
    const { data } = event
    // A suite's failure repeats its subtests' failures: only leaves (and files that failed as a whole) count.
    if (data.details?.error?.failureType === "subtestsFailed") continue
    const file = data.file ? path.relative(root, data.file) : "(unknown file)"
    yield `${JSON.stringify({ file, name: data.name })}\n`
  }
}
