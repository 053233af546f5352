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
   * How the tool may be called: a tool whose listing says `{ taskSupport: "required" }` is
   * always called as a task (its `execute` waits for the task's result), one that says
   * `"optional"` when its call asks for one (`ToolContext.task`).
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

/** An icon a server gives a tool, resource or prompt. */
export interface Icon {
  src: string
  mimeType?: string
  sizes?: string[]
  [key: string]: unknown
}

/** One resource as its server lists it, with every field it gave. */
export interface ResourceInfo {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  /** Its size in bytes, when the server knows it. */
  size?: number
  annotations?: ContentAnnotations
  icons?: Icon[]
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

/** One resource template (RFC 6570 `uriTemplate`) as its server lists it. */
export interface ResourceTemplateInfo {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  annotations?: ContentAnnotations
  icons?: Icon[]
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

/** One argument a prompt takes (always a string). */
export interface PromptArgument {
  name: string
  title?: string
  description?: string
  required?: boolean
}

/** One prompt as its server lists it. */
export interface PromptInfo {
  name: string
  title?: string
  description?: string
  arguments?: PromptArgument[]
  icons?: Icon[]
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

/** One file of a skill, as its entry lists it. */
export interface SkillFileInfo {
  /** Within the skill's folder, `/`-separated (`SKILL.md`, `references/FORMS.md`). */
  path: string
  uri: string
  /** `sha256:` and 64 lowercase hex digits. */
  digest: string
  /** Bytes. */
  size: number
}

/**
 * A skill a server offers (the skills extension, SEP-2640), as `skills/list` lists it: the
 * `uri` of its `SKILL.md`, the `name` and `description` of its frontmatter, the whole
 * `frontmatter`, and its files (or `"dynamic"`: its files change, and have no digests).
 */
export interface SkillInfo {
  uri: string
  name: string
  description: string
  frontmatter: Record<string, unknown>
  files: SkillFileInfo[] | "dynamic"
  _meta?: Record<string, unknown>
}

/** A skill loaded: its `SKILL.md` read, its size, digest and frontmatter checked. */
export interface LoadedSkill {
  uri: string
  name: string
  description: string
  /** The frontmatter as `SKILL.md` has it (equal to the entry's). */
  frontmatter: Record<string, unknown>
  /** The whole `SKILL.md`. */
  text: string
  /** `SKILL.md` after its frontmatter: the instructions. */
  body: string
  files: SkillFileInfo[] | "dynamic"
  /** One file of the skill, read and checked. */
  read(path: string, opts?: RequestOptions): Promise<SkillFileContents>
}

/** A file of a skill, read and checked: `text` when its bytes are UTF-8, else `blob` (base64). */
export interface SkillFileContents {
  path: string
  uri: string
  size: number
  mimeType?: string
  text?: string
  blob?: string
}

/** Every server's raw tool inventory (no name prefixing, no `tools` allowlist applied). */
export interface McpInventory {
  /** Connected servers only, keyed by server name in config order. */
  tools: Record<string, ToolInfo[]>
  /**
   * Connected servers only, in config order: each one's resources, as listed (`[]` when it
   * lists none or does not declare resources; a failed `resources/list` is `[]` with a warning).
   */
  resources: Record<string, ResourceInfo[]>
  /** Connected servers only, in config order: each one's resource templates (as `resources`). */
  resourceTemplates: Record<string, ResourceTemplateInfo[]>
  /** Connected servers only, in config order: each one's prompts (as `resources`). */
  prompts: Record<string, PromptInfo[]>
  /**
   * Connected servers only, in config order: each one's skills (`[]` when it does not declare
   * the skills extension; a failed `skills/list` is `[]` with a warning). Nothing is read.
   */
  skills: Record<string, SkillInfo[]>
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

/**
 * An entry's `auth`: how the client signs in when the server asks for OAuth. Without `grant` or
 * `enterprise`, a person signs in at a browser (the authorisation-code grant). Secrets may be
 * `${VAR}` references, files (`…File`, read on every use) or variables (`…Env`); a field the
 * grant does not use, or two sources of one secret, is refused with the reason.
 */
export type OAuthConfig = BrowserOAuthConfig | ClientCredentialsOAuthConfig | JwtBearerOAuthConfig | EnterpriseOAuthConfig

interface OAuthCommon {
  scopes?: string[]
  /**
   * Bind tokens to a key of this client (DPoP, RFC 9449): `true` always, `false` never; absent,
   * when the authorization server lists ES256 in `dpop_signing_alg_values_supported`.
   */
  dpop?: boolean
}

/** A person at a browser: a pre-registered client (or none: CIMD, then dynamic registration). */
export interface BrowserOAuthConfig extends OAuthCommon {
  grant?: "authorization_code"
  clientId?: string
  clientSecret?: string
  /** An HTTPS URL of a Client ID Metadata Document the app hosts, used when the server supports it. */
  clientMetadataUrl?: string
  /** The 127.0.0.1 port of the redirect listener (default: any free port). */
  redirectPort?: number
}

/** A machine with its own client (SEP-1046): a client secret, or a private key (`private_key_jwt`). */
export type ClientCredentialsOAuthConfig = OAuthCommon & {
  grant: "client_credentials"
  clientId: string
} & (
    | { clientSecret: string }
    | { privateKey: string; signingAlgorithm?: SigningAlgorithm }
    | { privateKeyFile: string; signingAlgorithm?: SigningAlgorithm }
    | { privateKeyEnv: string; signingAlgorithm?: SigningAlgorithm }
  )

/** The JWS algorithms a `privateKey` signs client assertions with (default ES256). */
export type SigningAlgorithm = "ES256" | "ES384" | "RS256" | "RS384" | "RS512" | "PS256" | "PS384" | "PS512"

/**
 * Workload identity (SEP-1933): the workload's JWT (a Kubernetes service-account token, a CI
 * provider's OIDC token) as a `jwt-bearer` assertion. A file is read again at each sign-in.
 */
export type JwtBearerOAuthConfig = OAuthCommon & {
  grant: "jwt-bearer" | "urn:ietf:params:oauth:grant-type:jwt-bearer"
  /** Sent as `client_id` (or with `clientSecret`, as HTTP Basic) when the server wants one. */
  clientId?: string
  clientSecret?: string
} & ({ assertion: string } | { assertionFile: string } | { assertionEnv: string })

/**
 * Enterprise-managed authorization (SEP-990): the user's ID token from the enterprise IdP is
 * exchanged there for an ID-JAG, which the server's authorization server redeems.
 */
export interface EnterpriseOAuthConfig extends OAuthCommon {
  /** This client at the server's authorization server. */
  clientId: string
  clientSecret?: string
  enterprise: {
    idpIssuer: string
    idpTokenEndpoint: string
    idpClientId: string
    idpClientSecret?: string
  } & ({ idToken: string } | { idTokenFile: string } | { idTokenEnv: string })
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
  /**
   * Runs a tool whose listing says it may run as a task (`execution.taskSupport: "optional"`)
   * as one. A tool whose listing says it must (`"required"`) always runs as a task; one with no
   * task support is called as usual, whatever `task` says. A task's `timeout` bounds the whole
   * task; `signal` and the timeout cancel it (`tasks/cancel`).
   */
  task?: boolean
  /**
   * Told each change of status of the task a call runs as (first `working`, last `completed`
   * or `failed`). A throw in it is a `ToolnexusWarning`; the call goes on.
   */
  onStatus?: (status: TaskStatus) => void
}

/** The state of the task a tool call runs as (`ToolContext.onStatus`). */
export interface TaskStatus {
  taskId: string
  status: "working" | "input_required" | "completed" | "failed" | "cancelled"
  statusMessage?: string
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
  /**
   * Served as a task (`execution.taskSupport`), a call starts as an ordinary one and becomes
   * a task only when its run calls `ctx.startTask()` (see `DefineToolOptions.deferTask`).
   */
  deferTask?: boolean
  execute(args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>
}

/** `searchTools`' options. */
export interface SearchToolsOptions {
  /** How many matches at most (1 to 1000). Default 5. */
  limit?: number
  /** Only tools of these servers (names as in the config). */
  servers?: string[]
}

/** One tool `searchTools` found, best first. */
export interface ToolMatch {
  /** The tool's name, as `tools` names it (callable as is). */
  name: string
  /** Its MCP server's name; absent for an app's own tool. */
  server?: string
  description: string
  inputSchema: JSONSchema
  /** Its rank score for the query (higher is better; comparable within one search only). */
  score: number
}

/**
 * What `toolnexus types` declares of one tool (one entry of the `McpTools` it writes): the
 * types `McpSource.call` checks a call of it against.
 */
export interface ToolTypes {
  /** Its arguments, from its inputSchema (an object type, unless a server says otherwise). */
  args: unknown
  /** Its `structuredContent`, from its outputSchema (`unknown` when it declares none). */
  result?: unknown
  /** Its server's name in the config. */
  server?: string
  /** Its name on its server. */
  tool?: string
}

/**
 * Tool types by tool name (as loadMcp names tools), the type argument of `loadMcp` and
 * `McpSource`: the `McpTools` interface `toolnexus types` generates, or one written by hand.
 */
export type ToolMap<T = any> = { [K in keyof T]: ToolTypes }

/** The default `ToolMap`, untyped: any tool name, any arguments object. */
export type UntypedTools = Record<string, { args: Record<string, unknown>; result: unknown }>

/**
 * The rest of a `McpSource.call` after the name: its arguments (optional when every one is)
 * and the call's options.
 */
export type ToolCallArgs<E extends ToolTypes> = {} extends E["args"] ? [args?: E["args"], ctx?: ToolContext] : [args: E["args"], ctx?: ToolContext]

/** What `McpSource.call` resolves to: a `ToolResult`, its `structuredContent` typed when the tool declares an outputSchema. */
export type TypedToolResult<E extends ToolTypes> = unknown extends E["result"] ? ToolResult : ToolResult & { structuredContent?: E["result"] }

/**
 * Live tools from `loadMcp`; connections stay open until `close()`. `T` types `call`: see
 * `loadMcp`.
 */
export interface McpSource<T extends ToolMap<T> = UntypedTools> {
  /**
   * Calls the tool named `name` (as `tools` names it: `<server>_<tool>`) with `args`, as its
   * `execute` does: failures of the call resolve with `isError: true`. A name the source has no
   * tool of rejects with an Error naming the closest names it has. With a `ToolMap` (from
   * `toolnexus types`), tsc checks the name and the arguments, and types `structuredContent`.
   */
  call<K extends keyof T & string>(name: K, ...rest: ToolCallArgs<T[K]>): Promise<TypedToolResult<T[K]>>
  /**
   * The best matches for `query` (plain words: "delete a folder") among `tools`, ranked in Rust
   * over tool names split into words, titles, descriptions and parameter names and
   * descriptions (BM25 with light stemming and synonyms; no model or network). The index
   * follows the tools as servers re-list them. Throws a TypeError for bad arguments.
   */
  searchTools(query: string, opts?: SearchToolsOptions): ToolMatch[]
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
  /**
   * Every connected server's resources, in config order, each with its `server` and `read()`.
   * Live, like `tools`: replaced when a server sends `notifications/resources/list_changed`.
   */
  resources: Resource[]
  /** Every connected server's resource templates (live, as `resources`). */
  resourceTemplates: ResourceTemplate[]
  /** Every connected server's prompts, each with `get(args)` (live: `notifications/prompts/list_changed`). */
  prompts: Prompt[]
  /**
   * Every connected server's skills (SEP-2640), each with `load()` and `read(path)`; nothing is
   * read until one is loaded (live, as `resources`).
   */
  skills: Skill[]
  /**
   * Loads the skill whose `SKILL.md` is `uri` on `server`, listed or not (`skills/get` finds one
   * not listed): its `SKILL.md` read and checked against the skill's entry (size, then digest,
   * then the frontmatter, field by field). A mismatch rejects with what differed.
   */
  loadSkill(server: string, uri: string, opts?: RequestOptions): Promise<LoadedSkill>
  /** `resources/read` of `uri` on `server` (any URI the server serves, listed or not). */
  readResource(server: string, uri: string, opts?: RequestOptions): Promise<ReadResourceResult>
  /** `prompts/get` of the prompt `name` (its original name) on `server`; arguments are strings. */
  getPrompt(server: string, name: string, args?: Record<string, string>, opts?: RequestOptions): Promise<GetPromptResult>
  /** `completion/complete`: suggested values for a prompt's argument or a template's variable. */
  complete(
    server: string,
    ref: CompletionRef,
    argument: { name: string; value: string },
    context?: CompletionContext,
    opts?: RequestOptions,
  ): Promise<Completion>
  /**
   * Follows the resource `uri` of `server`: `onUpdated(uri)` is called for each update it
   * announces (`resources/subscribe` in the handshake era, a `subscriptions/listen` stream in
   * 2026-07-28). Resolves to the function that stops it (idempotent). Rejects when the server
   * does not support resource subscriptions. A throw in `onUpdated` becomes a `ToolnexusWarning`.
   * `opts.signal` aborted before it resolves rejects with `signal.reason` and leaves nothing
   * subscribed; `opts.timeout` bounds the subscribing.
   */
  subscribe(server: string, uri: string, onUpdated: (uri: string) => void, opts?: RequestOptions): Promise<() => Promise<void>>
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

/** A `resources/read` result: the resource's contents (one or more parts), as the server sent them. */
export interface ReadResourceResult {
  contents: ResourceContents[]
  /** How long (ms) the result may be cached, when the server says (SEP-2549). */
  ttlMs?: number
  cacheScope?: "public" | "private"
  _meta?: Record<string, unknown>
}

/** One message of a prompt. */
export interface PromptMessage {
  role: "user" | "assistant"
  content: ContentPart
}

/** A `prompts/get` result: the prompt's messages, with its arguments filled in. */
export interface GetPromptResult {
  description?: string
  messages: PromptMessage[]
  _meta?: Record<string, unknown>
}

/** A completion of a prompt's argument: the prompt by its name on its server. */
export interface PromptRef {
  type: "ref/prompt"
  name: string
}

/** A completion of a resource template's variable: the template by its `uriTemplate`. */
export interface ResourceTemplateRef {
  type: "ref/resource"
  uri: string
}

/** What a completion is for: a prompt's argument, or a resource template's variable. */
export type CompletionRef = PromptRef | ResourceTemplateRef

/** Suggested values for an argument (at most 100; `total`/`hasMore` say when there are more). */
export interface Completion {
  values: string[]
  total?: number
  hasMore?: boolean
}

/** The arguments already filled in, which a completion may depend on. */
export interface CompletionContext {
  arguments?: Record<string, string>
}

/** Per-request options of `readResource`, `getPrompt`, `complete` and the items' methods. */
export interface RequestOptions {
  /** Aborts the request (the server is sent `notifications/cancelled`); it rejects with `signal.reason`. */
  signal?: AbortSignal
  /** Overrides the server's timeout for this request, in ms; each progress notification restarts it. */
  timeout?: number
}

/**
 * How `readResource`, `getPrompt`, `complete` and `subscribe` reject: with the server's
 * JSON-RPC error (`message`, `code`, `data`) when it sent one, else an `Error` in words. An
 * unknown server is a `TypeError` naming the connected ones.
 */
export interface McpRequestError extends Error {
  code?: number
  data?: unknown
}

/** A resource of a loadMcp source: its listing, its server, and `read()`. */
export interface Resource extends ResourceInfo {
  /** The server's name in the config. */
  server: string
  read(opts?: RequestOptions): Promise<ReadResourceResult>
}

/** A resource template of a loadMcp source: `read` takes the variables (or the URI itself). */
export interface ResourceTemplate extends ResourceTemplateInfo {
  server: string
  /** An object is expanded into the template (RFC 6570); a string is read as the URI. */
  read(varsOrUri: Record<string, string | number> | string, opts?: RequestOptions): Promise<ReadResourceResult>
  /** Suggestions for the variable `argument` starting from `value`. */
  complete(argument: string, value: string, context?: CompletionContext, opts?: RequestOptions): Promise<Completion>
}

/** A skill of a loadMcp source: its listing, its server, `load()` and `read(path)`. */
export interface Skill extends SkillInfo {
  server: string
  /** Reads and checks its `SKILL.md` (see `McpSource.loadSkill`). */
  load(opts?: RequestOptions): Promise<LoadedSkill>
  /** Reads and checks one of its files; a file its entry does not list is refused. */
  read(path: string, opts?: RequestOptions): Promise<SkillFileContents>
}

/** A prompt of a loadMcp source: its listing, its server, and `get(args)`. */
export interface Prompt extends PromptInfo {
  server: string
  get(args?: Record<string, string>, opts?: RequestOptions): Promise<GetPromptResult>
  /** Suggestions for the argument `argument` starting from `value`. */
  complete(argument: string, value: string, context?: CompletionContext, opts?: RequestOptions): Promise<Completion>
}

/** A server's new resources and resource templates, after it sent `notifications/resources/list_changed`. */
export interface ResourcesChange {
  server: string
  resources: ResourceInfo[]
  resourceTemplates: ResourceTemplateInfo[]
}

/** A server's new prompts, after it sent `notifications/prompts/list_changed`. */
export interface PromptsChange {
  server: string
  prompts: PromptInfo[]
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
  /**
   * Called after a server's resources or resource templates changed and were listed again;
   * `source.resources` and `source.resourceTemplates` already show them. A throw in it becomes
   * a `ToolnexusWarning`.
   */
  onResourcesChanged?: (change: ResourcesChange) => void
  /** Called after a server's prompts changed and were listed again (as `onResourcesChanged`). */
  onPromptsChanged?: (change: PromptsChange) => void
}

/** Options of `defineTool`; the listing fields (`title`, `annotations`, …) are served as given. */
export interface DefineToolOptions extends Pick<ToolInfo, "title" | "annotations" | "outputSchema" | "icons" | "execution" | "_meta"> {
  name: string
  description?: string
  /** Defaults to `{ type: "object", properties: {} }`. */
  inputSchema?: JSONSchema
  /** Defaults to `"native"`. */
  source?: string
  /**
   * Serve `run` as a task (listed with `execution.taskSupport`): `"optional"` when the client
   * asks for one (2025-11-25: a task-augmented `tools/call`; 2026-07-28: a client that
   * declared the `io.modelcontextprotocol/tasks` extension), `"required"` always (a client
   * that cannot take a task is refused). The call is answered with a task at once; `run`
   * keeps going, `ctx.signal` fires on `tasks/cancel` or when the task expires, and a throw
   * ends the task `failed` (an `isError` result ends it `completed`).
   */
  task?: "optional" | "required"
  /**
   * With `task`: a call that would be a task starts as an ordinary call instead, and becomes
   * a task only when `run` calls `await ctx.startTask()`. Until then `run` asks what it needs
   * as any call does (2026-07-28: input-required rounds of the `tools/call`, retried by the
   * client with its answers); at `startTask()` the call is answered with the task
   * (`CreateTaskResult`), `run` goes on inside it, and what it asks from then on is the
   * task's input (`input_required`, answered by `tasks/update`). A run that never calls it
   * answers its call as an ordinary one. In the 2025-11-25 era a task-augmented call is a
   * task from the start (the client asked for one) and `startTask()` changes nothing.
   */
  deferTask?: boolean
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
  /**
   * A `deferTask` tool's run hands the rest of its work to a task: its call is answered with
   * a new task (`CreateTaskResult`) and `run` goes on inside it; its later asks are the
   * task's input. Resolves `true` once the task exists; `false` when the call stays as it
   * is (already a task, a tool without `deferTask`, a 2026-07-28 client that did not declare
   * the tasks extension calling an optional tool, a 2025-11-25 call, a resource or prompt):
   * then `run` simply goes on and answers its call. Rejects only when the call already ended.
   */
  startTask?(): Promise<boolean>
  /**
   * Who called, when served with `auth` (`serve(addr, { auth })`): the static token's or
   * OAuth access token's subject, scopes and claims. `undefined` when served without auth
   * (loopback, `auth: "none"`, stdio) or not served at all.
   */
  principal?: Principal
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
  /** Who made the call, when served with `auth`; absent without auth. Never holds the token. */
  principal?: Principal
}

/** What a resource's `read` may return: text, a blob (bytes or base64), or the contents in full. */
export type ResourceReadReturn =
  | string
  | { text: string; mimeType?: string }
  | { blob: string | Uint8Array | ArrayBuffer; mimeType?: string }
  | ResourceContents[]
  | { contents: ResourceContents[] }

/** Suggests values for one argument or variable, given what was typed and the other arguments. */
export type Completer = (
  value: string,
  context: CompletionContext,
) => string[] | Completion | Promise<string[] | Completion>

/** Options of `defineResource`: its listing, and `read`. */
export interface DefineResourceOptions extends Omit<ResourceInfo, "uri" | "name"> {
  uri: string
  name: string
  read(uri: string, ctx: RunContext): ResourceReadReturn | Promise<ResourceReadReturn>
}

/** Options of `defineResourceTemplate`: its listing, `read` (given the URI's variables) and completers. */
export interface DefineResourceTemplateOptions extends Omit<ResourceTemplateInfo, "uriTemplate" | "name"> {
  uriTemplate: string
  name: string
  read(uri: string, vars: Record<string, string>, ctx: RunContext): ResourceReadReturn | Promise<ResourceReadReturn>
  /** Completers by variable name. */
  complete?: Record<string, Completer>
}

/** A prompt message as `get` may give it: `content` a part, or a string (one text part). */
export interface PromptMessageInput {
  role: "user" | "assistant"
  content: ContentPart | string
}

/** Options of `definePrompt`: its listing, `get` and completers. */
export interface DefinePromptOptions extends Omit<PromptInfo, "name"> {
  name: string
  /** A string is one user message; missing required arguments are refused before it runs. */
  get(
    args: Record<string, string>,
    ctx: RunContext,
  ):
    | string
    | GetPromptResult
    | { description?: string; messages: PromptMessageInput[] }
    | Promise<string | GetPromptResult | { description?: string; messages: PromptMessageInput[] }>
  /** Completers by argument name. */
  complete?: Record<string, Completer>
}

/** A resource to serve (`defineResource`). */
export interface ResourceDefinition extends ResourceInfo {
  read: DefineResourceOptions["read"]
  /** Tells every client subscribed to it, on every server serving it, that it changed. */
  notifyUpdated(): void
}

/** A resource template to serve (`defineResourceTemplate`). */
export interface ResourceTemplateDefinition extends ResourceTemplateInfo {
  read: DefineResourceTemplateOptions["read"]
  complete?: Record<string, Completer>
}

/** A prompt to serve (`definePrompt`). */
export interface PromptDefinition extends PromptInfo {
  get: DefinePromptOptions["get"]
  complete?: Record<string, Completer>
}

/** The caching hints (SEP-2549) served on every list and read result. */
export interface CacheHints {
  /** How long (ms) clients may cache; default: the smallest its upstreams gave, else 0. */
  ttlMs?: number
  /** Default: `"public"` only when every upstream said so, else `"private"`. */
  scope?: "public" | "private"
}

/** What a policy hook is told of every served call (see `CallHooks`). */
interface HookedCallCommon {
  /**
   * The request: `tools/call`, `resources/read` and `prompts/get` (both hooks), or, for
   * `beforeCall` only, `resources/subscribe`, `skills/get` and `resources/directory/read` (a
   * resource's `uri`, nothing to rewrite: it may refuse them).
   */
  method: "tools/call" | "resources/read" | "prompts/get" | "resources/subscribe" | "skills/get" | "resources/directory/read"
  /** The MCP server it is relayed to, when it is relayed (a gateway's tool, resource or prompt). */
  server?: string
  /** Who called, when served with `auth`. Never holds the token. */
  principal?: Principal
  /** The request's `_meta` (progress token, trace context, ...), when it has one. */
  meta?: Record<string, unknown>
}

/** A served `tools/call`, `resources/read` or `prompts/get`, as `beforeCall` sees it. */
export type HookedCall =
  | (HookedCallCommon & { kind: "tool"; tool: string; arguments: Record<string, unknown> })
  | (HookedCallCommon & { kind: "resource"; uri: string; arguments: Record<string, never> })
  | (HookedCallCommon & { kind: "prompt"; prompt: string; arguments: Record<string, string> })

/** A served call and what it answered, as `afterCall` sees it. */
export type HookedResult =
  | (Extract<HookedCall, { kind: "tool" }> & { result: McpCallToolResult })
  | (Extract<HookedCall, { kind: "resource" }> & { result: ReadResourceResult })
  | (Extract<HookedCall, { kind: "prompt" }> & { result: GetPromptResult })

/** What `beforeCall` may answer: nothing to go on, a refusal in words, or other arguments. */
export type BeforeCallVerdict = void | undefined | null | { deny: string } | { arguments: Record<string, unknown> }

/**
 * Policy on every served and relayed call: `beforeCall` runs before a tool call, resource read
 * or prompt get starts (before a task is made, before the upstream or `run` sees anything);
 * `afterCall` sees its result. A refusal reaches the caller in its words: a tool error for a
 * tool call, a JSON-RPC error (-32600) for a read or get. Rewritten tool arguments are checked
 * against the tool's schema again. A hook that throws, answers something else, or has not
 * answered within 10 s fails that call in words (a tool error, or -32603); the server goes on.
 */
export interface CallHooks {
  beforeCall?(call: HookedCall): BeforeCallVerdict | Promise<BeforeCallVerdict>
  /** Its answer replaces the result (a result of the same kind); nothing keeps it. */
  afterCall?(
    call: HookedResult,
  ): McpCallToolResult | ReadResourceResult | GetPromptResult | void | undefined | null | Promise<McpCallToolResult | ReadResourceResult | GetPromptResult | void | undefined | null>
}

/** Options of `buildMcpServer`: `initialize`'s server identity and the exposed subset. */
export interface McpServerOptions {
  /** Defaults to `"toolnexus"`. */
  name?: string
  /** Defaults to `"0.1.0"`. */
  version?: string
  /** Names of the tools to expose; unknown names are ignored; absent, every tool. */
  tools?: string[]
  /** Resources and resource templates to serve. */
  resources?: Array<ResourceDefinition | ResourceTemplateDefinition>
  prompts?: PromptDefinition[]
  /** The caching hints (SEP-2549) its list and read results carry (a toolkit: `serve(addr, { mcp: { cache } })`). */
  cache?: CacheHints
  /**
   * Skills to serve (the skills extension, SEP-2640): a folder (each folder within it that holds
   * a `SKILL.md` is a skill, served at `skill://<its path>/…`), or skills from `defineSkill`.
   * Checked at once: a skill that breaks a rule throws, naming it and the rule.
   */
  skills?: string | SkillDefinition[]
  /** Policy hooks on its calls (a toolkit's `serve(addr, { mcp: { hooks } })` overrides the toolkit's `hooks`). */
  hooks?: CallHooks
  /** How large its tools' results may be (a toolkit's `serve(addr, { mcp: { resultLimits } })` overrides the toolkit's). */
  resultLimits?: ResultLimits
}

/**
 * The largest tool results, in bytes of their content and structured content as JSON (256 to
 * 2^31): `maxBytes` for every tool, `tools` by name or glob (the first that matches wins). A
 * larger result is cut: its content parts kept in order up to the limit (the last text cut at a
 * character boundary), then a text part saying how many bytes were left out. A
 * `structuredContent` that does not fit is left out and the result is then an error, saying so.
 * Never silent. Cut after `afterCall`.
 */
export interface ResultLimits {
  maxBytes?: number
  tools?: Record<string, number>
}

/** What `defineSkill` takes. */
export interface DefineSkillOptions {
  /** Each file by its path within the skill's folder: `SKILL.md` (with `name` and `description` in its frontmatter), and any others. */
  files: Record<string, string | Uint8Array>
  /** Where it is served under `skill://` (its last segment is its name). Default: its name. */
  path?: string
}

/** A skill to serve, from `defineSkill` (opaque). */
export interface SkillDefinition {
  readonly path?: string
}

/** A skill given as files, to serve with `buildMcpServer`'s or `createToolkit`'s `skills`. */
export declare function defineSkill(opts: DefineSkillOptions): SkillDefinition

/**
 * The `load_skill` tool over a loadMcp source's skills or a toolkit's (`toolkit.skills()`): a
 * model loads a skill's instructions by name, as hosts let it. Its description lists each
 * skill's name and description as they are when it is read; a call answers the skill's
 * `SKILL.md` instructions (checked as `skill.load()` checks them) and the paths of its other
 * files. Names two servers share are `<server>/<name>`.
 */
export declare function loadSkillTool(from: McpSource | Toolkit): Tool

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
  /** Tells the clients subscribed to `uri` that it changed. */
  resourceUpdated(uri: string): void
}

/** How one tool is curated (`curation.tools`, by its name as `toolnexus list` shows it). */
export interface ToolCuration {
  /** Its name from now on, everywhere (listing, calls, `call_tool`, search, tasks, hooks, scopes). */
  rename?: string
  title?: string
  description?: string
  /** Neither listed nor callable. */
  hide?: boolean
  /** Set on every call and gone from the advertised schema: the caller cannot change them. */
  preset?: Record<string, unknown>
  /** Filled in when the caller leaves them out (listed with their `default`, no longer required). */
  defaults?: Record<string, unknown>
}

/** `createToolkit`'s `curation` (and `toolnexus serve --tools-config`'s file). */
export interface Curation {
  /** By the tool's name as `toolnexus list` shows it (before any rename). */
  tools?: Record<string, ToolCuration>
  /** By server: its tools named `<prefix>_<tool>`, or with `prefix: false` just `<tool>`. A tool's `rename` wins. */
  servers?: Record<string, { prefix: string | false }>
}

/** Options of `createToolkit`. */
export interface ToolkitOptions {
  /** An mcp.json (path, JSON text or object) whose servers are loaded with `loadMcp`. */
  mcpConfig?: string | object
  /**
   * Serve search instead of the catalog: `tools/list` of `serve` and `serveStdio` shows
   * `search_tools` (`query`, `limit?`), which answers the best matches' names, descriptions and
   * input schemas, and `call_tool` (`name`, `arguments?`), which calls one of them exactly as a
   * call by its own name would (validation, progress, elicitation, content); plus the `always`
   * tools. Every tool stays callable by its name. With serving `auth`, search finds and calls
   * only what the caller's scopes allow. `limit`: matches per search when the model names none
   * (1 to 50, default 5).
   */
  toolSearch?: boolean | { limit?: number; always?: string[] }
  /** Tools of your own, after the MCP tools; on a name clash the first tool wins (warned). */
  extraTools?: Tool[]
  /** Resources and templates of your own, served after the MCP servers' (first URI wins, warned). */
  extraResources?: Array<ResourceDefinition | ResourceTemplateDefinition>
  /**
   * Prompts of your own, served after the MCP servers' (those named `<server>_<prompt>`; yours
   * keep their names).
   */
  extraPrompts?: PromptDefinition[]
  /**
   * Skills to serve at every endpoint (the skills extension, SEP-2640): a folder of skills, or
   * skills from `defineSkill` (see `McpServerOptions.skills`). Checked at once.
   */
  skills?: string | SkillDefinition[]
  /** Adds the `load_skill` tool (see `loadSkillTool`) to the toolkit's tools: its servers' skills and its own. */
  loadSkillTool?: boolean
  /** Policy hooks on every call its served endpoints answer (see `CallHooks`). */
  hooks?: CallHooks
  /** How large a tool's result may be at its served endpoints (see `ResultLimits`). */
  resultLimits?: ResultLimits
  /**
   * What the toolkit's tools are called and how they take their arguments, for the agent
   * (`tools()`, `execute`) and every served endpoint alike (see `Curation`). Checked once its
   * servers are connected: a tool no server has, a preset or default that does not fit its
   * tool's schema, or two tools under one name throw, in words.
   */
  curation?: Curation
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

/**
 * Who a request of a served toolkit comes from, once its bearer token was accepted
 * (`ctx.principal`, `CallRecord.principal`).
 */
export interface Principal {
  /**
   * The static token's `subject` (default `"token-<n>"`), the `auth.tokens` function's, or the
   * OAuth access token's `sub` claim.
   */
  subject: string
  /**
   * The static token's `scopes`, the function's, or the access token's `scope` (space-separated)
   * or `scp` claim. `auth.tools`, `auth.prompts` and `auth.resources` are read against them.
   */
  scopes: string[]
  /** The access token's claims (its JWT payload, or the introspection answer); `{}` for a static token. */
  claims: Record<string, unknown>
}

/** A static bearer token of `auth.tokens`, with who it stands for. */
export interface StaticToken {
  /**
   * The token clients send as `Authorization: Bearer <token>`: non-empty, at most 16384
   * characters, no spaces. Compared in constant time; never logged nor part of an error.
   */
  token: string
  /** The principal's subject; default `"token-<n>"`, `n` its 1-based place in `auth.tokens`. */
  subject?: string
  /** Its scopes, for `auth.tools`/`prompts`/`resources`; default `[]`. */
  scopes?: string[]
}

/**
 * `auth.oauth`: the served toolkit as an OAuth 2.1 resource server (MCP authorisation, RFC 9728).
 * It accepts JWT access tokens signed by `issuer`'s keys (RS*, PS*, ES256, ES384, EdDSA; never
 * `none` or HS*) for `audience`, and serves `GET /.well-known/oauth-protected-resource` naming
 * the issuer, so clients can discover where to get a token.
 */
export interface OAuthResourceServer {
  /**
   * The authorisation server's issuer identifier, exactly as its tokens' `iss` claim: an
   * `https://` URL (`http://` only for localhost, 127.0.0.1 or [::1]), no query or fragment.
   * Its metadata (RFC 8414, else OpenID discovery) is read when serving starts.
   */
  issuer: string
  /**
   * The `aud` a token must carry, also the metadata's `resource`. Default: the endpoint's own
   * URL (`http://127.0.0.1:PORT/mcp`). Behind a proxy, set it to the public URL clients use
   * (e.g. `https://mcp.example.com/mcp`).
   */
  audience?: string
  /** Scopes every request needs, all of them; a token lacking one is answered 403 `insufficient_scope`. */
  requiredScopes?: string[]
  /** The issuer's JWKS URL; default: `jwks_uri` of its metadata. */
  jwksUri?: string
  /**
   * RFC 7662 token introspection, for opaque (non-JWT) access tokens: the server's own client
   * credentials (sent as HTTP Basic), and the endpoint (default: the metadata's
   * `introspection_endpoint`). Answers are cached up to 60 s, never past the token's `exp`.
   */
  introspection?: { clientId: string; clientSecret: string; endpoint?: string }
  /** Seconds of leeway on `exp`, `nbf` and `iat`, from 0 to 600; default 60. */
  clockSkew?: number
}

/**
 * `serve`'s `auth`: who may use the served toolkit. A request needs `Authorization: Bearer <token>`
 * with a token that `tokens` or `oauth` accepts (else 401); `/healthz`, `/readyz` and the
 * protected-resource metadata are outside it. Needs `tokens` or `oauth`.
 */
export interface ServeAuth {
  /**
   * Static bearer tokens, or a check of a presented token: resolve to its principal (`scopes`
   * default `[]`, `claims` `{}`), or `null` to refuse it (401). A throw or rejection refuses
   * the request too. With `oauth` as well, a token these accept wins; others go to `oauth`.
   */
  tokens?:
    | Array<string | StaticToken>
    | ((
        token: string,
      ) => PrincipalInput | null | undefined | Promise<PrincipalInput | null | undefined>)
  /** Accept the access tokens of an OAuth authorisation server. */
  oauth?: OAuthResourceServer
  /**
   * Which tools each scope may see and call: scope → globs of tool names (`*` any run of
   * characters, `?` one). The scope `"*"` means any authenticated caller. A caller sees the
   * tools any of its scopes allows; others are absent from `tools/list` and answered as
   * unknown tools. Absent: every caller sees every tool.
   */
  tools?: Record<string, string[]>
  /** The same as `tools`, over prompt names. */
  prompts?: Record<string, string[]>
  /** The same as `tools`, over resource URIs (a template by its `uriTemplate` text). */
  resources?: Record<string, string[]>
}

/** What an `auth.tokens` function may resolve to: a `Principal` whose `scopes` and `claims` may be left out. */
export type PrincipalInput = Pick<Principal, "subject"> & Partial<Pick<Principal, "scopes" | "claims">>

/** One request to a served toolkit, as `accessLog` gets it. Never arguments, results or tokens. */
export interface AccessLogEntry {
  /** When the request arrived, ISO 8601 UTC. */
  time: string
  /** The principal's subject; `null` without auth, or when the request was refused before one was known. */
  principal: string | null
  /** The HTTP method: `"POST"`, `"GET"`, `"DELETE"`… */
  http: string
  /** The request's path: `"/mcp"`, `"/healthz"`… */
  path: string
  /** The JSON-RPC method, e.g. `"tools/call"`; `null` when the request had none. */
  method: string | null
  /** The tool's name, for `tools/call`. */
  tool?: string
  /** The prompt's name, for `prompts/get`. */
  prompt?: string
  /** The resource's URI, for `resources/read`. */
  resource?: string
  /** The HTTP status answered. */
  status: number
  /** Milliseconds from the request's arrival until its response body ended. */
  ms: number
  /**
   * The trace the request belongs to (32 hex digits): its SERVER span's when the engine
   * exports spans (`OTEL_EXPORTER_OTLP_ENDPOINT`), else the `traceparent` it came with.
   */
  traceId?: string
  /** The request's SERVER span (16 hex digits), when the engine exports spans. */
  spanId?: string
}

/** One limit: a token bucket (`callsPerMinute`, refilled steadily; `burst`, its size, default `callsPerMinute`) and at most `concurrent` calls at once. */
export interface Limit {
  callsPerMinute?: number
  burst?: number
  concurrent?: number
}

/** `serve`'s `limits`: each caller's (the fields at the top), the endpoint's and each tool's. */
export interface RateLimits extends Limit {
  overall?: Limit
  tools?: Record<string, Limit>
}

/** One audience's endpoint (`serve`'s `endpoints`). */
export interface AudienceEndpoint {
  servers?: string[]
  tools?: string[]
  auth?: ServeAuth | "none"
  hooks?: CallHooks
  limits?: RateLimits
}

export interface ServeOptions {
  /**
   * The served identity, exposed tools and caching hints. A toolkit serves its MCP servers' and
   * its `extraResources`/`extraPrompts`, so `resources` and `prompts` have no place here.
   */
  mcp?: Omit<McpServerOptions, "resources" | "prompts">
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
  /**
   * Who may use the served toolkit: bearer tokens, an OAuth issuer's access tokens, and which
   * scopes see which tools. `"none"` serves anyone who can reach the address. Default: no
   * auth on a loopback address; binding any other address without `auth` fails to start.
   */
  auth?: ServeAuth | "none"
  /**
   * `true`: one JSON line per request (an `AccessLogEntry`) on stderr. A function gets each
   * entry instead; a throw in it is a `ToolnexusWarning`. Once the handle's `close()` resolves,
   * every request's entry has been handed over. Default: no access log.
   */
  accessLog?: boolean | ((entry: AccessLogEntry) => void)
  /**
   * `true`: serve the operation and session durations as Prometheus text at `/metrics`
   * (`mcp_server_operation_duration_seconds` by method, tool and error type, and for a gateway
   * `mcp_client_operation_duration_seconds` of its upstream requests), behind the same auth as
   * `/mcp`. Default: no `/metrics`.
   */
  metrics?: boolean
  /**
   * Rate and concurrency limits. The fields at the top limit each caller (its principal, or
   * without auth its address); `overall` the endpoint as a whole; `tools` each tool a name or
   * glob names (`"github_*"`: the first that matches), all callers together. Rates count
   * requests: one over a caller's or the overall rate is answered HTTP 429 with `Retry-After` and
   * a JSON-RPC error saying which limit and when to retry. Caps (`concurrent`) count tool calls
   * in flight, and a tool's rate its calls: a call over either is a tool error in those words. A
   * call's run holds its places until it ends (a task's until the task ends).
   * Callers not seen for 10 minutes are forgotten; at most 100 000 are kept, newcomers past
   * that share one bucket. Refusals show in the access log.
   */
  limits?: RateLimits
  /**
   * Other audiences on the same listener, each an MCP endpoint at `/mcp/<name>` (`/mcp` stays
   * the whole set): the tools of `servers` (by name) and/or those `tools` names (a name or a
   * glob such as `"github_*"`, against the curated names), with its own sessions, listing and
   * `list_changed`. Its `auth`, `hooks` and `limits` default to the main endpoint's (its
   * limits counted apart from the main endpoint's). Its resources and prompts are those of
   * its `servers` (all, without them) and the toolkit's own.
   */
  endpoints?: Record<string, AudienceEndpoint>
  /**
   * The secret replicas of one endpoint share, so that any replica serves any request behind a
   * round-robin load balancer even when a tool's `run` asks for input (`ctx.elicit`,
   * `ctx.sample`): a 2026-07-28 input-required result's `requestState` is sealed with it, and a
   * retry that reaches a replica without the waiting `run` runs it again from the start, each
   * input whose answer the retry carries returning at once; in the handshake era the
   * `Mcp-Session-Id` is sealed, so any replica accepts it. A string (taken as UTF-8) or bytes,
   * at least 16 bytes each (32 random bytes are best: `openssl rand -base64 32`); or a list of
   * up to 16, the first sealing and every one opening, so a key rotates by putting the new one
   * first and dropping the old one later. Without it, state stays in the process that made it.
   */
  stateKey?: string | Uint8Array | Array<string | Uint8Array>
  /**
   * The `http://` or `https://` origin (no path) other replicas reach this one at, e.g.
   * `http://10.0.0.5:8808`: the answer to a request this replica sent a handshake-era client
   * may arrive at another replica, which forwards it here. Needs `stateKey`. Default: the
   * address it is bound to.
   */
  replicaUrl?: string
  /**
   * The store replicas share what must hold once per fleet in: `redis://host:6379` or
   * `rediss://…` (TLS), credentials in the URL if the store needs them (`redis://user:pass@host`;
   * no message or `/readyz` ever shows them). With it, a `requestState` is retried once across
   * the fleet (a replayed last retry is refused on every replica), a session ended by DELETE
   * is refused on every replica (and its tasks are cancelled wherever they run), any replica
   * answers for a task another runs (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/update`,
   * `tasks/cancel`; a task whose replica dies ends `failed` once its 6 s lease lapses), and the
   * rates of `limits` count once for the fleet (the `concurrent` caps stay per replica);
   * `/readyz` reports the store. Key names are keyed digests and values are sealed with
   * `stateKey`, so the store learns nothing and can forge no record. Each operation is bounded
   * (2 s): when the store fails, the requests that need it fail in words (a task that cannot be
   * recorded is refused, never started), rate limits fall back to each replica's own, and
   * everything else keeps working. Needs `stateKey`. Without it, each replica keeps its own
   * record (once per replica). See docs/fleet.md.
   */
  stateStore?: string
}

/** A running streamable-HTTP MCP server (`POST url + "/mcp"`). */
export interface ServeHandle {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string
  /** Each endpoint of `endpoints`: its MCP URL (`<url>/mcp/<name>`). */
  endpoints: Record<string, string>
  /** Stops accepting and waits for in-flight requests. */
  stop(): Promise<void>
  /** Same as `stop()`. */
  close(): Promise<void>
}

export interface Toolkit {
  tools(): Tool[]
  /**
   * Every skill its servers list (as `McpSource.skills`), then its own (`skills`, served by it,
   * with no `server`), each with `load()`.
   */
  skills(): Array<SkillInfo & { server?: string; load(opts?: RequestOptions): Promise<Omit<LoadedSkill, "read">> }>
  /** As `McpSource.searchTools`, over every tool of the toolkit (MCP and its own). */
  searchTools(query: string, opts?: SearchToolsOptions): ToolMatch[]
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
  /** Tells the clients subscribed to `uri` (one of its own resources) that it changed. */
  resourceUpdated(uri: string): void
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

/**
 * An OpenTelemetry SDK span processor, as `exportSpans` takes it (`SimpleSpanProcessor`,
 * `BatchSpanProcessor`, or the app's own): given each engine span, ended, in the SDK's
 * `ReadableSpan` shape.
 */
export interface SpanProcessorLike {
  onEnd(span: any): void
  forceFlush?(): Promise<void>
}

/**
 * Sends the spans toolnexus makes in its engine (a served request's SERVER span, a gateway's
 * CLIENT span for each request it relays upstream, a source's listings while it connects) to
 * the app's own span processor, so that they reach the app's exporters in the app's traces,
 * instead of going over OTLP from the `OTEL_*` variables. `resource` is what they are
 * exported with (default: `service.name` from `OTEL_SERVICE_NAME`, else `toolnexus`). `null`
 * stops. One processor per process: a later call replaces an earlier one.
 */
export declare function exportSpans(processor: SpanProcessorLike | null, opts?: { resource?: unknown }): void

/**
 * Sends the spans and metrics the engine has queued (to the OpenTelemetry collector, or to
 * the processor `exportSpans` was given, which is then flushed), and waits for it, at most a
 * few seconds for a collector.
 */
export declare function flushTelemetry(): Promise<void>

/** Connects to every enabled server just long enough to list its tools, then disconnects. */
export declare function listMcpTools(input: string | object, opts?: ListOptions): Promise<McpInventory>

/**
 * Connects to every enabled server and returns live, callable tools. Connections stay open
 * until `source.close()`.
 *
 * `T` types `source.call`: `toolnexus types mcp.json --out mcp-tools.d.ts` writes the
 * `McpTools` of a config from its servers' live listings, and then
 *
 * ```ts
 * import type { McpTools } from "./mcp-tools.js"
 * const source = await loadMcp<McpTools>("mcp.json")
 * const result = await source.call("github_create_issue", { owner: "me", repo: "x", title: "Hi" })
 * ```
 *
 * fails to compile when the tool does not exist or its arguments do not match its inputSchema,
 * and types `result.structuredContent` from its outputSchema. The types are not checked against
 * the servers at run time: regenerate them when the servers' tools change.
 */
export declare function loadMcp<T extends ToolMap<T> = UntypedTools>(input: string | object, opts?: LoadOptions): Promise<McpSource<T>>

/**
 * Defines a tool from a `run` function. `run` may return a string (kept), a `ToolResult`
 * (kept) or any other value (JSON-stringified; `undefined` gives `""`); a throw or rejection
 * becomes `{ output: message, isError: true }`.
 */
export declare function defineTool(opts: DefineToolOptions): Tool

/** Defines a resource to serve; its fields are checked (a `TypeError` names a bad one). */
export declare function defineResource(opts: DefineResourceOptions): ResourceDefinition

/** Defines a resource template to serve: reads of matching URIs get its variables. */
export declare function defineResourceTemplate(opts: DefineResourceTemplateOptions): ResourceTemplateDefinition

/** Defines a prompt to serve. */
export declare function definePrompt(opts: DefinePromptOptions): PromptDefinition

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
