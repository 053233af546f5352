// Side-by-side benchmarks: toolnexus against the MCP TypeScript SDK doing the same job, in one
// run, reported as ratios. Not part of `npm test`. Use a release build: `npm run build && npm run bench`.
//
//   list:  connect to N stdio servers concurrently, initialize, tools/list, disconnect
//   call:  sequential tools/call round trips on one open connection
//   calls: the same, 200 in flight at once
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { listMcpTools, loadMcp } from "toolnexus"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const server = path.join(root, "__test__", "fixtures", "stdio-server.mjs")
const command = ["node", server, "--tools", "echo,add,a,b,c"]
const SERVERS = Number(process.env.BENCH_SERVERS ?? 8)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const CALLS = Number(process.env.BENCH_CALLS ?? 2000)

async function time(fn) {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

async function median(rounds, fn) {
  const samples = []
  for (let i = 0; i < rounds; i++) samples.push(await time(fn))
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]
}

async function sdkConnect() {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "pipe" }))
  return client
}

const config = Object.fromEntries(Array.from({ length: SERVERS }, (_, i) => [`s${i}`, { command }]))

const listOurs = await median(ROUNDS, async () => {
  const inv = await listMcpTools(config)
  if (Object.values(inv.status).some((s) => s !== "connected")) throw new Error(JSON.stringify(inv.errors))
})
const listSdk = await median(ROUNDS, async () => {
  await Promise.all(
    Object.keys(config).map(async () => {
      const client = await sdkConnect()
      await client.listTools()
      await client.close()
    }),
  )
})

// One server with 5000 tools: the cost of carrying a big inventory across to JavaScript.
const BIG = Number(process.env.BENCH_BIG_TOOLS ?? 5000)
const bigCommand = ["node", server, "--tools", Array.from({ length: BIG }, (_, i) => `tool_${i}`).join(",")]
const bigOurs = await median(ROUNDS, async () => {
  const inv = await listMcpTools({ big: { command: bigCommand } })
  if (inv.tools.big?.length !== BIG) throw new Error(JSON.stringify(inv.errors))
})
const bigSdk = await median(ROUNDS, async () => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: bigCommand[0], args: bigCommand.slice(1), stderr: "pipe" }))
  const { tools } = await client.listTools()
  if (tools.length !== BIG) throw new Error("short list")
  await client.close()
})

const source = await loadMcp({ s: { command } })
const echo = source.tools.find((t) => t.name === "s_echo")
const client = await sdkConnect()
// Warm both paths (V8's JIT in particular) before timing them.
for (let i = 0; i < 1000; i++) {
  await echo.execute({ message: "warm" })
  await client.callTool({ name: "echo", arguments: { message: "warm" } })
}

const callOurs = await time(async () => {
  for (let i = 0; i < CALLS; i++) await echo.execute({ message: "m" })
})
const callSdk = await time(async () => {
  for (let i = 0; i < CALLS; i++) await client.callTool({ name: "echo", arguments: { message: "m" } })
})
const burst = 200
const burstOurs = await time(() => Promise.all(Array.from({ length: burst }, () => echo.execute({ message: "m" }))))
const burstSdk = await time(() =>
  Promise.all(Array.from({ length: burst }, () => client.callTool({ name: "echo", arguments: { message: "m" } }))),
)
await source.close()
await client.close()

const row = (name, ours, sdk, unit) =>
  console.log(`${name.padEnd(34)} toolnexus ${ours.toFixed(3).padStart(9)} ${unit}   sdk ${sdk.toFixed(3).padStart(9)} ${unit}   ratio ${(ours / sdk).toFixed(2)}x`)
console.log(`node ${process.version}, ${SERVERS} servers, median of ${ROUNDS}; ${CALLS} sequential calls; ratio < 1 means toolnexus is faster\n`)
row(`list ${SERVERS} stdio servers`, listOurs, listSdk, "ms")
row(`list 1 server with ${BIG} tools`, bigOurs, bigSdk, "ms")
row("tools/call, sequential (per call)", callOurs / CALLS, callSdk / CALLS, "ms")
row(`tools/call, ${burst} in flight (per call)`, burstOurs / burst, burstSdk / burst, "ms")
