// Why a remote server failed, as a user reads it: the cause first, in words, at the URL without
// its userinfo and query string; never a Rust type name, `Some(…)`, or a secret. Real loopback
// HTTP servers (node:http) answer the way misconfigured or non-MCP endpoints do.
import { test } from "node:test"
import assert from "node:assert/strict"
import http from "node:http"
import { listMcpTools } from "toolnexus"

const T = { timeout: 30000 }

/** A loopback HTTP server answering every request with `handler`; resolves { port, close() }. */
async function serve(handler) {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => handler(req, res))
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: server.address().port,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

/** A loopback port nothing listens on (bound once, then closed). */
async function closedPort() {
  const s = await serve(() => {})
  await s.close()
  return s.port
}

/** No reason may show a Rust path, an Option, or a secret from the URL. */
function assertClean(reason) {
  assert.equal(typeof reason, "string")
  assert.doesNotMatch(reason, /::/, reason)
  assert.doesNotMatch(reason, /Some\(|None\b/, reason)
  assert.doesNotMatch(reason, /secret|hunter2/, reason)
  assert.ok(reason.length < 600, `${reason.length} chars: ${reason}`)
}

test("connection refused: the cause first, at the URL without userinfo or query", T, async () => {
  const port = await closedPort()
  const url = `http://user:hunter2@127.0.0.1:${port}/mcp?api_key=secret&x=1`
  const inv = await listMcpTools({
    mcpServers: {
      auto: { url, timeout: 5000 },
      streamable: { type: "http", url, timeout: 5000 },
      sse: { type: "sse", url, timeout: 5000 },
    },
  })
  const expected = `connection refused at http://127.0.0.1:${port}/mcp`
  assert.deepEqual(inv.errors, { auto: expected, streamable: expected, sse: expected })
  for (const reason of Object.values(inv.errors)) assertClean(reason)
})

test("an HTML 404: not an MCP endpoint, with its status and content type", T, async () => {
  const s = await serve((req, res) => res.writeHead(404, { "content-type": "text/html" }).end("<!doctype html><h1>Not here</h1>"))
  try {
    const url = `http://127.0.0.1:${s.port}/mcp?api_key=secret`
    const inv = await listMcpTools({
      mcpServers: { auto: { url, timeout: 5000 }, streamable: { type: "http", url, timeout: 5000 }, sse: { type: "sse", url, timeout: 5000 } },
    })
    const at = `at http://127.0.0.1:${s.port}/mcp`
    assert.deepEqual(inv.errors, {
      // Streamable HTTP does not see the content type; the legacy SSE attempt of a plain url does.
      auto: `not an MCP endpoint (HTTP 404, text/html) ${at}`,
      streamable: `not an MCP endpoint (HTTP 404 Not Found) ${at}`,
      sse: `not an MCP endpoint (HTTP 404, text/html) ${at}`,
    })
    for (const reason of Object.values(inv.errors)) assertClean(reason)
  } finally {
    await s.close()
  }
})

test("HTTP statuses in words: 401 with and without a challenge, 403, 500, 200 text/html", T, async () => {
  const statuses = {
    "/unauthorized": [401, { "content-type": "text/plain" }, "no"],
    "/challenge": [401, { "www-authenticate": 'Bearer realm="mcp", error="invalid_token"' }, ""],
    "/forbidden": [403, { "content-type": "text/plain" }, "go away"],
    "/broken": [500, { "content-type": "text/plain" }, "boom"],
    "/page": [200, { "content-type": "text/html" }, "<html></html>"],
  }
  const s = await serve((req, res) => {
    const [status, headers, body] = statuses[new URL(req.url, "http://x").pathname]
    res.writeHead(status, headers).end(body)
  })
  try {
    const base = `http://127.0.0.1:${s.port}`
    const servers = Object.fromEntries(Object.keys(statuses).map((p) => [p.slice(1), { url: `${base}${p}?token=secret`, timeout: 5000 }]))
    const inv = await listMcpTools({ mcpServers: servers })
    assert.deepEqual(inv.errors, {
      unauthorized: `HTTP 401 Unauthorized at ${base}/unauthorized`,
      // A Bearer challenge asks for OAuth: the reason says how to authorise (and legacy SSE is
      // not tried, since it would only be asked the same).
      challenge: `authorization required: run "toolnexus auth <config> challenge" (no token is stored for this server)`,
      forbidden: `HTTP 403 Forbidden at ${base}/forbidden`,
      broken: `HTTP 500 Internal Server Error at ${base}/broken`,
      page: `not an MCP endpoint (it answered with text/html) at ${base}/page`,
    })
    for (const reason of Object.values(inv.errors)) assertClean(reason)
  } finally {
    await s.close()
  }
})

test("no TLS, a host name that does not resolve, a URL that is not one: clean reasons", T, async () => {
  const plain = await serve((req, res) => res.end("plain HTTP"))
  const inv = await listMcpTools({
    mcpServers: {
      tls: { type: "http", url: `https://127.0.0.1:${plain.port}/mcp?api_key=secret`, timeout: 5000 },
      dns: { type: "http", url: "http://no-such-host.invalid/mcp?api_key=secret", timeout: 10000 },
      bad: { url: "http://[::1/mcp?api_key=secret" },
      scheme: { url: "ftp://user:hunter2@127.0.0.1/mcp" },
    },
  })
  await plain.close()
  assert.match(inv.errors.tls, new RegExp(`^TLS handshake failed: .+ at https://127\\.0\\.0\\.1:${plain.port}/mcp$`))
  assert.match(inv.errors.dns, /^cannot resolve the host name \(.+\) at http:\/\/no-such-host\.invalid\/mcp$/)
  assert.equal(inv.errors.bad, 'url "<invalid URL>" is not a valid URL')
  assert.equal(inv.errors.scheme, 'url scheme "ftp" is not supported (use http or https)')
  for (const reason of Object.values(inv.errors)) assertClean(reason)
})
