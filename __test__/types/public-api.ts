// Compiled (never run) by `tsc -p __test__`: the public types must describe real usage.
import {
  answerToElicitResult,
  buildMcpServer,
  createToolkit,
  definePrompt,
  defineResource,
  defineResourceTemplate,
  defineTool,
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
  type ServeOptions,
  type Tool,
  type ToolInfo,
  type ToolResult,
  type TaskStatus,
  type CacheHints,
  type Completer,
  type Completion,
  type CompletionContext,
  type CompletionRef,
  type DefinePromptOptions,
  type DefineResourceOptions,
  type DefineResourceTemplateOptions,
  type GetPromptResult,
  type Icon,
  type McpRequestError,
  type McpServer,
  type McpServerOptions,
  type Prompt,
  type PromptArgument,
  type PromptDefinition,
  type PromptInfo,
  type PromptMessage,
  type PromptRef,
  type ResourceTemplateRef,
  type PromptsChange,
  type ReadResourceResult,
  type RequestOptions,
  type Resource,
  type ResourceContents,
  type ResourceDefinition,
  type ResourceInfo,
  type ResourceReadReturn,
  type ResourceTemplate,
  type ResourceTemplateDefinition,
  type ResourceTemplateInfo,
  type ResourcesChange,
  type RunContext,
  type Toolkit,
  type ToolkitOptions,
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
    const heard: TaskStatus[] = []
    await tool.execute({}, { task: true, onStatus: (s) => heard.push(s) })
    const status: "working" | "input_required" | "completed" | "failed" | "cancelled" | undefined = heard[0]?.status
    const taskId: string | undefined = heard[0]?.taskId
    const message: string | undefined = heard[0]?.statusMessage
    console.log(status, taskId, message)
    // @ts-expect-error task is a boolean
    await tool.execute({}, { task: "yes" })
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
  // Machines sign in with no browser.
  const machines: OAuthConfig[] = [
    { grant: "client_credentials", clientId: "svc", clientSecret: "${SECRET}", dpop: true },
    { grant: "client_credentials", clientId: "svc", privateKeyFile: "/keys/svc.pem", signingAlgorithm: "ES256" },
    { grant: "jwt-bearer", assertionFile: "/var/run/secrets/tokens/mcp" },
    {
      clientId: "as-client",
      clientSecret: "${AS_SECRET}",
      enterprise: { idpIssuer: "https://idp", idpTokenEndpoint: "https://idp/token", idpClientId: "c", idTokenEnv: "ID_TOKEN" },
    },
  ]
  // @ts-expect-error a client_credentials grant needs a secret or a key
  const keyless: OAuthConfig = { grant: "client_credentials", clientId: "svc" }
  // @ts-expect-error a redirect port is for a browser's grant
  const portless: OAuthConfig = { grant: "jwt-bearer", assertion: "a", redirectPort: 1 }
  void [machines, keyless, portless]
  const config = { mcpServers: { github: { url: "https://example.com/mcp", auth } } }
  const inv = await listMcpTools(config, { authorize: async (url: string) => void new URL(url), tokenStore })
  const source = await loadMcp(config, { authorize: (url: string) => console.log(url) })
  await source.close()
  const who: string | null | undefined = storedCredentials()[0]?.subject
  const forgot: number = forgetCredentials("github")
  void [inv.status, who, forgot]
}

// Resources, resource templates, prompts, completion and subscriptions: listed, loaded, served.
export async function surface(): Promise<void> {
  const inv = await listMcpTools("mcp.json")
  const listed: ResourceInfo[] | undefined = inv.resources["x"]
  const templates: ResourceTemplateInfo[] | undefined = inv.resourceTemplates["x"]
  const prompts: PromptInfo[] | undefined = inv.prompts["x"]
  const args: PromptArgument[] | undefined = prompts?.[0]?.arguments
  const icon: Icon | undefined = listed?.[0]?.icons?.[0]
  void [templates?.[0]?.uriTemplate, args?.[0]?.required, icon?.src, listed?.[0]?.size, listed?.[0]?.annotations?.priority]

  const source = await loadMcp("mcp.json", {
    onResourcesChanged: (c: ResourcesChange) => console.log(c.server, c.resources.length, c.resourceTemplates.length),
    onPromptsChanged: (c: PromptsChange) => console.log(c.server, c.prompts.map((p) => p.name)),
  })
  const opts: RequestOptions = { signal: AbortSignal.timeout(1000), timeout: 500 }
  const resource: Resource | undefined = source.resources[0]
  if (resource) {
    const read: ReadResourceResult = await resource.read(opts)
    const first: ResourceContents | undefined = read.contents[0]
    const text: string | undefined = first && "text" in first ? first.text : undefined
    void [resource.server, resource.uri, text, read.ttlMs, read.cacheScope]
  }
  const template: ResourceTemplate | undefined = source.resourceTemplates[0]
  if (template) {
    await template.read({ id: 5 })
    await template.read("demo://x/5", opts)
    const values: string[] = (await template.complete("id", "1")).values
    void values
  }
  const prompt: Prompt | undefined = source.prompts[0]
  if (prompt) {
    const got: GetPromptResult = await prompt.get({ city: "Paris" }, opts)
    const message: PromptMessage | undefined = got.messages[0]
    void [got.description, message?.role, message?.content.type]
    const done: Completion = await prompt.complete("city", "P", { arguments: { state: "TX" } })
    void [done.total, done.hasMore]
  }
  await source.readResource("a", "demo://x")
  await source.getPrompt("a", "p", { k: "v" })
  const ref: CompletionRef = { type: "ref/resource", uri: "demo://x/{id}" } satisfies ResourceTemplateRef
  const promptRef: PromptRef = { type: "ref/prompt", name: "p" }
  await source.complete("a", promptRef, { name: "city", value: "P" })
  const context: CompletionContext = { arguments: { a: "b" } }
  await source.complete("a", ref, { name: "id", value: "" }, context, opts)
  await source.complete("a", { type: "ref/prompt", name: "p" }, { name: "city", value: "" })
  const off: () => Promise<void> = await source.subscribe("a", "demo://x", (uri: string) => console.log(uri))
  await off()
  try {
    await source.readResource("a", "demo://nope")
  } catch (err) {
    const e = err as McpRequestError
    void [e.code, e.data, e.message]
  }
  await source.close()

  // Serving your own.
  const note: ResourceDefinition = defineResource({
    uri: "memo://note",
    name: "note",
    mimeType: "text/plain",
    read: (uri: string, ctx: RunContext) => `${uri} ${ctx.signal?.aborted}`,
  })
  note.notifyUpdated()
  const blob: ResourceReadReturn = { blob: new Uint8Array([1]), mimeType: "application/octet-stream" }
  const items: ResourceTemplateDefinition = defineResourceTemplate({
    uriTemplate: "memo://items/{id}",
    name: "item",
    read: async (_uri: string, vars: Record<string, string>) => (vars["id"] === "1" ? blob : [{ uri: "memo://items/2", text: "two" }]),
    complete: { id: (value: string) => ["1", "2"].filter((v) => v.startsWith(value)) },
  })
  const complete: Completer = async (value, ctx) => ({ values: [value, ctx.arguments?.["x"] ?? ""], hasMore: false })
  const greet: PromptDefinition = definePrompt({
    name: "greet",
    description: "Say hello",
    arguments: [{ name: "name", required: true }],
    get: (args: Record<string, string>) => ({ messages: [{ role: "user", content: `hello ${args["name"]}` }] }),
    complete: { name: complete },
  })
  const simple: DefinePromptOptions = { name: "simple", get: () => "just text" }
  const options: DefineResourceOptions = { uri: "memo://x", name: "x", read: () => ({ contents: [{ uri: "memo://x", text: "x" }] }) }
  const templateOptions: DefineResourceTemplateOptions = { uriTemplate: "memo://{a}", name: "a", read: () => ({ text: "a" }) }
  const cache: CacheHints = { ttlMs: 5000, scope: "public" }
  const serverOptions: McpServerOptions = { name: "mine", resources: [note, items], prompts: [greet, definePrompt(simple)], cache }
  const server: McpServer = buildMcpServer([], serverOptions)
  server.resourceUpdated("memo://note")
  const kitOptions: ToolkitOptions = { extraResources: [defineResource(options), defineResourceTemplate(templateOptions)], extraPrompts: [greet] }
  const toolkit: Toolkit = await createToolkit(kitOptions)
  toolkit.resourceUpdated("memo://x")
  await toolkit.serve("127.0.0.1:0", { mcp: { cache } })
  // Replicas sharing a state key: one key, or keys in rotation (the first seals).
  const replica: ServeOptions = { stateless: true, stateKey: "a-state-key-of-32-bytes-or-more!", replicaUrl: "http://10.0.0.5:8808" }
  const rotated: ServeOptions = { stateKey: [Buffer.alloc(32, 1), new Uint8Array(32), "an-older-key-still-opening-state"] }
  void [replica, rotated]
  await toolkit.close()

  // defineTool's listing fields.
  const tool: Tool = defineTool({
    name: "t",
    title: "T",
    annotations: { readOnlyHint: true },
    outputSchema: { type: "object" },
    icons: [{ src: "https://example.com/i.png" }],
    execution: { taskSupport: "forbidden" },
    _meta: { k: 1 },
    run: () => "ok",
  })
  void tool
}
