// A real nginx on loopback, round-robin over replicas with no affinity, for the tests that put
// served toolkits behind a load balancer (scaleout.test.mjs, replicas.test.mjs).
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { tmpDir } from "../helpers.mjs"

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => fs.existsSync(p)) ?? "nginx"

/** A port free right now on 127.0.0.1 (nginx cannot listen on port 0 and report it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
const accepts = (port) =>
  new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.destroy()
      resolve(true)
    })
    s.on("error", () => resolve(false))
  })

/**
 * nginx round-robin over `urls` (each `http://host:port`), stopped by `defer`'s cleanup; resolves
 * { front, upstreams, log(from), stop() }: the URL clients use, the replicas' `host:port`s, the
 * access log's entries from line `from` on ({ addr, status, method }), and a stop that waits for
 * nginx's exit.
 */
export async function startNginx(defer, urls) {
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
  log_format upstream '$upstream_addr $status $request_method';
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
      proxy_read_timeout 120s;
    }
  }
}
`,
  )
  const nginx = spawn(NGINX, ["-c", conf, "-p", dir], { stdio: ["ignore", "ignore", "pipe"] })
  let nginxErr = ""
  nginx.stderr.setEncoding("utf8").on("data", (d) => (nginxErr += d))
  const nginxExit = new Promise((resolve) => nginx.on("exit", (code, signal) => resolve({ code, signal })))
  // SIGTERM (nginx's fast shutdown, which stops its worker too; a SIGKILLed master would leave
  // the worker running), and SIGKILL only if it has not exited within 5 s.
  defer(async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) {
      nginx.kill("SIGTERM")
      const late = setTimeout(() => nginx.kill("SIGKILL"), 5000)
      await nginxExit
      clearTimeout(late)
    }
    await nginxExit
  })
  // Ready once it accepts connections on its port.
  const deadline = Date.now() + 20000
  while (!(await accepts(port))) {
    if (nginx.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start: ${nginxErr}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return {
    front: `http://127.0.0.1:${port}/mcp`,
    upstreams,
    log(from = 0) {
      const lines = fs.readFileSync(accessLog, "utf8").trim().split("\n").slice(from)
      return lines.map((line) => {
        const [addr, status, method] = line.split(" ")
        return { addr, status, method, line }
      })
    },
    async stop() {
      nginx.kill("SIGTERM")
      await nginxExit
    },
  }
}
