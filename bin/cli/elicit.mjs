// Interactive elicitation for `call`, `read` and `prompt`: when stdin and stderr are a terminal,
// a server's question (MCP `elicitation/create`, handed to loadMcp's `waitFor`) is asked on the
// terminal, one field of the requested schema at a time, each answer checked against its schema
// and asked again with the reason when it does not fit. Off a terminal nothing is asked: the
// library declines every question, as it always has.
//
// Questions and hints go to stderr, so stdout holds only the result. The first question decides
// the MCP action: Enter or y accepts (then the fields are asked), n declines, c cancels; Ctrl-C
// or Ctrl-D at any question cancels, and after a Ctrl-C any further question of the same
// command is declined without asking.
import readline from "node:readline"
import { Worker } from "node:worker_threads"
import { browserCommand, openBrowser } from "./auth.mjs"
import { colorEnabled, palette } from "./term.mjs"

/** The help text's paragraph on questions, for `call`, `read` and `prompt`. */
export const ELICIT_HELP = `Questions from the server (MCP elicitation): when stdin and stderr are a terminal,
they are asked there (on stderr): Enter or y answers, n declines, c cancels; then each
field, with its description, choices and default, is asked and checked against its
schema (asked again, with the reason, until it fits; Enter takes the default or skips
an optional field). A choice is given by its name or its number in the list; when the
choices are themselves numbers, typing one of them means that value, not a position.
Ctrl-C or Ctrl-D at any question cancels; after a Ctrl-C, further questions of the same
command are declined without asking. A URL the server asks to open is shown, and opened
in the browser once confirmed. Off a terminal, every question is declined.`

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Text from a server, safe to print: control characters (escape sequences, line breaks) and
 * bidirectional overrides (U+202A–U+202E, U+2066–U+2069, which reorder what follows) shown as
 * �, long text cut. `lines`: line breaks are kept, each following line indented by two spaces
 * (a message may have lines, but none can pass for a prompt or a line of toolnexus's own).
 */
export function clean(text, max = 2000, { lines = false } = {}) {
  // eslint-disable-next-line no-control-regex
  const bad = lines ? /[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g : /[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
  let s = String(text ?? "").replace(/\r\n/g, "\n").replace(bad, "\uFFFD")
  const chars = [...s]
  if (chars.length > max) s = `${chars.slice(0, max).join("")}…`
  return lines ? s.replaceAll("\n", "\n  ") : s
}

/**
 * The `waitFor` of a command run at a terminal, or undefined when stdin or stderr is not one
 * (the library then declines questions). Questions are asked one elicitation at a time.
 * `browser`: open an accepted URL-mode link in the system browser (else only print it).
 * Returns `{ waitFor, asked(), close() }`: `asked()` tells whether any question came; `close()`
 * ends a question still open (the call is over).
 */
export function terminalElicitation({ input = process.stdin, output = process.stderr, signal, browser = true } = {}) {
  if (!input.isTTY || !output.isTTY) return undefined
  const c = palette(colorEnabled(output))
  let queue = Promise.resolve()
  let current = null
  let count = 0
  let closed = false
  let interrupted = false // Ctrl-C was pressed: the user wants no more questions
  const waitFor = (request) => {
    count += 1
    const turn = queue.then(async () => {
      if (closed) return { ok: false, reason: "cancelled" }
      if (interrupted) {
        output.write(`${c.bold(clean(request?.server ?? "the server", 200))} asks again: declined (Ctrl-C was pressed)\n`)
        return DECLINED
      }
      current = new Questions(input, output, signal)
      try {
        return request?.kind === "authorization" ? await askUrl(current, request, c, browser) : await askForm(current, request, c)
      } finally {
        if (current.interrupted) interrupted = true
        current.close()
        current = null
      }
    })
    queue = turn.catch(() => {})
    return turn
  }
  return {
    waitFor,
    asked: () => count > 0,
    close() {
      closed = true
      current?.abandon()
    },
  }
}

/** One elicitation's questions on the terminal: a readline interface, ended by Ctrl-C, Ctrl-D or `signal`. */
class Questions {
  constructor(input, output, signal) {
    this.output = output
    this.signal = signal
    this.ended = false
    this.pending = null
    this.rl = readline.createInterface({ input, output, terminal: true, historySize: 0 })
    // Ctrl-C reaches readline as a key (the terminal is in raw mode): it cancels, as Ctrl-D
    // (which closes the interface) and an interrupt of the command do.
    this.rl.on("SIGINT", () => {
      this.interrupted = true
      this.rl.close()
    })
    this.rl.on("close", () => {
      if (!this.ended) output.write("\n") // ended mid-question: leave the prompt's line
      this.ended = true
      this.pending?.(null)
    })
    this.onAbort = () => this.rl.close()
    signal?.addEventListener("abort", this.onAbort)
    if (signal?.aborted) this.rl.close()
  }

  say(text) {
    if (!this.abandoned) this.output.write(`${text}\n`)
  }

  /** The line typed after `query`, or null once the questions are ended. */
  ask(query) {
    if (this.ended) return Promise.resolve(null)
    return new Promise((resolve) => {
      this.pending = resolve
      this.rl.question(query, (line) => {
        this.pending = null
        resolve(line)
      })
    })
  }

  /** Ends a question still open because the call is over: nothing more is printed. */
  abandon() {
    this.abandoned = true
    this.close()
  }

  /** Ends the questions once they are answered. */
  close() {
    this.signal?.removeEventListener("abort", this.onAbort)
    if (!this.pending) this.ended = true
    this.rl.close()
  }
}

const DECLINED = { ok: false, reason: "declined" }
const CANCELLED = { ok: false, reason: "cancelled" }

/** Asks `query` until the answer is y (or Enter), n or c: "accept", "decline" or "cancel". */
async function choose(q, query, c) {
  for (;;) {
    const line = await q.ask(query)
    if (line === null) return "cancel"
    const word = line.trim().toLowerCase()
    if (word === "" || word === "y" || word === "yes") return "accept"
    if (word === "n" || word === "no") return "decline"
    if (word === "c" || word === "cancel") return "cancel"
    q.say(`  ${c.red("✗")} answer y (yes), n (no, decline) or c (cancel)`)
  }
}

/** "ask-server asks: …", then accept/decline/cancel, then each field of the schema. */
async function askForm(q, request, c) {
  q.say(`${c.bold(clean(request?.server ?? "the server", 200))} asks: ${clean(request?.message, 2000, { lines: true })}`)
  const action = await choose(q, "  Answer? [Y]es, [n]o (decline), [c]ancel > ", c)
  if (action !== "accept") {
    q.say(`  ${action === "decline" ? "declined" : "cancelled"}`)
    return action === "decline" ? DECLINED : CANCELLED
  }
  const schema = isObject(request?.data?.schema) ? request.data.schema : {}
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  // Answers by key, "__proto__" too (a plain assignment would set the prototype instead).
  const data = {}
  for (const [key, property] of Object.entries(properties)) {
    const field = fieldOf(key, isObject(property) ? property : {}, required.has(key))
    q.say(field.head)
    for (const line of field.hints) q.say(`  ${c.dim(line)}`)
    for (;;) {
      const line = await q.ask(field.prompt)
      if (line === null) {
        q.say("  cancelled")
        return CANCELLED
      }
      const answer = field.read(line)
      if (answer.error !== undefined) {
        q.say(`  ${c.red("✗")} ${answer.error}`)
        continue
      }
      if (!answer.skip) Object.defineProperty(data, key, { value: answer.value, enumerable: true, writable: true, configurable: true })
      break
    }
  }
  return { ok: true, data }
}

/** A URL to open: shown, then accepted (opened in the browser, when allowed), declined or cancelled. */
async function askUrl(q, request, c, browser) {
  const url = String(request?.url ?? "")
  q.say(`${c.bold(clean(request?.server ?? "the server", 200))} asks you to open a URL: ${clean(request?.message, 2000, { lines: true })}`)
  q.say(`  ${clean(url)}`)
  const action = await choose(q, "  Open it? [Y]es, [n]o (decline), [c]ancel > ", c)
  if (action !== "accept") {
    q.say(`  ${action === "decline" ? "declined" : "cancelled"}`)
    return action === "decline" ? DECLINED : CANCELLED
  }
  // Only a web page is handed to the system (parsed, without a shell): another scheme could
  // start any program.
  if (browserCommand(url) === null) q.say("  not opened: only http and https URLs are opened; visit it yourself if you trust it")
  else if (browser) {
    openBrowser(url)
    q.say("  opened in the browser (if it did not open, visit the URL above)")
  } else q.say("  visit the URL above in your browser")
  return { ok: true }
}

// ---------------------------------------------------------------------------------------------
// Fields: what to ask for one property of the requested schema, and how to read the answer.

/** The choices of an enum (with `enumNames`) or of `oneOf`/`anyOf` consts: [{ value, label }]. */
function choicesOf(schema) {
  if (!isObject(schema)) return null
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : []
    return schema.enum.map((value, i) => ({ value, label: typeof names[i] === "string" ? names[i] : String(value) }))
  }
  const options = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null
  if (options && options.length > 0 && options.every((o) => isObject(o) && "const" in o)) {
    return options.map((o) => ({ value: o.const, label: typeof o.title === "string" ? o.title : String(o.const) }))
  }
  return null
}

/** The type a property asks for: its `type`, or the first of a list that is not "null". */
function typeOf(schema) {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null")
  return schema.type
}

const plural = (n, one) => `${n} ${n === 1 ? one : `${one}s`}`

/** "from 1 to 100", "of at least 1", "greater than 0 and at most 5", or "". */
function rangeWords(s) {
  const low = typeof s.exclusiveMinimum === "number" ? `greater than ${s.exclusiveMinimum}` : typeof s.minimum === "number" ? `at least ${s.minimum}` : ""
  const high = typeof s.exclusiveMaximum === "number" ? `less than ${s.exclusiveMaximum}` : typeof s.maximum === "number" ? `at most ${s.maximum}` : ""
  if (typeof s.minimum === "number" && typeof s.maximum === "number" && !low.startsWith("greater") && !high.startsWith("less")) return `from ${s.minimum} to ${s.maximum}`
  return [low, high].filter(Boolean).join(" and ")
}

/** "2 to 20 characters", "at least 2 characters", or "". */
function lengthWords(min, max, unit) {
  if (min !== undefined && max !== undefined) return min === max ? plural(min, unit) : `${min} to ${max} ${unit}s`
  if (min !== undefined) return `at least ${plural(min, unit)}`
  if (max !== undefined) return `at most ${plural(max, unit)}`
  return ""
}

const whole = (v) => (Number.isInteger(v) && v >= 0 ? v : undefined)

const FORMATS = {
  email: { words: "an email address", check: (t) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(t), error: "not an email address (name@example.com)" },
  uri: { words: "a URI, like https://example.com", check: (t) => validUri(t), error: "not a URI (it needs a scheme, like https://example.com)" },
  date: { words: "a date, YYYY-MM-DD", check: (t) => validDate(t), error: "not a date in the form YYYY-MM-DD" },
  "date-time": {
    words: "a date and time, like 2025-01-31T09:30:00Z",
    check: (t) => /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(t) && validDate(t.slice(0, 10)),
    error: "not a date and time, like 2025-01-31T09:30:00Z",
  },
}

function validUri(text) {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(text)) return false
  try {
    new URL(text)
    return true
  } catch {
    return false
  }
}

function validDate(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (!m) return false
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return date.getUTCFullYear() === Number(m[1]) && date.getUTCMonth() === Number(m[2]) - 1 && date.getUTCDate() === Number(m[3])
}

/**
 * The choice an answer word names: a value exactly as typed first (so with enum [5, 3, 1], "3"
 * is the value 3, not the second choice), then its number (1-based), then its label or value in
 * any case.
 */
function pick(word, choices) {
  const exact = choices.find((ch) => String(ch.value) === word)
  if (exact) return exact
  if (/^\d+$/.test(word)) {
    const n = Number(word)
    if (n >= 1 && n <= choices.length) return choices[n - 1]
  }
  return choices.find((ch) => ch.label.toLowerCase() === word.toLowerCase() || String(ch.value).toLowerCase() === word.toLowerCase())
}

/** Whether some choice's value reads as a whole number (then a typed number may be a value, not a position). */
const numericChoices = (choices) => choices.some((ch) => /^\d+$/.test(String(ch.value)))

/** Patterns longer than this are not run here (the server checks them). */
export const MAX_PATTERN = 200
/** Answers longer than this are not matched against a pattern here (the server checks them). */
export const MAX_PATTERN_INPUT = 1000

/** How long one pattern check may take (in a worker thread, stopped after that). */
export const PATTERN_TIME_MS = 1000

/**
 * `regexp.test(text)` bounded in time: run in a worker thread that is terminated after
 * PATTERN_TIME_MS (a server's pattern may backtrack catastrophically, and a RegExp cannot be
 * interrupted on the main thread). True or false, or undefined when it took too long.
 */
export function testBounded(regexp, text, ms = PATTERN_TIME_MS) {
  const shared = new Int32Array(new SharedArrayBuffer(8))
  const code =
    'const { workerData: { source, flags, text, shared } } = require("node:worker_threads");' +
    "Atomics.store(shared, 1, new RegExp(source, flags).test(text) ? 1 : 0); Atomics.store(shared, 0, 1); Atomics.notify(shared, 0)"
  const worker = new Worker(code, { eval: true, workerData: { source: regexp.source, flags: regexp.flags, text, shared }, stdout: true, stderr: true })
  worker.on("error", () => {})
  try {
    Atomics.wait(shared, 0, 0, ms)
  } finally {
    worker.terminate().catch(() => {})
    worker.unref()
  }
  return Atomics.load(shared, 0) === 1 ? Atomics.load(shared, 1) === 1 : undefined
}

/** A server's pattern as a RegExp to run here (`v` flag, else `u`), or null when it is not one to run. */
function patternOf(source) {
  if (typeof source !== "string" || source.length > MAX_PATTERN) return null
  for (const flags of ["v", "u"]) {
    try {
      return new RegExp(source, flags)
    } catch {}
  }
  return null // a pattern JavaScript cannot read is left to the server to check
}

/**
 * What to ask for property `key`: `head` (title, key, * when required, description), `hints`
 * (what is accepted, the choices), `prompt` (with the default in brackets) and `read(line)` →
 * `{ value }`, `{ skip: true }` (left out) or `{ error }` (why it does not fit, to ask again).
 */
export function fieldOf(key, schema, required) {
  const title = typeof schema.title === "string" && schema.title !== "" ? `${clean(schema.title, 200)} (${clean(key, 200)})` : clean(key, 200)
  const description = typeof schema.description === "string" && schema.description !== "" ? ` — ${clean(schema.description)}` : ""
  const head = `${title}${required ? " *" : ""}${description}`
  const type = typeOf(schema)
  let hasDefault = schema.default !== undefined
  let fits = () => true // whether a default is an answer this field accepts
  const hints = []
  let words // what is accepted, in words
  let shownDefault // the default as the prompt shows it
  let parse // text (not empty) → { value } | { error }
  let keepSpaces = false // text answers are taken as typed

  const single = choicesOf(schema)
  const many = type === "array" ? choicesOf(schema.items) : null
  if (single) {
    single.forEach((ch, i) => hints.push(`${i + 1}) ${clean(ch.label, 200)}`))
    words = numericChoices(single) ? "choose one: its value, its name or its number in the list (a value typed is that value)" : "choose one: its number or its name"
    const current = single.find((ch) => ch.value === schema.default)
    shownDefault = current ? `${single.indexOf(current) + 1}) ${clean(current.label, 200)}` : hasDefault ? clean(JSON.stringify(schema.default), 200) : undefined
    fits = (d) => current !== undefined && current.value === d
    parse = (text) => {
      const ch = pick(text, single)
      return ch ? { value: ch.value } : { error: `not one of the choices: give its number (1-${single.length}) or its name` }
    }
  } else if (many) {
    many.forEach((ch, i) => hints.push(`${i + 1}) ${clean(ch.label, 200)}`))
    const [min, max] = [whole(schema.minItems), whole(schema.maxItems)]
    const count = lengthWords(min, max, "choice")
    words = `choose ${count || "any number"}: ${numericChoices(many) ? "values, names or numbers in the list" : "numbers or names"}, separated by commas`
    if (Array.isArray(schema.default)) {
      shownDefault = schema.default.map((v) => clean(many.find((ch) => ch.value === v)?.label ?? JSON.stringify(v), 200)).join(", ")
    }
    fits = (d) => Array.isArray(d) && d.every((v) => many.some((ch) => ch.value === v)) && (min === undefined || d.length >= min) && (max === undefined || d.length <= max)
    parse = (text) => {
      // "1 3" and "1,3" both work for numbers; names (which may hold spaces) are split at commas.
      const tokens = (/^[\d\s,]+$/.test(text) ? text.split(/[\s,]+/) : text.split(",")).map((t) => t.trim()).filter(Boolean)
      const values = []
      for (const token of tokens) {
        const ch = pick(token, many)
        if (!ch) return { error: `"${clean(token, 100)}" is not one of the choices (1-${many.length})` }
        if (!values.includes(ch.value)) values.push(ch.value)
      }
      if (min !== undefined && values.length < min) return { error: `choose at least ${min}` }
      if (max !== undefined && values.length > max) return { error: `choose at most ${max}` }
      return { value: values }
    }
  } else if (type === "boolean") {
    words = "yes or no"
    if (typeof schema.default === "boolean") shownDefault = schema.default ? "yes" : "no"
    fits = (d) => typeof d === "boolean"
    parse = (text) => {
      if (/^(y|yes|true|1)$/i.test(text)) return { value: true }
      if (/^(n|no|false|0)$/i.test(text)) return { value: false }
      return { error: "answer yes or no (y/n)" }
    }
  } else if (type === "number" || type === "integer") {
    const range = rangeWords(schema)
    words = `${type === "integer" ? "a whole number" : "a number"}${range ? ` ${range.startsWith("from") ? range : `(${range})`}` : ""}`
    if (hasDefault) shownDefault = clean(String(schema.default), 200)
    fits = (d) => typeof d === "number" && parse(String(d)).error === undefined
    parse = (text) => {
      if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return { error: type === "integer" ? "not a whole number" : "not a number" }
      const n = Number(text)
      if (!Number.isFinite(n)) return { error: "not a number" }
      if (type === "integer" && !Number.isInteger(n)) return { error: "not a whole number" }
      if (typeof schema.minimum === "number" && n < schema.minimum) return { error: `too small: at least ${schema.minimum}` }
      if (typeof schema.exclusiveMinimum === "number" && n <= schema.exclusiveMinimum) return { error: `too small: greater than ${schema.exclusiveMinimum}` }
      if (typeof schema.maximum === "number" && n > schema.maximum) return { error: `too large: at most ${schema.maximum}` }
      if (typeof schema.exclusiveMaximum === "number" && n >= schema.exclusiveMaximum) return { error: `too large: less than ${schema.exclusiveMaximum}` }
      return { value: n }
    }
  } else if (type === "array") {
    // A list of free values (not in MCP's elicitation schemas, but answered sensibly).
    words = "values separated by commas"
    if (Array.isArray(schema.default)) shownDefault = clean(schema.default.join(", "), 200)
    fits = (d) => Array.isArray(d)
    parse = (text) => ({ value: text.split(",").map((t) => t.trim()).filter(Boolean) })
  } else {
    // Text: a string, or a property of no known type.
    keepSpaces = true
    const format = FORMATS[schema.format]
    const length = lengthWords(whole(schema.minLength), whole(schema.maxLength), "character")
    const parts = [format ? format.words : "text"]
    if (length) parts.push(length)
    const pattern = patternOf(schema.pattern)
    if (pattern) parts.push(`matching ${clean(schema.pattern, 200)}`)
    words = parts.join(", ")
    if (hasDefault) shownDefault = clean(typeof schema.default === "string" ? schema.default : JSON.stringify(schema.default), 200)
    fits = (d) => typeof d === "string" && parse(d).error === undefined
    parse = (text) => {
      const n = [...text].length
      if (whole(schema.minLength) !== undefined && n < schema.minLength) return { error: `too short: at least ${plural(schema.minLength, "character")}` }
      if (whole(schema.maxLength) !== undefined && n > schema.maxLength) return { error: `too long: at most ${plural(schema.maxLength, "character")}` }
      if (format && !format.check(text)) return { error: format.error }
      // A long answer, or one the pattern takes too long over, is left to the server to check.
      if (pattern && n <= MAX_PATTERN_INPUT && testBounded(pattern, text) === false) return { error: `does not match ${clean(schema.pattern, 200)}` }
      return { value: text }
    }
  }
  // A default is checked like an answer: one that does not fit is not offered.
  if (hasDefault && !fits(schema.default)) {
    hasDefault = false
    shownDefault = undefined
  }
  hints.push(!required && !hasDefault ? `${words}; Enter skips` : words)
  const prompt = `  ${shownDefault !== undefined ? `[${shownDefault}] ` : ""}> `
  const read = (line) => {
    // Text keeps its spaces; everything else is read trimmed.
    const text = keepSpaces ? line : line.trim()
    if (text.trim() === "") {
      if (hasDefault) return { value: schema.default }
      if (required) return { error: "an answer is required" }
      return { skip: true }
    }
    return parse(text)
  }
  return { head, hints, prompt, read }
}
