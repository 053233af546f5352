// serve's `auth` and `accessLog` options (issue 22), checked and normalised in lib/options.js
// before the native server sees them: the shapes it is handed, the refusals in words (never
// quoting a token), the wrapper around an `auth.tokens` function; and `toolnexus serve`'s auth
// flags, whose mistakes are exit 2 before any server starts.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { once } from "node:events"
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"
import { leakCheck, nodeFixture, readPid, repoRoot, runNode, tmpConfig, tmpDir, tmpFile } from "./helpers.mjs"

const { serveOptions } = createRequire(import.meta.url)("../lib/serve-options.js")

const T = { timeout: 30000 }
const BIN = path.join(repoRoot, "bin", "toolnexus.mjs")
const SECRET = "tok-SECRET-4f2a9c"
const TE = (message) => ({ name: "TypeError", message })

leakCheck(afterEach)

/** serveOptions' auth, functions shown as "[function]" so shapes compare with deepEqual. */
const authOf = (auth) => JSON.parse(JSON.stringify(serveOptions({ auth }).auth, (_k, v) => (typeof v === "function" ? "[function]" : v)))

test("serve options: auth and accessLog are normalised into what the native server is handed", () => {
  assert.deepEqual(serveOptions({}), {
    stateless: undefined,
    allowedHosts: undefined,
    allowedOrigins: undefined,
    sessionIdleTimeout: undefined,
    maxSessions: undefined,
    auth: undefined,
    accessLog: undefined,
    stateKey: undefined,
    replicaUrl: undefined,
    stateStore: undefined,
    metrics: undefined,
    limits: undefined,
  })
  assert.deepEqual(serveOptions({ auth: "none" }).auth, { none: true })
  // `metrics`: a boolean, else a TypeError in words.
  assert.equal(serveOptions({ metrics: true }).metrics, true)
  assert.equal(serveOptions({ metrics: false }).metrics, false)
  assert.throws(() => serveOptions({ metrics: "yes" }), { name: "TypeError", message: "toolnexus: metrics must be a boolean, got string" })
  assert.equal(serveOptions({ auth: null, accessLog: false }).auth, undefined)
  assert.equal(serveOptions({ accessLog: false }).accessLog, undefined)

  // Static tokens: subjects filled in by 1-based place, scopes default [].
  assert.deepEqual(
    authOf({
      tokens: ["alpha", { token: "beta", scopes: ["read", "write"] }, { token: "gamma", subject: "ci-bot" }],
      tools: { read: ["files_read*", "git_?og"], "*": ["echo"] },
      prompts: { read: ["summar*"] },
      resources: { admin: ["file:///etc/*"] },
    }),
    {
      tokens: [
        { token: "alpha", subject: "token-1", scopes: [] },
        { token: "beta", subject: "token-2", scopes: ["read", "write"] },
        { token: "gamma", subject: "ci-bot", scopes: [] },
      ],
      tools: [
        { scope: "read", globs: ["files_read*", "git_?og"] },
        { scope: "*", globs: ["echo"] },
      ],
      prompts: [{ scope: "read", globs: ["summar*"] }],
      resources: [{ scope: "admin", globs: ["file:///etc/*"] }],
    },
  )

  // OAuth, every field; an empty token list beside it is no token list.
  const oauth = {
    issuer: "https://auth.example.com/realms/main",
    audience: "https://mcp.example.com/mcp",
    requiredScopes: ["mcp:use"],
    jwksUri: "https://auth.example.com/realms/main/keys",
    introspection: { clientId: "gateway", clientSecret: "s3cr3t", endpoint: "https://auth.example.com/introspect" },
    clockSkew: 0,
  }
  assert.deepEqual(authOf({ tokens: [], oauth }), { oauth })
  assert.deepEqual(authOf({ oauth: { issuer: "http://127.0.0.1:4000" } }), { oauth: { issuer: "http://127.0.0.1:4000" } })
  assert.deepEqual(authOf({ oauth: { issuer: "http://localhost:4000/", clockSkew: 600 } }), {
    oauth: { issuer: "http://localhost:4000/", clockSkew: 600 },
  })
  assert.deepEqual(authOf({ oauth: { issuer: "http://[::1]:4000" } }), { oauth: { issuer: "http://[::1]:4000" } })

  // A function, and both at once.
  assert.deepEqual(authOf({ tokens: () => null }), { verify: "[function]" })
  assert.deepEqual(authOf({ tokens: async () => null, oauth: { issuer: "https://a.example" } }), {
    verify: "[function]",
    oauth: { issuer: "https://a.example" },
  })

  // The caller's objects are copied, not kept: changing them later changes nothing served.
  const scopes = ["read"]
  const globs = ["a_*"]
  const served = serveOptions({ auth: { tokens: [{ token: "alpha", scopes }], tools: { read: globs } } }).auth
  scopes.push("admin")
  globs.push("*")
  assert.deepEqual(served.tokens[0].scopes, ["read"])
  assert.deepEqual(served.tools[0].globs, ["a_*"])
})

test("serve options: a bad auth or accessLog is a TypeError in words that never quotes a token", () => {
  const cases = [
    [{}, 'toolnexus: auth needs tokens or oauth (or "none")'],
    [{ tokens: [] }, 'toolnexus: auth needs tokens or oauth (or "none")'],
    [{ tools: { read: ["*"] } }, 'toolnexus: auth needs tokens or oauth (or "none")'],
    [SECRET, 'toolnexus: auth must be "none" or an object { tokens?, oauth?, tools?, prompts?, resources? }, got a string other than "none"'],
    [[SECRET], "toolnexus: auth must be \"none\" or an object { tokens?, oauth?, tools?, prompts?, resources? }, got an array"],
    [{ token: SECRET }, "toolnexus: auth.token is not an option here (known: tokens, oauth, tools, prompts, resources)"],
    [{ tokens: SECRET }, "toolnexus: auth.tokens must be an array of tokens (strings or { token, subject?, scopes? }) or a function (token) => principal | null, got string"],
    [{ tokens: [SECRET, ""] }, "toolnexus: auth.tokens[1] must be a non-empty string"],
    [{ tokens: [SECRET, 5] }, "toolnexus: auth.tokens[1] must be a token string or { token, subject?, scopes? }, got number"],
    [{ tokens: [`${SECRET} `] }, "toolnexus: auth.tokens[0] must not contain spaces or control characters (a client could never send it)"],
    [{ tokens: [`${SECRET}\n`] }, "toolnexus: auth.tokens[0] must not contain spaces or control characters (a client could never send it)"],
    [{ tokens: ["x".repeat(16385)] }, "toolnexus: auth.tokens[0] must be at most 16384 characters"],
    [{ tokens: [SECRET, { token: SECRET }] }, "toolnexus: auth.tokens[1] is the same token as auth.tokens[0]"],
    [{ tokens: [{ token: SECRET, subject: "" }] }, "toolnexus: auth.tokens[0].subject must be a non-empty string"],
    [{ tokens: [{ token: SECRET, scopes: "read" }] }, "toolnexus: auth.tokens[0].scopes must be an array of scope names (non-empty strings without spaces)"],
    [{ tokens: [{ token: SECRET, scopes: ["read write"] }] }, "toolnexus: auth.tokens[0].scopes must be an array of scope names (non-empty strings without spaces)"],
    [{ tokens: [{ token: SECRET, scope: ["read"] }] }, "toolnexus: auth.tokens[0].scope is not an option here (known: token, subject, scopes)"],
    [{ tokens: [{ subject: "a" }] }, "toolnexus: auth.tokens[0].token must be a non-empty string"],
    [{ oauth: "https://a.example" }, "toolnexus: auth.oauth must be an object { issuer, audience?, requiredScopes?, jwksUri?, introspection?, clockSkew? }, got string"],
    [{ oauth: {} }, "toolnexus: auth.oauth.issuer is required (the authorisation server's URL)"],
    [{ oauth: { issuer: 5 } }, "toolnexus: auth.oauth.issuer must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got number"],
    [{ oauth: { issuer: SECRET } }, "toolnexus: auth.oauth.issuer must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got a string that is not a URL"],
    [{ oauth: { issuer: `http://auth.example.com/?k=${SECRET}` } }, "toolnexus: auth.oauth.issuer must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got http://auth.example.com"],
    [{ oauth: { issuer: "ftp://127.0.0.1" } }, "toolnexus: auth.oauth.issuer must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got ftp://127.0.0.1"],
    [{ oauth: { issuer: `https://user:${SECRET}@auth.example.com` } }, "toolnexus: auth.oauth.issuer must not hold a user name or password"],
    [{ oauth: { issuer: "https://auth.example.com/?tenant=1" } }, "toolnexus: auth.oauth.issuer must have no query or fragment (RFC 8414)"],
    [{ oauth: { issuer: "https://a.example", audience: "" } }, "toolnexus: auth.oauth.audience must be a non-empty string (the served URL, e.g. https://mcp.example.com/mcp), got string"],
    [{ oauth: { issuer: "https://a.example", requiredScopes: "mcp" } }, "toolnexus: auth.oauth.requiredScopes must be an array of scope names (non-empty strings without spaces)"],
    [{ oauth: { issuer: "https://a.example", requiredScope: ["mcp"] } }, "toolnexus: auth.oauth.requiredScope is not an option here (known: issuer, audience, requiredScopes, jwksUri, introspection, clockSkew)"],
    [{ oauth: { issuer: "https://a.example", jwksUri: "http://keys.example.com/jwks" } }, "toolnexus: auth.oauth.jwksUri must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got http://keys.example.com"],
    [{ oauth: { issuer: "https://a.example", introspection: true } }, "toolnexus: auth.oauth.introspection must be an object { clientId, clientSecret, endpoint? }, got boolean"],
    [{ oauth: { issuer: "https://a.example", introspection: { clientSecret: SECRET } } }, "toolnexus: auth.oauth.introspection.clientId must be a non-empty string"],
    [{ oauth: { issuer: "https://a.example", introspection: { clientId: "gw", clientSecret: 5 } } }, "toolnexus: auth.oauth.introspection.clientSecret must be a non-empty string"],
    [{ oauth: { issuer: "https://a.example", introspection: { clientId: "gw", clientSecret: SECRET, endpoint: "x" } } }, "toolnexus: auth.oauth.introspection.endpoint must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got a string that is not a URL"],
    [{ oauth: { issuer: "https://a.example", clockSkew: 601 } }, "toolnexus: auth.oauth.clockSkew must be a number of seconds from 0 to 600, got 601"],
    [{ oauth: { issuer: "https://a.example", clockSkew: -1 } }, "toolnexus: auth.oauth.clockSkew must be a number of seconds from 0 to 600, got -1"],
    [{ oauth: { issuer: "https://a.example", clockSkew: "60" } }, "toolnexus: auth.oauth.clockSkew must be a number of seconds from 0 to 600, got string"],
    [{ tokens: [SECRET], tools: ["read"] }, 'toolnexus: auth.tools must be an object of scope → globs of tool names, e.g. { "read": ["files_*"] }, got an array'],
    [{ tokens: [SECRET], tools: { read: "files_*" } }, 'toolnexus: auth.tools["read"] must be an array of globs of tool names (strings)'],
    [{ tokens: [SECRET], prompts: { "": ["*"] } }, 'toolnexus: auth.prompts has an empty scope name ("*" means any authenticated caller)'],
    [{ tokens: [SECRET], resources: { read: [5] } }, 'toolnexus: auth.resources["read"] must be an array of globs of resource URIs (strings)'],
  ]
  for (const [auth, message] of cases) {
    assert.throws(() => serveOptions({ auth }), TE(message), JSON.stringify(auth)?.slice(0, 200))
    assert.ok(!message.includes(SECRET) && !message.includes("s3cr3t"))
  }
  assert.throws(() => serveOptions({ accessLog: "stderr" }), TE("toolnexus: accessLog must be true, false or a function (entry) => void, got string"))
  // The other options keep their checks and words.
  assert.throws(() => serveOptions({ stateless: "yes", auth: {} }), TE("toolnexus: stateless must be a boolean, got string"))
  assert.throws(() => serveOptions({ maxSessions: 0 }), { name: "Error", message: "toolnexus: maxSessions must be a whole number from 1 to 1e9, got 0" })
})

test("serve options: an auth.tokens function is called through a wrapper that always resolves a checked principal", async () => {
  const seen = []
  const principals = {
    alice: { subject: "alice", scopes: ["read"], claims: { team: "core", n: 1 } },
    bare: { subject: "bare" },
    nulls: { subject: "nulls", scopes: null, claims: null },
  }
  const { verify } = serveOptions({
    auth: {
      tokens(token) {
        seen.push(token)
        if (token === "sync-throw") throw new Error("lookup failed")
        if (token === "reject") return Promise.reject(new Error("store down"))
        if (token === "undefined") return undefined
        if (token in principals) return token === "bare" ? Promise.resolve(principals.bare) : principals[token]
        if (token === "string") return "alice"
        if (token === "no-subject") return { scopes: [] }
        if (token === "empty-subject") return { subject: "" }
        if (token === "bad-scopes") return { subject: "a", scopes: ["read", 5] }
        if (token === "scope-string") return { subject: "a", scopes: "read" }
        if (token === "bad-claims") return { subject: "a", claims: ["x"] }
        if (token === "class-claims") return { subject: "a", claims: new Map() }
        if (token === "cyclic") {
          const claims = {}
          claims.self = claims
          return { subject: "a", claims }
        }
        return null
      },
    },
  }).auth

  // Never a synchronous throw: a promise, rejected with the function's own error.
  const thrown = verify("sync-throw")
  assert.ok(thrown instanceof Promise)
  await assert.rejects(thrown, { message: "lookup failed" })
  await assert.rejects(verify("reject"), { message: "store down" })

  assert.equal(await verify("unknown"), null)
  assert.equal(await verify("undefined"), null)
  assert.deepEqual(await verify("alice"), principals.alice)
  assert.notEqual(await verify("alice"), principals.alice, "a copy, not the app's object")
  assert.deepEqual(await verify("bare"), { subject: "bare", scopes: [], claims: {} })
  assert.deepEqual(await verify("nulls"), { subject: "nulls", scopes: [], claims: {} })

  const P = "toolnexus: auth.tokens function must resolve to"
  const refused = [
    ["string", `${P} { subject, scopes?, claims? } or null, got string`],
    ["no-subject", `${P} a principal whose subject is a non-empty string, got undefined`],
    ["empty-subject", `${P} a principal whose subject is a non-empty string, got string`],
    ["bad-scopes", `${P} a principal whose scopes are an array of strings`],
    ["scope-string", `${P} a principal whose scopes are an array of strings`],
    ["bad-claims", `${P} a principal whose claims are a plain object, got an array`],
    ["class-claims", `${P} a principal whose claims are a plain object, got object`],
    ["cyclic", `${P} a principal whose claims are JSON (no cycles or BigInt)`],
  ]
  for (const [token, message] of refused) await assert.rejects(verify(token), TE(message), token)
  assert.ok(seen.includes("sync-throw") && seen.includes("cyclic"), "the function got each presented token")
})

test("serve options: accessLog true writes JSON lines on stderr; a function is guarded", async () => {
  const entry = { time: "2026-12-02T04:00:00.000Z", principal: "alice", http: "POST", path: "/mcp", method: "tools/call", tool: "echo", status: 200, ms: 3 }
  const write = process.stderr.write
  const written = []
  process.stderr.write = (chunk) => {
    written.push(String(chunk))
    return true
  }
  try {
    serveOptions({ accessLog: true }).accessLog(entry)
  } finally {
    process.stderr.write = write
  }
  assert.deepEqual(written, [`${JSON.stringify(entry)}\n`])

  const got = []
  serveOptions({ accessLog: (e) => got.push(e) }).accessLog(entry)
  assert.deepEqual(got, [entry])

  const warned = once(process, "warning")
  const log = serveOptions({
    accessLog: () => {
      throw new Error("disk full")
    },
  }).accessLog
  assert.doesNotThrow(() => log(entry))
  const [warning] = await warned
  assert.equal(warning.name, "ToolnexusWarning")
  assert.equal(warning.message, "toolnexus: accessLog threw: disk full")
})

/** A folder with an mcp.json of no servers, so a run that got past its checks would serve at once. */
function emptyConfig() {
  return tmpConfig({ mcpServers: {} })
}

/** `toolnexus serve <args>` from `cwd`; resolves { code, stdout, stderr }. */
const serveCli = (args, { env = {}, cwd = repoRoot } = {}) =>
  runNode(BIN, { args: ["serve", ...args], env: { ...process.env, ...env }, cwd, timeout: 25000 })

test("toolnexus serve: a bad auth flag is exit 2 in words, before any server starts, never printing a token", T, async () => {
  const config = emptyConfig()
  const dir = path.dirname(config)
  const file = (name, text) => {
    const p = path.join(dir, name)
    fs.writeFileSync(p, text)
    return p
  }
  const blank = file("blank.txt", "# the CI token goes here\n\n   \n")
  const broken = file("broken.json", `{\n  "tokens": ["${SECRET}"\n}\n`)
  const list = file("list.json", `["${SECRET}"]`)
  const typo = file("typo.json", JSON.stringify({ tokens: [SECRET], tool: { read: ["*"] } }))
  const duplicate = file("duplicate.json", JSON.stringify({ tokens: [SECRET] }))
  const tokens = file("tokens.txt", `${SECRET}\n`)
  const missing = path.join(dir, "missing.txt")
  const usage = "Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]\nRun `toolnexus serve --help` for details.\n"

  const cases = [
    [["--no-auth", "--auth-token-env", "TN_TOKEN"], `toolnexus serve: --no-auth cannot be combined with --auth-token-env\n${usage}`],
    [["--oauth-issuer", "https://a.example", "--no-auth"], `toolnexus serve: --no-auth cannot be combined with --oauth-issuer\n${usage}`],
    [["--auth-token-env", "TN_NOT_SET"], "toolnexus serve: --auth-token-env TN_NOT_SET: the environment variable TN_NOT_SET is not set\n"],
    [["--auth-token-env", "TN_EMPTY"], "toolnexus serve: --auth-token-env TN_EMPTY: the environment variable TN_EMPTY is empty\n"],
    [["--auth-token-file", blank], `toolnexus serve: --auth-token-file ${blank} holds no token (one per line; blank lines and # comments are ignored)\n`],
    [["--auth-token-file", missing], `toolnexus serve: cannot read --auth-token-file ${missing}: no such file\n`],
    [["--auth-token-file", dir], `toolnexus serve: cannot read --auth-token-file ${dir}: it is a folder\n`],
    [["--auth-file", broken], `toolnexus serve: --auth-file ${broken} is not valid JSON (line 3, column 1)\n`],
    [["--auth-file", list], `toolnexus serve: --auth-file ${list} must hold a JSON object { tokens?, oauth?, tools?, prompts?, resources? }\n`],
    [["--auth-file", typo], `toolnexus serve: auth.tool is not an option here (known: tokens, oauth, tools, prompts, resources) (in --auth-file ${typo} or the flags)\n`],
    [["--auth-file", duplicate, "--auth-token-file", tokens], `toolnexus serve: auth.tokens[1] is the same token as auth.tokens[0] (in --auth-file ${duplicate} or the flags)\n`],
    [["--oauth-scopes", "mcp"], `toolnexus serve: --oauth-scopes needs --oauth-issuer (or oauth.issuer in --auth-file)\n${usage}`],
    [["--oauth-issuer", "http://auth.example.com"], "toolnexus serve: auth.oauth.issuer must be an https:// URL (http:// only for localhost, 127.0.0.1 or [::1]), got http://auth.example.com\n"],
    [["--stdio", "--auth-token-env", "TN_TOKEN"], `toolnexus serve: --auth-token-env is for HTTP serving, not --stdio\n${usage}`],
    [["--stdio", "--access-log"], `toolnexus serve: --access-log is for HTTP serving, not --stdio\n${usage}`],
  ]
  const env = { TN_TOKEN: SECRET, TN_EMPTY: "  " }
  const runs = await Promise.all(cases.map(([args]) => serveCli([config, "--addr", "127.0.0.1:0", ...args], { env })))
  runs.forEach(({ code, stdout, stderr }, i) => {
    const [args, expected] = cases[i]
    assert.deepEqual({ code, stdout, stderr }, { code: 2, stdout: "", stderr: expected }, args.join(" "))
    assert.ok(!stderr.includes(SECRET))
  })

  // A server in the config is never started when the flags are wrong.
  const pidFile = tmpFile("server.pid")
  const withServer = tmpConfig({ mcpServers: { s: { command: nodeFixture("stdio-server", "--tools", "echo"), env: { PID_FILE: pidFile } } } })
  const run = await serveCli([withServer, "--addr", "127.0.0.1:0", "--auth-token-env", "TN_NOT_SET"])
  assert.equal(run.code, 2)
  assert.equal(readPid(pidFile), null, "the config's server was started")
})

test("toolnexus serve --help names the auth flags", T, async () => {
  const { code, stdout } = await serveCli(["--help"], { cwd: tmpDir() })
  assert.equal(code, 0)
  for (const flag of ["--auth-token-env NAME", "--auth-token-file PATH", "--auth-file PATH", "--oauth-issuer URL", "--oauth-audience URL", "--oauth-scopes a,b", "--oauth-jwks-uri URL", "--no-auth", "--access-log"]) {
    assert.ok(stdout.includes(flag), flag)
  }
})
