// Scale-out: three `toolnexus serve --stateless` replicas of one gateway behind a real nginx
// (round-robin, no affinity, loopback only), driven by the official Python `mcp` client in both
// eras. Every list and call must succeed while requests land on all three replicas.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import { startNginx } from "./lib/nginx.mjs"
import { startServing } from "./lib/serving.mjs"
import { deferredCleanup, descendants, describePids, isAlive, nodeFixture, pythonClient, repoRoot, tmpConfig } from "./helpers.mjs"

const T = { timeout: 120000 }
const bin = path.join(repoRoot, "bin", "toolnexus.mjs")

const defer = deferredCleanup(afterEach)

/** Starts `toolnexus serve --stateless` (killed by the test's cleanup); its URL once it prints its serving line. */
const startReplica = (config) => startServing(defer, [bin, "serve", config, "--addr", "127.0.0.1:0", "--stateless", "--name", "gw"])

test("three stateless replicas behind nginx: every Python-client list and call succeeds, in both eras, on all three replicas", T, async () => {
  const config = tmpConfig({ mcpServers: { calc: { command: nodeFixture("stdio-server", "--tools", "add,echo") } } })
  const replicas = [startReplica(config), startReplica(config), startReplica(config)]
  const urls = await Promise.all(replicas.map((r) => r.url))
  const nginx = await startNginx(defer, urls)
  const { front, upstreams } = nginx
  const CALLS = 9
  const expected = Array.from({ length: CALLS }, (_, i) => ({ text: String(i + 1), isError: false }))
  for (const [mode, version] of [
    ["auto", "2026-07-28"],
    ["legacy", "2025-11-25"],
  ]) {
    const { report, stderr } = await pythonClient(front, mode, CALLS, "calc_add")
    assert.equal(report.protocolVersion, version, `${mode}: ${stderr}`)
    assert.deepEqual(report.serverInfo.name, "gw")
    assert.deepEqual(report.tools, ["calc_add", "calc_echo"])
    assert.deepEqual(report.outputs, expected, mode)
  }

  const hits = new Map(upstreams.map((u) => [u, 0]))
  for (const { addr, status, line } of nginx.log()) {
    assert.match(status, /^20[02]$/, `every proxied request succeeded: ${line}`)
    hits.set(addr, (hits.get(addr) ?? 0) + 1)
  }
  for (const [u, n] of hits) assert.ok(n > 0, `replica ${u} got no request: ${JSON.stringify([...hits])}`)
  assert.equal(hits.size, 3, `only the three replicas were used: ${JSON.stringify([...hits])}`)

  await nginx.stop()
  const trees = replicas.flatMap((r) => [r.child.pid, ...descendants(r.child.pid)])
  for (const r of replicas) r.child.kill("SIGTERM")
  for (const r of replicas) {
    const end = await r.exited
    assert.equal(end.code, 0, end.stderr)
  }
  const left = trees.filter(isAlive)
  assert.deepEqual(left, [], `left running: ${describePids(left)}`)
})
