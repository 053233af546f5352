// One toolnexus client under the runtime running this script (node, bun, or `deno run -A`),
// driven by bench/bench.mjs over stdin so that it takes turns with the other contestants: each
// line `seq` or `concurrent` runs that job once (N calls of `echo` on one loadMcp source of the
// raw Python server) and answers the elapsed milliseconds on a line; end of input closes.
//
//   <runtime> bench/runtime-calls.mjs <toolnexus checkout> <calls> <python> <raw_server.py> [thread]
//
// With `thread`, the source's stdout is read by a thread of its own (the reader Bun and Deno
// get), through the binding's test hook, whatever the runtime would choose.
import { createRequire } from "node:module"
import path from "node:path"
import readline from "node:readline"

const [checkout, calls, python, server, reader] = process.argv.slice(2)
const CALLS = Number(calls)
const require = createRequire(import.meta.url)
const { loadMcp } = require(path.join(checkout, "index.js"))
if (reader) require(path.join(checkout, "binding.js")).stdoutReaderForTests(reader)
const source = await loadMcp({ s: { command: [python, server] } })
const echo = source.tools.find((t) => t.name === "s_echo")
const args = { message: "m" }
const call = () => echo.execute(args).then((r) => {
  if (r.isError) throw new Error(r.output)
})
const jobs = {
  seq: async () => {
    for (let i = 0; i < CALLS; i++) await call()
  },
  concurrent: () => Promise.all(Array.from({ length: CALLS }, call)),
}
for (let i = 0; i < 2000; i++) await call()
process.stdout.write("ready\n")
for await (const line of readline.createInterface({ input: process.stdin })) {
  const t0 = performance.now()
  await jobs[line.trim()]()
  process.stdout.write(`${performance.now() - t0}\n`)
}
await source.close()
process.exit(0)
