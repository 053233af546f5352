// The conformance gate (__test__/conformance/run.mjs) itself: it must fail when a scenario
// listed as passing fails, when a listed gap starts passing, and when expected.json and the
// pinned suite disagree on which scenarios exist. Each case runs the real suite against the real
// fixture server or client, with a doctored copy of expected.json.
import { test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const runner = path.join(here, "conformance", "run.mjs")
const expected = JSON.parse(fs.readFileSync(path.join(here, "conformance", "expected.json"), "utf8"))

function gate(args, edit) {
  const doctored = structuredClone(expected)
  edit(doctored)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-gate-"))
  const file = path.join(dir, "expected.json")
  fs.writeFileSync(file, JSON.stringify(doctored))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runner, "--expected", file, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => {
      fs.rmSync(dir, { recursive: true, force: true })
      resolve({ code, stdout, stderr })
    })
  })
}

const closing = (out) => out.trim().split("\n").at(-1)

// Every server scenario passes now, so a fixture serving tools only stands in for a broken server.
const brokenServer = path.join(here, "fixtures", "conformance-broken-server.mjs")

test("a server scenario listed as pass that fails is a regression, with the suite's reason", { timeout: 60_000 }, async () => {
  const r = await gate(["--mode", "server", "--era", "2025-11-25", "--scenario", "completion-complete", "--server", brokenServer], () => {})
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(r.stdout, /^server\s+2025-11-25\s+completion-complete\s+pass\s+fail\s+1\/1\s+REGRESSION$/m)
  assert.match(r.stdout, /REGRESSION: server completion-complete at 2025-11-25 \(fail\)/)
  assert.match(r.stdout, /failed completion-complete: Failed: completion\/complete/)
  assert.equal(closing(r.stdout), "conformance: 0 passed, 1 failed, 0 skipped")
})

test("a server gap that passes fails the run until it is listed as pass", { timeout: 60_000 }, async () => {
  const r = await gate(["--mode", "server", "--era", "2025-11-25", "--scenario", "tools-call-simple-text"], (e) => {
    e.server["tools-call-simple-text"] = "gap: pretend it fails"
  })
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(
    r.stdout,
    /NOW PASSES: server tools-call-simple-text at 2025-11-25: listed as a gap \("pretend it fails"\); mark it "pass" in expected.json/,
  )
  assert.equal(closing(r.stdout), "conformance: 0 passed, 1 failed, 0 skipped")
})

test("the unchanged entries of one scenario in each mode pass the gate", { timeout: 60_000 }, async () => {
  const server = await gate(["--mode", "server", "--era", "2025-11-25", "--scenario", "tools-call-error"], () => {})
  assert.equal(server.code, 0, server.stdout + server.stderr)
  assert.match(server.stdout, /^server\s+2025-11-25\s+tools-call-error\s+pass\s+pass\s+2\/0\s+ok$/m)
  const client = await gate(["--mode", "client", "--era", "2026-07-28", "--scenario", "tools_call"], () => {})
  assert.equal(client.code, 0, client.stdout + client.stderr)
  assert.match(client.stdout, /^client\s+2026-07-28\s+tools_call\s+pass\s+pass\s+\d+\/0\s+ok$/m)
  assert.equal(closing(client.stdout), "conformance: 1 passed, 0 failed, 0 skipped")
})

// Every client scenario passes now, so a client that gives up at once stands in for a broken one.
const brokenClient = path.join(here, "fixtures", "conformance-broken-client.mjs")

test("a client scenario listed as pass that fails shows the checks and the client's own error", { timeout: 60_000 }, async () => {
  const r = await gate(["--mode", "client", "--era", "2026-07-28", "--scenario", "tools_call", "--client", brokenClient], () => {})
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(r.stdout, /REGRESSION: client tools_call at 2026-07-28 \(fail\)/)
  assert.match(r.stdout, /failed [a-z0-9-]+: /)
})

test("an auth scenario whose client prints a secret it was given fails, though every check passes", { timeout: 60_000 }, async () => {
  const leaky = path.join(here, "fixtures", "conformance-leaky-client.mjs")
  const r = await gate(["--mode", "client", "--era", "2025-11-25", "--scenario", "auth/client-credentials-basic", "--client", leaky], () => {})
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(r.stdout, /^client\s+2025-11-25\s+auth\/client-credentials-basic\s+pass\s+fail\s+\d+\/0\s+REGRESSION$/m)
  assert.match(r.stdout, /the client printed a token, secret or key/)
})

test("a client gap that fails stays a gap", { timeout: 60_000 }, async () => {
  const r = await gate(["--mode", "client", "--era", "2026-07-28", "--scenario", "tools_call", "--client", brokenClient], (e) => {
    e.client.tools_call = "gap: pretend the client is broken"
  })
  assert.equal(r.code, 0, r.stdout + r.stderr)
  assert.match(r.stdout, /^client\s+2026-07-28\s+tools_call\s+gap\s+fail\s+\d+\/[1-9]\d*\s+ok$/m)
  assert.equal(closing(r.stdout), "conformance: 0 passed, 0 failed, 1 skipped")
})

test("a scenario the suite only skips is run and matches its skipped-by-suite entry", { timeout: 60_000 }, async () => {
  const r = await gate(["--mode", "server", "--era", "extension", "--scenario", "tasks-status-notifications"], () => {})
  assert.equal(r.code, 0, r.stdout + r.stderr)
  assert.match(r.stdout, /^server\s+extension\s+tasks-status-notifications\s+skipped-by-suite\s+skipped by suite\s+0\/0\s+ok$/m)
  assert.match(r.stdout, /1 skipped by the suite as listed/)
  assert.equal(closing(r.stdout), "conformance: 0 passed, 0 failed, 1 skipped")
})

test("a skipped-by-suite entry fails the run once the suite scores the scenario", { timeout: 60_000 }, async () => {
  const r = await gate(["--mode", "server", "--era", "extension", "--scenario", "tasks-required-task-error"], (e) => {
    e.server["tasks-required-task-error"] = "skipped-by-suite: pretend the suite skips it"
  })
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(r.stdout, /^server\s+extension\s+tasks-required-task-error\s+skipped-by-suite\s+pass\s+3\/0\s+NOW SCORED$/m)
  assert.match(
    r.stdout,
    /NOW SCORED: server tasks-required-task-error at extension \(pass\): listed as skipped by the suite \("pretend the suite skips it"\); classify it "pass" or "gap: <reason>"/,
  )
  assert.equal(closing(r.stdout), "conformance: 0 passed, 1 failed, 0 skipped")
})

test("expected.json must classify every scenario of the pinned suite and nothing else", { timeout: 60_000 }, async () => {
  const r = await gate([], (e) => {
    delete e.server.ping
    e.client["no-such-scenario"] = "pass"
    e.server["tools-list"] = { "2025-11-25": "pass" }
  })
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(r.stderr, /server scenario "ping" \[2025-11-25\] is not in expected\.json: classify it/)
  assert.match(r.stderr, /expected\.json lists client scenario "no-such-scenario", which suite 0\.2\.0-alpha\.12 does not run/)
  assert.match(
    r.stderr,
    /server "tools-list" at 2026-07-28: want "pass", "gap: <reason>", "skip: <reason>" or "skipped-by-suite: <reason>"/,
  )
  // Nothing ran: the mismatch is reported before any scenario.
  assert.doesNotMatch(r.stdout, /scenario runs/)
})
