// The `toolnexus auth` command as a real subprocess, against an OAuth-protected streamable-HTTP
// MCP server on 127.0.0.1 (__test__/fixtures/oauth-server.mjs): auth --no-browser, auth --list,
// list marking the server, auth --logout. The token store lives in a temporary XDG_CONFIG_HOME /
// HOME, never the user's.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import path from "node:path"
import { spawn } from "node:child_process"
import { deferredCleanup, repoRoot, tmpConfig, tmpDir } from "./helpers.mjs"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { assertNoToken } from "./lib/oauth.mjs"

// After each test: no child process of this one is left (checked in /proc).
deferredCleanup(afterEach)

const home = tmpDir()
process.env.HOME = home
process.env.XDG_CONFIG_HOME = path.join(home, "config")

const T = { timeout: 60_000 }

/** Runs the CLI with the temporary home; `onLine` sees stdout lines as they come. */
function cli(args, { onLine } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, "bin", "toolnexus.mjs"), ...args], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    let pending = ""
    child.stdout.setEncoding("utf8").on("data", (d) => {
      stdout += d
      pending += d
      const lines = pending.split("\n")
      pending = lines.pop()
      for (const line of lines) onLine?.(line)
    })
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

test("toolnexus auth --no-browser, auth --list, list marks the server, auth --logout", T, async () => {
  const server = await startOAuthServer()
  try {
    const config = tmpConfig({ mcpServers: { secure: { url: server.url, timeout: 10_000 } } })

    const needs = await cli(["list", config])
    assert.equal(needs.code, 1)
    assert.match(needs.stdout, new RegExp(`secure +authorization required: run "toolnexus auth ${config.replaceAll("/", "\\/")} secure" \\(no token is stored for this server\\)`))

    // The printed URL is "opened" by fetching it, as the user's browser would.
    let opened
    const authorised = await cli(["auth", config, "secure", "--no-browser"], {
      onLine: (line) => {
        if (line.startsWith("http")) opened = fetch(line)
      },
    })
    assert.equal(authorised.code, 0, authorised.stderr)
    assert.equal((await opened).status, 200)
    const issuer = new URL("/", server.url).href
    assert.match(authorised.stdout, /Open this URL to authorise secure:\nhttp:\/\/127\.0\.0\.1:\d+\/authorize\?/)
    assert.match(authorised.stdout, /authorised secure as ada@example\.com \(2 tools\)\n$/)
    assertNoToken(authorised.stdout + authorised.stderr, server)

    const listed = await cli(["auth", "--list"])
    assert.equal(listed.code, 0)
    assert.match(listed.stdout, new RegExp(`^secure  ${server.url}  as ada@example\\.com\\n  issuer ${issuer} · client `))
    assert.match(listed.stdout, /refreshable/)
    assertNoToken(listed.stdout, server)

    const connected = await cli(["list", config])
    assert.equal(connected.code, 0, connected.stdout + connected.stderr)
    assert.equal(server.stats.authorizations, 1)

    const out = await cli(["auth", "--logout", "secure"])
    assert.equal(out.code, 0)
    assert.equal(out.stdout, "forgot the credentials of secure\n")
    const none = await cli(["auth", "--list"])
    assert.match(none.stdout, /^no stored credentials/)
    const again = await cli(["auth", "--logout", "secure"])
    assert.equal(again.code, 1)

    const usage = await cli(["auth", config])
    assert.equal(usage.code, 2)
    assert.match(usage.stderr, /expected <config> <name>/)
  } finally {
    await server.close()
  }
})
