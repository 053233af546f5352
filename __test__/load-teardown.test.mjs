// loadMcp (docs/loading.md), part 4: a server that dies mid-call, and close() ending every child
// and grandchild.
// Real servers throughout (server-everything, the SDK-built fixtures in __test__/fixtures/, an
// in-process streamable-HTTP server); the shared set-up and clean-up are in lib/load.mjs.
import { afterEach, test } from "node:test"
import assert from "node:assert/strict"
import { descendants, isAlive, killAll, nodeFixture, readPid, tmpFile } from "./helpers.mjs"
import { byName, call, loadHarness, T } from "./lib/load.mjs"

const load = loadHarness(afterEach)

// ---------------------------------------------------------------------------------------------
// A server that dies mid-call

test("crash mid-call: isError with the exit, the process is gone, other servers still work", T, async () => {
  const pidFile = tmpFile("crash.pid")
  const source = await load({
    mcpServers: {
      fx: { command: nodeFixture("stdio-server", "--tools", "crash,echo"), env: { PID_FILE: pidFile } },
      other: { command: nodeFixture("stdio-server", "--tools", "echo") },
    },
  })
  const tools = byName(source)
  const pid = readPid(pidFile)
  assert.notEqual(pid, null)
  const start = performance.now()
  const result = await call(tools.fx_crash, {})
  const elapsed = performance.now() - start
  assert.deepEqual(result, { output: 'server "fx" exited (code 1)', isError: true, metadata: { server: "fx" } })
  assert.ok(elapsed < 2000, `the crash was reported after ${elapsed} ms`)
  assert.equal(isAlive(pid), false, `crashed server ${pid} is still alive`)
  assert.deepEqual(await call(tools.other_echo, { text: "unaffected" }), { output: "unaffected", isError: false, metadata: { server: "other" } })
  await source.close()
})

test("crash: later calls to the dead server resolve with the same exit message (never reject)", T, async () => {
  const source = await load({
    mcpServers: {
      fx: { command: nodeFixture("stdio-server", "--tools", "crash,echo") },
      other: { command: nodeFixture("stdio-server", "--tools", "echo") },
    },
  })
  const tools = byName(source)
  assert.equal((await call(tools.fx_crash, {})).output, 'server "fx" exited (code 1)')
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(await call(tools.fx_echo, { text: "anyone there?" }), {
      output: 'server "fx" exited (code 1)',
      isError: true,
      metadata: { server: "fx" },
    }, `call ${i + 1} after the crash`)
  }
  assert.equal((await call(tools.other_echo, { text: "ok" })).output, "ok")
  await source.close()
})

test("crash: a call in flight on the dying server resolves with the exit message too", T, async () => {
  const source = await load({ mcpServers: { fx: { command: nodeFixture("stdio-server", "--tools", "crash,sleep,echo") } } })
  const tools = byName(source)
  const inflight = call(tools.fx_sleep, { ms: 20000 })
  assert.equal((await call(tools.fx_echo, { text: "sync" })).output, "sync")
  const crashed = await call(tools.fx_crash, {})
  const other = await inflight
  for (const r of [crashed, other]) {
    assert.deepEqual(r, { output: 'server "fx" exited (code 1)', isError: true, metadata: { server: "fx" } })
  }
  await source.close()
})

// ---------------------------------------------------------------------------------------------
// close()

test("close(): idempotent, ends every child (and grandchild) before resolving; later calls fail cleanly", T, async (t) => {
  const pidA = tmpFile("a.pid")
  const pidG = tmpFile("g.pid")
  const pidGc = tmpFile("gc.pid")
  t.after(() => killAll([readPid(pidGc)].filter(Boolean)))
  const source = await load({
    mcpServers: {
      a: { command: nodeFixture("stdio-server", "--tools", "echo,sleep"), env: { PID_FILE: pidA } },
      g: { command: nodeFixture("grandchild-server"), env: { PID_FILE: pidG, GRANDCHILD_PID_FILE: pidGc } },
    },
  })
  const pids = [readPid(pidA), readPid(pidG), readPid(pidGc)]
  assert.ok(pids.every((p) => p !== null), `pids ${pids}`)
  for (const pid of pids) assert.equal(isAlive(pid), true)
  const tools = byName(source)
  assert.equal((await call(tools.a_echo, { text: "before" })).output, "before")
  const inflight = call(tools.a_sleep, { ms: 20000 })
  assert.equal((await call(tools.a_echo, { text: "sync" })).output, "sync")

  const first = source.close()
  const second = source.close()
  assert.ok(first instanceof Promise && second instanceof Promise)
  assert.deepEqual(await inflight, { output: "not connected (source closed)", isError: true, metadata: { server: "a" } })
  assert.equal(await first, undefined)
  assert.equal(await second, undefined)
  // Checked at once: close() resolves only when every child has exited.
  for (const pid of pids) assert.equal(isAlive(pid), false, `${pid} still alive after close() resolved`)
  assert.deepEqual(descendants(), [])

  assert.deepEqual(await call(tools.a_echo, { text: "after" }), {
    output: "not connected (source closed)",
    isError: true,
    metadata: { server: "a" },
  })
  assert.deepEqual(await call(tools.g_a, {}), { output: "not connected (source closed)", isError: true, metadata: { server: "g" } })
  assert.equal(await source.close(), undefined, "a third close() after completion resolves too")
})
