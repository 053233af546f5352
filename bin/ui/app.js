// The page of `toolnexus ui`: the servers of one config (bin/cli/ui.mjs serves it and its API).
// A snapshot of every server arrives over a Server-Sent Events stream (/api/events, read with
// fetch so that it carries the token header) whenever something changes; the sidebar and the
// selected server's header and lists are redrawn from it, while an open panel (a form being
// filled in) is kept as long as its item is listed. Calls the page started live outside their
// panel: a panel shown again picks its running call up, and the sidebar lists every running
// call with a Cancel. Calls, reads, prompts, edits and sign-ins are JSON POSTs carrying the
// page's token header.
//
// The token: `toolnexus ui` prints the page's URL with it in the fragment (#token=…), which no
// request carries. It is kept in sessionStorage (this origin, so this port, and this tab only)
// and taken out of the address bar; nothing is kept in a cookie.
import { h, schemaForm } from "./schema-form.js"
import { contentPart, errorBox, json, link, promptResult, readResult, toolResult } from "./render.js"

const TOKEN_KEY = "toolnexus-ui-token"
/** The token from the URL's fragment (then kept for reloads of this tab), or the one kept before. */
function takeToken() {
  const match = /^#(?:.*&)?token=([^&]*)/.exec(location.hash)
  let given = null
  try {
    given = match ? decodeURIComponent(match[1]) : null
  } catch {
    given = match[1] // not %-encoded after all
  }
  let kept = null
  try {
    if (given !== null) sessionStorage.setItem(TOKEN_KEY, given)
    kept = sessionStorage.getItem(TOKEN_KEY)
  } catch {
    // No storage (a privacy setting): the token lives as long as this page.
  }
  if (match) history.replaceState(null, "", location.pathname + location.search)
  return kept ?? given ?? ""
}
const token = takeToken()
const $ = (id) => document.getElementById(id)
/** Replaces `el`'s children, leaving out null, undefined and false (replaceChildren would print them). */
function put(el, ...children) {
  el?.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false))
}

/** The latest snapshot from the server. */
let state = null
/** What is shown: the server, its tab, the item of the tab (a tool's name, a resource's uri …). */
const view = { server: null, tab: "tools", item: null }
/** The open panel: { key, el, onState? } (key: server/tab/item it shows). */
let panel = null
/**
 * Calls this page started, by id, until they end: { id, server, tool, progress, view? }; `view`
 * is the tool panel showing the call (the latest one drawn for its tool), which gets its
 * progress and its result.
 */
const myCalls = new Map()
/** Results of calls that ended while their panel was not shown, by server/tool: shown when it is. */
const unseen = new Map()
/** Cancels under way (the test hook `cancels()` waits for them). */
const cancelling = new Set()
/** Open elicitation cards, by id. */
const questions = new Map()
/** Each server's sign-in as the page shows it: { phase: "starting" | "url" | "done" | "failed", url?, text? }. */
const signIns = new Map()

/** What is wrong with the page's token, once the server refused it (it stays said). */
let tokenProblem = null

/** Says that the page has no (valid) token, for good: nothing works without it. */
function noToken() {
  tokenProblem = token
    ? "This page's token is not the one of the running toolnexus ui (was it restarted?): open the URL it printed, with its #token=…"
    : "This page was opened without its token: open the URL `toolnexus ui` printed, with its #token=…"
  const banner = $("banner")
  banner.hidden = false
  banner.className = "banner error"
  banner.textContent = tokenProblem
  const live = $("live")
  live.textContent = "no token"
  live.className = "live off"
}

/** An error of the page's API: its message in words and the HTTP status. */
class ApiError extends Error {
  constructor(message, status) {
    super(message)
    this.status = status
  }
}

/** POSTs `body` to `path`; resolves with the JSON answer, rejects with an ApiError in words. */
async function api(path, body = {}) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-toolnexus-token": token },
    body: JSON.stringify(body),
  })
  if (res.status === 401) noToken()
  let data
  try {
    data = await res.json()
  } catch {
    data = { error: `the page's server answered ${res.status}` }
  }
  if (!res.ok) throw new ApiError(data.error ?? `the page's server answered ${res.status}`, res.status)
  return data
}

// ---------------------------------------------------------------------------------------------
// Live updates

/** What each event of the stream does. */
const HANDLERS = {
  state(snapshot) {
    state = snapshot
    render()
  },
  progress(p) {
    const call = myCalls.get(p.id)
    if (call) {
      call.progress = p
      call.view?.progress(p)
    }
    const words = document.querySelector(`#running [data-call="${CSS.escape(String(p.id))}"] .call-progress`)
    if (words) words.textContent = progressWords(p)
  },
  elicit: (q) => showQuestion(q),
  "elicit-done": ({ id }) => dropQuestion(id),
  "auth-url"({ server, url }) {
    if (signIns.get(server)?.phase !== "starting" || typeof url !== "string") return
    signIns.set(server, { phase: "url", url })
    render()
  },
  notice: ({ text }) => notice(text),
}

/** One event block of the stream (`event: …` and `data: …` lines); comments are heartbeats. */
function dispatch(block) {
  let name = "message"
  const data = []
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim()
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""))
  }
  if (data.length === 0 || !Object.hasOwn(HANDLERS, name)) return
  let value
  try {
    value = JSON.parse(data.join("\n"))
  } catch {
    return
  }
  try {
    HANDLERS[name](value)
  } catch (err) {
    // A bug of the page, not of the stream: reported as the page's error, and the stream goes on.
    setTimeout(() => {
      throw err
    })
  }
}

/**
 * Follows /api/events for as long as the page is open: read with fetch (an EventSource cannot
 * send the token header), reconnected a second after it drops; a 401 ends it (noToken).
 */
async function connectEvents() {
  const live = $("live")
  if (!token) return noToken()
  for (;;) {
    try {
      const res = await fetch("/api/events", { headers: { "x-toolnexus-token": token }, cache: "no-store" })
      if (res.status === 401) return noToken()
      if (!res.ok || !res.body) throw new Error(`the page's server answered ${res.status}`)
      live.textContent = "live"
      live.className = "live on"
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
      let buffer = ""
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += value.replaceAll("\r\n", "\n")
        let end
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          dispatch(buffer.slice(0, end))
          buffer = buffer.slice(end + 2)
        }
      }
    } catch {
      // Dropped (the server stopped, the network): tried again below.
    }
    live.textContent = "reconnecting…"
    live.className = "live off"
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

let noticeTimer
function notice(text) {
  const banner = $("banner")
  if (state?.configError || tokenProblem) return
  banner.hidden = false
  banner.className = "banner info"
  banner.textContent = text
  clearTimeout(noticeTimer)
  noticeTimer = setTimeout(() => {
    if (!state?.configError && !tokenProblem) banner.hidden = true
  }, 4000)
}

// ---------------------------------------------------------------------------------------------
// Drawing

const STATUS_WORDS = { connected: "connected", connecting: "connecting…", failed: "failed", disabled: "disabled" }

function render() {
  if (!state) return
  $("config-file").textContent = state.file
  $("dialect").textContent = state.dialect ? `dialect: ${state.dialect}` : ""
  $("dialect").hidden = !state.dialect
  const banner = $("banner")
  if (tokenProblem) banner.textContent = tokenProblem
  else if (state.configError) {
    banner.hidden = false
    banner.className = "banner error"
    banner.textContent = state.configError
  } else if (banner.classList.contains("error")) banner.hidden = true

  const servers = state.servers
  if (!servers.some((s) => s.name === view.server)) {
    view.server = servers[0]?.name ?? null
    view.item = null
  }
  const nav = $("servers")
  put(nav, 
    h("div", { class: "nav-title" }, `${servers.length} server${servers.length === 1 ? "" : "s"}`),
    ...servers.map((s) =>
      h(
        "button",
        {
          type: "button",
          class: `server-item ${s.name === view.server ? "selected" : ""}`,
          "data-server": s.name,
          onclick: () => select(s.name),
        },
        h("span", { class: `dot ${s.status}` }),
        h("span", { class: "server-name" }, s.name),
        h("span", { class: `status ${s.status}` }, s.needsAuth ? "needs sign-in" : STATUS_WORDS[s.status] ?? s.status),
        s.status === "connected" ? h("span", { class: "counts dim" }, `${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}`) : null,
      ),
    ),
    runningList(state.calls),
  )
  const server = servers.find((s) => s.name === view.server)
  const main = $("main")
  if (!server) {
    put(main, h("p", { class: "dim" }, "This config has no servers."))
    panel = null
    return
  }
  let body = main.querySelector(".server-body")
  if (!body || body.dataset.server !== server.name) {
    body = h("div", { class: "server-body", "data-server": server.name }, h("section", { class: "server-head" }), h("div", { class: "tabs", role: "tablist" }), h("div", { class: "work" }, h("div", { class: "items" }), h("div", { class: "panel", id: "panel" })))
    put(main, body)
    panel = null
  }
  drawHead(body.querySelector(".server-head"), server)
  drawTabs(body.querySelector(".tabs"), server)
  drawItems(body.querySelector(".items"), server)
  drawPanel(body.querySelector(".panel"), server)
  // Questions of servers that asked before this page was opened.
  for (const q of state.elicitations) if (!questions.has(q.id)) showQuestion(q)
  for (const id of [...questions.keys()]) if (!state.elicitations.some((q) => q.id === id)) dropQuestion(id)
}

/** The sidebar's running calls (every call the server runs for a page), each with a Cancel. */
function runningList(calls) {
  if (calls.length === 0) return null
  return h(
    "div",
    { class: "running", id: "running" },
    h("div", { class: "running-title" }, `${calls.length} call${calls.length === 1 ? "" : "s"} running`),
    h(
      "ul",
      {},
      calls.map((c) =>
        h(
          "li",
          { class: "running-call", "data-call": c.id },
          h("span", { class: "call-name", title: `${c.server} · ${c.tool}` }, `${c.server} · ${c.tool}`),
          h("span", { class: "call-progress dim" }, c.progress ? progressWords(c.progress) : ""),
          h("button", { type: "button", class: "small", onclick: () => cancelCall(c.id) }, "Cancel"),
        ),
      ),
    ),
  )
}

/** Progress in words: "3 of 10: message". */
const progressWords = (p) => `${p.progress}${typeof p.total === "number" ? ` of ${p.total}` : ""}${p.message ? `: ${p.message}` : ""}`

/**
 * Cancels call `id`. A 404 is not an error to show: the call has ended meanwhile (its own answer
 * says how, and may already be shown), or it was never this page's to follow.
 */
function cancelCall(id) {
  const task = api("/api/cancel", { id }).catch((err) => {
    if (err.status === 404) return
    const view = myCalls.get(id)?.view
    if (view?.el.isConnected) view.problem(err.message)
    else notice(err.message)
  })
  cancelling.add(task)
  task.finally(() => cancelling.delete(task))
  return task
}

function select(name) {
  view.server = name
  view.item = null
  render()
}

function drawHead(el, s) {
  const info = s.info
  const facts = [
    h("span", { class: `status big ${s.status}`, "data-testid": "status" }, s.needsAuth ? "needs sign-in" : STATUS_WORDS[s.status] ?? s.status),
    typeof s.ms === "number" ? h("span", { class: "dim", "data-testid": "latency" }, `${s.ms} ms to connect`) : null,
    h("span", { class: "tag" }, s.type),
    h("span", { class: "mono dim target" }, s.target),
  ]
  const buttons = [
    h("button", { type: "button", onclick: () => reconnect(s.name), disabled: s.status === "connecting" || !s.enabled }, "Reconnect"),
    h("button", { type: "button", onclick: () => editPreview(s.name, { enabled: !s.enabled }, el.parentElement.querySelector(".panel")) }, s.enabled ? "Disable" : "Enable"),
    s.needsAuth ? h("button", { type: "button", class: "primary", onclick: () => signIn(s.name) }, "Sign in") : null,
  ]
  put(el, 
    h("div", { class: "head-line" }, h("h2", {}, s.name), ...facts),
    s.error ? h("div", { class: "reason", "data-testid": "reason" }, s.error) : null,
    info
      ? h(
          "div",
          { class: "info", "data-testid": "info" },
          h("span", {}, `${info.title ?? info.name ?? ""} ${info.version ?? ""}`.trim() || "(no name)"),
          h("span", { class: "dim" }, ` · protocol ${info.protocolVersion ?? "?"}`),
          typeof info.instructions === "string" && info.instructions !== "" ? h("details", {}, h("summary", {}, "Instructions"), h("pre", { class: "text" }, info.instructions)) : null,
        )
      : null,
    h("div", { class: "buttons" }, buttons),
    signInBox(s.name),
  )
}

/** Where a sign-in started from the page stands (kept across redraws). */
function signInBox(server) {
  const at = signIns.get(server)
  const box = h("div", { class: "signin", id: "signin" })
  if (!at) return box
  if (at.phase === "starting") put(box, h("p", {}, `Starting the sign-in of ${server}…`))
  else if (at.phase === "url") {
    const a = link(at.url, "sign in")
    a.setAttribute("data-testid", "signin-link")
    put(box, h("p", {}, "Open the sign-in page to authorise ", h("strong", {}, server), ": ", a, h("span", { class: "dim" }, " (this page follows once you are done)")))
  } else put(box, h("p", { class: at.phase === "done" ? "ok" : "reason" }, at.text))
  return box
}

const TABS = [
  ["tools", "Tools", (s) => s.tools.length],
  ["resources", "Resources", (s) => s.resources.length],
  ["templates", "Templates", (s) => s.resourceTemplates.length],
  ["prompts", "Prompts", (s) => s.prompts.length],
  ["skills", "Skills", (s) => s.skills.length],
  ["allowlist", "Allowlist", null],
]

function drawTabs(el, s) {
  put(el, 
    ...TABS.map(([key, label, count]) =>
      h(
        "button",
        {
          type: "button",
          role: "tab",
          class: `tab ${view.tab === key ? "selected" : ""}`,
          "aria-selected": view.tab === key ? "true" : "false",
          "data-tab": key,
          onclick: () => {
            view.tab = key
            view.item = null
            render()
          },
        },
        count ? `${label} (${count(s)})` : label,
      ),
    ),
  )
}

/** The items of the current tab: [{ key, label, sub }]. */
function itemsOf(s) {
  switch (view.tab) {
    case "tools":
      return s.tools.map((t) => ({ key: t.name, label: t.name, sub: t.title ?? t.description, off: !t.allowed }))
    case "resources":
      return s.resources.map((r) => ({ key: r.uri, label: r.name ?? r.uri, sub: r.uri }))
    case "templates":
      return s.resourceTemplates.map((r) => ({ key: r.uriTemplate, label: r.name ?? r.uriTemplate, sub: r.uriTemplate }))
    case "prompts":
      return s.prompts.map((p) => ({ key: p.name, label: p.name, sub: p.title ?? p.description }))
    case "skills":
      return s.skills.map((k) => ({ key: k.uri, label: k.name ?? k.uri, sub: k.description }))
    default:
      return []
  }
}

function drawItems(el, s) {
  if (view.tab === "allowlist") {
    put(el)
    el.hidden = true
    return
  }
  el.hidden = false
  if (s.status !== "connected") {
    put(el, h("p", { class: "dim" }, s.status === "connecting" ? "Connecting…" : `Nothing listed: the server is ${s.status}.`))
    return
  }
  const items = itemsOf(s)
  put(el, 
    items.length === 0 ? h("p", { class: "dim" }, "None listed.") : null,
    ...items.map((item) =>
      h(
        "button",
        {
          type: "button",
          class: `item ${view.item === item.key ? "selected" : ""} ${item.off ? "off" : ""}`,
          "data-item": item.key,
          title: item.off ? "not in the config's tools allowlist" : undefined,
          onclick: () => {
            view.item = item.key
            render()
          },
        },
        h("span", { class: "item-name" }, item.label),
        item.sub ? h("span", { class: "item-sub" }, item.sub) : null,
      ),
    ),
  )
}

/** The panel for the selected item; kept while it shows the same thing. */
function drawPanel(el, s) {
  const key = JSON.stringify([s.name, view.tab, view.item])
  if (panel && panel.key === key && el.contains(panel.el)) {
    panel.onState?.(s)
    return
  }
  let content = null
  if (view.tab === "allowlist") content = allowlistPanel(s)
  else if (s.status === "connected" && view.item !== null) {
    if (view.tab === "tools") content = toolPanel(s, s.tools.find((t) => t.name === view.item))
    else if (view.tab === "resources") content = resourcePanel(s, s.resources.find((r) => r.uri === view.item))
    else if (view.tab === "templates") content = templatePanel(s, s.resourceTemplates.find((r) => r.uriTemplate === view.item))
    else if (view.tab === "prompts") content = promptPanel(s, s.prompts.find((p) => p.name === view.item))
    else if (view.tab === "skills") content = skillPanel(s, s.skills.find((k) => k.uri === view.item))
  }
  if (!content) {
    content = { el: h("p", { class: "dim" }, view.item === null ? "Choose an item on the left." : "That item is no longer listed.") }
  }
  panel = { key, ...content }
  put(el, panel.el)
}

// ---------------------------------------------------------------------------------------------
// Panels

let forms = 0
/** An element id made from untrusted text: unique, and only of letters, digits, - and _. */
const safeId = (prefix, text) => `${prefix}-${++forms}-${String(text).replace(/[^\w-]/g, "_").slice(0, 60)}`

/** A form with a Raw JSON switch: `{ el, value() → { value, errors } }`. */
function argumentsForm(schema, name) {
  const id = safeId("args", name)
  const form = schemaForm(schema, { id })
  const raw = h("textarea", { class: "raw mono", rows: 8, "aria-label": "Arguments as JSON", hidden: true })
  const problem = h("div", { class: "problems", role: "alert" })
  const toggle = h("input", { type: "checkbox", id: `${id}-raw` })
  toggle.addEventListener("change", () => {
    put(problem)
    if (toggle.checked) {
      const { value } = form.value()
      raw.value = json(value ?? {})
      raw.hidden = false
      form.element.hidden = true
    } else {
      let parsed
      try {
        parsed = raw.value.trim() === "" ? {} : JSON.parse(raw.value)
      } catch (err) {
        put(problem, h("p", {}, `The JSON does not parse (${err.message}); fix it or keep editing it raw.`))
        toggle.checked = true
        return
      }
      form.set(parsed)
      raw.hidden = true
      form.element.hidden = false
    }
  })
  return {
    el: h("div", { class: "arguments" }, h("label", { class: "raw-toggle", for: `${id}-raw` }, toggle, " Raw JSON"), form.element, raw, problem),
    value() {
      put(problem)
      let result
      if (toggle.checked) {
        try {
          result = { value: raw.value.trim() === "" ? {} : JSON.parse(raw.value), errors: [] }
        } catch (err) {
          result = { value: undefined, errors: [`the arguments are not valid JSON (${err.message})`] }
        }
      } else result = form.value()
      if (result.errors.length > 0) put(problem, h("p", {}, "Not sent:"), h("ul", {}, result.errors.map((e) => h("li", {}, e))))
      return result
    },
  }
}

function titleBlock(name, title, description) {
  return [h("h3", {}, name), title && title !== name ? h("div", { class: "subtitle" }, title) : null, description ? h("p", { class: "description" }, description) : null]
}

/**
 * Starts a call of `tool` of `server`. It lives in `myCalls` until it ends, whatever panel shows
 * it; its result goes to the panel showing it then, or waits in `unseen` for the next one.
 */
function startCall(server, tool, args) {
  const call = { id: crypto.randomUUID(), server, tool, progress: null, view: null }
  myCalls.set(call.id, call)
  api("/api/call", { id: call.id, server, tool, args })
    .then(
      (result) => ({ result }),
      (err) => ({ error: err.message }),
    )
    .then((ended) => {
      myCalls.delete(call.id)
      if (call.view?.el.isConnected) call.view.finish(ended)
      else unseen.set(JSON.stringify([server, tool]), ended)
    })
  return call
}

function toolPanel(s, tool) {
  if (!tool) return null
  const args = argumentsForm(tool.inputSchema, `tool-${tool.name}`)
  const out = h("div", { class: "output" })
  const progress = h("div", { class: "progress", hidden: true })
  /** The call this panel shows while it runs. */
  let running = null
  const callButton = h("button", { type: "submit", class: "primary" }, "Call")
  const cancelButton = h("button", { type: "button", hidden: true, onclick: () => running && cancelCall(running.id) }, "Cancel")
  const form = h("form", { class: "try", novalidate: true }, args.el, h("div", { class: "buttons" }, callButton, cancelButton), progress)
  const bar = h("progress", { max: 1 })
  const words = h("span", { class: "dim" }, "running…")
  const facts = []
  if (!tool.allowed) facts.push(h("span", { class: "tag warn" }, "not in the config's allowlist"))
  if (tool.taskSupport) facts.push(h("span", { class: "tag" }, `task: ${tool.taskSupport}`))
  for (const [k, v] of Object.entries(tool.annotations ?? {})) if (v === true) facts.push(h("span", { class: "tag" }, k.replace(/Hint$/, "")))
  const el = h("div", { class: "tool" }, ...titleBlock(tool.name, tool.title, tool.description), facts.length ? h("div", { class: "facts" }, facts) : null, form, out)

  /** What a running call tells the panel showing it. */
  const view = {
    el,
    progress(p) {
      if (typeof p.total === "number" && p.total > 0) {
        bar.max = p.total
        bar.value = Math.min(p.progress, p.total)
      }
      words.textContent = progressWords(p)
    },
    problem(message) {
      out.prepend(errorBox(message))
    },
    finish(ended) {
      running = null
      callButton.disabled = false
      cancelButton.hidden = true
      progress.hidden = true
      put(out, ended.error !== undefined ? errorBox(ended.error) : toolResult(ended.result, { onRead: (uri) => readInto(out, s.name, uri) }))
    },
  }
  /** Shows `call` as this panel's running call. */
  const follow = (call) => {
    running = call
    call.view = view
    callButton.disabled = true
    cancelButton.hidden = false
    bar.max = 1
    bar.removeAttribute("value") // indeterminate until the server says how far it is
    words.textContent = "running…"
    put(progress, bar, words)
    progress.hidden = false
    if (call.progress) view.progress(call.progress)
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault()
    if (running) return
    const { value, errors } = args.value()
    if (errors.length > 0) return
    put(out)
    follow(startCall(s.name, tool.name, value))
  })
  // A call of this tool the page started is picked up again; a result that came while no panel
  // showed it is shown now.
  const key = JSON.stringify([s.name, tool.name])
  const already = [...myCalls.values()].find((c) => c.server === s.name && c.tool === tool.name)
  if (already) follow(already)
  else if (unseen.has(key)) {
    view.finish(unseen.get(key))
    unseen.delete(key)
  }
  return { el }
}

/** Reads `uri` of `server` and shows the contents under `out` (a resource link's Read). */
async function readInto(out, server, uri) {
  try {
    const { result } = await api("/api/read", { server, uri })
    out.append(h("div", { class: "section-title" }, `Read ${uri}`), readResult(result))
  } catch (err) {
    out.append(errorBox(err.message))
  }
}

function resourcePanel(s, r) {
  if (!r) return null
  const out = h("div", { class: "output" })
  const read = h("button", { type: "button", class: "primary" }, "Read")
  read.addEventListener("click", async () => {
    read.disabled = true
    try {
      const { result } = await api("/api/read", { server: s.name, uri: r.uri })
      put(out, readResult(result))
    } catch (err) {
      put(out, errorBox(err.message))
    } finally {
      read.disabled = false
    }
  })
  return {
    el: h("div", { class: "resource" }, ...titleBlock(r.name ?? r.uri, r.title, r.description), h("div", { class: "facts" }, h("span", { class: "mono" }, r.uri), r.mimeType ? h("span", { class: "tag" }, r.mimeType) : null), h("div", { class: "buttons" }, read), out),
  }
}

/**
 * The variables of an RFC 6570 template (`{id}`, `{+path}`, `{?a,b}`), each with whether it may
 * be left out: those of a query expression (`{?a,b}`, `{&a}`) may, as RFC 6570 leaves them out
 * of the URI (and the library's template.read lets them be missing); the rest are required.
 */
function templateVars(template) {
  /** @type {{ name: string, optional: boolean }[]} */
  const vars = []
  for (const [, expr] of String(template).matchAll(/\{([^}]*)\}/g)) {
    const optional = expr.startsWith("?") || expr.startsWith("&")
    for (const part of expr.replace(/^[+#./;?&]/, "").split(",")) {
      const name = part.replace(/[*]$|:\d+$/, "").trim()
      const seen = vars.find((v) => v.name === name)
      if (seen) seen.optional &&= optional
      else if (name) vars.push({ name, optional })
    }
  }
  return vars
}

function templatePanel(s, t) {
  if (!t) return null
  const vars = templateVars(t.uriTemplate)
  const schema = {
    type: "object",
    properties: Object.fromEntries(vars.map((v) => [v.name, { type: "string" }])),
    required: vars.filter((v) => !v.optional).map((v) => v.name),
  }
  const args = argumentsForm(schema, "template")
  const out = h("div", { class: "output" })
  const form = h("form", { class: "try", novalidate: true }, args.el, h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Read")))
  form.addEventListener("submit", async (e) => {
    e.preventDefault()
    const { value, errors } = args.value()
    if (errors.length > 0) return
    try {
      const { uri, result } = await api("/api/read", { server: s.name, uriTemplate: t.uriTemplate, vars: value })
      put(out, uri ? h("div", { class: "section-title mono" }, uri) : "", readResult(result))
    } catch (err) {
      put(out, errorBox(err.message))
    }
  })
  return { el: h("div", { class: "template" }, ...titleBlock(t.name ?? t.uriTemplate, t.title, t.description), h("div", { class: "facts" }, h("span", { class: "mono" }, t.uriTemplate)), form, out) }
}

function promptPanel(s, p) {
  if (!p) return null
  const schema = {
    type: "object",
    properties: Object.fromEntries(p.arguments.map((a) => [a.name, { type: "string", title: a.title, description: a.description }])),
    required: p.arguments.filter((a) => a.required).map((a) => a.name),
  }
  const args = argumentsForm(schema, `prompt-${p.name}`)
  const out = h("div", { class: "output" })
  const form = h("form", { class: "try", novalidate: true }, args.el, h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Get prompt")))
  form.addEventListener("submit", async (e) => {
    e.preventDefault()
    const { value, errors } = args.value()
    if (errors.length > 0) return
    try {
      const { result } = await api("/api/prompt", { server: s.name, name: p.name, args: value })
      put(out, promptResult(result))
    } catch (err) {
      put(out, errorBox(err.message))
    }
  })
  return { el: h("div", { class: "prompt" }, ...titleBlock(p.name, p.title, p.description), form, out) }
}

function skillPanel(s, k) {
  if (!k) return null
  const out = h("div", { class: "output" })
  const read = h("button", { type: "button", class: "primary", onclick: () => readInto(out, s.name, k.uri) }, "Read SKILL.md")
  return { el: h("div", { class: "skill" }, ...titleBlock(k.name ?? k.uri, undefined, k.description), h("div", { class: "facts" }, h("span", { class: "mono" }, k.uri)), h("div", { class: "buttons" }, read), out) }
}

/**
 * The `tools` map that exposes exactly `ticked` of `all`: none (the map removed) when every tool
 * is ticked; a deny list when the config's map already is one (or nothing is ticked); else an
 * allow list. (The engine's rule: any `true` makes it an allow list.)
 */
export function toolsMapFor(all, ticked, current) {
  if (ticked.size === all.length) return null
  const denyStyle = current && Object.keys(current).length > 0 && !Object.values(current).some((v) => v === true)
  if (ticked.size === 0 || denyStyle) return Object.fromEntries(all.filter((n) => !ticked.has(n)).map((n) => [n, false]))
  return Object.fromEntries(all.filter((n) => ticked.has(n)).map((n) => [n, true]))
}

function allowlistPanel(s) {
  if (state.editing) return { el: h("p", { class: "reason" }, state.editing) }
  if (s.status !== "connected") {
    return { el: h("div", {}, h("h3", {}, "Allowlist"), h("p", { class: "dim" }, `The allowlist is edited from the server's tools; it is ${s.status}.`), s.toolsMap ? h("pre", { class: "json" }, json(s.toolsMap)) : null) }
  }
  const all = s.tools.map((t) => t.name)
  const boxes = new Map()
  const preview = h("div", { class: "edit-preview" })
  const list = h(
    "div",
    { class: "allow-list" },
    s.tools.map((t) => {
      const boxId = safeId("allow", t.name)
      const box = h("input", { type: "checkbox", id: boxId, "data-tool": t.name })
      box.checked = t.allowed
      box.addEventListener("change", () => put(preview))
      boxes.set(t.name, box)
      return h("label", { class: "allow-item", for: boxId }, box, " ", h("span", { class: "mono" }, t.name))
    }),
  )
  const setAll = (on) => {
    for (const box of boxes.values()) box.checked = on
    put(preview)
  }
  const ticked = () => new Set([...boxes].filter(([, b]) => b.checked).map(([n]) => n))
  const show = h("button", { type: "button", class: "primary", onclick: () => editPreview(s.name, { tools: toolsMapFor(all, ticked(), s.toolsMap) }, preview) }, "Show diff")
  return {
    el: h(
      "div",
      { class: "allowlist" },
      h("h3", {}, "Allowlist"),
      h("p", { class: "description" }, "Tick the tools this server exposes to loadMcp, serve and agents. The change is shown as a diff of the config file before it is saved."),
      s.toolsMap ? h("div", { class: "facts" }, h("span", { class: "dim" }, "In the config now: "), h("code", {}, JSON.stringify(s.toolsMap))) : h("div", { class: "facts dim" }, "The config has no tools map: every tool is exposed."),
      h("div", { class: "buttons" }, h("button", { type: "button", class: "small", onclick: () => setAll(true) }, "All"), h("button", { type: "button", class: "small", onclick: () => setAll(false) }, "None")),
      list,
      h("div", { class: "buttons" }, show),
      preview,
    ),
    // A re-listing (or the file changing) refreshes the ticks only when nothing was changed here.
    onState(next) {
      if (preview.childElementCount > 0) return
      for (const t of next.tools) if (boxes.has(t.name)) boxes.get(t.name).checked = t.allowed
    },
  }
}

/** Shows the diff an edit would make, with notes and Save; `into` receives it. */
async function editPreview(server, edit, into) {
  const box = h("div", { class: "edit", "data-testid": "edit" })
  put(into, box)
  // In the panel, the preview stays until it is closed (then the panel is drawn again).
  const inPanel = into.id === "panel"
  if (inPanel) panel = { key: JSON.stringify([view.server, view.tab, view.item]), el: box }
  const close = () => {
    box.remove()
    if (inPanel) {
      panel = null
      render()
    }
  }
  let preview
  try {
    preview = await api("/api/edit/preview", { server, edit })
  } catch (err) {
    put(box, errorBox(err.message), h("div", { class: "buttons" }, h("button", { type: "button", onclick: close }, "Close")))
    return
  }
  const what = "tools" in edit ? `the tools allowlist of ${server}` : `${edit.enabled ? "enabling" : "disabling"} ${server}`
  box.append(h("h3", {}, `Change: ${what}`))
  if (preview.unchanged) box.append(h("p", { class: "dim" }, "This changes nothing in the file."))
  else box.append(diffTable(preview.diff))
  if (preview.notes.length > 0) box.append(h("div", { class: "notes", "data-testid": "notes" }, h("strong", {}, "Note"), h("ul", {}, preview.notes.map((n) => h("li", {}, n)))))
  const said = h("div", { class: "saved", role: "status" })
  const save = h("button", { type: "button", class: "primary", disabled: preview.unchanged }, "Save")
  const cancel = h("button", { type: "button", onclick: close }, "Cancel")
  save.addEventListener("click", async () => {
    save.disabled = true
    try {
      const done = await api("/api/edit/save", { server, edit, baseHash: preview.baseHash })
      said.className = "saved ok"
      said.textContent = done.saved ? `Saved ${state.file}.` : "Nothing to save."
      cancel.textContent = "Close"
    } catch (err) {
      said.className = "saved error"
      said.textContent = err.message
      save.disabled = false
    }
  })
  box.append(h("div", { class: "buttons" }, save, cancel), said)
}

function diffTable(rows) {
  return h(
    "div",
    { class: "diff", "data-testid": "diff" },
    rows.map((r) =>
      r.op === "…"
        ? h("div", { class: "diff-row gap" }, "…")
        : h("div", { class: `diff-row ${r.op === "+" ? "add" : r.op === "-" ? "del" : "same"}` }, h("span", { class: "ln" }, String(r.a ?? "")), h("span", { class: "ln" }, String(r.b ?? "")), h("span", { class: "op" }, r.op), h("span", { class: "code" }, r.text)),
    ),
  )
}

async function reconnect(server) {
  try {
    await api("/api/reconnect", { server })
  } catch (err) {
    notice(err.message)
  }
}

/** Starts the OAuth sign-in; the authorisation URL arrives as an `auth-url` event. */
async function signIn(server) {
  signIns.set(server, { phase: "starting" })
  render()
  try {
    const { status, error } = await api("/api/auth", { server })
    signIns.set(server, status === "connected" ? { phase: "done", text: `Signed in: ${server} is connected.` } : { phase: "failed", text: `Sign-in failed: ${error ?? status}` })
  } catch (err) {
    signIns.set(server, { phase: "failed", text: err.message })
  }
  render()
}

// ---------------------------------------------------------------------------------------------
// Elicitations: a server asks the user, during a call

function showQuestion(q) {
  if (questions.has(q.id)) return
  const answer = async (action, content) => {
    for (const b of card.querySelectorAll("button")) b.disabled = true
    try {
      await api("/api/elicit", { id: q.id, action, content })
    } catch (err) {
      card.append(h("p", { class: "reason" }, err.message))
    }
  }
  const card = h("section", { class: "question", role: "dialog", "aria-label": `Question from ${q.server}`, "data-elicitation": q.id })
  card.append(h("div", { class: "question-head" }, h("strong", {}, q.server), " asks"), h("p", { class: "message" }, q.message))
  if (q.kind === "authorization") {
    card.append(h("p", {}, "It asks you to open: ", link(q.url)), h("div", { class: "buttons" }, h("button", { type: "button", class: "primary", onclick: () => answer("accept") }, "Done"), h("button", { type: "button", onclick: () => answer("decline") }, "Decline"), h("button", { type: "button", onclick: () => answer("cancel") }, "Cancel")))
  } else {
    const args = argumentsForm(q.schema ?? {}, "elicit")
    const form = h("form", { novalidate: true }, args.el, h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Accept"), h("button", { type: "button", onclick: () => answer("decline") }, "Decline"), h("button", { type: "button", onclick: () => answer("cancel") }, "Cancel")))
    form.addEventListener("submit", (e) => {
      e.preventDefault()
      const { value, errors } = args.value()
      if (errors.length === 0) answer("accept", value)
    })
    card.append(form)
  }
  questions.set(q.id, card)
  $("elicitations").append(card)
}

function dropQuestion(id) {
  questions.get(id)?.remove()
  questions.delete(id)
}

// Exposed for tests and curious users: what the page knows; `cancels()` resolves once every
// cancel the page sent has been answered and dealt with.
window.toolnexusUi = {
  get state() {
    return state
  },
  contentPart,
  cancels: () => Promise.allSettled([...cancelling]).then(() => undefined),
}

connectEvents()
