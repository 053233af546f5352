// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// package.json) against this package, in both of its roles, at each spec version ("era") that
// expected.json names:
//
//   server mode  the suite acts as the client of a fixture server built with this package
//                (server.mjs, served in this process), every server scenario of the era;
//   client mode  the suite acts as the server and starts a client built on loadMcp
//                (client.mjs) once per client scenario of the era.
//
// expected.json is the gate: every scenario the pinned suite has at these eras is listed there,
// either "pass" (it must pass) or "gap: <reason (#issue)>" (a known failure, which must NOT pass:
// when a fix lands, the entry has to move to "pass", so the list stays true). A scenario the suite
// has but the list lacks, or an entry for a scenario the suite no longer has, fails the run too.
// In client mode, "skip: <reason>" leaves a scenario unrun. "skipped-by-suite: <reason>" is for a
// scenario the pinned suite runs but scores no check of (every check it reports is SKIPPED, e.g.
// tasks-status-notifications): it is still run, and fails the gate as soon as the suite scores it
// (a passed or failed check), so the entry has to be re-classified then. A scenario of an
// extension (tagged "extension", on no spec timeline: tasks-*, the skills extension's sep-2640-*)
// is run only when listed, forced (the suite's --force), one CLI run each, in either mode: at the
// eras its entry is keyed by, or (a plain entry) against the newest era.
//
// The suite's runner needs Node >= 22 (it imports fs.globSync). The package and everything it
// serves stay on the Node running this file; only the suite's CLI runs on Node 22 (this Node
// if it is new enough, else the one scripts/setup-test-deps.sh installs under node22/).
//
//   node __test__/conformance/run.mjs [--mode server|client] [--era 2025-11-25] [--scenario NAME]
//                                     [--expected FILE] [--client FILE] [--server FILE] [--keep] [--verbose]
// --client runs another client script in client mode, --server serves another fixture module (one
// exporting startFixtureServer) in server mode (the gate's own tests use broken ones).
// Filters narrow a run for debugging (and skip the completeness check); --keep keeps the suite's
// result files; --verbose prints why each gap failed. Exit 0 only when every scenario run matched
// its entry.
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { createRequire } from "node:module"
import { EXTENSION, failureLines, judgeServer, plan, printTable, readResults, suiteNode, tally, verdict } from "./gate.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const require = createRequire(import.meta.url)

// Bounds, generous: a whole server era takes about a second, one client scenario under one.
const SCENARIO_TIMEOUT_MS = 20_000
const SERVER_ERA_TIMEOUT_MS = 240_000
const CLIENT_RUN_TIMEOUT_MS = 60_000
const CLIENT_CONCURRENCY = 2
const OVERALL_TIMEOUT_MS = 420_000

const { values: flags } = parseArgs({
  options: {
    mode: { type: "string" },
    era: { type: "string" },
    scenario: { type: "string" },
    expected: { type: "string", default: path.join(here, "expected.json") },
    client: { type: "string", default: path.join(here, "client.mjs") },
    server: { type: "string", default: path.join(here, "server.mjs") },
    keep: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
})
const filtered = Boolean(flags.mode || flags.era || flags.scenario)

// Process groups of the suite runs in flight, so that an overall timeout or a signal takes them
// (and the clients they started) down too.
const running = new Set()
function killRunning() {
  for (const pid of running) {
    try {
      process.kill(-pid, "SIGKILL")
    } catch {}
  }
}

function fail(message) {
  killRunning()
  console.error(`conformance: ${message}`)
  process.exit(1)
}

for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => fail(`stopped by ${signal}`))

// The Node that runs the suite's CLI.
function nodeForSuite() {
  const bin = suiteNode()
  if (bin === null) {
    const pkg = `node-${process.platform === "win32" ? "win" : process.platform}-${process.arch}`
    fail(
      `the suite needs Node >= 22 and this is ${process.version}; __test__/conformance/node22/node_modules/${pkg} is missing ` +
        `(bash scripts/setup-test-deps.sh installs it; on a platform without ${pkg}, run with Node 22)`,
    )
  }
  return bin
}

function suiteCli(expectedVersion) {
  let manifest
  try {
    manifest = require.resolve("@modelcontextprotocol/conformance/package.json")
  } catch {
    fail("@modelcontextprotocol/conformance is not installed (npm ci)")
  }
  const { version, bin } = JSON.parse(fs.readFileSync(manifest, "utf8"))
  if (version !== expectedVersion) {
    fail(`expected.json is for suite ${expectedVersion} but ${version} is installed: re-run and re-classify`)
  }
  return path.join(path.dirname(manifest), bin.conformance)
}

/** Runs a process in its own group; on timeout the group is killed. Never rejects. */
function run(command, args, { timeoutMs, env, cwd = root }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    })
    if (child.pid) running.add(child.pid)
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {}
    }, timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      running.delete(child.pid)
      resolve({ code: -1, stdout, stderr: `${stderr}\n${error.message}`, timedOut })
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      // Whatever the CLI left in its group (a client it started) goes with it.
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {}
      running.delete(child.pid)
      resolve({ code: code ?? -1, signal, stdout, stderr, timedOut })
    })
  })
}

/** `conformance list`: { server: Map(name -> tags), client: Map(name -> tags) }. */
async function listScenarios(node, cli) {
  const out = await run(node, [cli, "list"], { timeoutMs: 30_000 })
  if (out.code !== 0) fail(`"conformance list" failed:\n${out.stderr || out.stdout}`)
  const lists = { server: new Map(), client: new Map() }
  let section = null
  for (const line of out.stdout.split("\n")) {
    if (/^Server scenarios/.test(line)) section = lists.server
    else if (/^Client scenarios/.test(line)) section = lists.client
    else if (/^\S/.test(line)) section = null
    const m = section && line.match(/^\s+- (\S+) \[([^\]]*)\]/)
    if (m) section.set(m[1], m[2].split(","))
  }
  if (lists.server.size === 0 || lists.client.size === 0) fail(`could not read "conformance list":\n${out.stdout}`)
  return lists
}

// Server mode: one CLI run per era over every server scenario of that era. The suite's verdict
// per scenario: it passes when no check failed; a scenario with no scored check has no verdict.
// An extension's scenarios (planned with `extension`) run one CLI run each, named and forced:
// the suite runs them only so.
async function runServerEra(node, cli, era, url, outDir, planned) {
  const dir = path.join(outDir, `server-${era}`)
  const log = path.join(outDir, `server-${era}.log`)
  const specVersion = era === EXTENSION ? newestEra() : era
  const extensions = planned.filter((p) => p.extension).map((p) => p.name)
  const timeline = planned.filter((p) => !p.extension)
  if (timeline.length > 0) {
    const args = [cli, "server", "--url", url, "--spec-version", era, "--timeout", String(SCENARIO_TIMEOUT_MS), "-o", dir]
    args.push(...(flags.scenario ? ["--scenario", flags.scenario] : ["--suite", "all"]))
    const out = await run(node, args, { timeoutMs: SERVER_ERA_TIMEOUT_MS })
    if (out.timedOut) fail(`server mode at ${era} did not finish in ${SERVER_ERA_TIMEOUT_MS / 1000}s`)
    fs.appendFileSync(log, out.stdout + out.stderr)
  }
  for (const name of extensions) {
    const args = [cli, "server", "--url", url, "--spec-version", specVersion, "--force", "--scenario", name]
    args.push("--timeout", String(SCENARIO_TIMEOUT_MS), "-o", dir)
    const out = await run(node, args, { timeoutMs: SERVER_ERA_TIMEOUT_MS })
    if (out.timedOut) fail(`server scenario ${name} did not finish in ${SERVER_ERA_TIMEOUT_MS / 1000}s`)
    fs.appendFileSync(log, out.stdout + out.stderr)
  }
  return readResults(dir, "server-")
}

/** The newest era the gate runs (what the pseudo-era "extension" runs against). */
const newestEra = () => expected.eras[expected.eras.length - 1]

// checks, the client exiting non-zero, or a timeout all fail it).
async function runClientScenario(node, cli, planned, outDir) {
  const dir = path.join(outDir, "client", planned.era, planned.name.replaceAll("/", "_"))
  fs.mkdirSync(dir, { recursive: true })
  // The suite splits --command on spaces and runs it through a shell: `exec` makes the client the
  // process the suite kills on its timeout.
  const command = `exec ${process.execPath} ${path.resolve(flags.client)}`
  if (/\s/.test(process.execPath + path.resolve(flags.client))) fail(`a path has whitespace, which the suite's --command cannot carry: ${command}`)
  const era = planned.era === EXTENSION ? newestEra() : planned.era
  const args = [cli, "client", "--command", command, "--scenario", planned.name, "--spec-version", era]
  // The suite runs an extension's scenario only when forced (else it says SKIPPED and scores none).
  if (planned.extension) args.push("--force")
  args.push("--timeout", String(SCENARIO_TIMEOUT_MS), "-o", dir)
  const out = await run(node, args, { timeoutMs: CLIENT_RUN_TIMEOUT_MS })
  fs.writeFileSync(path.join(dir, "cli.log"), out.stdout + out.stderr)
  const result = [...readResults(dir).values()][0]
  const checks = result?.checks ?? []
  const t = tally(checks)
  const detail = failureLines(checks)
  if (out.timedOut) detail.push(`the suite did not finish in ${CLIENT_RUN_TIMEOUT_MS / 1000}s`)
  const clientErr = result && fs.existsSync(path.join(result.dir, "stderr.txt")) ? fs.readFileSync(path.join(result.dir, "stderr.txt"), "utf8").trim() : ""
  if (out.code !== 0 && clientErr) detail.push(`client stderr: ${clientErr.split("\n").slice(-3).join(" | ")}`)
  if (out.code !== 0 && /CLIENT TIMED OUT/.test(out.stderr)) detail.push("the client timed out")
  // The auth scenarios hand the client tokens, secrets and keys: none may be in its output.
  const printed = ["stdout.txt", "stderr.txt"]
    .map((f) => (result && fs.existsSync(path.join(result.dir, f)) ? fs.readFileSync(path.join(result.dir, f), "utf8") : ""))
    .join("\n")
  const leaked = planned.name.startsWith("auth/") && /eyJ[\w-]+\.[\w-]+|conformance-test-secret|PRIVATE KEY/.test(printed)
  if (leaked) detail.push("the client printed a token, secret or key")
  const outcome = out.code === 0 && !leaked ? (t.passed > 0 ? "pass" : "no verdict") : "fail"
  return { ...planned, ...t, outcome, detail, resultDir: result?.dir ?? dir }
}

async function pool(items, size, work) {
  const results = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await work(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker))
  return results
}

/** expected.json, once read. */
let expected

async function main() {
  const started = Date.now()
  setTimeout(() => fail(`the whole run took over ${OVERALL_TIMEOUT_MS / 1000}s`), OVERALL_TIMEOUT_MS).unref()
  expected = JSON.parse(fs.readFileSync(flags.expected, "utf8"))
  const version = expected.suite.replace(/^@modelcontextprotocol\/conformance@/, "")
  const node = nodeForSuite()
  const cli = suiteCli(version)
  const lists = await listScenarios(node, cli)
  const { runs, problems } = plan(expected, version, lists)
  if (problems.length > 0 && !filtered) fail(`expected.json does not match suite ${version}:\n  ${problems.join("\n  ")}`)

  const wanted = (r) =>
    (!flags.mode || r.mode === flags.mode) && (!flags.era || r.era === flags.era) && (!flags.scenario || r.name === flags.scenario)
  const serverRuns = runs.server.filter(wanted)
  const clientRuns = runs.client.filter(wanted)
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-conformance-"))
  console.log(`suite ${version} on Node ${(await run(node, ["--version"], { timeoutMs: 10_000 })).stdout.trim()}; results in ${outDir}`)

  const rows = []
  if (serverRuns.length > 0) {
    const { startFixtureServer } = await import(pathToFileURL(path.resolve(flags.server)).href)
    const fixture = await startFixtureServer()
    try {
      for (const era of [...expected.eras, EXTENSION]) {
        const planned = serverRuns.filter((r) => r.era === era)
        if (planned.length === 0) continue
        const results = await runServerEra(node, cli, era, fixture.url, outDir, planned)
        rows.push(...planned.map((p) => judgeServer(results, p)))
      }
    } finally {
      await fixture.close()
    }
  }
  const toRun = clientRuns.filter((r) => r.kind !== "skip")
  rows.push(...(await pool(toRun, CLIENT_CONCURRENCY, (p) => runClientScenario(node, cli, p, outDir))))
  rows.push(...clientRuns.filter((r) => r.kind === "skip").map((r) => ({ ...r, outcome: "-" })))
  for (const r of rows) r.verdict = r.kind === "skip" ? "not run" : verdict(r)

  printTable(rows)
  const bad = rows.filter((r) => r.verdict === "REGRESSION" || r.verdict === "NOW PASSES" || r.verdict === "NOW SCORED")
  for (const r of rows.filter((r) => r.verdict === "REGRESSION" || (flags.verbose && r.outcome !== "pass" && r.kind !== "skip"))) {
    console.log(`\n${r.verdict === "REGRESSION" ? "REGRESSION" : "gap"}: ${r.mode} ${r.name} at ${r.era} (${r.outcome}); ${r.resultDir}`)
    for (const d of r.detail.slice(0, 8)) console.log(`  ${d}`)
  }
  for (const r of rows.filter((r) => r.verdict === "NOW SCORED")) {
    console.log(`\nNOW SCORED: ${r.mode} ${r.name} at ${r.era} (${r.outcome}): listed as skipped by the suite ("${r.reason}"); classify it "pass" or "gap: <reason>"`)
    for (const d of r.detail.slice(0, 8)) console.log(`  ${d}`)
  }
  for (const r of rows.filter((r) => r.verdict === "NOW PASSES")) {
    console.log(`\nNOW PASSES: ${r.mode} ${r.name} at ${r.era}: listed as a gap ("${r.reason}"); mark it "pass" in expected.json`)
  }
  const ok = rows.filter((r) => r.verdict === "ok" && r.kind === "pass").length
  const gaps = rows.filter((r) => r.verdict === "ok" && r.kind === "gap").length
  const skipped = rows.filter((r) => r.kind === "skip").length
  const unscored = rows.filter((r) => r.verdict === "ok" && r.kind === "skipped-by-suite").length
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  console.log(
    `\n${rows.length} scenario runs in ${seconds}s: ${ok} pass as required, ${gaps} known gaps fail as listed, ${unscored} skipped by the suite as listed, ${skipped} not run, ${bad.length} unexpected`,
  )
  if (bad.length > 0 || flags.keep) console.log(`results kept in ${outDir}`)
  else fs.rmSync(outDir, { recursive: true, force: true })
  // The plain closing line: required passes passed; unexpected outcomes failed; gaps skipped.
  console.log(`conformance: ${ok} passed, ${bad.length} failed, ${gaps + skipped + unscored} skipped`)
  process.exitCode = bad.length > 0 ? 1 : 0
}

await main()
