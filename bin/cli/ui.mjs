// `toolnexus ui [<config>]`: a local web page for one config, served by this process on
// 127.0.0.1 only. Each server of the config is loaded once (loadMcp) and kept live: its status,
// reason, latency and info, its tools, resources, templates, prompts and skills; tools can be
// called from a form generated from their schema, resources read, prompts got; progress and
// elicitations reach the page over Server-Sent Events and are answered there; calls can be
// cancelled. The config file is watched and re-read; the page edits a server's `tools`
// allowlist and switches servers on and off through ./config-edit.mjs (format-preserving).
//
// Security: the listener binds 127.0.0.1. The printed URL holds a random token in its fragment
// (`/#token=…`: never sent to a server, never in a Referer); the page keeps it in sessionStorage
// (per origin, so per port, and per tab) and sends it as the x-toolnexus-token header on every
// /api request, the event stream included; nothing is kept in a cookie (cookies are shared by
// every port of 127.0.0.1). The page's shell (HTML, JS, CSS) is served without the token: it
// holds no secret and no server data. A Host other than 127.0.0.1:PORT / localhost:PORT (DNS
// rebinding) and an Origin other than the page's own are refused with 403. Servers are
// untrusted: the page renders what they send as text only.
import crypto from "node:crypto"
import fs from "node:fs"
import http from "node:http"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { openBrowser, withConfig } from "./auth.mjs"
import { configLocations, discover } from "./discover.mjs"
import { UsageError, messageOf, tn, toolOrigin } from "./inventory.mjs"

export const UI_HELP = `Usage: toolnexus ui [<config>] [--port n] [--open] [--timeout ms]

Serves a local web page for one config at http://127.0.0.1:<port>/#token=… (printed):
every server's status, reason, latency and info; its tools, resources, templates,
prompts and skills, re-listed live when the file changes or a server says its lists
changed. Tools are called from a form generated from their input schema (or raw JSON),
with progress, elicitations answered in the page, and cancelling; resources are read and
prompts got the same way. The page edits a server's \`tools\` allowlist (shown as a diff
before it is saved, in the config's own dialect, comments kept), switches servers on and
off, and starts the OAuth sign-in of a server that needs it.

Without <config>, the one client config \`toolnexus configs\` finds is used (name one
when there are several).

Only 127.0.0.1 is bound; the page's requests need the token in the printed URL's fragment
(kept by the page in its tab, never in a cookie), and requests naming another host or
coming from another origin are refused. Stop with Ctrl-C.

Options:
  --port n      the port to listen on (default 0: a free one)
  --open        open the page in the system browser
  --timeout ms  bound on connecting each server (default: the server's timeout)
  -h, --help    show this help

Exit status: 0 stopped by a signal, 1 the page could not be served, 2 usage or config error.
`

const UI_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "ui")
/** The page's files, by URL path; nothing else is served from disk. */
const STATIC = {
  "/app.js": ["app.js", "text/javascript; charset=utf-8"],
  "/schema-form.js": ["schema-form.js", "text/javascript; charset=utf-8"],
  "/render.js": ["render.js", "text/javascript; charset=utf-8"],
  "/style.css": ["style.css", "text/css; charset=utf-8"],
}
const CSP =
  "default-src 'self'; img-src 'self' data:; media-src 'self' data:; script-src 'self'; style-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
/** The largest request body the API reads. */
const MAX_BODY = 4 * 1024 * 1024
/** How much of a too-large body is read (and thrown away) so that the 413 reaches the client. */
const MAX_DRAIN = 4 * MAX_BODY
/** How long stopping waits for servers still connecting to give up. */
const STOP_BOUND = 5000

/** The SHA-256 of a text (or bytes), as hex. */
const sha256 = (data) => crypto.createHash("sha256").update(data).digest("hex")

/** The config file to show: the given one, or the only client config found. */
function pickConfig(config) {
  if (config !== undefined) {
    if (!fs.existsSync(config)) throw new UsageError(`toolnexus ui: no such file: ${config}`)
    return { file: path.resolve(config), shown: config }
  }
  const found = discover().files.filter((f) => f.error === undefined)
  if (found.length === 0) throw new UsageError("toolnexus ui: no <config> given and no MCP client config found (see `toolnexus configs --help`)")
  if (found.length > 1) {
    throw new UsageError(`toolnexus ui: ${found.length} client configs found; name one:\n${found.map((f) => `  ${f.file} (${f.client})`).join("\n")}`)
  }
  const at = configLocations().find((l) => l.file === found[0].file && l.client === found[0].client)?.at
  return { file: found[0].file, shown: found[0].file, at }
}

/** The file's text and its servers, read so that the two agree (the file may change meanwhile). */
function readConfigState(file, at) {
  for (let attempt = 0; ; attempt++) {
    const text = fs.readFileSync(file, "utf8")
    let servers
    let error
    try {
      servers = tn.parseMcpConfig(file, at ? { at } : undefined)
    } catch (err) {
      error = messageOf(err).replace(/^toolnexus: /, "")
    }
    if (fs.readFileSync(file, "utf8") === text || attempt >= 4) return { text, servers, error }
  }
}

/** Whether `tool` is exposed under the config's `tools` map (the engine's rule, connect/tool_info.rs). */
export function allowedBy(map, tool) {
  if (!map || Object.keys(map).length === 0) return true
  const allowList = Object.values(map).some((on) => on === true)
  return allowList ? map[tool] === true : map[tool] !== false
}

/**
 * The line diff of `before` and `after`: `[{ op: " " | "-" | "+", text, a?, b? }]` with `a`/`b`
 * the 1-based line numbers in each, only the changed lines and `context` lines around them
 * (a `{ op: "…" }` row between hunks). An LCS over the lines between the common head and tail.
 */
export function lineDiff(before, after, context = 3) {
  const a = before.split("\n")
  const b = after.split("\n")
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const midA = a.slice(head, a.length - tail)
  const midB = b.slice(head, b.length - tail)
  const rows = []
  for (let i = 0; i < head; i++) rows.push({ op: " ", text: a[i], a: i + 1, b: i + 1 })
  if (midA.length * midB.length > 4_000_000) {
    // Too large to align line by line: the whole middle goes, the new one comes.
    midA.forEach((text, i) => rows.push({ op: "-", text, a: head + i + 1 }))
    midB.forEach((text, j) => rows.push({ op: "+", text, b: head + j + 1 }))
  } else {
    // lcs[i][j]: the longest common subsequence of midA[i..] and midB[j..].
    const lcs = Array.from({ length: midA.length + 1 }, () => new Uint32Array(midB.length + 1))
    for (let i = midA.length - 1; i >= 0; i--) {
      for (let j = midB.length - 1; j >= 0; j--) {
        lcs[i][j] = midA[i] === midB[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
      }
    }
    let i = 0
    let j = 0
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
        rows.push({ op: " ", text: midA[i], a: head + i + 1, b: head + j + 1 })
        i++
        j++
      } else if (i < midA.length && (j === midB.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
        // Removals first, as diffs show them.
        rows.push({ op: "-", text: midA[i], a: head + i + 1 })
        i++
      } else {
        rows.push({ op: "+", text: midB[j], b: head + j + 1 })
        j++
      }
    }
  }
  for (let k = 0; k < tail; k++) rows.push({ op: " ", text: a[a.length - tail + k], a: a.length - tail + k + 1, b: b.length - tail + k + 1 })
  // Keep the changes and `context` lines around each.
  const keep = rows.map(() => false)
  rows.forEach((row, k) => {
    if (row.op === " ") return
    for (let m = Math.max(0, k - context); m <= Math.min(rows.length - 1, k + context); m++) keep[m] = true
  })
  const out = []
  rows.forEach((row, k) => {
    if (!keep[k]) return
    if (out.length > 0 && !keep[k - 1]) out.push({ op: "…" })
    out.push(row)
  })
  return out
}

/** A failure reason that means the server needs the user to sign in (OAuth). */
const needsAuth = (slot) => slot.entry?.type === "remote" && /^authori[sz]ation required\b/i.test(slot.error ?? "")

/** A JSON-able copy of what a server sent, with nothing that could not be serialised. */
function plain(value) {
  try {
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value))
  } catch {
    return undefined
  }
}

/** A string field of a server's listing, or undefined (servers are untrusted). */
const str = (value) => (typeof value === "string" ? value : undefined)

export async function ui({ positionals, values }, { signal }) {
  const [configArg] = positionals
  let port = 0
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) throw new UsageError(`toolnexus ui: --port must be a port number (0-65535), got "${values.port}"`)
    port = Number(values.port)
  }
  const { file, shown, at } = pickConfig(configArg)
  const first = readConfigState(file, at)
  if (first.error !== undefined) throw new UsageError(`toolnexus ui: ${first.error}`)

  // Config editing is another module's; without it the page still works, read-only.
  let editor = null
  let editorError = null
  try {
    editor = await import("./config-edit.mjs")
  } catch (err) {
    editorError = `config editing is not available: ${messageOf(err)}`
  }

  const token = crypto.randomBytes(24).toString("hex")
  const state = { text: first.text, configError: null }
  /** Server name → slot: { name, entry, key, status, error, info, ms, source, gen, connecting }. */
  let slots = new Map()
  /** SSE responses. */
  const clients = new Set()
  /** Call id → { id, server, tool, controller, started, progress }. */
  const calls = new Map()
  /** Elicitation id → { id, server, request, resolve }. */
  const elicitations = new Map()
  /** Questions withdrawn because what asked them ended (the latest few): id → server, for a clear 404. */
  const withdrawn = new Map()
  /** Server name → how many calls, reads and prompt gets of the page are running on it. */
  const busy = new Map()
  /** Connects under way (aborted and awaited, within STOP_BOUND, when stopping) and closes under way. */
  const connecting = new Set()
  const closing = new Set()
  let stopping = false

  // ---------------------------------------------------------------------------------------------
  // Live updates

  const send = (res, event, data) => {
    if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  const broadcast = (event, data) => {
    for (const res of clients) send(res, event, data)
  }
  // Snapshots are coalesced: many changes in one tick are one `state` event.
  let snapshotTimer = null
  const changed = () => {
    if (snapshotTimer !== null || stopping) return
    snapshotTimer = setTimeout(() => {
      snapshotTimer = null
      broadcast("state", snapshot())
    }, 30)
  }

  /** A tool's name on its server, as a config's `tools` map names it (not loadMcp's safe name). */
  const originalName = (tool) => toolOrigin(tool)?.tool ?? tool.name

  function describeServer(slot) {
    const { entry } = slot
    const out = {
      name: slot.name,
      type: entry.type,
      enabled: entry.enabled !== false,
      status: slot.status,
      target: entry.type === "local" ? entry.command.join(" ") : entry.type === "remote" ? entry.url : "",
      toolsMap: entry.tools ?? null,
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
      skills: [],
    }
    if (slot.error !== undefined) out.error = withConfig(slot.error, shown)
    if (needsAuth(slot)) out.needsAuth = true
    if (slot.ms !== undefined) out.ms = slot.ms
    if (slot.info !== undefined) out.info = plain(slot.info)
    const source = slot.status === "connected" ? slot.source : null
    if (!source) return out
    for (const t of source.tools) {
      const name = originalName(t)
      out.tools.push({
        name,
        title: str(t.title),
        description: str(t.description) ?? "",
        inputSchema: plain(t.inputSchema) ?? {},
        annotations: plain(t.annotations),
        taskSupport: str(t.execution?.taskSupport),
        allowed: allowedBy(entry.tools, name),
      })
    }
    for (const r of source.resources) {
      out.resources.push({ uri: str(r.uri), name: str(r.name), title: str(r.title), description: str(r.description), mimeType: str(r.mimeType), size: typeof r.size === "number" ? r.size : undefined })
    }
    for (const r of source.resourceTemplates) {
      out.resourceTemplates.push({ uriTemplate: str(r.uriTemplate), name: str(r.name), title: str(r.title), description: str(r.description), mimeType: str(r.mimeType) })
    }
    for (const p of source.prompts) {
      const args = Array.isArray(p.arguments) ? p.arguments.filter((a) => a && typeof a.name === "string") : []
      out.prompts.push({
        name: str(p.name),
        title: str(p.title),
        description: str(p.description),
        arguments: args.map((a) => ({ name: a.name, title: str(a.title), description: str(a.description), required: a.required === true })),
      })
    }
    for (const s of source.skills ?? []) out.skills.push({ name: str(s.name), description: str(s.description), uri: str(s.uri) })
    return out
  }

  function snapshot() {
    return {
      file: shown,
      path: file,
      dialect: editor ? safeDialect() : null,
      editing: editor ? null : editorError,
      configError: state.configError,
      servers: [...slots.values()].map(describeServer),
      calls: [...calls.values()].map(({ id, server, tool, progress }) => ({ id, server, tool, progress })),
      elicitations: [...elicitations.values()].map(({ id, server, request }) => ({ id, server, ...request })),
    }
  }

  function safeDialect() {
    try {
      return editor.dialectOf(state.text, file).name
    } catch {
      return null
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Servers

  const keyOf = (entry) => {
    const { tools, ...rest } = entry
    return JSON.stringify(rest)
  }

  function newSlot(name, entry) {
    return { name, entry, key: keyOf(entry), status: "disabled", gen: 0, source: null, attempt: null }
  }

  /** Keeps `promise` in `set` while it runs: what stopping waits for. */
  const track = (set, promise) => {
    set.add(promise)
    promise.then(
      () => set.delete(promise),
      () => set.delete(promise),
    )
    return promise
  }

  /** The answer an elicitation gets from the page's action. */
  const answerOf = (action, content) =>
    action === "accept" ? { ok: true, data: content && typeof content === "object" && !Array.isArray(content) ? content : {} } : { ok: false, reason: action === "decline" ? "declined" : "dismissed" }

  /** Relays one elicitation to the page and waits for its answer (or the server going away). */
  function elicit(server, request) {
    const id = crypto.randomUUID()
    const shown = { kind: request.kind === "authorization" ? "authorization" : "input", message: str(request.message) ?? "" }
    if (shown.kind === "input") shown.schema = plain(request.data?.schema) ?? {}
    else {
      shown.url = str(request.url) ?? ""
      if (typeof request.elicitationId === "string") shown.elicitationId = request.elicitationId
    }
    return new Promise((resolve) => {
      elicitations.set(id, { id, server, request: shown, resolve })
      broadcast("elicit", { id, server, ...shown })
    })
  }

  function settleElicitation(id, answer) {
    const pending = elicitations.get(id)
    if (!pending) return false
    elicitations.delete(id)
    pending.resolve(answer)
    broadcast("elicit-done", { id })
    return true
  }

  /** Dismisses a server's open questions (what asked them has ended); the page drops their cards. */
  function withdrawQuestions(server) {
    for (const pending of [...elicitations.values()]) {
      if (pending.server !== server) continue
      settleElicitation(pending.id, { ok: false, reason: "dismissed" })
      withdrawn.set(pending.id, server)
      if (withdrawn.size > 256) withdrawn.delete(withdrawn.keys().next().value)
    }
  }

  /**
   * Runs `work` (a call, a read, a prompt get) counted as running on `server`. Questions can only
   * be tied to a server, not to the request that asked them: once nothing of the page runs on
   * the server any more (ended, failed, timed out or cancelled), its open questions are withdrawn.
   */
  async function running(server, work) {
    busy.set(server, (busy.get(server) ?? 0) + 1)
    try {
      return await work()
    } finally {
      const left = busy.get(server) - 1
      if (left > 0) busy.set(server, left)
      else {
        busy.delete(server)
        withdrawQuestions(server)
      }
    }
  }

  /** Ends what a server had running here: its calls aborted, its elicitations cancelled. */
  function dropServerWork(name) {
    for (const call of calls.values()) if (call.server === name) call.controller.abort(new Error(`server "${name}" was stopped`))
    withdrawQuestions(name)
  }

  /** Closes the slot's source (what runs on it ends); attempts under way are left to `gen`. */
  async function closeSlot(slot) {
    dropServerWork(slot.name)
    const source = slot.source
    slot.source = null
    if (source) await source.close().catch(() => {})
  }

  /** Stops a slot for good (removed from the config, or stopping): an attempt under way gives up. */
  function retireSlot(slot, why) {
    slot.gen++
    slot.attempt?.abort(new Error(why))
    slot.attempt = null
    return track(closing, closeSlot(slot))
  }

  /**
   * (Re)connects one server; `authorize` (a URL callback) lets an OAuth sign-in run. Resolves
   * once this attempt settled; a newer attempt, retiring the slot or stopping aborts it, and it
   * gives up whatever it got.
   */
  function connect(slot, opts) {
    return track(connecting, connectOnce(slot, opts))
  }

  async function connectOnce(slot, { authorize } = {}) {
    // Taken before anything is awaited, so that of overlapping attempts only the last one keeps
    // its source (an older one still loading is aborted, and closes what it gets).
    const gen = ++slot.gen
    slot.attempt?.abort(new Error("a newer connect of this server started"))
    const attempt = new AbortController()
    slot.attempt = attempt
    await closeSlot(slot)
    if (slot.gen !== gen || stopping) return
    if (slot.entry.enabled === false) {
      slot.attempt = null
      Object.assign(slot, { status: "disabled", error: undefined, info: undefined, ms: undefined })
      changed()
      return
    }
    Object.assign(slot, { status: "connecting", error: undefined, info: undefined, ms: undefined })
    changed()
    const { tools, ...entry } = slot.entry // every tool, so the allowlist editor sees them all
    const opts = {
      waitFor: (request) => elicit(slot.name, request),
      onToolsChanged: changed,
      onResourcesChanged: changed,
      onPromptsChanged: changed,
    }
    if (values.timeout !== undefined) opts.deadline = values.timeout
    if (authorize) opts.authorize = authorize
    opts.signal = attempt.signal
    const started = performance.now()
    let source = null
    let error
    try {
      source = await tn.loadMcp({ mcpServers: { [slot.name]: entry } }, opts)
    } catch (err) {
      error = messageOf(err)
    }
    if (slot.attempt === attempt) slot.attempt = null
    if (slot.gen !== gen || stopping || slots.get(slot.name) !== slot) {
      await source?.close().catch(() => {})
      return
    }
    slot.ms = Math.round(performance.now() - started)
    slot.source = source
    slot.status = source ? (source.status[slot.name] ?? "failed") : "failed"
    slot.error = source ? source.errors[slot.name] : error
    if (slot.status === "failed" && slot.error === undefined) slot.error = "unknown failure"
    slot.info = source?.info?.[slot.name]
    if (slot.status !== "connected" && source) {
      slot.source = null
      await source.close().catch(() => {})
    }
    changed()
  }

  /** Applies the config as it now is: servers added, removed, changed (restarted) or only re-filtered. */
  function reconcile(servers) {
    const next = new Map()
    for (const [name, entry] of Object.entries(servers)) {
      const slot = slots.get(name)
      if (!slot) {
        const fresh = newSlot(name, entry)
        next.set(name, fresh)
        connect(fresh)
      } else if (slot.key !== keyOf(entry)) {
        slot.entry = entry
        slot.key = keyOf(entry)
        next.set(name, slot)
        connect(slot)
      } else {
        slot.entry = entry // only its `tools` map may differ: no restart
        next.set(name, slot)
      }
    }
    for (const [name, slot] of slots) if (!next.has(name)) retireSlot(slot, `server "${name}" was removed from ${shown}`)
    slots = next
    changed()
  }

  // The config file, watched through its folder (editors replace files by renaming).
  let rereading = false
  let again = false
  async function reread() {
    if (rereading) {
      again = true
      return
    }
    rereading = true
    try {
      do {
        again = false
        let read
        try {
          read = readConfigState(file, at)
        } catch (err) {
          state.configError = `cannot read ${shown}: ${messageOf(err)}`
          changed()
          continue
        }
        if (read.error !== undefined) {
          state.configError = `${shown} is not a valid config now (${read.error}); showing the servers as they were`
          state.text = read.text
          changed()
          continue
        }
        const was = state.configError
        state.configError = null
        if (read.text === state.text && was === null) continue
        state.text = read.text
        reconcile(read.servers)
        broadcast("notice", { text: `${shown} changed: servers re-read` })
      } while (again && !stopping)
    } finally {
      rereading = false
    }
  }
  let watchTimer = null
  const watchers = []
  /**
   * Watches the config file through its folder (editors replace files by renaming), and, when
   * it is a symlink, the file it points to through that file's folder too.
   */
  function watchConfig() {
    const names = new Map() // folder → the names in it that are the config
    const add = (p) => {
      const dir = path.dirname(p)
      if (!names.has(dir)) names.set(dir, new Set())
      names.get(dir).add(path.basename(p))
    }
    add(file)
    try {
      add(fs.realpathSync(file))
    } catch {}
    for (const [dir, watched] of names) {
      try {
        const watcher = fs.watch(dir, (_event, name) => {
          if (name !== null && !watched.has(String(name))) return
          clearTimeout(watchTimer)
          watchTimer = setTimeout(() => reread(), 120)
        })
        watcher.on("error", () => {})
        watchers.push(watcher)
      } catch (err) {
        process.stderr.write(`toolnexus ui: cannot watch ${dir} for ${shown} (${messageOf(err)}); changes show after a reload\n`)
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Requests

  class HttpError extends Error {
    constructor(status, message) {
      super(message)
      this.status = status
    }
  }

  const connectedSource = (name) => {
    const slot = typeof name === "string" ? slots.get(name) : undefined
    if (!slot) throw new HttpError(404, `no server named "${name}" in ${shown}`)
    if (slot.status !== "connected" || !slot.source) throw new HttpError(409, `server "${name}" is not connected (${slot.status})`)
    return slot
  }

  /** A tool call from the page: waits for the result; progress goes out as `progress` events. */
  async function callTool({ id, server, tool, args }) {
    if (typeof id !== "string" || !/^[\w-]{1,64}$/.test(id)) throw new HttpError(400, "a call needs an id (letters, digits, - and _)")
    if (calls.has(id)) throw new HttpError(409, `a call with id "${id}" is already running`)
    if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) throw new HttpError(400, "the arguments must be a JSON object")
    const slot = connectedSource(server)
    const found = slot.source.tools.find((t) => originalName(t) === tool)
    if (!found) throw new HttpError(404, `server "${server}" has no tool "${tool}"`)
    const controller = new AbortController()
    const call = { id, server, tool, controller, started: performance.now(), progress: null }
    calls.set(id, call)
    changed()
    return running(server, async () => {
      try {
        return await runCall(call, found, args, controller)
      } finally {
        calls.delete(id)
        broadcast("call-done", { id })
        changed()
      }
    })
  }

  /** Runs one call of the page (registered in `calls`) and shapes its result for the page. */
  async function runCall(call, found, args, controller) {
    const result = await found.execute(args ?? {}, {
      signal: controller.signal,
      onProgress: (p) => {
        call.progress = { progress: p.progress, total: p.total, message: p.message }
        broadcast("progress", { id: call.id, ...call.progress })
      },
    })
    const out = { output: String(result.output ?? ""), isError: result.isError === true, ms: Math.round(performance.now() - call.started) }
    if (Array.isArray(result.content)) out.content = plain(result.content)
    if (result.structuredContent !== undefined) out.structuredContent = plain(result.structuredContent)
    if (result._meta !== undefined) out._meta = plain(result._meta)
    if (controller.signal.aborted) out.cancelled = messageOf(controller.signal.reason)
    return out
  }

  async function readResource({ server, uri, uriTemplate, vars }) {
    const slot = connectedSource(server)
    if (typeof uriTemplate === "string") {
      const template = slot.source.resourceTemplates.find((t) => t.uriTemplate === uriTemplate)
      if (!template) throw new HttpError(404, `server "${server}" has no template "${uriTemplate}"`)
      const given = vars && typeof vars === "object" && !Array.isArray(vars) ? Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, String(v)])) : {}
      const result = plain(await running(server, () => template.read(given)))
      // The URI read is the one the contents name (the template expanded by the library).
      const uri = Array.isArray(result?.contents) && typeof result.contents[0]?.uri === "string" ? result.contents[0].uri : undefined
      return { uri, result }
    }
    if (typeof uri !== "string" || uri === "") throw new HttpError(400, "a read needs a uri")
    return { uri, result: plain(await running(server, () => slot.source.readResource(server, uri))) }
  }

  async function getPrompt({ server, name, args }) {
    const slot = connectedSource(server)
    if (typeof name !== "string") throw new HttpError(400, "a prompt needs a name")
    const strings = {}
    for (const [key, value] of Object.entries(args && typeof args === "object" ? args : {})) {
      if (value === undefined || value === null || value === "") continue
      strings[key] = typeof value === "string" ? value : JSON.stringify(value)
    }
    return { result: plain(await running(server, () => slot.source.getPrompt(server, name, strings))) }
  }

  /** The text an edit would write, its diff and notes; `base` is the text it was made from. */
  function planEdit({ server, edit }) {
    if (!editor) throw new HttpError(501, editorError)
    if (typeof server !== "string" || !slots.has(server)) throw new HttpError(404, `no server named "${server}" in ${shown}`)
    let change
    if (edit && "tools" in edit) {
      const tools = edit.tools
      if (tools !== null && (typeof tools !== "object" || Array.isArray(tools) || Object.values(tools).some((v) => typeof v !== "boolean"))) {
        throw new HttpError(400, "tools must be null or an object of tool names to true or false")
      }
      change = { tools }
    } else if (edit && typeof edit.enabled === "boolean") {
      change = { enabled: edit.enabled }
    } else {
      throw new HttpError(400, "an edit is { tools: {...} | null } or { enabled: true | false }")
    }
    const before = fs.readFileSync(file, "utf8")
    let edited
    try {
      edited = editor.editConfigText(before, file, server, change, at ? { at } : {})
    } catch (err) {
      throw new HttpError(422, messageOf(err))
    }
    return { base: before, text: edited.text, notes: edited.notes ?? [], unchanged: edited.text === before }
  }

  /**
   * What the page shows before a save: the diff and notes, and `baseHash`, the SHA-256 of the
   * text the diff was made from, which the save sends back (not the text: a config may be large).
   */
  function previewEdit(body) {
    const plan = planEdit(body)
    return { baseHash: sha256(plan.base), notes: plan.notes, diff: lineDiff(plan.base, plan.text), unchanged: plan.unchanged }
  }

  function saveEdit(body) {
    const plan = planEdit(body)
    if (typeof body.baseHash !== "string" || body.baseHash !== sha256(plan.base)) {
      throw new HttpError(409, `${shown} changed on disk since this change was shown; nothing was saved. Look at the new diff and save again.`)
    }
    if (!plan.unchanged) editor.writeConfigFile(file, plan.text)
    // Applied now (the watcher would too, a little later).
    reread()
    return { saved: !plan.unchanged, notes: plan.notes }
  }

  /** Signs a server in by OAuth (the engine's loopback flow); the URL goes to the page. */
  async function signIn({ server }) {
    const slot = slots.get(server)
    if (!slot) throw new HttpError(404, `no server named "${server}" in ${shown}`)
    if (slot.entry.type !== "remote") throw new HttpError(400, `server "${server}" is not a remote server; it needs no OAuth`)
    // A fresh authorisation, as `toolnexus auth` does: what was stored before goes.
    tn.forgetCredentials(slot.entry.url)
    await connect(slot, {
      // (The engine wants a promise or a JSON value back.)
      authorize: async (url) => {
        broadcast("auth-url", { server, url: String(url) })
      },
    })
    return { status: slot.status, error: slot.error === undefined ? undefined : withConfig(slot.error, shown) }
  }

  const API = {
    "POST /api/call": callTool,
    "POST /api/cancel": ({ id }) => {
      const call = calls.get(id)
      if (!call) throw new HttpError(404, `no call "${id}" is running`)
      call.controller.abort(new Error("cancelled from the page"))
      return { cancelled: id }
    },
    "POST /api/elicit": ({ id, action, content }) => {
      if (!["accept", "decline", "cancel"].includes(action)) throw new HttpError(400, "action must be accept, decline or cancel")
      if (settleElicitation(id, answerOf(action, content))) return { answered: id }
      if (withdrawn.has(id)) throw new HttpError(404, `that question was withdrawn: nothing that "${withdrawn.get(id)}" was asked to do is running any more`)
      throw new HttpError(404, "no such question is open (it was already answered)")
    },
    "POST /api/read": readResource,
    "POST /api/prompt": getPrompt,
    "POST /api/edit/preview": previewEdit,
    "POST /api/edit/save": saveEdit,
    "POST /api/auth": signIn,
    "POST /api/reconnect": async ({ server }) => {
      const slot = slots.get(server)
      if (!slot) throw new HttpError(404, `no server named "${server}" in ${shown}`)
      await connect(slot)
      return { status: slot.status }
    },
    "GET /api/state": () => snapshot(),
  }

  // Digests of equal length whatever was given (timingSafeEqual throws on buffers of two lengths,
  // and a header may hold any bytes).
  const tokenDigest = crypto.createHash("sha256").update(token).digest()
  const sameToken = (given) => typeof given === "string" && crypto.timingSafeEqual(crypto.createHash("sha256").update(given).digest(), tokenDigest)

  function refuse(res, status, message) {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
    res.end(`${message}\n`)
  }

  /**
   * The request's JSON body. One larger than MAX_BODY is read to its end and thrown away, then
   * refused with 413 (answering while the client still sends would reset the connection before
   * it reads the answer); past MAX_DRAIN the connection is cut.
   */
  function readBody(req) {
    return new Promise((resolve, reject) => {
      const chunks = []
      let size = 0
      const tooLarge = () => new HttpError(413, `the request body is larger than ${MAX_BODY} bytes`)
      req.on("data", (chunk) => {
        size += chunk.length
        if (size <= MAX_BODY) chunks.push(chunk)
        else if (size > MAX_DRAIN) {
          reject(tooLarge())
          req.destroy()
        } else chunks.length = 0
      })
      req.on("end", () => {
        if (size > MAX_BODY) return reject(tooLarge())
        const text = Buffer.concat(chunks).toString("utf8")
        if (text === "") return resolve({})
        try {
          resolve(JSON.parse(text))
        } catch {
          reject(new HttpError(400, "the request body is not JSON"))
        }
      })
      req.on("error", reject)
    })
  }

  let origins = []
  let hosts = []
  async function handle(req, res) {
    // DNS rebinding: only this listener's own names.
    if (!hosts.includes(String(req.headers.host ?? "").toLowerCase())) return refuse(res, 403, "toolnexus ui: wrong Host header (only 127.0.0.1 and localhost are served)")
    const origin = req.headers.origin
    if (origin !== undefined && !origins.includes(origin)) return refuse(res, 403, "toolnexus ui: requests from another origin are refused")
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`)
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204, { "cache-control": "max-age=86400" })
      return res.end()
    }
    const base = { "cache-control": "no-store", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }

    // The page's shell: no secret and no server data in it, so no token is needed (the token is
    // in the URL's fragment, which the page reads; the server never sees it there).
    if (req.method === "GET" && url.pathname === "/") {
      res.writeHead(200, { ...base, "content-type": "text/html; charset=utf-8", "content-security-policy": CSP })
      return res.end(fs.readFileSync(path.join(UI_DIR, "index.html")))
    }
    if (req.method === "GET" && Object.hasOwn(STATIC, url.pathname)) {
      const [name, type] = STATIC[url.pathname]
      res.writeHead(200, { ...base, "content-type": type, "content-security-policy": CSP })
      return res.end(fs.readFileSync(path.join(UI_DIR, name)))
    }
    // Everything else, the event stream included, needs the token in the header (a page of
    // another origin cannot send it; nothing carries it by itself, as a cookie would).
    if (!sameToken(req.headers["x-toolnexus-token"])) {
      return refuse(res, 401, "toolnexus ui: missing or wrong token; open the URL `toolnexus ui` printed (with its #token=…)")
    }
    if (req.method === "GET" && url.pathname === "/api/events") {
      res.writeHead(200, { ...base, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" })
      clients.add(res)
      req.on("close", () => clients.delete(res))
      send(res, "state", snapshot())
      return
    }
    const route = Object.hasOwn(API, `${req.method} ${url.pathname}`) ? API[`${req.method} ${url.pathname}`] : undefined
    if (!route) return refuse(res, 404, `toolnexus ui: nothing at ${req.method} ${url.pathname}`)
    try {
      const body = req.method === "GET" ? {} : await readBody(req)
      const out = await route(body && typeof body === "object" && !Array.isArray(body) ? body : {})
      res.writeHead(200, { ...base, "content-type": "application/json; charset=utf-8" })
      res.end(JSON.stringify(out ?? {}))
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 502
      const data = err && typeof err === "object" && "code" in err && typeof err.code === "number" ? { code: err.code } : {}
      if (res.headersSent) return res.end()
      // After a body too large, the connection is not reused.
      res.writeHead(status, { ...base, "content-type": "application/json; charset=utf-8", ...(status === 413 ? { connection: "close" } : {}) })
      res.end(JSON.stringify({ error: messageOf(err), ...data }))
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) refuse(res, 500, `toolnexus ui: ${messageOf(err)}`)
      else res.end()
    })
  })
  try {
    await new Promise((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", resolve)
    })
  } catch (err) {
    process.stderr.write(`toolnexus ui: cannot listen on 127.0.0.1:${port}: ${messageOf(err)}\n`)
    return 1
  }
  const bound = server.address().port
  hosts = [`127.0.0.1:${bound}`, `localhost:${bound}`]
  origins = hosts.map((h) => `http://${h}`)
  // Heartbeats keep idle event streams from being closed by anything in between.
  const heartbeat = setInterval(() => {
    for (const res of clients) res.write(": ping\n\n")
  }, 15_000)
  heartbeat.unref()

  // The token goes in the fragment: browsers send no fragment to servers, nor in a Referer.
  const pageUrl = `http://127.0.0.1:${bound}/#token=${token}`
  process.stdout.write(`toolnexus ui: ${shown}\n${pageUrl}\nStop with Ctrl-C.\n`)
  if (values.open) openBrowser(pageUrl)

  // Every server starts now, concurrently; the page shows each as it settles.
  for (const [name, entry] of Object.entries(first.servers)) slots.set(name, newSlot(name, entry))
  for (const slot of slots.values()) connect(slot)
  // Watched once the slots are there (a change seen earlier would have been applied to none),
  // then read again: what changed before the watching started is applied now.
  watchConfig()
  reread()

  await new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    signal?.addEventListener("abort", resolve, { once: true })
  })
  stopping = true
  process.stderr.write(`toolnexus ui: ${messageOf(signal.reason)}, stopping\n`)
  clearInterval(heartbeat)
  clearTimeout(watchTimer)
  clearTimeout(snapshotTimer)
  for (const watcher of watchers) watcher.close()
  for (const res of clients) res.end()
  clients.clear()
  server.close()
  server.closeAllConnections()
  // Every server is closed; one still connecting is aborted, and waited for (within STOP_BOUND)
  // so that it is closed too rather than left to the engine's exit-time kill.
  for (const slot of slots.values()) retireSlot(slot, "toolnexus ui is stopping")
  let stopTimer
  await Promise.race([
    Promise.allSettled([...connecting]),
    new Promise((resolve) => {
      stopTimer = setTimeout(resolve, STOP_BOUND)
    }),
  ])
  clearTimeout(stopTimer)
  await Promise.allSettled([...closing])
  return 0
}
