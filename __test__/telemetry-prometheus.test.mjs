// `/metrics` scraped by a real Prometheus (Debian's `prometheus`): `toolnexus serve --metrics`
// behind a bearer token, Prometheus configured with that token, and its query API finding the
// operation-duration histograms labelled by method and tool. Without the token /metrics is 401
// like /mcp.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { spawn } from "node:child_process"
import { loadMcp } from "../index.js"
import { deferredCleanup, fixture, tmpConfig, tmpDir, waitFor } from "./helpers.mjs"
import { startCli } from "./lib/gateway.mjs"

const defer = deferredCleanup(afterEach)
const TOKEN = "prometheus-scrape-token-0123456789"

/** Prometheus on 127.0.0.1:0 scraping `target` every second with `TOKEN`; resolves its base URL once it is ready. */
async function startPrometheus(target) {
  const dir = tmpDir()
  const config = path.join(dir, "prometheus.yml")
  fs.writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "scrape_configs:",
      "  - job_name: toolnexus",
      "    metrics_path: /metrics",
      "    authorization:",
      "      type: Bearer",
      `      credentials: ${TOKEN}`,
      "    static_configs:",
      `      - targets: ["${target}"]`,
      "",
    ].join("\n"),
  )
  const child = spawn(
    "prometheus",
    [`--config.file=${config}`, "--web.listen-address=127.0.0.1:0", `--storage.tsdb.path=${path.join(dir, "data")}`],
    { stdio: ["ignore", "ignore", "pipe"] },
  )
  const exited = new Promise((resolve) => child.once("exit", resolve))
  defer(async () => {
    child.kill("SIGKILL")
    await exited
  })
  let log = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (log += d))
  const port = await waitFor(() => /msg="Listening on" address=127\.0\.0\.1:(\d+)/.exec(log)?.[1] ?? (child.exitCode !== null ? "exited" : null), {
    timeout: 20000,
    message: "Prometheus listening",
  })
  assert.notEqual(port, "exited", log)
  const base = `http://127.0.0.1:${port}`
  // It listens before its storage is up; the query API answers 503 until /-/ready does 200.
  await waitFor(async () => (await fetch(`${base}/-/ready`)).status === 200, { timeout: 20000, interval: 50, message: "Prometheus ready" })
  return base
}

test("Prometheus scrapes /metrics (with the endpoint's token) and finds the operation durations by method and tool", async () => {
  const config = tmpConfig({ mcpServers: { native: { command: process.execPath, args: [fixture("native-stdio-server.mjs")] } } })
  const cli = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--metrics", "--auth-token-env", "SCRAPE_TOKEN"], {
    env: { SCRAPE_TOKEN: TOKEN },
  })
  const base = await cli.serving
  assert.equal((await fetch(`${base}/metrics`)).status, 401)
  const source = await loadMcp({ mcpServers: { gw: { url: `${base}/mcp`, headers: { Authorization: `Bearer ${TOKEN}` } } } })
  defer(() => source.close())
  const echo = source.tools.find((t) => t.name.endsWith("echo"))
  assert.equal((await echo.execute({ text: "scraped" })).output, "scraped")

  const prometheus = await startPrometheus(new URL(base).host)
  const query = async (q) => {
    const res = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(q)}`)
    const body = await res.json()
    assert.equal(body.status, "success", JSON.stringify(body))
    return body.data.result
  }
  const count = 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"}'
  const result = await waitFor(async () => {
    const found = await query(count)
    return found.length > 0 ? found : null
  }, { timeout: 20000, interval: 200, message: "the scraped tools/call durations" })
  assert.equal(result.length, 1)
  assert.equal(result[0].metric.gen_ai_tool_name, "native_echo")
  assert.equal(result[0].metric.network_transport, "tcp")
  assert.equal(result[0].metric.job, "toolnexus")
  assert.equal(result[0].value[1], "1")
  // The buckets are there for a latency quantile; the upstream's side too.
  const buckets = await query('mcp_server_operation_duration_seconds_bucket{gen_ai_tool_name="native_echo"}')
  const bound = (le) => (le === "+Inf" ? Infinity : Number(le))
  assert.deepEqual(
    buckets.map((b) => bound(b.metric.le)).sort((a, b) => a - b),
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, Infinity],
  )
  const upstream = await query('mcp_client_operation_duration_seconds_count{gen_ai_tool_name="echo"}')
  assert.equal(upstream[0]?.value[1], "1")
  const up = await query('up{job="toolnexus"}')
  assert.equal(up[0].value[1], "1", "Prometheus's scrape succeeded")
})
