// Scale-out: three `toolnexus serve --stateless` replicas of one gateway behind a real nginx
// (round-robin, no affinity, loopback only), driven by the official Python `mcp` client in both
// eras. Every list and call must succeed while requests land on all three replicas.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { deferredCleanup, descendants, describePids, isAlive, nodeFixture, pythonClient, repoRoot, tmpConfig, tmpDir } from "./helpers.mjs"

const T = { timeout: 120000 }
const bin = path.join(repoRoot, "bin", "toolnexus.mjs")
const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => fs.existsSync(p)) ?? "nginx"

const defer = deferredCleanup(afterEach)

/** Starts `toolnexus serve --stateless` and resolves its URL once it prints its serving line. */
function startReplica(config) {
  const child = spawn(process.execPath, [bin, "serve", config, "--addr", "127.0.0.1:0", "--stateless", "--name", "gw"], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr })))
  const url = new Promise((resolve, reject) => {
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d) => {
      out += d
      const m = /serving \d+ tools at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(out)
      if (m) resolve(m[1])
    })
    child.on("exit", (code) => reject(new Error(`replica exited (${code}) before serving:\n${stderr}`)))
  })
  return { child, url, exited }
}

/** A port free right now on 127.0.0.1 (nginx cannot listen on port 0 and report it). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

test("three stateless replicas behind nginx: every Python-client list and call succeeds, in both eras, on all three replicas", T, async () => {
  const config = tmpConfig({ mcpServers: { calc: { command: nodeFixture("stdio-server", "--tools", "add,echo") } } })
  const replicas = [startReplica(config), startReplica(config), startReplica(config)]
  for (const r of replicas) defer(() => r.child.kill("SIGKILL"))
  const urls = await Promise.all(replicas.map((r) => r.url))
  const upstreams = urls.map((u) => new URL(u).host)

  const dir = tmpDir()
  const port = await freePort()
  const accessLog = path.join(dir, "access.log")
  const conf = path.join(dir, "nginx.conf")
  fs.writeFileSync(
    conf,
    `
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  log_format upstream '$upstream_addr $status';
  access_log ${accessLog} upstream;
  upstream toolnexus {
${upstreams.map((u) => `    server ${u};`).join("\n")}
  }
  server {
    listen 127.0.0.1:${port};
    location /mcp {
      proxy_pass http://toolnexus;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`,
  )
  const nginx = spawn(NGINX, ["-c", conf, "-p", dir], { stdio: ["ignore", "ignore", "pipe"] })
  let nginxErr = ""
  nginx.stderr.setEncoding("utf8").on("data", (d) => (nginxErr += d))
  defer(() => nginx.kill("SIGKILL"))
  const nginxExit = new Promise((resolve) => nginx.on("exit", (code, signal) => resolve({ code, signal })))
  // Ready once it accepts connections on its port.
  const deadline = Date.now() + 20000
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => {
        s.destroy()
        resolve(true)
      })
      s.on("error", () => resolve(false))
    })
    if (ok) break
    if (nginx.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start: ${nginxErr}`)
    await new Promise((r) => setTimeout(r, 20))
  }

  const front = `http://127.0.0.1:${port}/mcp`
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

  const lines = fs.readFileSync(accessLog, "utf8").trim().split("\n")
  const hits = new Map(upstreams.map((u) => [u, 0]))
  for (const line of lines) {
    const [addr, status] = line.split(" ")
    assert.match(status, /^20[02]$/, `every proxied request succeeded: ${line}`)
    hits.set(addr, (hits.get(addr) ?? 0) + 1)
  }
  for (const [u, n] of hits) assert.ok(n > 0, `replica ${u} got no request: ${JSON.stringify([...hits])}`)
  assert.equal(hits.size, 3, `only the three replicas were used: ${JSON.stringify([...hits])}`)

  nginx.kill("SIGTERM")
  await nginxExit
  const trees = replicas.flatMap((r) => [r.child.pid, ...descendants(r.child.pid)])
  for (const r of replicas) r.child.kill("SIGTERM")
  for (const r of replicas) {
    const end = await r.exited
    assert.equal(end.code, 0, end.stderr)
  }
  const left = trees.filter(isAlive)
  assert.deepEqual(left, [], `left running: ${describePids(left)}`)
})
