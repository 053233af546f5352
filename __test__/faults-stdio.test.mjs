// The fault suite (issue 11), part 1: stdio servers that hang, flood stderr or stdout, crash,
// page endlessly or send huge listings, or break the framing.
// Each case must end `failed` with a reason in words (or `connected` where tolerance is right),
// within its timeout (plus a generous margin), with nothing left running and Node — and the
// engine — alive. Fixtures: __test__/fixtures/faults/ and the older fixtures of __test__/fixtures/;
// the shared checks are in lib/faults.mjs.
import { after, afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import readline from "node:readline"
import { fixture, isAlive, killAll, nodeFixture, readPid, tmpFile, waitFor } from "./helpers.mjs"
import { assertReason, AT_ONCE, AT_ONCE_TIMEOUT, faultsHarness, listOne, MARGIN, names, raw, sdk, T, timedCall, watchRss } from "./lib/faults.mjs"

const { load } = await faultsHarness({ after, afterEach })

// ---------------------------------------------------------------------------------------------
// Hangs

for (const group of ["same", "setsid"]) {
  test(`hang with a grandchild (${group === "same" ? "in its process group" : "in a session of its own"}): failed at the timeout, server and grandchild gone`, T, async (t) => {
    const pidFile = tmpFile("server.pid")
    const gcFile = tmpFile("grandchild.pid")
    // A setsid grandchild is reparented to init once the server dies: only its pid file finds it.
    t.after(() => killAll([readPid(gcFile)].filter(Boolean)))
    // The timeout is also how long the server has to start and spawn its grandchild (two node
    // processes: seconds, on a machine whose cores are busy), which the test must see die.
    const r = await listOne(
      t,
      "hang",
      { command: raw("hang"), env: { PID_FILE: pidFile, GRANDCHILD: group, GRANDCHILD_PID_FILE: gcFile }, timeout: 5000 },
      { bound: 5000 + MARGIN },
    )
    assert.equal(r.status, "failed")
    assertReason(r.reason, [/timed out after 5000 ms during initialize/])
    assert.ok(r.ms >= 5000 - 50, `failed after ${r.ms} ms, before its timeout`)
    const server = readPid(pidFile)
    const grandchild = readPid(gcFile)
    assert.ok(server && grandchild, "the server started and spawned its grandchild within the timeout")
    assert.equal(isAlive(server), false, `server ${server} still alive`)
    assert.equal(isAlive(grandchild), false, `grandchild ${grandchild} (${group}) outlived listMcpTools`)
  })
}

test("a call that never answers: isError at its timeout, and close() leaves nothing", T, async (t) => {
  const pidFile = tmpFile("server.pid")
  // The server's own timeout only bounds connecting here (a loaded machine can take over a
  // second to start a node fixture); the call's is 1500 ms.
  const source = await load({ fx: { command: nodeFixture("stdio-server", "--tools", "sleep,echo"), env: { PID_FILE: pidFile }, timeout: 20000 } })
  assert.deepEqual(source.status, { fx: "connected" }, source.errors.fx)
  const [sleep, echo] = source.tools
  const { result, ms } = await timedCall(sleep, { ms: 60000 }, { timeout: 1500 })
  t.diagnostic(`hung call: isError ${result.isError} after ${ms.toFixed(0)} ms: ${result.output}`)
  assert.equal(result.isError, true)
  assertReason(result.output, [/timed out/i])
  assert.ok(ms >= 1450 && ms < 1500 + MARGIN, `the hung call settled after ${ms} ms`)
  // The server itself is fine: the next call works.
  assert.equal((await echo.execute({ text: "still here" })).output, "still here")
  const pid = readPid(pidFile)
  await source.close()
  assert.equal(isAlive(pid), false, `server ${pid} outlived close()`)
})

// ---------------------------------------------------------------------------------------------
// stderr and stdout noise

test("stderr flood (MBs per second, otherwise fine): connected, calls work, memory stays flat", T, async (t) => {
  const r = await listOne(t, "flood", { command: sdk("flood"), timeout: 10000 }, { bound: 10000 })
  assert.equal(r.status, "connected", r.reason)
  assert.deepEqual(names(r.tools), ["flooded", "die"])

  const source = await load({ flood: { command: sdk("flood"), timeout: 10000 } })
  assert.deepEqual(source.status, { flood: "connected" }, source.errors.flood)
  const [flooded, die] = source.tools
  const rss = watchRss()
  const began = performance.now()
  // Calls keep being answered while the server floods; poll until it has written 32 MiB.
  const bytes = await waitFor(
    async () => {
      const res = await flooded.execute({})
      assert.equal(res.isError, false, res.output)
      const n = Number(res.output)
      return n >= 32 * 2 ** 20 ? n : null
    },
    { timeout: 20000, interval: 50, message: "32 MiB of stderr written" },
  )
  const seconds = (performance.now() - began) / 1000
  const grew = rss.stop()
  t.diagnostic(`flood: ${(bytes / 2 ** 20).toFixed(1)} MiB of stderr in ${seconds.toFixed(2)} s (${(bytes / 2 ** 20 / seconds).toFixed(1)} MiB/s); RSS grew ${grew.toFixed(1)} MiB`)
  assert.ok(grew < 100, `RSS grew by ${grew.toFixed(1)} MiB while draining stderr`)
  const { result } = await timedCall(die)
  assert.equal(result.isError, true)
  assertReason(result.output, [/exited \(code 5\)/])
  await source.close()
})

test("stderr flood then a crash during tools/list: the quoted stderr is bounded and ends with the last words", T, async (t) => {
  const r = await listOne(t, "flood", { command: sdk("crash-list"), env: { FLOOD: "1" }, timeout: 10000 }, { bound: 10000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/exited \(code 4\)/, /fatal: list exploded$/], { max: 2000 })
})

test("banner lines on stdout around a valid handshake are tolerated: connected, and calls work", T, async (t) => {
  const r = await listOne(t, "banner", { command: sdk("banner"), timeout: 10000 }, { bound: 10000 })
  assert.equal(r.status, "connected", r.reason)
  assert.deepEqual(names(r.tools), ["a"])
  const source = await load({ banner: { command: sdk("banner"), timeout: 10000 } })
  assert.deepEqual(source.status, { banner: "connected" }, source.errors.banner)
  const { output, isError, metadata } = await source.tools[0].execute({})
  assert.deepEqual({ output, isError, metadata }, { output: "a", isError: false, metadata: { server: "banner" } })
  await source.close()
})

test("banner lines, then silence: failed at the timeout, and the reason quotes the banner", T, async (t) => {
  // The banner must be out before the timeout: the node fixture's start-up is within it.
  const r = await listOne(t, "banner", { command: raw("banner-hang"), timeout: 4000 }, { bound: 4000 + MARGIN })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/timed out after 4000 ms during initialize/, /raw-stdio banner: listening on stdio/])
})

// ---------------------------------------------------------------------------------------------
// Crashes

test("crash during initialize: failed at once with the exit code and the stderr tail", T, async (t) => {
  const r = await listOne(t, "crash", { command: nodeFixture("crash-server"), timeout: 10000 }, { bound: 5000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/exited \(code 3\)/, /fatal: database missing/])
})

test("exit with code 0 before the handshake: failed at once, saying it exited", T, async (t) => {
  const r = await listOne(t, "quitter", { command: ["sh", "-c", "echo 'nothing to do' >&2; exit 0"], timeout: 10000 }, { bound: 5000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/exited \(code 0\)/, /nothing to do/])
})

test("crash during tools/list: failed at once with the exit code and the stderr tail", T, async (t) => {
  const r = await listOne(t, "crash", { command: sdk("crash-list"), timeout: 10000 }, { bound: 5000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/exited \(code 4\)/, /fatal: list exploded/])
})

test("crash during a call: isError with the exit at once, the process gone, later calls say the same", T, async (t) => {
  const pidFile = tmpFile("server.pid")
  const source = await load({ fx: { command: nodeFixture("stdio-server", "--tools", "crash,echo"), env: { PID_FILE: pidFile }, timeout: 5000 } })
  assert.deepEqual(source.status, { fx: "connected" }, source.errors.fx)
  const [crash, echo] = source.tools
  const { result, ms } = await timedCall(crash)
  t.diagnostic(`crash mid-call: after ${ms.toFixed(0)} ms: ${result.output}`)
  assert.equal(result.isError, true)
  assertReason(result.output, [/exited \(code 1\)/])
  assert.ok(ms < 3000, `the crash was reported after ${ms} ms`)
  assert.equal(isAlive(readPid(pidFile)), false, "the crashed server is still alive")
  const later = await echo.execute({ text: "x" })
  assert.equal(later.isError, true)
  assertReason(later.output, [/exited \(code 1\)/])
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// Paging and size

test("a repeated cursor: failed at once, naming the cursor", T, async (t) => {
  const r = await listOne(t, "liar", { command: nodeFixture("liar-server", "repeat-cursor"), timeout: 5000 }, { bound: 5000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/repeated cursor/, /same/])
})

test("endless paging (a fresh cursor forever): failed after the page cap, in bounded time and memory", T, async (t) => {
  const rss = watchRss()
  const r = await listOne(t, "pages", { command: sdk("endless-pages"), timeout: 3000 }, { bound: 30000 })
  const grew = rss.stop()
  t.diagnostic(`endless paging: RSS grew ${grew.toFixed(1)} MiB`)
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/more than 1000 pages/])
  assert.ok(grew < 100, `RSS grew by ${grew.toFixed(1)} MiB`)
})

/** A clear outcome for a 50 MiB tools/list answer: every tool, or a failure that says why (size). */
function assertHugeListOutcome(r, count) {
  if (r.status === "connected") {
    assert.equal(r.tools.length, count)
  } else {
    assert.equal(r.status, "failed")
    assertReason(r.reason, [/MiB|bytes|too (?:large|long|big)|longer|exceed|limit|size/i])
    assert.doesNotMatch(r.reason, /timed out/, "a size the client can see is not a timeout")
  }
}

test("a 50 MB tools/list answer over stdio: a clear outcome, and this process's memory stays bounded", T, async (t) => {
  const rss = watchRss()
  const r = await listOne(t, "huge", { command: sdk("huge-list", "50"), timeout: 8000 }, { bound: 8000 })
  const grew = rss.stop()
  t.diagnostic(`50 MB list over stdio: RSS grew ${grew.toFixed(1)} MiB`)
  assertHugeListOutcome(r, 24638) // sdk-faults: ceil(50 MiB / 2128 bytes per tool)
  assert.ok(grew < 300, `RSS grew by ${grew.toFixed(1)} MiB`)
})

test("a 50 MB tools/list answer over streamable HTTP: a clear outcome, memory bounded", T, async (t) => {
  const server = spawn(process.execPath, [fixture("faults/huge-http")], { stdio: ["pipe", "pipe", "inherit"] })
  try {
    const port = await new Promise((resolve, reject) => {
      server.once("error", reject)
      server.once("exit", (code) => reject(new Error(`huge-http exited (code ${code})`)))
      readline.createInterface({ input: server.stdout }).once("line", (line) => resolve(Number(line.split(" ")[1])))
    })
    const rss = watchRss()
    const r = await listOne(t, "huge", { url: `http://127.0.0.1:${port}/mcp`, timeout: 10000 }, { bound: 10000, ignore: [server.pid] })
    const grew = rss.stop()
    t.diagnostic(`50 MB list over HTTP: RSS grew ${grew.toFixed(1)} MiB`)
    assertHugeListOutcome(r, 25000)
    assert.ok(grew < 300, `RSS grew by ${grew.toFixed(1)} MiB`)
  } finally {
    server.kill("SIGKILL")
    if (server.exitCode === null && server.signalCode === null) await new Promise((resolve) => server.once("exit", resolve))
  }
})

// ---------------------------------------------------------------------------------------------
// Issue 11 item 7: stdio framing — a bad line fails the server at once, not at its timeout

test("a line that is not valid UTF-8: failed at once as an invalid message", T, async (t) => {
  const r = await listOne(t, "utf8", { command: raw("invalid-utf8"), timeout: AT_ONCE_TIMEOUT }, { bound: AT_ONCE })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/server sent an invalid message: /, /UTF-8/i])
})

test("a 200 MB line: failed at once as an invalid message, memory bounded", T, async (t) => {
  const rss = watchRss()
  const r = await listOne(t, "long", { command: raw("long-line", "200"), timeout: AT_ONCE_TIMEOUT }, { bound: AT_ONCE })
  const grew = rss.stop()
  t.diagnostic(`200 MB line: RSS grew ${grew.toFixed(1)} MiB`)
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/server sent an invalid message: /, /MiB|bytes|too long|longer|exceed/i])
  assert.ok(grew < 100, `RSS grew by ${grew.toFixed(1)} MiB`)
})

for (const at of ["initialize", "tools/list"]) {
  test(`a JSON answer to ${at} that is not JSON-RPC: failed at once as an invalid message`, T, async (t) => {
    const r = await listOne(t, "liar", { command: raw("not-jsonrpc", "--at", at), timeout: AT_ONCE_TIMEOUT }, { bound: AT_ONCE })
    assert.equal(r.status, "failed")
    assertReason(r.reason, [/server sent an invalid message: /])
    assert.doesNotMatch(r.reason, /timed out/)
  })
}

test("a JSON answer to tools/call that is not JSON-RPC: isError at once as an invalid message", T, async (t) => {
  const source = await load({ liar: { command: raw("not-jsonrpc", "--at", "tools/call"), timeout: AT_ONCE_TIMEOUT } })
  assert.deepEqual(source.status, { liar: "connected" }, source.errors.liar)
  const { result, ms } = await timedCall(source.tools[0])
  t.diagnostic(`not JSON-RPC in a call: after ${ms.toFixed(0)} ms: ${result.output}`)
  assert.equal(result.isError, true)
  assertReason(result.output, [/^server "liar" sent an invalid message: /])
  assert.ok(ms < AT_ONCE, `the call settled after ${ms} ms`)
  await source.close()
})
