// Side-by-side benchmarks of the client half: toolnexus, the MCP TypeScript SDK client and the
// floor (a bare newline JSON-RPC client on the same pipe, bench/lib.mjs), alternating round by
// round in one run against the same raw Python stdio server (bench/servers/raw_server.py).
// Prints a Markdown table; medians over BENCH_ROUNDS rounds. Not part of `npm test`.
//
//   npm run build && npm run bench          # release build; also runs bench/serve.mjs and bench/search.mjs
//   BENCH_ONLY=seq,concurrent node bench/bench.mjs
//   BENCH_ONLY=runtimes node bench/bench.mjs   # the call rows under node, bun and deno
//   TOOLNEXUS=/path/to/another/checkout node bench/bench.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFile } from "node:child_process"
import { EventEmitter } from "node:events"
import { promisify } from "node:util"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { alternate, FloorClient, header, root, row, RuntimeClient, serverCommand, time } from "./lib.mjs"

// TOOLNEXUS=<checkout> measures another build (a baseline) against the same SDK and floor.
const TOOLNEXUS = path.resolve(process.env.TOOLNEXUS ?? root)
const { listMcpTools, loadMcp } = await import(pathToFileURL(path.join(TOOLNEXUS, "index.js")).href)
// BASELINE=<checkout> adds an older build to the call rows, as a fourth contestant (printed on a
// line of its own). Both addons then share this process (heap, JIT, two runtimes on two cores),
// which favours one position by a few percent: for a verdict on build against build, use
// bench/compare.mjs (a fresh process per build per round).
const baseline = process.env.BASELINE
  ? await import(pathToFileURL(path.join(path.resolve(process.env.BASELINE), "index.js")).href)
  : undefined

const run = promisify(execFile)
// The SDK adds a "drain" listener per write it waits on: 2000 in flight are not a leak.
EventEmitter.defaultMaxListeners = 0
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const CALLS = Number(process.env.BENCH_CALLS ?? 2000)
const BIG_TOOLS = 20000
const BIG_PAGE = 500
const ONLY = process.env.BENCH_ONLY?.split(",")
const wanted = (key) => !ONLY || ONLY.includes(key)

async function sdkConnect(command, options) {
  const client = new Client({ name: "bench", version: "1.0.0" })
  const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore" })
  await client.connect(transport, options)
  return client
}

async function sdkListAll(client) {
  const tools = []
  let cursor
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

function expectTools(tools, n) {
  if (tools.length !== n) throw new Error(`listed ${tools.length} tools, expected ${n}`)
}

/** Each contestant connects once; `calls(which)` then runs against the open connections. */
async function callRows() {
  const command = serverCommand()
  const source = await loadMcp({ s: { command } })
  const echo = source.tools.find((t) => t.name === "s_echo")
  const sdk = await sdkConnect(command)
  const floor = await FloorClient.connect(command)
  const args = { message: "m" }
  const check = (r) => {
    if (r.isError) throw new Error(r.output)
  }
  const ours = () => echo.execute(args).then(check)
  const old = baseline && (await baseline.loadMcp({ s: { command } }))
  const oldEcho = old?.tools.find((t) => t.name === "s_echo")
  const before = () => oldEcho.execute(args).then(check)
  const withBaseline = (contestants, make) => (old ? { ...contestants, baseline: make(before) } : contestants)
  const theirs = () => sdk.callTool({ name: "echo", arguments: args })
  const bare = () => floor.callTool("echo", args)
  for (let i = 0; i < 2000; i++) await Promise.all([ours(), theirs(), bare(), old && before()])
  const sequential = (call) => async () => {
    for (let i = 0; i < CALLS; i++) await call()
  }
  const concurrent = (call) => () => Promise.all(Array.from({ length: CALLS }, call))
  if (wanted("seq")) {
    row(`${CALLS} sequential \`tools/call\``, await alternate(ROUNDS, withBaseline({
      toolnexus: sequential(ours), sdk: sequential(theirs), floor: sequential(bare),
    }, sequential)))
  }
  if (wanted("concurrent")) {
    row(`${CALLS} concurrent \`tools/call\``, await alternate(ROUNDS, withBaseline({
      toolnexus: concurrent(ours), sdk: concurrent(theirs), floor: concurrent(bare),
    }, concurrent)))
  }
  if (wanted("abort")) {
    // A call the server never answers, aborted once it is surely on the wire: time from
    // abort() to the call settling (toolnexus resolves with an error result; the SDK rejects).
    const sleep = source.tools.find((t) => t.name === "s_sleep")
    const settle = (start) => async () => {
      const controller = new AbortController()
      const pending = start(controller.signal)
      await new Promise((r) => setTimeout(r, 5))
      const t0 = performance.now()
      controller.abort()
      await pending.catch(() => {})
      return performance.now() - t0
    }
    row("abort a pending `tools/call` → settled", await alternate(ROUNDS * 3, {
      toolnexus: settle((signal) => sleep.execute({}, { signal })),
      sdk: settle((signal) => sdk.callTool({ name: "sleep", arguments: {} }, undefined, { signal })),
      floor: settle((signal) => new Promise((resolve, reject) => {
        const pending = floor.callTool("sleep", {})
        signal.addEventListener("abort", () => {
          floor.notify("notifications/cancelled", { requestId: floor.nextId - 1 })
          reject(signal.reason)
        })
        pending.then(resolve)
      })),
    }))
  }
  await source.close()
  if (wanted("hop")) {
    // What bounds the sequential row: a call of a closed source does everything but I/O (the
    // JavaScript thread hands the call to the runtime, which answers at once and wakes the
    // JavaScript thread with the result).
    const closed = () => echo.execute(args)
    for (let i = 0; i < 2000; i++) await closed()
    row(`bound: ${CALLS} sequential calls, no I/O (closed source)`, await alternate(ROUNDS, { toolnexus: sequential(closed) }))
  }
  await old?.close()
  await sdk.close()
  await floor.close()
}

/**
 * The call rows under each runtime that loads the addon: a toolnexus client in a node, a bun and
 * a deno of its own (bench/runtime-calls.mjs), taking turns with this process's floor client.
 */
async function runtimeRows() {
  const bin = (name) => path.join(root, "node_modules", ".bin", name)
  const tail = [path.join(root, "bench", "runtime-calls.mjs"), TOOLNEXUS, String(CALLS), ...serverCommand()]
  const commands = {
    node: [process.execPath, ...tail],
    // The reader Bun and Deno get (a thread per server), on Node (through the binding's test
    // hook, see bench/runtime-calls.mjs): what the runtime itself costs, apart.
    "node (thread reader)": [process.execPath, ...tail, "thread"],
    bun: [bin("bun"), ...tail],
    deno: [bin("deno"), "run", "-A", ...tail],
  }
  const clients = {}
  for (const [name, command] of Object.entries(commands)) clients[name] = await RuntimeClient.start(command, {})
  const floor = await FloorClient.connect(serverCommand())
  const bare = () => floor.callTool("echo", { message: "m" })
  for (let i = 0; i < 2000; i++) await bare()
  const floorJobs = {
    seq: async () => {
      for (let i = 0; i < CALLS; i++) await bare()
    },
    concurrent: () => Promise.all(Array.from({ length: CALLS }, bare)),
  }
  for (const [job, words] of [["seq", "sequential"], ["concurrent", "concurrent"]]) {
    const turns = Object.fromEntries(Object.entries(clients).map(([name, client]) => [name, () => client.run(job)]))
    const samples = await alternate(ROUNDS, { floor: floorJobs[job], ...turns })
    for (const name of Object.keys(clients)) {
      row(`${CALLS} ${words} \`tools/call\`, toolnexus under ${name}`, { toolnexus: samples[name], floor: samples.floor })
    }
  }
  for (const client of Object.values(clients)) await client.close()
  await floor.close()
}

/** Connect, initialize, list every page, disconnect (waiting for the children to exit). */
async function listRow(job, servers, command, tools) {
  const config = Object.fromEntries(Array.from({ length: servers }, (_, i) => [`s${i}`, { command }]))
  const each = (fn) => () => Promise.all(Array.from({ length: servers }, fn))
  row(job, await alternate(ROUNDS, {
    toolnexus: async () => {
      const inventory = await listMcpTools(config)
      for (const name of Object.keys(config)) {
        if (inventory.status[name] !== "connected") throw new Error(JSON.stringify(inventory.errors))
        expectTools(inventory.tools[name], tools)
      }
    },
    sdk: each(async () => {
      const client = await sdkConnect(command)
      expectTools(await sdkListAll(client), tools)
      await client.close()
    }),
    floor: each(async () => {
      const client = await FloorClient.connect(command)
      expectTools(await client.listTools(), tools)
      await client.close()
    }),
  }))
}

/** `import()` in a fresh node, minus a bare node start (spawn to exit, both). */
async function importRow() {
  const node = (code) => () => time(() => run(process.execPath, ["--input-type=module", "-e", code], { cwd: root }))
  const samples = await alternate(ROUNDS * 2, {
    bare: node(""),
    // As a user imports it: through package.json's "exports" (the ESM entry, index.mjs).
    toolnexus: node(TOOLNEXUS === root ? 'await import("toolnexus")' : `await import(${JSON.stringify(pathToFileURL(path.join(TOOLNEXUS, "index.js")).href)})`),
    sdk: node('await import("@modelcontextprotocol/sdk/client/index.js"); await import("@modelcontextprotocol/sdk/client/stdio.js")'),
  })
  row('`import("toolnexus")` above bare node', { toolnexus: samples.toolnexus - samples.bare, sdk: samples.sdk - samples.bare })
}

/** Resident memory of a fresh node holding 50 connected servers (bench/rss.mjs). */
async function rssRow(servers) {
  const rss = (who) => async () => {
    const { stdout } = await run(process.execPath, [`${root}/bench/rss.mjs`, who, String(servers), TOOLNEXUS], { cwd: root })
    return Number(stdout.trim())
  }
  const samples = await alternate(3, { bare: rss("bare"), toolnexus: rss("toolnexus"), sdk: rss("sdk"), floor: rss("floor") })
  row(`resident memory, ${servers} servers loaded (node's own ${samples.bare.toFixed(0)} MB included)`, samples, "MB")
}

/** A server that never answers `initialize`, timeout 1000 ms: time until it is reported failed. */
async function hungRow() {
  const command = serverCommand("--hang")
  const samples = await alternate(3, {
    toolnexus: async () => {
      const inventory = await listMcpTools({ hung: { command, timeout: 1000 } })
      if (inventory.status.hung !== "failed") throw new Error("the hung server was not reported")
    },
    sdk: async () => {
      const client = new Client({ name: "bench", version: "1.0.0" })
      const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore" })
      const failed = await client.connect(transport, { timeout: 1000 }).then(() => false, () => true)
      await transport.close()
      if (!failed) throw new Error("the hung server was not reported")
    },
    floor: async () => {
      const client = new FloorClient(command)
      const answered = client.request("initialize", {})
      await Promise.race([answered, new Promise((r) => setTimeout(r, 1000))])
      client.child.kill("SIGKILL")
      await client.exited
    },
  })
  row("report a hung server (timeout 1000 ms)", samples)
}

console.log(`node ${process.version}; raw Python stdio server; medians of ${ROUNDS} alternating rounds\n`)
header()
if (["seq", "concurrent", "abort", "hop"].some(wanted)) await callRows()
if (wanted("runtimes")) await runtimeRows()
if (wanted("big")) await listRow(`list one server, ${BIG_TOOLS} tools in ${BIG_TOOLS / BIG_PAGE} pages`, 1,
  serverCommand("--tools", String(BIG_TOOLS), "--page-size", String(BIG_PAGE)), BIG_TOOLS)
if (wanted("list10")) await listRow("list 10 stdio servers", 10, serverCommand(), 3)
if (wanted("list50")) await listRow("list 50 stdio servers", 50, serverCommand(), 3)
if (wanted("import")) await importRow()
if (wanted("rss")) await rssRow(50)
if (wanted("hung")) await hungRow()
