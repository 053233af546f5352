// A small MCP registry on 127.0.0.1 (port 0) for `toolnexus add --registry` tests: the two
// endpoints of the registry API v0.1 the command uses, over the documents handed in.
//   GET /v0.1/servers?search=<text>                      { servers: [{ server, _meta }], metadata }
//   GET /v0.1/servers/<urlencoded name>/versions/latest  { server, _meta } or 404
import http from "node:http"

const OFFICIAL = "io.modelcontextprotocol.registry/official"

/**
 * Serves `documents` (server.json objects). Resolves with `{ url, requests, close() }`;
 * `requests` records each request's path and query as received. `pageSize`: search answers hold
 * at most that many servers, the rest behind `metadata.nextCursor` (`&cursor=`), as the real
 * registry pages them.
 */
export async function startRegistry(documents, { pageSize = Infinity } = {}) {
  const requests = []
  const wrap = (server) => ({ server, _meta: { [OFFICIAL]: { status: "active", isLatest: true, publishedAt: "2025-12-01T00:00:00Z" } } })
  const reply = (res, status, body) => {
    res.writeHead(status, { "content-type": "application/json" })
    res.end(JSON.stringify(body))
  }
  const server = http.createServer((req, res) => {
    requests.push(req.url)
    const url = new URL(req.url, "http://registry")
    if (req.method !== "GET") return reply(res, 405, { title: "Method Not Allowed" })
    if (url.pathname === "/v0.1/servers") {
      // As the real registry: a case-insensitive substring of the name.
      const search = (url.searchParams.get("search") ?? "").toLowerCase()
      const all = documents.filter((d) => d.name.toLowerCase().includes(search)).map(wrap)
      const from = Number(url.searchParams.get("cursor") ?? 0)
      const found = all.slice(from, from + pageSize)
      const metadata = { count: found.length }
      if (from + pageSize < all.length) metadata.nextCursor = String(from + pageSize)
      return reply(res, 200, { servers: found, metadata })
    }
    const latest = /^\/v0\.1\/servers\/([^/]+)\/versions\/latest$/.exec(url.pathname)
    if (latest) {
      const doc = documents.find((d) => d.name === decodeURIComponent(latest[1]))
      return doc ? reply(res, 200, wrap(doc)) : reply(res, 404, { title: "Not Found", status: 404, detail: "Server not found" })
    }
    return reply(res, 404, { title: "Not Found", status: 404 })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}
