// The fault suite (issue 11): real misbehaving servers — stdio processes that hang, crash,
// flood, lie or break the framing, and loopback HTTP servers that answer wrongly, endlessly or
// not at all. Each case must end `failed` with a reason in words (or `connected` where
// tolerance is right), within its timeout (plus a generous margin), with nothing left running
// and Node — and the engine — alive. Fixtures: __test__/fixtures/faults/ and the older
// fixtures of __test__/fixtures/.
import { test, afterEach, after } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import readline from "node:readline"
import { listMcpTools, loadMcp } from "toolnexus"
import { describePids, fixture, isAlive, killAll, leakCheck, nodeFixture, readPid, tmpFile, waitFor, watchDescendants } from "./helpers.mjs"
import { startStatus, startStreamableHttp } from "./fixtures/http-servers.mjs"
import { closedPort, startDropped, startEndlessSse, startHtml, startSilent } from "./fixtures/faults/http-faults.mjs"

const T = { timeout: 60000 }
/** How long past its own timeout a failing server may take to settle (a loaded 2-core machine). */
const MARGIN = 2000
/** A fault the client can see in what the server sent must fail well before the timeout. */
const AT_ONCE = 2500
const AT_ONCE_TIMEOUT = 4000

const raw = (...args) => nodeFixture("faults/raw-stdio", ...args)
const sdk = (...args) => nodeFixture("faults/sdk-faults", ...args)
const names = (infos) => infos.map((t) => t.name)

// A healthy server every test lists after its fault: Node is alive and so is the engine.
const canary = await startStreamableHttp({ toolNames: ["chirp"] })
after(() => canary.close())

// Nothing left running after a test, and the canary still lists; sources a test opened are
// closed afterwards even when the test failed.
const track = leakCheck(afterEach, {
  then: async () => {
    const inv = await listMcpTools({ mcpServers: { canary: { url: canary.url, timeout: 10000 } } })
    assert.deepEqual(inv.status, { canary: "connected" }, inv.errors.canary)
    assert.deepEqual(names(inv.tools.canary), ["chirp"])
  },
})
const load = async (servers) => track(await loadMcp({ mcpServers: servers }))

// A Rust path (`rmcp::transport::…`), an Option or Result dump, or a smart-pointer type.
const RUST_NOISE = /\b[a-z_][a-z0-9_]*::[A-Za-z_]|\b(?:Some|Ok|Err)\(|\b(?:Box|Arc|Vec|Option)</

/**
 * A failure reason as the issue requires it: a non-blank string of bounded length, in words
 * (no Rust type names or debug dumps), matching every pattern, leaking none of the secrets.
 */
function assertReason(reason, patterns = [], { secrets = [], max = 2000 } = {}) {
  assert.equal(typeof reason, "string", "a failed server has a reason")
  assert.ok(reason.trim().length > 0, "the reason is blank")
  assert.ok(reason.length <= max, `the reason is ${reason.length} characters long (at most ${max}): ${reason.slice(0, 300)}…`)
  assert.doesNotMatch(reason, RUST_NOISE, `a Rust type in the reason: ${reason}`)
  for (const secret of secrets) assert.ok(!reason.includes(secret), `the reason leaks ${JSON.stringify(secret)}: ${reason}`)
  for (const pattern of patterns) assert.match(reason, pattern)
}

/** Peak growth of this process's RSS, in MiB, from now until stop(). */
function watchRss(interval = 10) {
  const base = process.memoryUsage.rss()
  let peak = base
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()))
  // Unreferenced: a test that fails before stop() must not keep the process alive.
  const timer = setInterval(sample, interval).unref()
  return {
    stop() {
      clearInterval(timer)
      sample()
      return (peak - base) / 2 ** 20
    },
  }
}

/**
 * listMcpTools of one server under `name`, timed, watching every process it spawns: it must
 * settle within `bound` ms and leave none of them running (`ignore`: fixture processes the test
 * runs itself). Resolves { status, reason, tools, ms }.
 */
async function listOne(t, name, spec, { bound, ignore = [] }) {
  const watch = watchDescendants({ interval: 10 })
  const began = performance.now()
  const inv = await listMcpTools({ mcpServers: { [name]: spec } })
  const ms = performance.now() - began
  const seen = watch.stop()
  t.diagnostic(`${name}: ${inv.status[name]} after ${ms.toFixed(0)} ms${inv.errors[name] ? `: ${inv.errors[name].slice(0, 300)}` : ""}`)
  assert.deepEqual(Object.keys(inv.status), [name])
  assert.ok(ms < bound, `${name} settled after ${ms.toFixed(0)} ms (bound ${bound} ms)`)
  const alive = seen.filter((pid) => !ignore.includes(pid) && isAlive(pid))
  assert.deepEqual(alive, [], `still running after listMcpTools settled: ${describePids(alive)}`)
  if (inv.status[name] === "connected") assert.equal(inv.errors[name], undefined)
  else assert.equal(inv.tools[name], undefined)
  return { status: inv.status[name], reason: inv.errors[name], tools: inv.tools[name], ms }
}

/** Runs `execute(args)`, timed. */
async function timedCall(tool, args = {}) {
  const began = performance.now()
  const result = await tool.execute(args)
  return { result, ms: performance.now() - began }
}

// ---------------------------------------------------------------------------------------------
// Hangs

for (const group of ["same", "setsid"]) {
  test(`hang with a grandchild (${group === "same" ? "in its process group" : "in a session of its own"}): failed at the timeout, server and grandchild gone`, T, async (t) => {
    const pidFile = tmpFile("server.pid")
    const gcFile = tmpFile("grandchild.pid")
    // A setsid grandchild is reparented to init once the server dies: only its pid file finds it.
    t.after(() => killAll([readPid(gcFile)].filter(Boolean)))
    const r = await listOne(
      t,
      "hang",
      { command: raw("hang"), env: { PID_FILE: pidFile, GRANDCHILD: group, GRANDCHILD_PID_FILE: gcFile }, timeout: 1500 },
      { bound: 1500 + MARGIN },
    )
    assert.equal(r.status, "failed")
    assertReason(r.reason, [/timed out after 1500 ms during initialize/])
    assert.ok(r.ms >= 1500 - 50, `failed after ${r.ms} ms, before its timeout`)
    const server = readPid(pidFile)
    const grandchild = readPid(gcFile)
    assert.ok(server && grandchild, "the server started and spawned its grandchild within the timeout")
    assert.equal(isAlive(server), false, `server ${server} still alive`)
    assert.equal(isAlive(grandchild), false, `grandchild ${grandchild} (${group}) outlived listMcpTools`)
  })
}

test("a call that never answers: isError at the server's timeout, and close() leaves nothing", T, async (t) => {
  const pidFile = tmpFile("server.pid")
  const source = await load({ fx: { command: nodeFixture("stdio-server", "--tools", "sleep,echo"), env: { PID_FILE: pidFile }, timeout: 1500 } })
  assert.deepEqual(source.status, { fx: "connected" }, source.errors.fx)
  const [sleep, echo] = source.tools
  const { result, ms } = await timedCall(sleep, { ms: 60000 })
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
  const r = await listOne(t, "banner", { command: raw("banner-hang"), timeout: 1500 }, { bound: 1500 + MARGIN })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/timed out after 1500 ms during initialize/, /raw-stdio banner: listening on stdio/])
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
// HTTP servers that answer wrongly, endlessly or not at all

test("HTTP 500: failed at once with the status in words", T, async (t) => {
  const s = await startStatus(500)
  t.after(() => s.close())
  const r = await listOne(t, "web", { url: s.url, timeout: 5000 }, { bound: 3000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/HTTP 500 Internal Server Error/])
})

test("HTTP 200 with text/html: failed at once as not an MCP endpoint", T, async (t) => {
  const s = await startHtml()
  t.after(() => s.close())
  const r = await listOne(t, "web", { url: s.url, timeout: 5000 }, { bound: 3000 })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/not an MCP endpoint/i, /text\/html/])
})

for (const type of ["auto", "sse"]) {
  test(`an endless SSE stream that never carries the ${type === "sse" ? "endpoint event (legacy SSE)" : "response"}: failed at the timeout, stream closed, memory flat`, type === "sse" ? T : T, async (t) => {
    const s = await startEndlessSse()
    t.after(() => s.close())
    const rss = watchRss()
    const spec = type === "sse" ? { type, url: s.url, timeout: 2000 } : { url: s.url, timeout: 2000 }
    const r = await listOne(t, "web", spec, { bound: 2000 + MARGIN })
    const grew = rss.stop()
    t.diagnostic(`endless SSE: ${s.stats.bytesSent} bytes streamed; RSS grew ${grew.toFixed(1)} MiB`)
    assert.equal(r.status, "failed")
    assertReason(r.reason, [/timed out after 2000 ms during initialize/])
    assert.ok(s.stats.connections >= 1 && s.stats.bytesSent > 0, "the stream was opened and fed")
    await waitFor(() => s.stats.inFlight === 0, { timeout: 5000, message: "the client closed the endless stream" })
    assert.ok(grew < 100, `RSS grew by ${grew.toFixed(1)} MiB`)
  })
}

for (const kind of ["json", "sse"]) {
  test(`a connection dropped in the middle of the response (${kind}): failed at once, in words`, T, async (t) => {
    const s = await startDropped(kind)
    t.after(() => s.close())
    const r = await listOne(t, "web", { url: s.url, timeout: 5000 }, { bound: 3000 })
    assert.equal(r.status, "failed")
    assertReason(r.reason, [/clos|drop|reset|incomplete|end of file|eof|before|broke|interrupt|decod/i])
    assert.doesNotMatch(r.reason, /timed out/)
    await waitFor(() => s.stats.inFlight === 0, { timeout: 5000, message: "no request left in flight" })
  })
}

test("a socket that accepts and never answers: failed at the timeout, socket closed", T, async (t) => {
  const s = await startSilent()
  t.after(() => s.close())
  const r = await listOne(t, "web", { url: s.url, timeout: 2000 }, { bound: 2000 + MARGIN })
  assert.equal(r.status, "failed")
  assertReason(r.reason, [/timed out after 2000 ms during initialize/])
  assert.ok(s.stats.connections >= 1, "the client connected")
  await waitFor(() => s.stats.inFlight === 0, { timeout: 5000, message: "the client closed its socket" })
})

// ---------------------------------------------------------------------------------------------
// Issue 11 item 5: errors that leak

test("secrets in the URL (userinfo, ?api_key=) and in headers never appear in a reason; the cause does", T, async (t) => {
  const refused = new URL(await closedPort())
  const status = await startStatus(500)
  const html = await startHtml()
  const silent = await startSilent()
  t.after(() => Promise.all([status.close(), html.close(), silent.close()]))
  const secrets = ["hunter2-password", "sk-secret-query-value", "header-secret-token"]
  const secretUrl = (url) => {
    const u = new URL(url)
    u.username = "alice"
    u.password = secrets[0]
    u.search = `?api_key=${secrets[1]}&region=eu`
    return u.toString()
  }
  const headers = { Authorization: `Bearer ${secrets[2]}`, "X-Api-Key": secrets[2] }
  const servers = {
    refused: { url: secretUrl(refused), headers, timeout: 3000 },
    "refused-streamable": { type: "streamable-http", url: secretUrl(refused), headers, timeout: 3000 },
    "refused-sse": { type: "sse", url: secretUrl(refused), headers, timeout: 3000 },
    status500: { url: secretUrl(status.url), headers, timeout: 3000 },
    html: { url: secretUrl(html.url), headers, timeout: 3000 },
    silent: { url: secretUrl(silent.url), headers, timeout: 1500 },
  }
  const began = performance.now()
  const inv = await listMcpTools({ mcpServers: servers })
  const ms = performance.now() - began
  assert.ok(ms < 3000 + MARGIN, `settled after ${ms} ms`)
  for (const name of Object.keys(servers)) t.diagnostic(`${name}: ${inv.errors[name]}`)
  for (const name of Object.keys(servers)) {
    assert.equal(inv.status[name], "failed")
    assertReason(inv.errors[name], [], { secrets })
  }
  for (const name of ["refused", "refused-streamable", "refused-sse"]) assertReason(inv.errors[name], [/connection refused/i])
  assertReason(inv.errors.status500, [/HTTP 500/])
  assertReason(inv.errors.html, [/text\/html/])
  assertReason(inv.errors.silent, [/timed out after 1500 ms/])
})

test("multi-megabyte values in entries are quoted in bounded reasons; the other servers are unaffected", T, async (t) => {
  // Four of them stay under the 16 MiB of text a config object may hold in all.
  const big = "v".repeat(3 * 2 ** 20)
  const inv = await listMcpTools({
    mcpServers: {
      command: { command: [big] },
      cwd: { command: ["true"], cwd: `/nonexistent/${big}` },
      url: { url: `http://127.0.0.1:1/${big}` },
      host: { url: `http://${big}/mcp` },
      good: { command: raw("good", "g") },
    },
  })
  assert.deepEqual(inv.status, { command: "failed", cwd: "failed", url: "failed", host: "failed", good: "connected" })
  assert.deepEqual(names(inv.tools.good), ["g"])
  const invalid = ["command", "cwd", "url", "host"]
  for (const name of invalid) t.diagnostic(`${name}: ${inv.errors[name].length} characters: ${inv.errors[name].slice(0, 200)}`)
  for (const name of invalid) assertReason(inv.errors[name], [], { max: 1000 })
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

// ---------------------------------------------------------------------------------------------
// Many servers at once

test("100 servers in one config, good and bad mixed: all settle, statuses and reasons in config order", T, async (t) => {
  const refused = await closedPort()
  const status = await startStatus(500)
  const silent = await startSilent()
  t.after(() => Promise.all([status.close(), silent.close()]))
  const kinds = [
    // [kind, spec for entry i, expected status, reason patterns]
    ["good", (i) => ({ command: raw("good", `k${i}`), timeout: 30000 }), "connected"],
    ["web", () => ({ url: canary.url, timeout: 30000 }), "connected"],
    ["off", () => ({ command: ["true"], enabled: false }), "disabled"],
    ["missing", () => ({ command: ["/nonexistent/toolnexus-fault-binary"] }), "failed", [/toolnexus-fault-binary/, /no such file|not found/i]],
    ["crash", () => ({ command: ["sh", "-c", "echo 'fatal: gone' >&2; exit 3"], timeout: 30000 }), "failed", [/exited \(code 3\)/, /fatal: gone/]],
    ["hang", () => ({ command: ["sleep", "60"], timeout: 1500 }), "failed", [/timed out after 1500 ms during initialize/]],
    // Servers that fail at once get a generous timeout: 100 servers starting together on a
    // loaded 2-core machine may take seconds to get round to them, and their reason must be theirs.
    ["refused", () => ({ url: refused, timeout: 15000 }), "failed", [/connection refused/i]],
    ["status", () => ({ url: status.url, timeout: 15000 }), "failed", [/HTTP 500/]],
    ["silent", () => ({ url: silent.url, timeout: 1500 }), "failed", [/timed out after 1500 ms during initialize/]],
    ["liar", () => ({ command: raw("not-jsonrpc"), timeout: 15000 }), "failed", [/server sent an invalid message: /]],
  ]
  // Names whose sorted order is not config order: the kinds cycle, the numbers count down.
  const entries = Array.from({ length: 100 }, (_, i) => {
    const [kind, spec, expected, patterns = []] = kinds[i % kinds.length]
    return { name: `${kind}${String(99 - i).padStart(2, "0")}`, i, kind, spec: spec(i), expected, patterns }
  })
  const began = performance.now()
  const inv = await listMcpTools({ mcpServers: Object.fromEntries(entries.map((e) => [e.name, e.spec])) })
  const ms = performance.now() - began
  t.diagnostic(`100 servers settled after ${ms.toFixed(0)} ms`)
  for (const [kind] of kinds) {
    const first = entries.find((e) => e.kind === kind)
    t.diagnostic(`${first.name}: ${inv.status[first.name]}${inv.errors[first.name] ? `: ${inv.errors[first.name]}` : ""}`)
  }
  assert.ok(ms < 30000, `100 servers took ${ms} ms`)
  assert.deepEqual(Object.keys(inv.status), entries.map((e) => e.name))
  assert.deepEqual(inv.status, Object.fromEntries(entries.map((e) => [e.name, e.expected])))
  assert.deepEqual(Object.keys(inv.tools), entries.filter((e) => e.expected === "connected").map((e) => e.name))
  assert.deepEqual(Object.keys(inv.errors), entries.filter((e) => e.expected === "failed").map((e) => e.name))
  for (const e of entries) {
    if (e.kind === "good") assert.deepEqual(names(inv.tools[e.name]), [`k${e.i}`])
    if (e.kind === "web") assert.deepEqual(names(inv.tools[e.name]), ["chirp"])
    if (e.expected === "failed") assertReason(inv.errors[e.name], e.patterns)
  }
  // Every HTTP session that came up was closed (DELETE) before the promise resolved, and no
  // request to the silent server is left hanging.
  assert.equal(canary.stats.sessions.closed, canary.stats.sessions.opened)
  await waitFor(() => silent.stats.inFlight === 0, { timeout: 5000, message: "no socket left open to the silent server" })
})
