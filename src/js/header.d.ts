/* toolnexus: types for the functions below (this header is prepended by `napi build`). */

/** A JSON Schema object, as MCP servers publish for tool inputs. */
export type JSONSchema = { [key: string]: unknown; type?: string; properties?: Record<string, unknown>; required?: string[] }

/** What became of one configured server. */
export type McpStatus = "connected" | "disabled" | "failed"

/** One tool as its server lists it: original name, description (`""` when absent), input schema. */
export interface ToolInfo {
  name: string
  description: string
  inputSchema: JSONSchema
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

/** What a tool call produced. `execute` never rejects: failures are `isError: true`. */
export interface ToolResult {
  output: string
  isError: boolean
  metadata?: Record<string, unknown>
}

/** Per-call options for `Tool.execute`. */
export interface ToolContext {
  /** Cancels the call (the server is sent `notifications/cancelled`). */
  signal?: AbortSignal
  /** Overrides the server's timeout for this call, in ms; each progress notification restarts it. */
  timeout?: number
}

/** A callable tool, from an MCP server (`source: "mcp"`) or from `defineTool`. */
export interface Tool {
  name: string
  description: string
  inputSchema: JSONSchema
  source: string
  execute(args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
}

/** Live tools from `loadMcp`; connections stay open until `close()`. */
export interface McpSource {
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

export interface LoadOptions extends ListOptions {
  /** Answers servers' elicitation requests; without it they are declined. */
  waitFor?: (request: ElicitationRequest) => Promise<Answer>
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
   * May return (or resolve to) a string (kept), a `ToolResult` (kept) or any other value
   * (JSON-stringified; `undefined` gives `""`). A throw becomes `{ output: message, isError: true }`.
   */
  run(args: Record<string, any>, ctx: ToolContext): unknown
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
  /** toolnexus has no built-in tools; accepted for compatibility. */
  builtins?: false
}

export interface ServeOptions {
  mcp?: McpServerOptions
  onCall?: (call: CallRecord) => void
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
  /** Serves the toolkit's tools over streamable HTTP at `addr` (e.g. `"127.0.0.1:0"`). */
  serve(addr: string, opts?: ServeOptions): Promise<ServeHandle>
  /** Stops every server this toolkit started and closes its MCP connections. */
  close(): Promise<void>
}
