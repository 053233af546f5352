// Compiled (never run) by `tsc -p __test__`: the public types must describe real usage.
import {
  answerToElicitResult,
  elicitationToRequest,
  expandEnvHeaders,
  listMcpTools,
  loadMcp,
  parseMcpConfig,
  sanitize,
  storedCredentials,
  forgetCredentials,
  type Answer,
  type TokenStore,
  type OAuthConfig,
  type ElicitationRequest,
  type McpInventory,
  type McpProtocol,
  type McpSource,
  type ServerInfo,
  type McpStatus,
  type Tool,
  type ToolInfo,
  type ToolResult,
} from "toolnexus"

export async function usage(): Promise<void> {
  const inv: McpInventory = await listMcpTools("mcp.json", { signal: AbortSignal.timeout(1000), deadline: 500 })
  const status: McpStatus | undefined = inv.status["x"]
  const infos: ToolInfo[] | undefined = inv.tools["x"]
  const reason: string | undefined = inv.errors["x"]
  const about: ServerInfo | undefined = inv.info["x"]
  const era: string | undefined = about?.protocolVersion
  const title: string | undefined = about?.title
  void [status, infos, reason, era, title, about?.name, about?.version, about?.instructions]

  const cfg = parseMcpConfig({ mcpServers: { a: { command: "node" } } })
  for (const [name, server] of Object.entries(cfg)) {
    const protocol: McpProtocol | undefined = server.type === "invalid" ? undefined : server.protocol
    if (server.type === "local") console.log(name, server.command.join(" "), server.environment, protocol)
    else if (server.type === "remote") console.log(name, server.url, server.transport, server.headers)
    else console.log(name, server.error)
  }

  const source: McpSource = await loadMcp(
    { a: { command: ["node", "server.mjs"] } },
    {
      timeout: 1000,
      waitFor: async (req: ElicitationRequest): Promise<Answer> =>
        req.kind === "input" ? { ok: true, data: { name: "x" } } : { ok: false, reason: "declined" },
    },
  )
  const sourceInfo: ServerInfo | undefined = source.info["a"]
  void sourceInfo
  const tool: Tool | undefined = source.tools[0]
  if (tool) {
    const result: ToolResult = await tool.execute({ q: 1 }, { timeout: 100, signal: new AbortController().signal })
    console.log(result.output.length, result.isError, result.metadata?.["server"])
  }
  await source.close()

  const s: string = sanitize("a.b")
  const h: Record<string, string> | undefined = expandEnvHeaders({ A: "${B}" })
  const r = elicitationToRequest({ mode: "form", message: "m", requestedSchema: { type: "object" } })
  const e = answerToElicitResult({ ok: true })
  void [s, h, r, e.action]
}

// OAuth: an app is asked to open the URL, and may keep tokens in its own store.
export async function oauth(): Promise<void> {
  const records = new Map<string, object>()
  const tokenStore: TokenStore = {
    get: async (key) => records.get(key),
    set: async (key, record) => void records.set(key, record),
    delete: (key) => void records.delete(key),
  }
  const auth: OAuthConfig = { clientId: "id", clientSecret: "${SECRET}", scopes: ["repo"], redirectPort: 8787 }
  const config = { mcpServers: { github: { url: "https://example.com/mcp", auth } } }
  const inv = await listMcpTools(config, { authorize: async (url: string) => void new URL(url), tokenStore })
  const source = await loadMcp(config, { authorize: (url: string) => console.log(url) })
  await source.close()
  const who: string | null | undefined = storedCredentials()[0]?.subject
  const forgot: number = forgetCredentials("github")
  void [inv.status, who, forgot]
}
