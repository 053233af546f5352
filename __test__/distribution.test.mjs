// Distribution (issue 6): the two tarballs `npm run package` writes (the root package and this
// host's platform package) install offline into an empty folder, and from there toolnexus works
// through `import`, `require`, TypeScript under `strict`, and worker threads. The addon packaged
// is the debug build `npm test` has just made.
import { test, before, after } from "node:test"
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { fixture, repoRoot, runNode } from "./helpers.mjs"

const T = { timeout: 60000 }
const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
process.report.excludeNetwork = true
const platform = `linux-${process.arch}-${process.report.getReport().header.glibcVersionRuntime ? "gnu" : "musl"}`
const addonFile = `toolnexus.${platform}.node`
const tsc = path.join(repoRoot, "node_modules", ".bin", "tsc")

// npm run from `npm test` exports npm_config_* (cache, prefixes, …); the consumer's npm must not see them.
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")))
const npm = (args, cwd) => execFileSync("npm", args, { cwd, env: npmEnv, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

let work // temp root: holds the consumer folder and a private npm cache
let consumer // the empty folder the tarballs are installed into

before(
  () => {
    const printed = execFileSync(process.execPath, [path.join(repoRoot, "scripts", "package.mjs"), "--debug"], {
      cwd: repoRoot,
      env: npmEnv,
      encoding: "utf8",
    })
    const tarballs = printed.trim().split("\n")
    assert.deepEqual(tarballs, [
      path.join(repoRoot, "dist-pkg", `toolnexus-${version}.tgz`),
      path.join(repoRoot, "dist-pkg", `toolnexus-${platform}-${version}.tgz`),
    ])

    work = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-dist-"))
    consumer = path.join(work, "consumer")
    fs.mkdirSync(consumer)
    npm(["init", "-y"], consumer)
    // --offline with an empty cache: nothing may come from a registry. The root's optional
    // dependencies on the other platforms' packages are skipped, the host's is the second tarball.
    npm(["install", "--offline", "--no-audit", "--no-fund", "--cache", path.join(work, "npm-cache"), ...tarballs], consumer)
  },
  { timeout: 180000 },
)

after(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true })
})

/** The installed toolnexus package.json. */
const manifestOf = (installed) => JSON.parse(fs.readFileSync(path.join(installed, "toolnexus", "package.json"), "utf8"))

/** Writes `source` to `name` in the consumer folder and returns its path. */
function consumerFile(name, source) {
  const file = path.join(consumer, name)
  fs.writeFileSync(file, source)
  return file
}

/** Runs a consumer script with node and returns its stdout parsed as JSON (asserting a clean exit). */
async function runConsumer(file, args = []) {
  const r = await runNode(file, { cwd: consumer, args, timeout: 20000 })
  assert.equal(r.code, 0, `exit ${r.code} ${r.signal ?? ""}\n${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** DT_FLAGS_1 of a 64-bit little-endian ELF shared object (from its PT_DYNAMIC segment), or 0. */
function elfFlags1(file) {
  const elf = fs.readFileSync(file)
  const phoff = Number(elf.readBigUInt64LE(0x20))
  const phentsize = elf.readUInt16LE(0x36)
  for (let i = 0; i < elf.readUInt16LE(0x38); i++) {
    const ph = phoff + i * phentsize
    if (elf.readUInt32LE(ph) !== 2 /* PT_DYNAMIC */) continue
    const start = Number(elf.readBigUInt64LE(ph + 8))
    const end = start + Number(elf.readBigUInt64LE(ph + 32))
    for (let d = start; d < end; d += 16) {
      if (elf.readBigInt64LE(d) === 0x6ffffffbn /* DT_FLAGS_1 */) return Number(elf.readBigUInt64LE(d + 8))
    }
  }
  return 0
}

test("the installed packages hold the loader, types and addon, and nothing of the build", T, () => {
  const installed = path.join(consumer, "node_modules")
  assert.deepEqual(fs.readdirSync(installed).filter((f) => !f.startsWith(".")).sort(), ["toolnexus", `toolnexus-${platform}`])
  const rootFiles = fs.readdirSync(path.join(installed, "toolnexus")).filter((f) => f !== "bin")
  assert.deepEqual(rootFiles.sort(), ["LICENSE", "README.md", "adapters", "binding.d.ts", "binding.js", "index.d.ts", "index.js", "index.mjs", "lib", "package.json"])
  // The package's JavaScript over the binding: modules only (lib/tsconfig.json stays home).
  assert.deepEqual(fs.readdirSync(path.join(installed, "toolnexus", "lib")).sort(), ["curation.js", "endpoints.js", "hooks.js", "options.js", "results.js", "search.js", "serve-auth.js", "serve-checks.js", "serve-oauth.js", "serve-options.js", "serve.js", "skills.js", "source.js", "surface-results.js", "surface.js", "telemetry.js", "toolkit.js", "tools.js"])
  // The framework adapters (toolnexus/ai-sdk, /langchain, /openai-agents): modules and types only.
  const adapters = fs.readdirSync(path.join(installed, "toolnexus", "adapters")).sort()
  const expected = ["ai-sdk", "langchain", "openai-agents", "shared"].flatMap((m) => [`${m}.d.mts`, `${m}.mjs`]).concat(["naming.mjs", "strict.mjs"])
  assert.deepEqual(adapters, expected.sort())
  for (const sub of ["ai-sdk", "langchain", "openai-agents"]) assert.ok(manifestOf(installed).exports[`./${sub}`], sub)
  // The frameworks and OpenTelemetry's API are optional peers (nothing of theirs was installed above); no runtime dependency.
  assert.equal(manifestOf(installed).dependencies, undefined)
  assert.deepEqual(Object.keys(manifestOf(installed).peerDependenciesMeta).sort(), ["@langchain/core", "@openai/agents", "@opentelemetry/api", "ai"])
  assert.deepEqual(fs.readdirSync(path.join(installed, `toolnexus-${platform}`)).sort(), [addonFile, "README.md", "package.json"].sort())

  const manifest = JSON.parse(fs.readFileSync(path.join(installed, "toolnexus", "package.json"), "utf8"))
  assert.deepEqual(manifest.optionalDependencies, {
    "toolnexus-darwin-arm64": version,
    "toolnexus-darwin-x64": version,
    "toolnexus-linux-arm64-gnu": version,
    "toolnexus-linux-x64-gnu": version,
    "toolnexus-linux-x64-musl": version,
    "toolnexus-win32-x64-msvc": version,
  })
})

test("ESM: import { listMcpTools } from 'toolnexus' lists a real stdio server", T, async () => {
  const script = consumerFile(
    "list.mjs",
    `import { listMcpTools } from "toolnexus"
const inv = await listMcpTools({ mcpServers: { fixture: { command: [process.execPath, process.argv[2], "--tools", "alpha,beta"] } } })
console.log(JSON.stringify({ resolved: import.meta.resolve("toolnexus"), status: inv.status, tools: inv.tools.fixture.map((t) => t.name) }))
`,
  )
  assert.deepEqual(await runConsumer(script, [fixture("stdio-server")]), {
    // The ESM entry, which loads index.js through require (see index.mjs).
    resolved: pathToFileURL(path.join(consumer, "node_modules", "toolnexus", "index.mjs")).href,
    status: { fixture: "connected" },
    tools: ["alpha", "beta"],
  })
})

test("CommonJS: require('toolnexus') lists a real stdio server, with the platform package's addon", T, async () => {
  const script = consumerFile(
    "list.cjs",
    `const { listMcpTools } = require("toolnexus")
listMcpTools({ mcpServers: { fixture: { command: [process.execPath, process.argv[2], "--tools", "gamma"] } } }).then((inv) => {
  const addons = Object.keys(require.cache).filter((f) => f.endsWith(".node"))
  console.log(JSON.stringify({ resolved: require.resolve("toolnexus"), addons, status: inv.status, tools: inv.tools.fixture.map((t) => t.name) }))
})
`,
  )
  assert.deepEqual(await runConsumer(script, [fixture("stdio-server")]), {
    resolved: path.join(consumer, "node_modules", "toolnexus", "index.js"),
    addons: [path.join(consumer, "node_modules", `toolnexus-${platform}`, addonFile)],
    status: { fixture: "connected" },
    tools: ["gamma"],
  })
})

test("TypeScript: a consumer compiles against the installed index.d.ts (and the binding.d.ts it re-exports from) under strict (ESM and CommonJS)", T, () => {
  consumerFile(
    "consumer.mts",
    `import { listMcpTools, sanitize, type McpInventory, type McpStatus, type ToolInfo } from "toolnexus"

const inventory: McpInventory = await listMcpTools({ mcpServers: {} }, { signal: AbortSignal.timeout(1000) })
export const names: string[] = Object.values(inventory.tools).flatMap((tools: ToolInfo[]) => tools.map((t) => t.name))
export const status: McpStatus | undefined = inventory.status["x"]
export const safe: string = sanitize("a.b")
// @ts-expect-error the config is required
await listMcpTools()
// @ts-expect-error a status is one of three strings, not any string
export const wrong: "connected" = inventory.status["x"]
`,
  )
  consumerFile(
    "consumer.cts",
    `import toolnexus = require("toolnexus")

export const safe: string = toolnexus.sanitize("a.b")
// @ts-expect-error sanitize takes a string
toolnexus.sanitize(1)
`,
  )
  // A Node consumer has @types/node (for AbortSignal); this one borrows the repository's.
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      typeRoots: [path.join(repoRoot, "node_modules", "@types")],
      types: ["node"],
    },
    files: ["consumer.mts", "consumer.cts"],
  }
  consumerFile("tsconfig.json", JSON.stringify(tsconfig, null, 2))
  let listed
  try {
    listed = execFileSync(tsc, ["-p", "tsconfig.json", "--listFiles"], { cwd: consumer, encoding: "utf8" })
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}${err.stderr}`)
  }
  // Every file the program holds besides TypeScript's libs and @types/node: the installed types only.
  const lib = /\/node_modules\/(typescript|@types|undici-types)\//
  assert.deepEqual(
    listed.trim().split("\n").filter((f) => !lib.test(f)),
    [
      path.join(consumer, "node_modules", "toolnexus", "binding.d.ts"),
      path.join(consumer, "node_modules", "toolnexus", "index.d.ts"),
      path.join(consumer, "consumer.mts"),
      path.join(consumer, "consumer.cts"),
    ],
  )
})

test("worker_threads: two workers load the addon, use it, and the process exits cleanly", T, async () => {
  consumerFile(
    "worker.cjs",
    `const { parentPort } = require("node:worker_threads")
const { sanitize, listMcpTools } = require("toolnexus")
listMcpTools({ off: { type: "local", command: ["nothing"], enabled: false } }).then((inv) =>
  parentPort.postMessage({ sanitized: sanitize("a.b"), inv }),
)
`,
  )
  // The main thread never loads the addon: each worker's load and teardown is the only one.
  const script = consumerFile(
    "workers.mjs",
    `import { Worker } from "node:worker_threads"
const run = () =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./worker.cjs", import.meta.url))
    let message
    worker.on("message", (m) => (message = m))
    worker.on("error", reject)
    worker.on("exit", (code) => resolve({ code, message }))
  })
console.log(JSON.stringify(await Promise.all([run(), run()])))
`,
  )
  const expected = { code: 0, message: { sanitized: "a_b", inv: { tools: {}, resources: {}, resourceTemplates: {}, prompts: {}, skills: {}, status: { off: "disabled" }, errors: {}, info: {} } } }
  const started = performance.now()
  assert.deepEqual(await runConsumer(script), [expected, expected]) // runNode SIGKILLs it after 20 s
  assert.ok(performance.now() - started < 10000, "the process took over 10 s to exit")
})

test("worker_threads: on glibc the addon is linked -z nodelete, so no worker exit can unload it", T, (t) => {
  if (!platform.endsWith("-gnu")) return t.skip("glibc only")
  // napi-build emits -Wl,-z,nodelete for every gnu target; this is what keeps tokio's threads
  // from running unmapped code after the last worker that loaded the addon is gone.
  const DF_1_NODELETE = 0x8
  const flags = elfFlags1(path.join(consumer, "node_modules", `toolnexus-${platform}`, addonFile))
  assert.equal(flags & DF_1_NODELETE, DF_1_NODELETE, `DT_FLAGS_1 is 0x${flags.toString(16)}`)
})
