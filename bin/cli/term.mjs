// Terminal output for the CLI: colours (only on a TTY, never with NO_COLOR), line fitting, the
// routing of toolnexus warnings to stderr, and the live per-server view of `toolnexus list`.

/** Colours are for humans at a terminal: stdout must be a TTY and NO_COLOR unset or empty (no-color.org). */
export function colorEnabled(stream = process.stdout) {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR
}

/** SGR wrappers; identity functions when `enabled` is false, so no escape ever leaks into a pipe. */
export function palette(enabled) {
  const sgr = (open, close) => (enabled ? (s) => `\x1b[${open}m${s}\x1b[${close}m` : (s) => String(s))
  return {
    green: sgr(32, 39),
    red: sgr(31, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    dim: sgr(2, 22),
    bold: sgr(1, 22),
  }
}

export const MARK = { connected: "✓", failed: "✗", disabled: "–" }

/** The first line of `text`, shortened to `width` characters (code points) with "…" when cut. */
export function fit(text, width = Infinity) {
  const line = String(text ?? "").split("\n", 1)[0].trimEnd()
  const chars = [...line]
  if (chars.length <= width) return line
  return width <= 1 ? "…".slice(0, Math.max(width, 0)) : chars.slice(0, width - 1).join("") + "…"
}

/**
 * toolnexus reports config warnings through `process.emitWarning(message, "ToolnexusWarning")`.
 * The CLI prints them as plain stderr lines (once each, without Node's "(node:pid)" prefix), and
 * can hold them back while the live view owns the terminal.
 */
export function routeWarnings() {
  const original = process.emitWarning
  const seen = new Set()
  let held = null
  const print = (message) => process.stderr.write(`${message}\n`)
  process.emitWarning = function (warning, type, ...rest) {
    const kind = typeof type === "object" && type !== null ? type.type : type
    if (kind !== "ToolnexusWarning") return original.call(process, warning, type, ...rest)
    const message = String(warning instanceof Error ? warning.message : warning)
    if (seen.has(message)) return
    seen.add(message)
    if (held) held.push(message)
    else print(message)
  }
  return {
    hold() {
      held ??= []
    },
    release() {
      const pending = held ?? []
      held = null
      pending.forEach(print)
    },
  }
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/**
 * One line per server, redrawn in place while servers connect: a spinner while pending, then
 * `✓ name  N tools  123 ms`, `✗ name  reason` or `– name  disabled`. Only used when stdout is a
 * terminal tall enough to hold every line; otherwise `OrderedLines` prints plain final lines.
 */
export class LiveView {
  constructor(out, names, render) {
    this.out = out
    this.names = names
    this.render = render
    this.settled = new Map()
    this.frame = 0
    this.drawn = 0
    this.started = performance.now()
    this.timer = null
    this.restoreCursor = () => out.write("\x1b[?25h")
  }

  static fits(out, count) {
    return Boolean(out.isTTY) && count > 0 && count < (out.rows || 24)
  }

  start() {
    this.out.write("\x1b[?25l")
    process.on("exit", this.restoreCursor)
    this.draw()
    this.timer = setInterval(() => {
      this.frame = (this.frame + 1) % SPINNER.length
      this.draw()
    }, 80)
  }

  settle(name, result) {
    this.settled.set(name, result)
    this.draw()
  }

  stop() {
    clearInterval(this.timer)
    this.draw()
    this.restoreCursor()
    process.off("exit", this.restoreCursor)
  }

  draw() {
    const width = Math.max((this.out.columns || 80) - 1, 20)
    const elapsed = Math.round(performance.now() - this.started)
    let text = this.drawn > 0 ? `\x1b[${this.drawn}F` : ""
    for (const name of this.names) {
      const result = this.settled.get(name)
      const line = result ? this.render(name, result, width) : this.render(name, { pending: SPINNER[this.frame], ms: elapsed }, width)
      text += `\x1b[2K${line}\n`
    }
    this.drawn = this.names.length
    this.out.write(text)
  }
}

/**
 * The non-live counterpart: final server lines printed in config order, each as soon as it and
 * every server before it have settled (so output is progressive yet deterministic).
 */
export class OrderedLines {
  constructor(out, names, render, width) {
    this.out = out
    this.names = names
    this.render = render
    this.width = width
    this.settled = new Map()
    this.next = 0
  }

  start() {}

  settle(name, result) {
    this.settled.set(name, result)
    while (this.next < this.names.length && this.settled.has(this.names[this.next])) {
      const n = this.names[this.next++]
      this.out.write(`${this.render(n, this.settled.get(n), this.width)}\n`)
    }
  }

  stop() {}
}
