// The fault suite (issue 11), part 2: loopback HTTP servers that answer wrongly, endlessly or
// not at all, errors that must not leak secrets, and many good and bad servers at once.
// Each case must end `failed` with a reason in words (or `connected` where tolerance is right),
// within its timeout (plus a generous margin), with nothing left running and Node — and the
// engine — alive. Fixtures: __test__/fixtures/faults/ and the older fixtures of __test__/fixtures/;
// the shared checks are in lib/faults.mjs.
import { after, afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { listMcpTools } from "toolnexus"
import { waitFor } from "./helpers.mjs"
import { assertReason, faultsHarness, listOne, MARGIN, names, raw, T, watchRss } from "./lib/faults.mjs"
import { startStatus } from "./fixtures/http-servers.mjs"
import { closedPort, startDropped, startEndlessSse, startHtml, startSilent } from "./fixtures/faults/http-faults.mjs"

const { canary } = await faultsHarness({ after, afterEach })

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
