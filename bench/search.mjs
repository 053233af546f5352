// Tool search (issue 24): quality on the retrieval set and query time on a big catalog, through
// the package API (loadMcp's source.searchTools; createToolkit's extraTools + toolkit.searchTools).
// Prints Markdown tables.
// Not part of `npm test`; a row of `npm run bench`.
//
//   npm run build && node bench/search.mjs
//   node bench/search.mjs --misses            # also lists the requests not found in the top 3
//   SEARCH_SET=/path/to/bench/search node bench/search.mjs
//   TOOLNEXUS=/path/to/another/checkout node bench/search.mjs
//
// Quality: every catalog of bench/search/catalogs/*.json (the real tools/list results of
// published servers) is served again over stdio by this very file (`--replay <catalog>`: a bare
// newline JSON-RPC server answering the captured list), all loaded at once with loadMcp, so the
// tools are named <server>_<tool> and indexed with their server as for the real servers; each
// request of bench/search/requests.json is searched with `source.searchTools`, and its expected
// tool must be the first match (recall@1) or among the first three (recall@3). Split by
// `reuses` (whether the request uses the tool's own words). Target: recall@3 ≥ 0.9 on requests
// that do not.
//
// Speed: a synthetic catalog of 10 000 tools (the real tools copied under 75+ made-up server
// names, each copy's description varied), searched with every request of the set in turn; the
// time per query, measured around `toolkit.searchTools` (so the JS call and the result objects
// are included), median and p99 in µs; and the time of the first search, which builds the index.
import fs from "node:fs"
import path from "node:path"
import readline from "node:readline"
import { fileURLToPath, pathToFileURL } from "node:url"
import { median, percentile, root } from "./lib.mjs"

// `node bench/search.mjs --replay <catalog.json>`: a stdio MCP server listing that catalog's tools.
if (process.argv[2] === "--replay") {
  const { tools } = JSON.parse(fs.readFileSync(process.argv[3], "utf8"))
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line.trim() === "") continue
    const { id, method, params } = JSON.parse(line)
    if (id === undefined) continue
    if (method === "initialize") {
      send({ jsonrpc: "2.0", id, result: { protocolVersion: params?.protocolVersion ?? "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "replay", version: "1.0.0" } } })
    } else if (method === "tools/list") send({ jsonrpc: "2.0", id, result: { tools } })
    else if (method === "ping") send({ jsonrpc: "2.0", id, result: {} })
    else send({ jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } })
  }
  process.exit(0)
}

const TOOLNEXUS = path.resolve(process.env.TOOLNEXUS ?? root)
const { createToolkit, defineTool, loadMcp } = await import(pathToFileURL(path.join(TOOLNEXUS, "index.js")).href)
const SET = path.resolve(process.env.SEARCH_SET ?? path.join(root, "bench", "search"))
const BIG = Number(process.env.BENCH_SEARCH_TOOLS ?? 10000)
const PASSES = Number(process.env.BENCH_SEARCH_PASSES ?? 20)
const MISSES = process.argv.includes("--misses")

const catalogs = fs
  .readdirSync(path.join(SET, "catalogs"))
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => JSON.parse(fs.readFileSync(path.join(SET, "catalogs", f), "utf8")))
/** @type {Array<{ request: string, expect: string, reuses?: boolean }>} */
const requests = JSON.parse(fs.readFileSync(path.join(SET, "requests.json"), "utf8"))

/** A tool of the catalog as an app's own tool named `name` (never run here). */
const asTool = (name, tool, description = tool.description) =>
  defineTool({
    name,
    title: tool.title,
    description,
    inputSchema: tool.inputSchema ?? { type: "object", properties: {} },
    run: () => "",
  })

// ---------------------------------------------------------------------------------------------
// Quality

const real = catalogs.flatMap((c) => c.tools.map((tool) => ({ server: c.server, tool })))
const self = fileURLToPath(import.meta.url)
const files = fs.readdirSync(path.join(SET, "catalogs")).filter((f) => f.endsWith(".json")).sort()
const source = await loadMcp(
  Object.fromEntries(files.map((f, i) => [catalogs[i].server, { command: [process.execPath, self, "--replay", path.join(SET, "catalogs", f)] }])),
)
const failed = Object.entries(source.status).filter(([, status]) => status !== "connected")
if (failed.length > 0) throw new Error(`replayed servers not connected: ${JSON.stringify(source.errors)}`)
const known = new Set(source.tools.map((t) => t.name))
if (known.size !== real.length) throw new Error(`loaded ${known.size} tools, the catalogs hold ${real.length}`)
const stats = { false: { n: 0, at1: 0, at3: 0 }, true: { n: 0, at1: 0, at3: 0 } }
const misses = []
for (const { request, expect, reuses } of requests) {
  const want = expect.replace("/", "_")
  if (!known.has(want)) throw new Error(`requests.json expects ${expect}, which no catalog lists`)
  const found = source.searchTools(request, { limit: 3 }).map((m) => m.name)
  const s = stats[String(reuses === true)]
  s.n++
  if (found[0] === want) s.at1++
  if (found.includes(want)) s.at3++
  else misses.push(`${expect} not in [${found.join(", ")}]: ${request}`)
}
await source.close()

const all = { n: stats.false.n + stats.true.n, at1: stats.false.at1 + stats.true.at1, at3: stats.false.at3 + stats.true.at3 }
const r = (hits, n) => (n === 0 ? "–" : (hits / n).toFixed(3))
console.log(`\nnode ${process.version}; tool search: ${real.length} tools of ${catalogs.length} published servers in one catalog, ${requests.length} requests\n`)
console.log("| requests | n | recall@1 | recall@3 |")
console.log("|---|---|---|---|")
for (const [label, s] of [["not reusing the tool's words", stats.false], ["reusing the tool's words", stats.true], ["all", all]]) {
  console.log(`| ${label} | ${s.n} | ${r(s.at1, s.n)} | ${r(s.at3, s.n)} |`)
}
if (MISSES) for (const line of misses) console.log(`  miss: ${line}`)

// ---------------------------------------------------------------------------------------------
// Speed

const big = []
for (let copy = 0; big.length < BIG; copy++) {
  for (const { server, tool } of real) {
    if (big.length === BIG) break
    const name = copy === 0 ? `${server}_${tool.name}` : `${server}${copy}_${tool.name}`
    big.push(asTool(name, tool, copy === 0 ? tool.description : `${tool.description ?? ""} (replica ${copy} of ${server}, region ${copy % 7})`))
  }
}
const large = await createToolkit({ builtins: false, extraTools: big })
let t0 = process.hrtime.bigint()
large.searchTools(requests[0].request)
const firstMs = Number(process.hrtime.bigint() - t0) / 1e6
for (const { request } of requests) large.searchTools(request) // warm-up
const samples = []
for (let pass = 0; pass < PASSES; pass++) {
  for (const { request } of requests) {
    t0 = process.hrtime.bigint()
    large.searchTools(request)
    samples.push(Number(process.hrtime.bigint() - t0) / 1e3)
  }
}
await large.close()
samples.sort((a, b) => a - b)
console.log(`\n| job | median | p99 |`)
console.log("|---|---|---|")
console.log(`| search ${big.length} tools (limit 5, ${samples.length} queries) | ${median(samples).toFixed(0)} µs | ${percentile(samples, 0.99).toFixed(0)} µs |`)
console.log(`| first search of ${big.length} tools (builds the index) | ${firstMs.toFixed(1)} ms | |`)
