// Interactive elicitation (issue 42): `toolnexus call` run in a real pseudo-terminal
// (fixtures/pty-run.py: stdin and stderr on the terminal, stdout in a file), answering a
// server's elicitation/create question by question — against the ask-server fixture (text with
// bounds and a format, an integer range, an enum, a boolean, a multi-select) and
// server-everything's trigger-elicitation-request. Each step waits for the prompt's text on the
// terminal before typing; invalid answers are asked again with the reason; decline, cancel
// (c, Ctrl-C, Ctrl-D) and URL mode; off a terminal the question is declined, as before.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import { deferredCleanup, fixture, isAlive, readPid, repoRoot, serverEverything, tmpFile } from "./helpers.mjs"
import { cli } from "./lib/cli.mjs"
import { inPty as runInPty } from "./lib/pty.mjs"
import { PassThrough } from "node:stream"
import { clean, fieldOf, terminalElicitation } from "../bin/cli/elicit.mjs"
import { browserCommand } from "../bin/cli/auth.mjs"

const T = { timeout: 90000 }
const defer = deferredCleanup(afterEach)
const ASK = `node ${path.relative(repoRoot, fixture("ask-server"))}`
const EVERYTHING = `node ${path.relative(repoRoot, serverEverything)} stdio`


/** `toolnexus ...args` in a pseudo-terminal (lib/pty.mjs), in the repo, killed after each test if still running. */
const inPty = (args, { env } = {}) => runInPty(args, { defer, env })

const ANSWER = "  Answer? [Y]es, [n]o (decline), [c]ancel > "

test("call at a terminal: every field asked with its hints, invalid answers asked again with the reason, the answers reach the server exactly", T, async () => {
  const pidFile = tmpFile("ask.pid")
  const pty = inPty(["call", "--stdio", ASK, "--env", `PID_FILE=${pidFile}`, "ask"])
  const steps = [
    [`ask-server asks: Tell us about yourself\n${ANSWER}`, "\r"],
    ["Name (name) * — What to call you\n  text, 2 to 20 characters\n  > ", "A\r"],
    ["  ✗ too short: at least 2 characters\n  > ", "A name far longer than twenty\r"],
    ["  ✗ too long: at most 20 characters\n  > ", "Ada Lovelace\r"],
    ["Email (email)\n  an email address; Enter skips\n  > ", "ada at example\r"],
    ["  ✗ not an email address (name@example.com)\n  > ", "ada@example.com\r"],
    ["Age (age) *\n  a whole number from 0 to 150\n  > ", "\r"],
    ["  ✗ an answer is required\n  > ", "36.5\r"],
    ["  ✗ not a whole number\n  > ", "200\r"],
    ["  ✗ too large: at most 150\n  > ", "36\r"],
    ["Colour (color)\n  1) red\n  2) green\n  3) blue\n  choose one: its number or its name\n  [2) green] > ", "purple\r"],
    ["  ✗ not one of the choices: give its number (1-3) or its name\n  [2) green] > ", "3\r"],
    ["Subscribe (subscribe) — Send me news\n  yes or no\n  [no] > ", "maybe\r"],
    ["  ✗ answer yes or no (y/n)\n  [no] > ", "y\r"],
    ["Pets (pets)\n  1) Cat\n  2) Dog\n  3) Fish\n  choose 1 to 2 choices: numbers or names, separated by commas; Enter skips\n  > ", "1,2,3\r"],
    ["  ✗ choose at most 2\n  > ", "cat, Fish\r"],
  ]
  for (const [prompt, keys] of steps) {
    await pty.expect(prompt)
    pty.type(keys)
  }
  const { code, stdout, screen } = await pty.exited
  assert.equal(code, 0, screen)
  // stdout holds only the result: every question went to the terminal (stderr).
  assert.equal(stdout, `${JSON.stringify({ action: "accept", content: { name: "Ada Lovelace", email: "ada@example.com", age: 36, color: "blue", subscribe: true, pets: ["cat", "fish"] } })}\n`)
  assert.equal(screen.includes('"action"'), false, "the result is not on the terminal")
  const pid = readPid(pidFile)
  assert.ok(pid)
  assert.equal(isAlive(pid), false, "the server is closed after the call")
})

test("call at a terminal: Enter takes defaults and skips optional fields (server-everything's trigger-elicitation-request)", T, async () => {
  const pty = inPty(["call", "--stdio", EVERYTHING, "trigger-elicitation-request"])
  await pty.expect(`server-everything asks: Please provide inputs for the following fields:\n${ANSWER}`)
  pty.type("y\r")
  await pty.expect("String (name) * — Your full, legal name\n  text\n  > ")
  pty.type("Grace Hopper\r")
  // Every other field: its title and key, then Enter at its prompt.
  const rest = [
    ["Boolean (check)", "  > "],
    ["String with default (firstLine)", "  [It was a dark and stormy night.] > "],
    ["String with email format (email)", "  > "],
    ["String with uri format (homepage)", "  > "],
    ["String with date format (birthdate)", "  > "],
    ["Integer (integer)", "  [42] > "],
    ["Number in range 1-1000 (number)", "  [3.14] > "],
    ["Untitled Single Select Enum (untitledSingleSelectEnum)", "  [1) Monica] > "],
    ["Untitled Multiple Select Enum (untitledMultipleSelectEnum)", "  [Guitar] > "],
    ["Titled Single Select Enum (titledSingleSelectEnum)", "  [1) Superman] > "],
    ["Titled Multiple Select Enum (titledMultipleSelectEnum)", "  [Tuna] > "],
    ["Legacy Titled Single Select Enum (legacyTitledEnum)", "  [1) Cats] > "],
  ]
  for (const [head, prompt] of rest) {
    await pty.expect(head)
    await pty.expect(prompt)
    pty.type("\r")
  }
  const { code, stdout, screen } = await pty.exited
  assert.equal(code, 0, screen)
  const [words, raw] = stdout.split("\n\nRaw result: ")
  assert.equal(words, "✅ User provided the requested information!\nUser inputs:\n- Name: Grace Hopper\n- Favorite Integer: 42\n- Favorite Number: 3.14")
  assert.deepEqual(JSON.parse(raw), {
    action: "accept",
    content: {
      name: "Grace Hopper",
      firstLine: "It was a dark and stormy night.",
      integer: 42,
      number: 3.14,
      untitledSingleSelectEnum: "Monica",
      untitledMultipleSelectEnum: ["Guitar"],
      titledSingleSelectEnum: "hero-1",
      titledMultipleSelectEnum: ["fish-1"],
      legacyTitledEnum: "pet-1",
    },
  })
})

test("call at a terminal: n declines; c, Ctrl-C and Ctrl-D cancel", T, async () => {
  const declined = inPty(["call", "--stdio", EVERYTHING, "trigger-elicitation-request"])
  await declined.expect(ANSWER)
  declined.type("nope\r")
  await declined.expect("  ✗ answer y (yes), n (no, decline) or c (cancel)\n" + ANSWER)
  declined.type("n\r")
  await declined.expect("  declined\n")
  const d = await declined.exited
  assert.equal(d.code, 0, d.screen)
  assert.equal(d.stdout, '❌ User declined to provide the requested information.\n\nRaw result: {\n  "action": "decline"\n}\n')

  const cancels = [
    ["c", ["c\r"], false],
    ["Ctrl-C at the first question", ["\x03"], false],
    ["Ctrl-C mid-form", ["y\r", "Ada\r", "\x03"], true],
    ["Ctrl-D mid-form", ["y\r", "Ada\r", "\x04"], true],
  ]
  for (const [what, keys, midForm] of cancels) {
    const pty = inPty(["call", "--stdio", ASK, "ask"])
    await pty.expect(ANSWER)
    pty.type(keys[0])
    if (midForm) {
      await pty.expect("Name (name) *")
      await pty.expect("  > ")
      pty.type(keys[1])
      await pty.expect("Email (email)")
      await pty.expect("  > ")
      pty.type(keys[2])
    }
    await pty.expect("  cancelled\n")
    const r = await pty.exited
    assert.equal(r.code, 0, `${what}: ${r.screen}`)
    assert.equal(r.stdout, '{"action":"cancel"}\n', what)
  }
})

test("call at a terminal: a URL to open is shown and confirmed (--no-browser); text from the server cannot drive the terminal", T, async () => {
  const pty = inPty(["call", "--stdio", ASK, "ask-url", "--no-browser"])
  await pty.expect("ask-server asks you to open a URL: Sign in to continue\n  https://auth.example.com/sign-in?state=1\n  Open it? [Y]es, [n]o (decline), [c]ancel > ")
  pty.type("y\r")
  await pty.expect("  visit the URL above in your browser\n")
  const r = await pty.exited
  assert.equal(r.code, 0, r.screen)
  assert.equal(r.stdout, '{"action":"accept","content":{}}\n')

  // Only http(s) is ever handed to the system.
  const file = inPty(["call", "--stdio", ASK, "ask-url", "url=file:///etc/passwd"])
  await file.expect("  file:///etc/passwd\n  Open it? [Y]es, [n]o (decline), [c]ancel > ")
  file.type("\r")
  await file.expect("  not opened: only http and https URLs are opened; visit it yourself if you trust it\n")
  assert.equal((await file.exited).stdout, '{"action":"accept","content":{}}\n')

  // Escape sequences in the server's message and schema are shown as �, never sent to the terminal.
  const schema = JSON.stringify({ type: "object", properties: { ok: { type: "boolean", title: "OK\x1b[2J" } } })
  const hostile = inPty(["call", "--stdio", ASK, "ask", `message=Hi\x1b]0;pwned\x07 there`, `schema=${JSON.stringify(schema)}`])
  await hostile.expect(`ask-server asks: Hi\uFFFD]0;pwned\uFFFD there\n${ANSWER}`)
  hostile.type("y\r")
  await hostile.expect("OK\uFFFD[2J (ok)\n  yes or no; Enter skips\n  > ")
  hostile.type("no\r")
  const h = await hostile.exited
  assert.equal(h.stdout, '{"action":"accept","content":{"ok":false}}\n')
  assert.equal(h.raw.includes("\x1b]0;"), false)
  assert.equal(h.raw.includes("\x1b[2J"), false)
})

test("call at a terminal: a call that times out with a question open ends the question and says answering counted", T, async () => {
  const pty = inPty(["call", "--stdio", ASK, "ask", "--timeout", "1500"])
  await pty.expect(ANSWER)
  // Nothing is typed: the call's own timeout ends it.
  const r = await pty.exited
  assert.equal(r.code, 1, r.screen)
  assert.equal(r.stdout, "")
  assert.equal(r.screen, `ask-server asks: Tell us about yourself\n${ANSWER}\nMCP tool call timed out after 1500 ms (the time spent answering counts: give more with --timeout ms)\n`)
})

test("call off a terminal: the question is declined, as before, and nothing is asked", T, async () => {
  const piped = await cli(["call", "--stdio", ASK, "ask"])
  assert.deepEqual(piped, { code: 0, signal: null, stdout: '{"action":"decline"}\n', stderr: "" })
  // server-everything offers its elicitation tool only to a client that can answer.
  const everything = await cli(["call", "--stdio", EVERYTHING, "trigger-elicitation-request"])
  assert.equal(everything.code, 2)
  assert.match(everything.stderr, /^toolnexus call: server "server-everything" has no tool "trigger-elicitation-request"/)
})

test("call at a terminal: an invalid default is not offered; a title cannot fake a line or reorder text", T, async () => {
  const schema = JSON.stringify({
    type: "object",
    properties: { d: { type: "string", title: "Day\nfake: line \u202Egnp.exe", format: "date", default: "not-a-date" } },
    required: ["d"],
  })
  const pty = inPty(["call", "--stdio", ASK, "ask", `schema=${JSON.stringify(schema)}`, "message=one\ntwo"])
  await pty.expect(`ask-server asks: one\n  two\n${ANSWER}`)
  pty.type("\r")
  // The default does not fit (not a date): no [default], and the field stays required.
  await pty.expect("Day\uFFFDfake: line \uFFFDgnp.exe (d) *\n  a date, YYYY-MM-DD\n  > ")
  pty.type("\r")
  await pty.expect("  ✗ an answer is required\n  > ")
  pty.type("2025-01-31\r")
  const { code, stdout, screen } = await pty.exited
  assert.equal(code, 0, screen)
  assert.equal(stdout, `${JSON.stringify({ action: "accept", content: { d: "2025-01-31" } })}\n`)
})

test("call at a terminal: after a Ctrl-C, the next question of the same call is declined without asking", T, async () => {
  const pty = inPty(["call", "--stdio", ASK, "ask-twice"])
  await pty.expect(`ask-server asks: First question\n${ANSWER}`)
  pty.type("\x03")
  await pty.expect("  cancelled\n")
  await pty.expect("ask-server asks again: declined (Ctrl-C was pressed)\n")
  const r = await pty.exited
  assert.equal(r.code, 0, r.screen)
  assert.equal(r.stdout, '[{"action":"cancel"},{"action":"decline"}]\n')
  assert.equal(r.screen.includes("Second question"), false)
})

test("fields: a numeric enum's value typed is that value; defaults are checked like answers; text is one safe line", () => {
  // MCP's wire format has enums of strings only, but a server may send numbers: a value typed
  // is that value, before a position in the list.
  const n = fieldOf("n", { type: "integer", enum: [5, 3, 1] }, true)
  assert.deepEqual(n.hints, ["1) 5", "2) 3", "3) 1", "choose one: its value, its name or its number in the list (a value typed is that value)"])
  assert.deepEqual(["3", "5", "1", "2"].map((a) => n.read(a)), [{ value: 3 }, { value: 5 }, { value: 1 }, { value: 3 }])
  const many = fieldOf("m", { type: "array", items: { enum: [10, 2] } }, false)
  assert.deepEqual(many.read("2, 1"), { value: [2, 10] })
  // Defaults that do not fit are not offered.
  for (const [schema, prompt] of [
    [{ type: "string", format: "date", default: "not-a-date" }, "  > "],
    [{ type: "number", minimum: 10, default: 1 }, "  > "],
    [{ type: "string", enum: ["a", "b"], default: "c" }, "  > "],
    [{ type: "boolean", default: "yes" }, "  > "],
    [{ type: "string", pattern: "^[a-z]+$", default: "ABC" }, "  > "],
    [{ type: "string", format: "date", default: "2025-01-31" }, "  [2025-01-31] > "],
  ]) {
    const f = fieldOf("x", schema, true)
    assert.equal(f.prompt, prompt, JSON.stringify(schema))
    if (prompt === "  > ") assert.deepEqual(f.read(""), { error: "an answer is required" }, JSON.stringify(schema))
  }
  // Line breaks and bidirectional overrides in a title or a label cannot fake a line or reorder text.
  assert.equal(clean("ok\nfake: line \u202Egnp.exe \u2066x\u2069"), "ok\uFFFDfake: line \uFFFDgnp.exe \uFFFDx\uFFFD")
  assert.equal(clean("line one\r\nline two \u202E", 2000, { lines: true }), "line one\n  line two \uFFFD")
  assert.equal(fieldOf("k", { type: "string", title: "T\nfake", enum: ["a\nb"] }, false).head, "T\uFFFDfake (k)")
  // A pattern is run with the v flag, on answers of at most 1000 characters, and stopped after a second.
  const p = fieldOf("p", { type: "string", pattern: "^[\\p{L}]+$" }, true)
  assert.deepEqual([p.read("été"), p.read("a1")], [{ value: "été" }, { error: "does not match ^[\\p{L}]+$" }])
  const slow = fieldOf("s", { type: "string", pattern: "^(a+)+$" }, true)
  const started = Date.now()
  assert.deepEqual(slow.read(`${"a".repeat(40)}!`), { value: `${"a".repeat(40)}!` })
  assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`)
  assert.deepEqual(slow.read("b"), { error: "does not match ^(a+)+$" })
  assert.deepEqual(fieldOf("l", { type: "string", pattern: "^a$" }, true).read("b".repeat(1001)), { value: "b".repeat(1001) })
  assert.equal(fieldOf("l", { type: "string", pattern: `^${"a".repeat(201)}$` }, true).hints.at(-1), "text")
})

test("answers: a field named __proto__ is kept as an answer, not taken for the prototype", async () => {
  const input = new PassThrough()
  const output = new PassThrough()
  input.isTTY = output.isTTY = true
  input.setRawMode = () => input
  let shown = ""
  output.on("data", (d) => (shown += d))
  const asker = terminalElicitation({ input, output })
  const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","title":"Proto"},"b":{"type":"string"}}}')
  const answer = asker.waitFor({ server: "s", message: "m", data: { schema } })
  for (const [prompt, keys] of [["[c]ancel > ", "\r"], ["Proto (__proto__)", "kept\r"], ["b\n", "x\r"]]) {
    while (!shown.includes(prompt)) await new Promise((resolve) => setTimeout(resolve, 5))
    shown = shown.slice(shown.indexOf(prompt) + prompt.length)
    input.write(keys)
  }
  const result = await answer
  assert.deepEqual(Object.keys(result.data), ["__proto__", "b"])
  assert.equal(JSON.stringify(result), '{"ok":true,"data":{"__proto__":"kept","b":"x"}}')
  assert.equal(Object.getPrototypeOf(result.data), Object.prototype)
  asker.close()
})

test("a URL is opened without a shell: the program and arguments per platform, http(s) only", () => {
  const url = "https://x.example/?a=1&calc"
  assert.deepEqual(browserCommand(url, "win32"), ["rundll32", ["url.dll,FileProtocolHandler", "https://x.example/?a=1&calc"]])
  assert.deepEqual(browserCommand(url, "darwin"), ["open", ["https://x.example/?a=1&calc"]])
  assert.deepEqual(browserCommand(url, "linux"), ["xdg-open", ["https://x.example/?a=1&calc"]])
  // The parsed URL is what is handed on (a space or a quote cannot start another argument).
  assert.deepEqual(browserCommand('http://h/a b"c', "win32"), ["rundll32", ["url.dll,FileProtocolHandler", "http://h/a%20b%22c"]])
  for (const bad of ["file:///etc/passwd", "javascript:alert(1)", "calc.exe", "ms-settings:", "", "https://"]) {
    assert.equal(browserCommand(bad, "win32"), null, bad)
  }
})
