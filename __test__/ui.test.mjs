// `toolnexus ui` (issue 42): the page, in a real browser (Debian's /usr/bin/chromium driven by
// playwright-core; no browser is downloaded), served by a real `toolnexus ui` subprocess over
// real servers: server-everything, the repo's stdio fixture, a fixture with every kind of form
// field, a server that cannot start, and an OAuth-protected HTTP server. The tests run in order
// on one page: listing (the demo config too), generated forms, an image, an elicitation
// answered in the page, a slow call cancelled, a call followed again after leaving its panel,
// questions withdrawn, a resource read, a prompt, the allowlist editor and disabling a server
// (the file on disk checked to the byte), live re-listing on a file change and on list_changed,
// OAuth sign-in, the token (in the URL's fragment, kept per tab: two instances in one browser)
// and the refusals of a wrong token, Host and Origin. Smaller instances of `toolnexus ui` check
// a symlinked and large config, overlapping reconnects, a change made while it starts, and
// stopping while a server is still connecting.
// Screenshots of each screen go to a folder the test prints, under
// <tmpdir>/toolnexus-ui-screens/ (the last 3 runs are kept).
import { after, before, test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import crypto from "node:crypto"
import fs from "node:fs"
import http from "node:http"
import os from "node:os"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { chromium } from "playwright-core"
import toolnexus from "../index.js"
import { fixture, isAlive, isWatchdog, readPid, repoRoot, serverEverything, tmpDir } from "./helpers.mjs"
import { liveDescendants } from "./compat/proc.mjs"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { MCP_TINY_IMAGE } from "@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js"

const CHROMIUM = "/usr/bin/chromium"
const T = { timeout: 30_000 }
const node = process.execPath
const home = tmpDir()
/** This run's screenshots: one folder per run under one parent, of which the last 3 are kept. */
const screens = path.join(os.tmpdir(), "toolnexus-ui-screens")
fs.mkdirSync(screens, { recursive: true })
const shots = fs.mkdtempSync(path.join(screens, `${new Date().toISOString().replace(/[:.]/g, "-")}-`))
for (const old of fs.readdirSync(screens).sort().reverse().slice(3)) fs.rmSync(path.join(screens, old), { recursive: true, force: true })
console.log(`toolnexus ui screenshots: ${shots}`)

/** The test config: JSONC with comments, which edits must keep. */
const configText = (oauthUrl) => `// toolnexus ui test config: comments and order must survive edits.
{
  "mcpServers": {
    // The MCP reference server.
    "everything": {
      "command": ${JSON.stringify(node)},
      "args": [${JSON.stringify(serverEverything)}, "stdio"],
      "timeout": 20000
    },
    // The repo's stdio fixture.
    "fixture": {
      "command": ${JSON.stringify(node)},
      "args": [${JSON.stringify(fixture("stdio-server"))}, "--tools", "echo,slow,sleep,elicit,grow"]
    },
    // Every kind of form field.
    "form": { "command": ${JSON.stringify(node)}, "args": [${JSON.stringify(fixture("form-server"))}] },
    // This one cannot start.
    "broken": {
      "command": "toolnexus-ui-test-no-such-binary",
      "timeout": 2000
    },
    // OAuth-protected, signed in from the page.
    "secure": { "url": ${JSON.stringify(oauthUrl)}, "timeout": 10000 }
  }
}
`

/** Polls `check` (sync or async) until it returns a truthy value; fails after `timeout` ms. */
async function eventually(check, { timeout = 15_000, message = "condition" } = {}) {
  const end = Date.now() + timeout
  let last
  for (;;) {
    try {
      const value = await check()
      if (value) return value
    } catch (err) {
      last = err
    }
    if (Date.now() > end) throw new Error(`not met within ${timeout} ms: ${message}${last ? ` (${last.message})` : ""}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Every `toolnexus ui` started here, until it exits (`after` stops those a failure left). */
const started = new Set()

/**
 * Starts `toolnexus ui <config>` (`nodeArgs` go to its node); resolves { child, url, port, token,
 * exited, output() } once it printed its URL.
 */
function startUi(config, { cwd = repoRoot, nodeArgs = [] } = {}) {
  const child = spawn(node, [...nodeArgs, path.join(repoRoot, "bin", "toolnexus.mjs"), "ui", config], {
    cwd,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, "config"), NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  })
  started.add(child)
  child.on("exit", () => started.delete(child))
  let stdout = ""
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`toolnexus ui printed no URL within 10 s: ${stdout}${stderr}`)), 10_000)
    child.stdout.setEncoding("utf8").on("data", (d) => {
      stdout += d
      // The token is in the fragment, which no request carries.
      const m = /^(http:\/\/127\.0\.0\.1:(\d+)\/#token=([0-9a-f]{48}))$/m.exec(stdout)
      if (m) {
        clearTimeout(timer)
        resolve({ child, url: m[1], port: Number(m[2]), token: m[3], exited, output: () => ({ stdout, stderr }) })
      }
    })
    child.on("error", reject)
  })
}

/** Stops a ui process with SIGINT; checks it exits 0 and that the servers it ran are gone. */
async function stopUi(ui) {
  const servers = liveDescendants(ui.child.pid).filter((pid) => !isWatchdog(pid))
  ui.child.kill("SIGINT")
  const { code, signal } = await ui.exited
  assert.equal(signal, null, ui.output().stderr)
  assert.equal(code, 0, ui.output().stderr)
  await eventually(() => servers.every((pid) => !isAlive(pid)), { timeout: 10_000, message: `the servers of toolnexus ui (${servers}) exited` })
  return servers
}

/** A plain HTTP request to the ui (any Host header, unlike fetch); resolves { status, headers, body }. */
function raw(port, { method = "GET", path: at = "/", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: at, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (d) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }))
    })
    req.on("error", reject)
    req.end(body)
  })
}

let oauth
let ui
let browser
let page
let configFile
let original

const shot = async (name) => {
  const file = path.join(shots, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}
const server = (name) => page.locator(`.server-item[data-server="${name}"]`)
const openServer = async (name, tab = "tools") => {
  await server(name).click()
  await page.locator(`.server-body[data-server="${name}"] .tab[data-tab="${tab}"]`).click()
}
/** What the edit panel said after Save (waits for it). */
const saidAfterSave = () => eventually(() => page.locator("#panel .saved").textContent(), { message: "the save was answered" })
const openItem = (key) => page.locator(`.items .item[data-item="${key}"]`).click()
const result = () => page.locator('#panel [data-testid="result"]').last()
/** A ui's state as its API gives it (with the token header). */
const apiState = async (of = ui) => {
  const res = await raw(of.port, { path: "/api/state", headers: { host: `127.0.0.1:${of.port}`, "x-toolnexus-token": of.token } })
  assert.equal(res.status, 200, res.body)
  return JSON.parse(res.body)
}
/** A JSON POST to a ui's API with its token; resolves { status, headers, body }. */
const apiPost = (of, at, body) =>
  raw(of.port, { method: "POST", path: at, headers: { host: `127.0.0.1:${of.port}`, "x-toolnexus-token": of.token, "content-type": "application/json" }, body: JSON.stringify(body) })

/** A page of the browser context `context` (the main page's unless told), failing on what it throws. */
async function newPage(where = context) {
  const p = await where.newPage()
  p.setDefaultTimeout(15_000)
  // Anything the page throws fails the test that caused it.
  p.on("pageerror", (err) => {
    throw new Error(`the page threw: ${err.message}`)
  })
  return p
}
let context

before(async () => {
  oauth = await startOAuthServer()
  configFile = path.join(tmpDir(), "mcp.json")
  original = configText(oauth.url)
  fs.writeFileSync(configFile, original)
  ui = await startUi(configFile)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  page = await newPage()
})

after(async () => {
  await browser?.close()
  // SIGINT first, so that each ui closes its servers; SIGKILL only if one does not exit.
  await Promise.all(
    [...started].map(async (child) => {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGINT")
      let timer
      const stopped = await Promise.race([exited.then(() => true), new Promise((resolve) => (timer = setTimeout(resolve, 10_000, false)))])
      clearTimeout(timer)
      if (!stopped) child.kill("SIGKILL")
    }),
  )
  await oauth?.close()
})

test("lists the demo config (examples/mcp.json): statuses, reasons and tools", T, async () => {
  const demo = await startUi("examples/mcp.json")
  const demoPage = await browser.newPage({ viewport: { width: 1280, height: 820 } })
  try {
    await demoPage.goto(demo.url)
    // The token moved to a cookie: the address bar no longer shows it.
    assert.equal(demoPage.url(), `http://127.0.0.1:${demo.port}/`)
    const status = (name) => demoPage.locator(`.server-item[data-server="${name}"] .status`)
    await demoPage.locator('.server-item[data-server="everything"] .status.connected').waitFor()
    await demoPage.locator('.server-item[data-server="notes"] .status.connected').waitFor()
    await demoPage.locator('.server-item[data-server="broken"] .status.failed').waitFor()
    assert.deepEqual(await demoPage.locator(".server-item .server-name").allTextContents(), ["everything", "notes", "search", "broken"])
    assert.equal(await status("search").textContent(), "disabled")
    await demoPage.locator('.items .item[data-item="echo"]').waitFor()
    const everythingTools = await demoPage.locator(".items .item .item-name").allTextContents()
    for (const name of ["echo", "get-sum", "get-tiny-image", "trigger-long-running-operation", "trigger-elicitation-request"]) {
      assert.ok(everythingTools.includes(name), `${name} in ${everythingTools}`)
    }
    assert.match(await demoPage.locator('[data-testid="latency"]').textContent(), /^\d+ ms to connect$/)
    assert.match(await demoPage.locator('[data-testid="info"]').textContent(), /^Everything Reference Server \d+\.\d+\.\d+ · protocol 2025-11-25/)
    await demoPage.screenshot({ path: path.join(shots, "01-demo-config.png"), fullPage: false })

    await demoPage.locator('.server-item[data-server="notes"]').click()
    await demoPage.locator('.server-body[data-server="notes"]').waitFor()
    assert.deepEqual(await demoPage.locator(".items .item .item-name").allTextContents(), ["add_note", "get_note", "list_notes"])

    await demoPage.locator('.server-item[data-server="broken"]').click()
    assert.equal(await demoPage.locator('[data-testid="reason"]').textContent(), 'cannot start "toolnexus-demo-no-such-binary": No such file or directory (os error 2)')
    assert.equal(await demoPage.locator(".items").textContent(), "Nothing listed: the server is failed.")
    await demoPage.screenshot({ path: path.join(shots, "02-demo-failed-server.png") })
  } finally {
    await demoPage.close()
    const ran = await stopUi(demo)
    assert.equal(ran.length, 2, `the two servers that start ran under toolnexus ui: ${ran}`)
  }
})

test("refuses a wrong token, a foreign Host and a foreign Origin; the page carries a strict CSP", T, async () => {
  const host = `127.0.0.1:${ui.port}`
  const REFUSED = "toolnexus ui: missing or wrong token; open the URL `toolnexus ui` printed (with its #token=…)\n"
  // The shell is served without the token, and holds neither it nor anything of the config.
  const shell = await raw(ui.port, { headers: { host } })
  assert.equal(shell.status, 200)
  assert.equal(shell.body.includes(ui.token), false)
  assert.equal(shell.body.includes(configFile), false)
  assert.equal(shell.headers["set-cookie"], undefined)
  assert.equal(
    shell.headers["content-security-policy"],
    "default-src 'self'; img-src 'self' data:; media-src 'self' data:; script-src 'self'; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  )
  assert.doesNotMatch(shell.body, /<script>|<script [^>]*>[^<]/, "no inline script")
  const script = await raw(ui.port, { path: "/app.js", headers: { host } })
  assert.equal(script.status, 200)
  assert.equal(script.body.includes(ui.token), false)

  // Every API route, the event stream included, needs the token in the header: not in the
  // query, not in a cookie; a wrong one, a short one, and one of another byte length (a
  // character outside ASCII) are 401.
  for (const [at, headers] of [
    ["/api/state", {}],
    ["/api/events", {}],
    [`/api/events?token=${ui.token}`, {}],
    [`/api/state?token=${ui.token}`, {}],
    ["/api/state", { cookie: `toolnexus_ui=${ui.token}` }],
    ["/api/state", { "x-toolnexus-token": "f".repeat(48) }],
    ["/api/state", { "x-toolnexus-token": "0123" }],
    ["/api/events", { "x-toolnexus-token": `é${ui.token.slice(1)}` }],
    ["/api/state", { "x-toolnexus-token": `${ui.token}é` }],
  ]) {
    const res = await raw(ui.port, { path: at, headers: { host, ...headers } })
    assert.equal(res.status, 401, `${at} ${JSON.stringify(headers)}`)
    assert.equal(res.body, REFUSED)
  }
  const cookieOnly = await raw(ui.port, { method: "POST", path: "/api/cancel", headers: { host, cookie: `toolnexus_ui=${ui.token}`, "content-type": "application/json" }, body: "{}" })
  assert.equal(cookieOnly.status, 401)
  // With the header, the event stream is served.
  const events = await fetch(`http://${host}/api/events`, { headers: { "x-toolnexus-token": ui.token } })
  assert.equal(events.status, 200)
  assert.equal(events.headers.get("content-type"), "text/event-stream; charset=utf-8")
  await events.body.cancel()

  // DNS rebinding: the right token under another name is still refused.
  const rebound = await raw(ui.port, { path: "/api/state", headers: { host: `evil.example:${ui.port}`, "x-toolnexus-token": ui.token } })
  assert.equal(rebound.status, 403)
  assert.equal(rebound.body, "toolnexus ui: wrong Host header (only 127.0.0.1 and localhost are served)\n")
  assert.equal((await raw(ui.port, { headers: { host: `evil.example:${ui.port}` } })).status, 403)
  assert.equal((await raw(ui.port, { path: "/api/state", headers: { host: `127.0.0.1:${ui.port + 1}`, "x-toolnexus-token": ui.token } })).status, 403)
  // Another origin, even with the token.
  const foreign = await raw(ui.port, {
    method: "POST",
    path: "/api/cancel",
    headers: { host, origin: "http://evil.example", "x-toolnexus-token": ui.token, "content-type": "application/json" },
    body: JSON.stringify({ id: "x" }),
  })
  assert.equal(foreign.status, 403)
  assert.equal(foreign.body, "toolnexus ui: requests from another origin are refused\n")
  assert.equal((await raw(ui.port, { path: "/api/state", headers: { host, origin: `http://localhost:${ui.port + 1}`, "x-toolnexus-token": ui.token } })).status, 403)

  // Bad input from the page is a 400 in words, not a crash.
  const bad = await raw(ui.port, { method: "POST", path: "/api/call", headers: { host, "x-toolnexus-token": ui.token }, body: "{not json" })
  assert.equal(bad.status, 400)
  assert.deepEqual(JSON.parse(bad.body), { error: "the request body is not JSON" })
})

test("lists every server of the config: statuses, the failure's reason, the sign-in a server needs", T, async () => {
  await page.goto(ui.url)
  for (const name of ["everything", "fixture", "form"]) await page.locator(`.server-item[data-server="${name}"] .status.connected`).waitFor()
  await page.locator('.server-item[data-server="broken"] .status.failed').waitFor()
  await page.locator('.server-item[data-server="secure"] .status.failed').waitFor()
  assert.equal(await server("secure").locator(".status").textContent(), "needs sign-in")
  assert.deepEqual(await page.locator(".server-item .server-name").allTextContents(), ["everything", "fixture", "form", "broken", "secure"])
  assert.equal(await server("fixture").locator(".counts").textContent(), "5 tools")
  await shot("03-servers")

  await server("broken").click()
  assert.equal(await page.locator('[data-testid="reason"]').textContent(), 'cannot start "toolnexus-ui-test-no-such-binary": No such file or directory (os error 2)')
  await server("secure").click()
  assert.equal(
    await page.locator('[data-testid="reason"]').textContent(),
    `authorization required: run "toolnexus auth ${configFile} secure" (no token is stored for this server)`,
  )
  await page.getByRole("button", { name: "Sign in" }).waitFor()
  await shot("04-needs-sign-in")
})

test("the token stays in its tab: two toolnexus ui in one browser each keep working, and no cookie is set", T, async () => {
  // The token left the address bar for this tab's sessionStorage.
  assert.equal(page.url(), `http://127.0.0.1:${ui.port}/`)
  assert.equal(await page.evaluate(() => sessionStorage.getItem("toolnexus-ui-token")), ui.token)
  const emptyConfig = path.join(tmpDir(), "mcp.json")
  fs.writeFileSync(emptyConfig, '{ "mcpServers": {} }\n')
  const other = await startUi(emptyConfig)
  const otherPage = await newPage()
  const bare = await newPage()
  try {
    await otherPage.goto(other.url)
    await otherPage.locator("#live.on").waitFor()
    assert.equal(await otherPage.locator(".nav-title").textContent(), "0 servers")
    assert.equal(await otherPage.evaluate(() => sessionStorage.getItem("toolnexus-ui-token")), other.token)
    // The first page, reloaded after the other one opened, still has its own token and stream.
    await page.reload()
    await page.locator("#live.on").waitFor()
    await server("everything").locator(".status.connected").waitFor()
    assert.equal(await page.evaluate(() => sessionStorage.getItem("toolnexus-ui-token")), ui.token)
    assert.deepEqual(await context.cookies(), [])
    // Opened without its token (a new tab, the bare address), the page says what to do.
    await bare.goto(`http://127.0.0.1:${other.port}/`)
    assert.equal(await bare.locator("#banner").textContent(), "This page was opened without its token: open the URL `toolnexus ui` printed, with its #token=…")
    assert.equal(await bare.locator("#live").textContent(), "no token")
  } finally {
    await otherPage.close()
    await bare.close()
    await stopUi(other)
  }
})

test("a generated form with every kind of field: what was filled in is what the tool got", T, async () => {
  await openServer("form")
  await openItem("order")
  // Required marks and defaults are shown.
  assert.equal(await page.locator('#panel label[for$="-item"]').textContent(), "Item")
  assert.equal(await page.locator('#panel label[for$="-item"] + .required').textContent(), " *")
  assert.equal(await page.locator('#panel label[for$="-count"] + .required').count(), 0)
  assert.equal(await page.getByLabel("count").inputValue(), "2")
  assert.equal(await page.getByLabel("size").inputValue(), "1") // "medium", the default
  assert.match(await page.locator("#panel .schema-form").textContent(), /default: medium/)

  // Missing required fields are named and nothing is sent.
  await page.getByRole("button", { name: "Call" }).click()
  assert.deepEqual(await page.locator("#panel .problems li").allTextContents(), ["Item: is required", "address.city: is required"])
  assert.equal(await page.locator('#panel [data-testid="result"]').count(), 0)

  await page.getByLabel("Item").fill("tea")
  await page.getByLabel("count").fill("3")
  await page.getByLabel("size").selectOption({ label: "large" })
  await page.getByLabel("gift").check()
  await page.getByRole("button", { name: "Add item" }).click()
  await page.getByRole("button", { name: "Add item" }).click()
  await page.getByRole("button", { name: "Add item" }).click()
  const rows = page.locator("#panel .array-row input")
  await rows.nth(0).fill("happy")
  await rows.nth(1).fill("dropped")
  await rows.nth(2).fill("birthday")
  await page.locator("#panel .array-row").nth(1).getByRole("button", { name: "Remove" }).click()
  await page.getByLabel("ribbon").check()
  await page.getByLabel("card", { exact: true }).check()
  await page.getByLabel("city").fill("Paris")
  await page.getByRole("button", { name: "Call" }).click()
  await result().waitFor()
  const sent = { item: "tea", count: 3, size: "large", gift: true, notes: ["happy", "birthday"], extras: ["ribbon", "card"], address: { city: "Paris" } }
  assert.deepEqual(JSON.parse(await result().locator(".structured").textContent()), { received: sent })
  assert.equal(await result().locator(".result-head strong").textContent(), "Result")
  await shot("05-generated-form")

  // The raw JSON view holds the same arguments, and edits there are what is sent.
  await page.getByLabel("Raw JSON").check()
  const rawBox = page.getByLabel("Arguments as JSON")
  assert.deepEqual(JSON.parse(await rawBox.inputValue()), sent)
  await rawBox.fill(JSON.stringify({ item: "coffee", address: { city: "Rome", street: "Via Appia" } }))
  await page.getByLabel("Raw JSON").uncheck()
  assert.equal(await page.getByLabel("Item").inputValue(), "coffee")
  assert.equal(await page.getByLabel("street").inputValue(), "Via Appia")
  await page.getByLabel("Raw JSON").check()
  await page.getByRole("button", { name: "Call" }).click()
  await eventually(async () => (await result().locator(".structured").textContent()).includes("coffee"))
  assert.deepEqual(JSON.parse(await result().locator(".structured").textContent()), {
    // The fields are set from the JSON as a whole: what it leaves out is left empty.
    received: { item: "coffee", gift: false, address: { city: "Rome", street: "Via Appia" } },
  })
})

/** The browser's message for JSON.parse(text) (run in the page). */
function jsonErrorOf(text) {
  try {
    JSON.parse(text)
  } catch (err) {
    return err.message
  }
}

test("what a hostile server sends stays text: no markup, no script, no bad media or links", T, async () => {
  await openServer("form")
  await openItem("hostile")
  assert.equal(await page.locator("#panel .tool > .description").textContent(), '<img src=x onerror="window.pwned=1">')
  // A "__proto__" field is a field; a $ref cycle is cut off; an unknown type is a JSON box.
  assert.equal(await page.locator("#panel .field-label").first().textContent(), "<b>proto</b>")
  // The cycle is followed MAX_DEPTH (12) levels down, then the rest is a JSON box.
  assert.equal(await page.locator("#panel fieldset.object").count(), 12)
  assert.equal(await page.locator(`#panel textarea[name="loop${".again".repeat(12)}"]`).count(), 1)
  assert.equal(await page.locator('#panel textarea[name="odd"]').count(), 1)
  await page.locator('#panel textarea[name="odd"]').fill("{nope")
  await page.getByRole("button", { name: "Call" }).click()
  assert.deepEqual(await page.locator("#panel .problems li").allTextContents(), [`odd: is not valid JSON (${await page.evaluate(jsonErrorOf, "{nope")})`])
  await page.locator('#panel textarea[name="odd"]').fill("")
  await page.getByRole("button", { name: "Call" }).click()
  await result().waitFor()
  assert.equal(await result().locator("pre.text").textContent(), '<script>window.pwned=2</script><img src=x onerror="window.pwned=3">')
  assert.equal(await result().locator("img, script, svg").count(), 0)
  assert.equal(await result().locator(".note").textContent(), '[image that cannot be shown: media type "text/html"]')
  assert.equal(await result().locator(".link a").count(), 0)
  assert.equal(await result().locator(".link .mono").textContent(), "javascript:window.pwned=4")
  assert.deepEqual(JSON.parse(await result().locator("pre.json").textContent()), { type: "mystery", payload: { n: 1 } })
  assert.equal(await page.evaluate(() => window.pwned), undefined)
  await shot("06-hostile-server")

  // Raw JSON and back, with property names Object.prototype has: {} leaves the "__proto__"
  // field empty, and a "__proto__" value goes into the field and back out as itself.
  const rawToggle = page.locator("#panel").getByLabel("Raw JSON")
  const rawBox = page.locator("#panel").getByLabel("Arguments as JSON")
  const protoField = page.locator('#panel input[name="__proto__"]')
  await rawToggle.check()
  await rawBox.fill("{}")
  await rawToggle.uncheck()
  assert.equal(await protoField.inputValue(), "")
  await rawToggle.check()
  assert.equal(await rawBox.inputValue(), "{}")
  const given = '{"__proto__":"p","odd":[1]}'
  await rawBox.fill(given)
  await rawToggle.uncheck()
  assert.equal(await protoField.inputValue(), "p")
  assert.equal(await page.locator('#panel textarea[name="odd"]').inputValue(), "[\n  1\n]")
  await rawToggle.check()
  assert.equal(await rawBox.inputValue(), JSON.stringify(JSON.parse(given), null, 2))
  await rawToggle.uncheck()
  // The same through allOf (merged part by part), with "constructor" and "toString" too.
  const merged = await page.evaluate(async () => {
    const { schemaForm } = await import("/schema-form.js")
    const names = ["__proto__", "constructor", "toString"]
    const schema = JSON.parse(`{"type":"object","allOf":[{"properties":{${names.map((n) => `"${n}":{"type":"string"}`).join(",")}}}]}`)
    const form = schemaForm(schema)
    const fields = [...form.element.querySelectorAll("input")].map((i) => i.name)
    form.set({})
    const empty = JSON.stringify(form.value().value)
    form.set(JSON.parse('{"__proto__":"a","constructor":"b","toString":"c"}'))
    return { fields, empty, full: JSON.stringify(form.value().value) }
  })
  assert.deepEqual(merged, { fields: ["__proto__", "constructor", "toString"], empty: "{}", full: '{"__proto__":"a","constructor":"b","toString":"c"}' })
})

test("server-everything: an enum and a boolean from the form; the image it returns renders", T, async () => {
  await openServer("everything")
  await openItem("get-annotated-message")
  await page.getByLabel("messageType").selectOption("success")
  await page.getByLabel("includeImage").check()
  await page.getByRole("button", { name: "Call" }).click()
  await result().locator("img").waitFor()
  assert.equal(await result().locator("pre.text").first().textContent(), "Operation completed successfully")
  const img = result().locator("img")
  await eventually(() => img.evaluate((el) => el.complete && el.naturalWidth > 0), { message: "the image loaded" })
  assert.equal(await img.evaluate((el) => el.naturalWidth), 20)
  const bytes = Buffer.from(MCP_TINY_IMAGE, "base64").length
  assert.equal(await result().locator(".caption").textContent(), `image/png, ${(bytes / 1000).toFixed(1)} kB`)
  await shot("07-image-result")

  await openItem("get-sum")
  await page.getByLabel("a", { exact: true }).fill("2")
  await page.getByLabel("b", { exact: true }).fill("3.5")
  await page.getByRole("button", { name: "Call" }).click()
  await result().waitFor()
  assert.equal(await result().locator("pre.text").textContent(), "The sum of 2 and 3.5 is 5.5.")
})

test("an elicitation is answered in the page, and the result reflects the answer", T, async () => {
  await openServer("everything")
  await openItem("trigger-elicitation-request")
  await page.getByRole("button", { name: "Call" }).click()
  const card = page.getByRole("dialog", { name: "Question from everything" })
  await card.waitFor()
  assert.equal(await card.locator(".message").textContent(), "Please provide inputs for the following fields:")
  // The requested schema's defaults are filled in.
  assert.equal(await card.getByLabel("Integer", { exact: true }).inputValue(), "42")
  await card.getByLabel("String", { exact: true }).fill("Ada Lovelace")
  await card.getByLabel("Boolean", { exact: true }).selectOption("true") // optional, no default: three-way
  await card.getByLabel("Integer", { exact: true }).fill("7")
  await card.getByLabel("Piano").check()
  await shot("08-elicitation")
  await card.getByRole("button", { name: "Accept" }).click()
  await card.waitFor({ state: "detached" })
  await result().waitFor()
  // Its result is three text parts: a headline, the inputs, and the raw elicitation result.
  const [head, rawResult] = (await result().locator("pre.text").allTextContents()).join("\n").split("\n\nRaw result: ")
  assert.equal(
    head,
    "✅ User provided the requested information!\nUser inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n- Favorite Integer: 7\n- Favorite Number: 3.14",
  )
  assert.deepEqual(JSON.parse(rawResult), {
    action: "accept",
    content: {
      name: "Ada Lovelace",
      check: true,
      firstLine: "It was a dark and stormy night.",
      integer: 7,
      number: 3.14,
      untitledSingleSelectEnum: "Monica",
      untitledMultipleSelectEnum: ["Guitar", "Piano"],
      titledSingleSelectEnum: "hero-1",
      titledMultipleSelectEnum: ["fish-1"],
      legacyTitledEnum: "pet-1",
    },
  })

  // Declined, with the fixture's own elicitation.
  await openServer("fixture")
  await openItem("elicit")
  await page.getByRole("button", { name: "Call" }).click()
  const ask = page.getByRole("dialog", { name: "Question from fixture" })
  await ask.getByRole("button", { name: "Decline" }).click()
  await ask.waitFor({ state: "detached" })
  await result().waitFor()
  assert.equal(await result().locator("pre.text").textContent(), '{"action":"decline"}')
})

test("a slow call shows its progress and is cancelled from the page; the call is gone", T, async () => {
  await openServer("everything")
  await openItem("trigger-long-running-operation")
  await page.getByLabel("duration").fill("60")
  await page.getByLabel("steps").fill("120")
  await page.getByRole("button", { name: "Call" }).click()
  const words = page.locator("#panel .progress span")
  await eventually(async () => /^\d+ of 120$/.test(await words.textContent()), { message: "progress shown" })
  assert.equal(await page.locator("#panel .progress progress").getAttribute("max"), "120")
  assert.equal((await apiState()).calls.length, 1)
  assert.equal(await page.locator("#running .running-title").textContent(), "1 call running")
  assert.equal(await page.locator("#running .call-name").textContent(), "everything · trigger-long-running-operation")
  await shot("09-progress")
  await page.locator("#panel").getByRole("button", { name: "Cancel" }).click()
  await result().waitFor()
  assert.equal(await result().locator(".result-head strong").textContent(), "Cancelled (cancelled from the page)")
  assert.equal(await result().getAttribute("class"), "result error")
  assert.equal(await result().locator("pre.text").textContent(), "MCP tool call aborted")
  await page.locator("#running").waitFor({ state: "detached" })
  assert.deepEqual((await apiState()).calls, [])
  assert.equal(await page.locator("#panel .progress").isHidden(), true)
  await shot("10-cancelled")
})

test("a running call outlives its panel: shown again it is followed, and the sidebar cancels it", T, async () => {
  await openServer("fixture")
  await openItem("sleep")
  await page.getByLabel("ms", { exact: true }).fill("60000")
  await page.locator("#panel").getByRole("button", { name: "Call" }).click()
  const entry = page.locator("#running .running-call")
  await entry.waitFor()
  assert.equal(await entry.locator(".call-name").textContent(), "fixture · sleep")
  // Another tool's panel, then this one again: the call is still shown as running here.
  await openItem("echo")
  assert.equal(await page.locator("#panel").getByRole("button", { name: "Cancel" }).isHidden(), true)
  await openItem("sleep")
  const cancel = page.locator("#panel").getByRole("button", { name: "Cancel" })
  assert.equal(await cancel.isVisible(), true)
  assert.equal(await page.locator("#panel").getByRole("button", { name: "Call" }).isDisabled(), true)
  assert.equal(await page.locator("#panel .progress span").textContent(), "running…")
  await shot("10b-running-call-sidebar")
  await entry.getByRole("button", { name: "Cancel" }).click()
  await result().waitFor()
  assert.equal(await result().locator(".result-head strong").textContent(), "Cancelled (cancelled from the page)")
  await page.locator("#running").waitFor({ state: "detached" })
  assert.equal(await cancel.isHidden(), true)
  assert.deepEqual((await apiState()).calls, [])
})

test("cancelling a call that has just ended shows no error above its result", T, async () => {
  await openServer("fixture")
  await openItem("echo")
  // The call's answer is held in the browser once the server has sent it (the call has ended),
  // and the cancel is held until that answer is shown: the cancel then finds no call (404).
  const gate = () => {
    let open
    const opened = new Promise((resolve) => (open = resolve))
    return { open, opened }
  }
  const callEnded = gate()
  const callShown = gate()
  const cancelSent = gate()
  const cancelGoes = gate()
  await page.route("**/api/call", async (route) => {
    const response = await route.fetch()
    callEnded.open()
    await callShown.opened
    await route.fulfill({ response })
  })
  await page.route("**/api/cancel", async (route) => {
    cancelSent.open()
    await cancelGoes.opened
    await route.continue()
  })
  try {
    await page.getByLabel("text", { exact: true }).fill("just in time")
    await page.locator("#panel").getByRole("button", { name: "Call" }).click()
    await callEnded.opened
    await page.locator("#panel").getByRole("button", { name: "Cancel" }).click()
    await cancelSent.opened
    callShown.open()
    await result().waitFor()
    const answered = page.waitForResponse("**/api/cancel")
    cancelGoes.open()
    assert.equal((await answered).status(), 404)
    await page.evaluate(() => window.toolnexusUi.cancels())
    assert.equal(await result().locator("pre.text").textContent(), "just in time")
    assert.equal(await page.locator("#panel .output > *").count(), 1)
  } finally {
    await page.unroute("**/api/call")
    await page.unroute("**/api/cancel")
  }
})

test("a server's open questions are withdrawn once nothing the page started runs on it", T, async () => {
  await openServer("fixture")
  // Two calls on one server: the one that asks is cancelled while the other runs; when that one
  // ends too, the question goes (the page drops its card) and a late answer is a 404 in words.
  const sleeping = apiPost(ui, "/api/call", { id: "withdraw-sleep", server: "fixture", tool: "sleep", args: { ms: 1000 } })
  const asking = apiPost(ui, "/api/call", { id: "withdraw-ask", server: "fixture", tool: "elicit", args: {} })
  const question = await eventually(async () => (await apiState()).elicitations.find((q) => q.server === "fixture"), { message: "the fixture asked" })
  const card = page.locator(`[data-elicitation="${question.id}"]`)
  await card.waitFor()
  assert.equal((await apiPost(ui, "/api/cancel", { id: "withdraw-ask" })).status, 200)
  assert.equal(JSON.parse((await asking).body).cancelled, "cancelled from the page")
  assert.equal(JSON.parse((await sleeping).body).output, "slept 1000")
  assert.deepEqual((await apiState()).elicitations, [])
  await card.waitFor({ state: "detached" })
  const late = await apiPost(ui, "/api/elicit", { id: question.id, action: "decline" })
  assert.equal(late.status, 404)
  assert.deepEqual(JSON.parse(late.body), { error: 'that question was withdrawn: nothing that "fixture" was asked to do is running any more' })
})

test("reads a resource and a resource template, and gets a prompt", T, async () => {
  await openServer("everything", "resources")
  await openItem("demo://resource/static/document/architecture.md")
  await page.locator("#panel").getByRole("button", { name: "Read" }).click()
  await result().waitFor()
  const doc = fs.readFileSync(path.join(path.dirname(serverEverything), "docs", "architecture.md"), "utf8")
  assert.equal(await result().locator("pre.text").textContent(), doc)
  assert.equal(await result().locator(".resource-head").textContent(), "demo://resource/static/document/architecture.mdtext/markdown")
  await shot("11-resource")

  await openServer("everything", "templates")
  await openItem("demo://resource/dynamic/text/{resourceId}")
  await page.getByLabel("resourceId").fill("3")
  await page.locator("#panel").getByRole("button", { name: "Read" }).click()
  await result().waitFor()
  assert.equal(await page.locator("#panel .section-title.mono").textContent(), "demo://resource/dynamic/text/3")
  assert.match(await result().locator("pre.text").textContent(), /^Resource 3: This is a plaintext resource/)

  // A query expression's variables ({?q,limit}) may be left out; a path variable may not.
  await openServer("form", "templates")
  await openItem("form://search/{kind}{?q,limit}")
  await page.locator("#panel").getByRole("button", { name: "Read" }).click()
  assert.deepEqual(await page.locator("#panel .problems li").allTextContents(), ["kind: is required"])
  await page.getByLabel("kind").fill("books")
  await page.getByLabel("q", { exact: true }).fill("rust mcp")
  await page.locator("#panel").getByRole("button", { name: "Read" }).click()
  await result().waitFor()
  assert.equal(await page.locator("#panel .section-title.mono").textContent(), "form://search/books?q=rust%20mcp")
  assert.equal(await result().locator("pre.text").textContent(), "read form://search/books?q=rust%20mcp")

  await openServer("everything", "prompts")
  await openItem("args-prompt")
  await page.getByRole("button", { name: "Get prompt" }).click()
  assert.deepEqual(await page.locator("#panel .problems li").allTextContents(), ["city: is required"])
  await page.getByLabel("city").fill("Paris")
  await page.getByRole("button", { name: "Get prompt" }).click()
  await result().waitFor()
  assert.equal(await result().locator(".role").textContent(), "user")
  assert.equal(await result().locator("pre.text").textContent(), "What's weather in Paris?")
  await shot("12-prompt")
})

test("the allowlist editor: tick tools, see the diff, save; the file keeps its comments", T, async () => {
  await openServer("fixture", "allowlist")
  const boxes = page.locator("#panel .allow-item input")
  assert.deepEqual(await page.locator("#panel .allow-item .mono").allTextContents(), ["echo", "slow", "sleep", "elicit", "grow"])
  for (const box of await boxes.all()) assert.equal(await box.isChecked(), true)
  await page.getByRole("button", { name: "None" }).click()
  await page.getByLabel("echo").check()
  await page.getByLabel("grow").check()
  await page.getByRole("button", { name: "Show diff" }).click()
  const diff = page.locator('#panel [data-testid="diff"]')
  await diff.waitFor()
  assert.deepEqual(await diff.locator(".diff-row.add .code").allTextContents(), [
    `      "args": [${JSON.stringify(fixture("stdio-server"))}, "--tools", "echo,slow,sleep,elicit,grow"],`,
    '      "tools": {',
    '        "echo": true,',
    '        "grow": true',
    "      }",
  ])
  assert.deepEqual(await diff.locator(".diff-row.del .code").allTextContents(), [`      "args": [${JSON.stringify(fixture("stdio-server"))}, "--tools", "echo,slow,sleep,elicit,grow"]`])
  assert.deepEqual(await page.locator('#panel [data-testid="notes"] li').allTextContents(), [
    'Claude, Cursor, Windsurf, Gemini CLI and the other clients of this file do not read "tools": only toolnexus applies this list.',
  ])
  await shot("13-allowlist-diff")
  await page.locator("#panel").getByRole("button", { name: "Save" }).click()
  assert.equal(await saidAfterSave(), `Saved ${configFile}.`)
  const expected = original.replace(
    `"--tools", "echo,slow,sleep,elicit,grow"]\n`,
    `"--tools", "echo,slow,sleep,elicit,grow"],\n      "tools": {\n        "echo": true,\n        "grow": true\n      }\n`,
  )
  assert.notEqual(expected, original)
  assert.equal(fs.readFileSync(configFile, "utf8"), expected)
  // Re-read from the file: only echo and grow are allowed now (no restart: same server).
  await openServer("fixture", "tools")
  await eventually(async () => (await page.locator(".items .item.off .item-name").allTextContents()).join() === "slow,sleep,elicit")
  await shot("14-allowlist-saved")

  // Saving a diff made before the file changed on disk is refused in words.
  await openServer("fixture", "allowlist")
  await page.getByRole("button", { name: "All" }).click()
  await page.getByRole("button", { name: "Show diff" }).click()
  await page.locator('#panel [data-testid="diff"]').waitFor()
  fs.writeFileSync(configFile, `${expected}\n`)
  await page.locator("#panel").getByRole("button", { name: "Save" }).click()
  assert.equal(
    await saidAfterSave(),
    `${configFile} changed on disk since this change was shown; nothing was saved. Look at the new diff and save again.`,
  )
  assert.equal(fs.readFileSync(configFile, "utf8"), `${expected}\n`)
  fs.writeFileSync(configFile, expected)
  original = expected
})

test("a tool whose name loadMcp made safe is shown, called and allowlisted by its server's name for it", T, async () => {
  const form = (await apiState()).servers.find((s) => s.name === "form")
  assert.deepEqual(form.tools.map((t) => t.name), ["order", "hostile", "find.v2"])
  await openServer("form")
  await openItem("find.v2")
  await page.getByLabel("query").fill("books")
  await page.locator("#panel").getByRole("button", { name: "Call" }).click()
  await result().waitFor()
  assert.equal(await result().locator("pre.text").textContent(), "found books")

  await openServer("form", "allowlist")
  assert.deepEqual(await page.locator("#panel .allow-item .mono").allTextContents(), ["order", "hostile", "find.v2"])
  await page.getByRole("button", { name: "None" }).click()
  await page.getByLabel("find.v2").check()
  await page.getByRole("button", { name: "Show diff" }).click()
  const diff = page.locator('#panel [data-testid="diff"]')
  await diff.waitFor()
  // The name the loaded config's filter matches (a safe "find_v2" would match no tool).
  assert.deepEqual(await diff.locator(".diff-row.add .code").allTextContents(), [
    `    "form": { "command": ${JSON.stringify(node)}, "args": [${JSON.stringify(fixture("form-server"))}],`,
    '      "tools": {',
    '        "find.v2": true',
    "      }",
    "    },",
  ])
})

test("disabling a server from the page writes the config in its dialect and stops it", T, async () => {
  await server("broken").click()
  await page.locator('.server-body[data-server="broken"] .server-head').getByRole("button", { name: "Disable" }).click()
  const diff = page.locator('#panel [data-testid="diff"]')
  await diff.waitFor()
  assert.deepEqual(await diff.locator(".diff-row.add .code").allTextContents(), ['      "timeout": 2000,', '      "disabled": true'])
  await shot("15-disable-diff")
  await page.locator("#panel").getByRole("button", { name: "Save" }).click()
  assert.equal(await saidAfterSave(), `Saved ${configFile}.`)
  const expected = original.replace(
    `"command": "toolnexus-ui-test-no-such-binary",\n      "timeout": 2000\n`,
    `"command": "toolnexus-ui-test-no-such-binary",\n      "timeout": 2000,\n      "disabled": true\n`,
  )
  assert.notEqual(expected, original)
  assert.equal(fs.readFileSync(configFile, "utf8"), expected)
  await server("broken").locator(".status.disabled").waitFor()
  await page.locator('.server-body[data-server="broken"] .server-head').getByRole("button", { name: "Enable" }).waitFor()
  original = expected
})

test("live: a server added to the file appears, and a server's list_changed re-lists its tools", T, async () => {
  const withNotes = original.replace(
    `    // OAuth-protected`,
    `    // Added while the page is open.\n    "notes": { "command": ${JSON.stringify(node)}, "args": [${JSON.stringify(path.join(repoRoot, "examples", "servers", "notes.mjs"))}] },\n    // OAuth-protected`,
  )
  fs.writeFileSync(configFile, withNotes)
  await server("notes").locator(".status.connected").waitFor()
  assert.deepEqual(await page.locator(".server-item .server-name").allTextContents(), ["everything", "fixture", "form", "broken", "notes", "secure"])
  assert.equal(await server("notes").locator(".counts").textContent(), "3 tools")

  await openServer("fixture")
  await openItem("grow")
  await page.getByLabel("name").fill("sprout")
  await page.getByRole("button", { name: "Call" }).click()
  await result().waitFor()
  assert.equal(await result().locator("pre.text").textContent(), "added sprout")
  await page.locator('.items .item[data-item="sprout"]').waitFor()
  assert.deepEqual(await page.locator(".items .item .item-name").allTextContents(), ["echo", "slow", "sleep", "elicit", "grow", "sprout"])
  assert.equal(await server("fixture").locator(".counts").textContent(), "6 tools")
  await shot("16-live-relisted")
})

test("OAuth: the page starts the loopback sign-in of a server that needs it", T, async () => {
  await server("secure").click()
  await page.getByRole("button", { name: "Sign in" }).click()
  const link = page.getByTestId("signin-link")
  await link.waitFor()
  const href = await link.getAttribute("href")
  assert.match(href, new RegExp(`^${oauth.url.replace(/\/mcp$/, "").replaceAll(".", "\\.")}/authorize\\?`))
  await shot("17-sign-in")
  // The fixture approves at once: following the link is the user clicking "Allow".
  assert.equal((await fetch(href)).status, 200)
  await server("secure").locator(".status.connected").waitFor()
  await eventually(async () => (await page.locator("#signin").textContent()) === "Signed in: secure is connected.", { message: "the page said it signed in" })
  assert.equal(await server("secure").locator(".counts").textContent(), "2 tools")
  assert.equal(oauth.stats.authorizations, 1)
})

test("a symlinked, large config: the file it points to is watched, overlapping reconnects leave one process, a save sends a digest", T, async () => {
  // The config is a symlink to a file in another folder, larger than a request body may be.
  const marker = `ui-test-${crypto.randomBytes(6).toString("hex")}`
  const realFile = path.join(tmpDir(), "real.jsonc")
  const link = path.join(tmpDir(), "mcp.jsonc")
  const padding = `// ${"x".repeat(4_500_000)}\n`
  const one = `"one": { "command": ${JSON.stringify(node)}, "args": [${JSON.stringify(fixture("stdio-server"))}, "--tools", "echo", "--name", "${marker}"] }`
  const off = (tools = "") => `"off": { "command": "toolnexus-ui-test-no-such-binary", "disabled": true${tools} }`
  const text = (...servers) => `${padding}{\n  "mcpServers": {\n    ${servers.join(",\n    ")}\n  }\n}\n`
  fs.writeFileSync(realFile, text(one, off()))
  fs.symlinkSync(realFile, link)
  const big = await startUi(link)
  /** The live processes under this ui whose command line has the marker (the server `one`). */
  const markedServers = () =>
    liveDescendants(big.child.pid).filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(marker)
      } catch {
        return false
      }
    })
  try {
    await eventually(async () => (await apiState(big)).servers.find((s) => s.name === "one")?.status === "connected", { message: "one connected" })
    assert.equal(markedServers().length, 1)

    // Three reconnects at once: each newer one aborts the older; one process is left.
    const answers = await Promise.all([1, 2, 3].map(() => apiPost(big, "/api/reconnect", { server: "one" })))
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200])
    assert.equal(JSON.parse(answers[2].body).status, "connected")
    assert.equal((await apiState(big)).servers.find((s) => s.name === "one").status, "connected")
    assert.equal(markedServers().length, 1)

    // The file the link points to changes: the page follows.
    const added = `"added": { "command": "toolnexus-ui-test-no-such-binary", "disabled": true }`
    fs.writeFileSync(realFile, text(one, off(), added))
    await eventually(async () => (await apiState(big)).servers.map((s) => s.name).join() === "one,off,added", { timeout: 5000, message: "the server added to the linked file is shown" })

    // A save sends the SHA-256 of the text its diff was made from, not that (large) text.
    const edit = { server: "off", edit: { tools: { echo: true } } }
    const preview = await apiPost(big, "/api/edit/preview", edit)
    assert.equal(preview.status, 200, preview.body)
    const { baseHash, unchanged } = JSON.parse(preview.body)
    assert.equal(baseHash, crypto.createHash("sha256").update(fs.readFileSync(link)).digest("hex"))
    assert.equal(unchanged, false)
    const stale = await apiPost(big, "/api/edit/save", { ...edit, baseHash: "0".repeat(64) })
    assert.equal(stale.status, 409)
    assert.deepEqual(JSON.parse(stale.body), { error: `${link} changed on disk since this change was shown; nothing was saved. Look at the new diff and save again.` })
    const saved = await apiPost(big, "/api/edit/save", { ...edit, baseHash })
    assert.equal(saved.status, 200, saved.body)
    assert.equal(JSON.parse(saved.body).saved, true)
    assert.equal(fs.readFileSync(link, "utf8").startsWith(padding), true)
    assert.deepEqual(toolnexus.parseMcpConfig(link).off.tools, { echo: true })

    // A body larger than 4 MiB is read to its end and answered 413, not cut off.
    const huge = await raw(big.port, { method: "POST", path: "/api/prompt", headers: { host: `127.0.0.1:${big.port}`, "x-toolnexus-token": big.token }, body: "x".repeat(5 * 1024 * 1024) })
    assert.equal(huge.status, 413)
    assert.deepEqual(JSON.parse(huge.body), { error: "the request body is larger than 4194304 bytes" })
  } finally {
    await stopUi(big)
  }
})

test("a change to the file made while toolnexus ui starts, before it watches the file, is applied", T, async () => {
  const dir = tmpDir()
  const config = path.join(dir, "mcp.json")
  const entry = { command: "toolnexus-ui-test-no-such-binary", disabled: true }
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { first: entry } }))
  // A module hook rewrites the file when toolnexus ui imports its editor: after it has read the
  // file, before it watches it.
  const hooks = path.join(dir, "hooks.mjs")
  fs.writeFileSync(
    hooks,
    `import fs from "node:fs"
let done = false
export async function resolve(specifier, context, next) {
  if (!done && specifier === "./config-edit.mjs" && String(context.parentURL).endsWith("/cli/ui.mjs")) {
    done = true
    fs.writeFileSync(${JSON.stringify(config)}, ${JSON.stringify(JSON.stringify({ mcpServers: { first: entry, second: entry } }))})
  }
  return next(specifier, context)
}
`,
  )
  const preload = path.join(dir, "preload.mjs")
  fs.writeFileSync(preload, `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
  const early = await startUi(config, { nodeArgs: ["--import", pathToFileURL(preload).href] })
  try {
    await eventually(async () => (await apiState(early)).servers.map((s) => s.name).join() === "first,second", { timeout: 5000, message: "the server written during start-up is shown" })
  } finally {
    await stopUi(early)
  }
})

test("stopping while a server is still connecting: toolnexus ui exits 0 and the server is gone", T, async () => {
  const dir = tmpDir()
  const pidFile = path.join(dir, "pid")
  const events = path.join(dir, "events")
  const config = path.join(dir, "mcp.json")
  const starting = { command: node, args: [fixture("never-ready-server")], env: { PID_FILE: pidFile, EVENT_FILE: events }, timeout: 60_000 }
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { starting } }))
  const slow = await startUi(config)
  const pid = await eventually(() => readPid(pidFile), { message: "the server started" })
  assert.equal((await apiState(slow)).servers[0].status, "connecting")
  slow.child.kill("SIGTERM")
  const { code, signal } = await slow.exited
  assert.equal(signal, null, slow.output().stderr)
  assert.equal(code, 0, slow.output().stderr)
  // Gone with toolnexus ui. Whether it read the end of its input before the engine's SIGTERM
  // (100 ms later) depends on the machine's load, so the events file is not asserted: a fresh-
  // clone CI run under load saw the SIGTERM come first.
  assert.equal(isAlive(pid), false)
})

test("stopping: SIGINT ends toolnexus ui with status 0 and every server it started", T, async () => {
  const ran = await stopUi(ui)
  // everything, fixture, form and notes (broken is disabled, secure is remote).
  assert.equal(ran.length, 4, `the servers it ran: ${ran}`)
  assert.match(ui.output().stderr, /toolnexus ui: interrupted by SIGINT, stopping\n$/)
  console.log(`toolnexus ui screenshots: ${shots}`)
})
