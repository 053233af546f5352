/* toolnexus: the public types (hand-written). The native functions are declared in binding.d.ts, which
 * `napi build` generates; this file re-exports the public ones and declares those written in
 * JavaScript (lib/). Internal classes (NativeService, NativeSource, …) stay in binding.d.ts. */

/** A JSON Schema object, as MCP servers publish for tool inputs. */
export type JSONSchema = { [key: string]: unknown; type?: string; properties?: Record<string, unknown>; required?: string[] }

/** What became of one configured server. */
export type McpStatus = "connected" | "disabled" | "failed"

/** One tool as its server lists it: original name, description (`""` when absent), input schema. */
export interface ToolInfo {
  name: string
  description: string
  inputSchema: JSONSchema
  /** The listing's other fields, when the server gave them, as it gave them. */
  title?: string
  annotations?: Record<string, unknown>
  outputSchema?: JSONSchema
  icons?: Array<Record<string, unknown>>
  /**
   * How the tool may be called; `{ taskSupport: "required" }` marks a tool only callable as a
   * task, which toolnexus does not support: its calls fail at once saying so. (Kept from stdio
   * and server-sent-event listings; a streamable-HTTP listing sent as a plain JSON body loses it.)
   */
  execution?: { taskSupport?: "forbidden" | "optional" | "required"; [key: string]: unknown }
  _meta?: Record<string, unknown>
}

/** What a connected server said about itself. */
export interface ServerInfo {
  /** The protocol revision spoken: `"2026-07-28"` (discover era) or a handshake revision such as `"2025-11-25"`. */
  protocolVersion: string
  /** The server's own name (`serverInfo.name`); `""` when a 2026-07-28 server gave none. */
  name: string
  version: string
  title?: string
  /** How the server asks to be used, when it says. */
  instructions?: string
}

/** Every server's raw tool inventory (no name prefixing, no `tools` allowlist applied). */
export interface McpInventory {
  /** Connected servers only, keyed by server name in config order. */
  tools: Record<string, ToolInfo[]>
  /** Every configured server, in config order. */
  status: Record<string, McpStatus>
  /** A short human reason for each failed server. */
  errors: Record<string, string>
  /** Connected servers only, in config order: what each said about itself. */
  info: Record<string, ServerInfo>
}

export interface ListOptions {
  /** Aborting rejects the call with `signal.reason` and tears every connection down. */
  signal?: AbortSignal
  /** Bound on the whole call in ms; on expiry it rejects with `toolnexus: MCP list deadline exceeded`. */
  deadline?: number
  /** Alias of `deadline`. */
  timeout?: number
  /**
   * Called with the authorisation URL when a remote server needs the user to authorise it
   * (OAuth): open it in a browser, show it, or fetch it. The redirect comes back to a listener
   * on 127.0.0.1 within 5 minutes (a wait outside the server's `timeout`; a step-up in the
   * middle of a tool call counts in the call's). Without it, such a server fails
   * with `authorization required: run "toolnexus auth <config> <name>" (why)`.
   */
  authorize?: (url: string) => void | Promise<void>
  /** Where OAuth tokens are kept, instead of the default file in the user's config directory. */
  tokenStore?: TokenStore
}

/** An app's own place for OAuth credentials (a keychain, say): one JSON record per server URL. */
export interface TokenStore {
  get(key: string): Promise<object | undefined | null> | object | undefined | null
  set(key: string, record: object): Promise<void> | void
  delete(key: string): Promise<void> | void
}

/**
 * The MCP era to speak to a server: `"auto"` probes with `server/discover` and falls back to the
 * `initialize` handshake; `"2026-07-28"` only discovers; a handshake revision only shakes hands,
 * offering that revision. Absent: `"auto"` for streamable HTTP, the 2025-11-25 handshake for
 * stdio and legacy SSE (which has only the handshake).
 */
export type McpProtocol = "auto" | "2026-07-28" | "2025-11-25" | "2025-06-18" | "2025-03-26" | "2024-11-05"

/** A normalised local (stdio) server. */
export interface LocalServerConfig {
  type: "local"
  command: string[]
  environment: Record<string, string>
  cwd?: string
  enabled: boolean
  timeout: number
  tools?: Record<string, boolean>
  /** Only when the config gives it. */
  protocol?: McpProtocol
}

/** A normalised remote (HTTP) server. */
export interface RemoteServerConfig {
  type: "remote"
  url: string
  transport: "auto" | "streamable-http" | "sse"
  headers: Record<string, string>
  enabled: boolean
  timeout: number
  tools?: Record<string, boolean>
  /** Only when the config gives it. */
  protocol?: McpProtocol
  /** Only when the config gives it: a pre-registered OAuth client and what to ask for. */
  auth?: OAuthConfig
}

/** An entry's `auth`: the client identity and scopes to use when the server asks for OAuth. */
export interface OAuthConfig {
  clientId?: string
  clientSecret?: string
  /** An HTTPS URL of a Client ID Metadata Document the app hosts, used when the server supports it. */
  clientMetadataUrl?: string
  scopes?: string[]
  /** The 127.0.0.1 port of the redirect listener (default: any free port). */
  redirectPort?: number
}

/** An entry with a field of the wrong type: it fails alone, with this reason. */
export interface InvalidServerConfig {
  type: "invalid"
  error: string
  enabled: boolean
  timeout: number
}

export type ServerConfig = LocalServerConfig | RemoteServerConfig | InvalidServerConfig

/** The normalised server map, in config order. */
export type McpConfig = Record<string, ServerConfig>

/** Optional hints on a content part: who it is for, how much it matters. */
export interface ContentAnnotations {
  audience?: Array<"user" | "assistant">
  priority?: number
  lastModified?: string
}

interface ContentBase {
  annotations?: ContentAnnotations
  _meta?: Record<string, unknown>
}

/** The text, or the base64 `blob`, of a resource, with its URI. */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
  | { uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> }

/** One MCP content part, as the server sent it. */
export type ContentPart =
  | (ContentBase & { type: "text"; text: string })
  | (ContentBase & { type: "image"; data: string; mimeType: string })
  | (ContentBase & { type: "audio"; data: string; mimeType: string })
  | (ContentBase & { type: "resource"; resource: ResourceContents })
  | (ContentBase & {
      type: "resource_link"
      uri: string
      name: string
      title?: string
      description?: string
      mimeType?: string
      size?: number
    })

/** An MCP `CallToolResult`, which a `run` may return to answer in full. */
export interface McpCallToolResult {
  content: ContentPart[]
  structuredContent?: unknown
  isError?: boolean
  _meta?: Record<string, unknown>
}

/** What a tool call produced. `execute` never rejects: failures are `isError: true`. */
export interface ToolResult {
  /**
   * The result in words: an error's text parts, else `structuredContent` as JSON, else the text
   * parts; with no text at all, a short description of what came (`[image image/png, 1.2 kB]`).
   */
  output: string
  isError: boolean
  metadata?: Record<string, unknown>
  /** The MCP content parts as the server sent them (images for vision models, resources, links). */
  content?: ContentPart[]
  structuredContent?: unknown
  /** The result's `_meta` as the server sent it (MCP tools). */
  _meta?: Record<string, unknown>
}

/** Per-call options for `Tool.execute`. */
export interface ToolContext {
  /** Cancels the call (the server is sent `notifications/cancelled`). */
  signal?: AbortSignal
  /** Overrides the server's timeout for this call, in ms; each progress notification restarts it. */
  timeout?: number
  /**
   * Told each progress notification the server sends about this call, in order. A throw in it
   * is a `ToolnexusWarning`; the call goes on.
   */
  onProgress?: (progress: Progress) => void
}

/** A server's `notifications/progress` about a call. */
export interface Progress {
  progress: number
  total?: number
  message?: string
}

/** A callable tool; from loadMcp it also carries its server's listing fields (see `ToolInfo`). */
export interface Tool extends Pick<ToolInfo, "title" | "annotations" | "outputSchema" | "icons" | "execution" | "_meta"> {
  name: string
  description: string
  inputSchema: JSONSchema
  source: string
  execute(args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
}

/** Live tools from `loadMcp`; connections stay open until `close()`. */
export interface McpSource {
  /**
   * The tools as the servers list them now: when a server sends
   * `notifications/tools/list_changed` it is listed again and this array is replaced (read it
   * again rather than keeping it). Assigning it replaces the live list with a plain value.
   */
  tools: Tool[]
  status: Record<string, McpStatus>
  errors: Record<string, string>
  /** Connected servers only, in config order: what each said about itself. */
  info: Record<string, ServerInfo>
  /** Idempotent; resolves when every child process has exited. */
  close(): Promise<void>
}

/** What a server asked the user for, as handed to `waitFor`. */
export type ElicitationRequest =
  | { kind: "input"; message: string; data: { schema: JSONSchema }; server?: string }
  | { kind: "authorization"; message: string; url: string; elicitationId?: string; server?: string }

/** The agent's answer to an `ElicitationRequest`. */
export interface Answer {
  ok: boolean
  data?: Record<string, unknown>
  reason?: string
}

/** MCP `elicitation/create` params (form or URL mode). */
export interface ElicitParams {
  mode?: "form" | "url"
  message: string
  requestedSchema?: JSONSchema
  url?: string
  elicitationId?: string
  [key: string]: unknown
}

/** MCP `ElicitResult`. */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel"
  content?: Record<string, unknown>
}

/** A server's new tool list, after it sent `notifications/tools/list_changed`. */
export interface ToolsChange {
  /** The server's name in the config. */
  server: string
  /** Its tools as it lists them now (after the config's `tools` filter), original names. */
  tools: ToolInfo[]
}

export interface LoadOptions extends ListOptions {
  /** Answers servers' elicitation requests; without it they are declined. */
  waitFor?: (request: ElicitationRequest) => Promise<Answer>
  /**
   * Called after a server's tools changed and were listed again; `source.tools` already
   * shows them. A list that fails to load keeps the previous tools and calls nothing. A throw
   * in it becomes a `ToolnexusWarning`.
   */
  onToolsChanged?: (change: ToolsChange) => void
}

/** Options of `defineTool`. */
export interface DefineToolOptions {
  name: string
  description?: string
  /** Defaults to `{ type: "object", properties: {} }`. */
  inputSchema?: JSONSchema
  /** Defaults to `"native"`. */
  source?: string
  /**
   * May return (or resolve to) a string (kept), a `ToolResult` (kept), an MCP
   * `CallToolResult` (`{ content, structuredContent?, isError? }`, served as is) or any other
   * value (JSON-stringified; `undefined` gives `""`). A throw becomes
   * `{ output: message, isError: true }`. Arguments were checked against `inputSchema` first.
   */
  run(args: Record<string, any>, ctx: RunContext): unknown
}

/** MCP `CreateMessageResult`: the client's model's answer to `ctx.sample`. */
export interface CreateMessageResult {
  role: "user" | "assistant"
  content: ContentPart | ContentPart[]
  model: string
  stopReason?: string
  [key: string]: unknown
}

/** MCP `sampling/createMessage` params. */
export interface SampleRequest {
  messages: Array<{ role: "user" | "assistant"; content: ContentPart | ContentPart[] }>
  maxTokens: number
  systemPrompt?: string
  temperature?: number
  stopSequences?: string[]
  modelPreferences?: Record<string, unknown>
  includeContext?: "none" | "thisServer" | "allServers"
  metadata?: Record<string, unknown>
  [key: string]: unknown
}

/** What a running tool may do towards the client that called it (when served). */
export interface RunContext extends ToolContext {
  /**
   * Reports progress; sent only when the client asked for progress (a progress token).
   * Resolves whether it was sent.
   */
  progress?(progress: number, total?: number, message?: string): Promise<boolean>
  /**
   * Sends a log message (`notifications/message`) at `level` if the client wants that level
   * (`logging/setLevel`, or the request's log level in the 2026-07-28 era). Resolves whether
   * it was sent.
   */
  log?(
    level: "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency",
    data: unknown,
    logger?: string,
  ): Promise<boolean>
  /**
   * Asks the user through the client (`elicitation/create`); rejects if the client cannot.
   * In the 2026-07-28 era the call is answered with an input-required result and `run`
   * continues when the client retries with the answer. Requests made in the same tick
   * (`Promise.all`) go out together.
   */
  elicit?(request: ElicitParams, options?: InputOptions): Promise<ElicitResult>
  /** Asks the client's model (`sampling/createMessage`); rejects if the client cannot. */
  sample?(request: SampleRequest, options?: InputOptions): Promise<CreateMessageResult>
  /** Asks the client for its roots (`roots/list`); rejects if the client cannot. */
  listRoots?(options?: InputOptions): Promise<{ roots: Array<{ uri: string; name?: string }> }>
}

/** How an input request of `ctx` goes out. */
export interface InputOptions {
  /**
   * Its key in a 2026-07-28 input-required result (default: `elicitation-1`, `sampling-2`…).
   * A call that arrives with `inputResponses` already holding this key gets that answer at once.
   */
  key?: string
}

/** One served tool call, reported to `onCall`. */
export interface CallRecord {
  name: string
  source: string
  ms: number
  isError: boolean
}

/** Options of `buildMcpServer`: `initialize`'s server identity and the exposed subset. */
export interface McpServerOptions {
  /** Defaults to `"toolnexus"`. */
  name?: string
  /** Defaults to `"0.1.0"`. */
  version?: string
  /** Names of the tools to expose; unknown names are ignored; absent, every tool. */
  tools?: string[]
}

/** The part of an `@modelcontextprotocol/sdk` `Transport` that `connect` uses. */
export interface McpTransport {
  start(): Promise<void>
  send(message: any): Promise<void>
  close(): Promise<void>
  onmessage?: (message: any, extra?: any) => void
  onclose?: () => void
  onerror?: (error: Error) => void
}

/** An MCP server over a set of tools. */
export interface McpServer {
  /**
   * With a transport (any SDK `Transport`, e.g. `StdioServerTransport`): resolves once started.
   * Without one: serves this process's own stdin/stdout natively — nothing else may write to
   * stdout then (no `console.log`) — and resolves when the input ends or `close()` is called.
   */
  connect(transport?: McpTransport): Promise<void>
  close(): Promise<void>
}

/** Options of `createToolkit`. */
export interface ToolkitOptions {
  /** An mcp.json (path, JSON text or object) whose servers are loaded with `loadMcp`. */
  mcpConfig?: string | object
  /** Tools of your own, after the MCP tools; on a name clash the first tool wins (warned). */
  extraTools?: Tool[]
  signal?: AbortSignal
  waitFor?: (request: ElicitationRequest) => Promise<Answer>
  /** As for `listMcpTools`: how servers that ask for OAuth are authorised. */
  authorize?: ListOptions["authorize"]
  tokenStore?: TokenStore
  /** toolnexus has no built-in tools; accepted for compatibility. */
  builtins?: false
  /**
   * Called with the whole new tool set after it changed: a server's `list_changed`, or a
   * `reload` that changed servers. Served endpoints are updated (and their clients sent
   * `notifications/tools/list_changed`) before this runs.
   */
  onToolsChanged?: (tools: Tool[]) => void
}

/** What `toolkit.reload` did, by server name. */
export interface ReloadResult {
  /** Servers new in the config, now started. */
  added: string[]
  /** Servers gone from the config, now closed. */
  removed: string[]
  /** Servers whose entry changed, closed and started again. */
  restarted: string[]
}

export interface ServeOptions {
  mcp?: McpServerOptions
  onCall?: (call: CallRecord) => void
  /**
   * Serve handshake-era (`initialize`) clients without sessions too, so any number of replicas
   * can stand behind a load balancer with no affinity. 2026-07-28 clients are always served
   * statelessly. Default `false`: `initialize` opens a session that later requests must name.
   */
  stateless?: boolean
  /**
   * `Host` names (or `host:port`) the server answers to besides the loopback ones. Required
   * when `addr` is not a loopback address; `["*"]` accepts any.
   */
  allowedHosts?: string[]
  /**
   * Browser origins (`scheme://host[:port]`, `:*` for any port) accepted besides the loopback
   * ones; requests from any other `Origin` are refused with 403. `["*"]` accepts any.
   */
  allowedOrigins?: string[]
  /**
   * A session that no request names for this many milliseconds expires: its requests are
   * answered 404 from then on, as after DELETE, and MCP clients open a new one. A request in
   * flight (a long call, an open GET stream) keeps its session; idle time counts from its
   * end. Default 300000 (5 minutes).
   */
  sessionIdleTimeout?: number
  /**
   * Sessions alive at once at most; opening one more ends the idlest (one with no request
   * in flight first), which is answered 404 from then on. Default 500.
   */
  maxSessions?: number
}

/** A running streamable-HTTP MCP server (`POST url + "/mcp"`). */
export interface ServeHandle {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string
  /** Stops accepting and waits for in-flight requests. */
  stop(): Promise<void>
  /** Same as `stop()`. */
  close(): Promise<void>
}

export interface Toolkit {
  tools(): Tool[]
  get(name: string): Tool | undefined
  /** An unknown name resolves to `{ output: "Unknown tool: <name>", isError: true }`. */
  execute(name: string, args?: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
  mcpStatus(): Record<string, McpStatus>
  /** Why each failed MCP server failed. */
  mcpErrors(): Record<string, string>
  /**
   * Serves the toolkit's tools over streamable HTTP at `addr` (e.g. `"127.0.0.1:0"`). When the
   * tool set changes, clients in a session are sent `notifications/tools/list_changed`.
   */
  serve(addr: string, opts?: ServeOptions): Promise<ServeHandle>
  /**
   * Serves the toolkit's tools over this process's stdin/stdout (nothing else may write to
   * stdout); resolves when the input ends or the toolkit is closed.
   */
  serveStdio(opts?: Pick<ServeOptions, "mcp" | "onCall">): Promise<void>
  /**
   * Reads the MCP config again (`mcpConfig` when given, else the one the toolkit was made
   * with): servers no longer in it are closed, new ones started, changed ones restarted, the
   * others left running. Rejects (and changes nothing) when the config cannot be read.
   */
  reload(mcpConfig?: string | object): Promise<ReloadResult>
  /** Stops every server this toolkit started and closes its MCP connections. */
  close(): Promise<void>
}

export type { ParseOptions } from "./binding"
export {
  answerToElicitResult,
  credentialsPath,
  describeContent,
  elicitationToRequest,
  expandEnvHeaders,
  forgetCredentials,
  parseMcpConfig,
  sanitize,
  storedCredentials,
} from "./binding"

/** Connects to every enabled server just long enough to list its tools, then disconnects. */
export declare function listMcpTools(input: string | object, opts?: ListOptions): Promise<McpInventory>

/**
 * Connects to every enabled server and returns live, callable tools. Connections stay open
 * until `source.close()`.
 */
export declare function loadMcp(input: string | object, opts?: LoadOptions): Promise<McpSource>

/**
 * Defines a tool from a `run` function. `run` may return a string (kept), a `ToolResult`
 * (kept) or any other value (JSON-stringified; `undefined` gives `""`); a throw or rejection
 * becomes `{ output: message, isError: true }`.
 */
export declare function defineTool(opts: DefineToolOptions): Tool

/**
 * The tools an MCP server would expose: `cfg.tools` names narrow the set (unknown names are
 * ignored); absent, every tool.
 */
export declare function exposedMcpTools(tools: Tool[], cfg?: { tools?: string[] }): Tool[]

/**
 * An MCP server for `tools`. `connect(transport)` takes any `@modelcontextprotocol/sdk`
 * `Transport`; `connect()` with no argument serves this process's stdin/stdout (so nothing else
 * may write to stdout: no `console.log`).
 */
export declare function buildMcpServer(tools: Tool[], cfg?: McpServerOptions, onCall?: (call: CallRecord) => void): McpServer

/**
 * A toolkit: MCP tools from `mcpConfig` first, then `extraTools` (first name wins, with a
 * warning), callable by name and servable over streamable HTTP.
 */
export declare function createToolkit(opts?: ToolkitOptions): Promise<Toolkit>
