// Machines sign in (issue 40) against a real authorisation server: oidc-provider (lib/idp.mjs)
// on 127.0.0.1, in front of an MCP server that verifies its JWTs and DPoP proofs with jose
// (fixtures/protected-server.mjs). No browser, no registration, no redirect: the grant runs when
// the server answers 401, its token is stored, used again, asked for again when refused, and a
// refused grant fails in words, once. DPoP binds every token to one key per server, kept in the
// token store, through both nonce challenges. The workload-identity negatives run the
// conformance suite's own authorisation server. Every output is searched for every secret.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { createPrivateKey } from "node:crypto"
import { calculateJwkThumbprint, exportPKCS8, generateKeyPair } from "jose"
import { listMcpTools, loadMcp, parseMcpConfig } from "toolnexus"
import { deferredCleanup, repoRoot, runNode, tmpConfig, tmpDir, tmpFile } from "./helpers.mjs"
import { cli } from "./lib/cli.mjs"
import { assertNoSecret } from "./lib/gateway.mjs"
import { startIdp } from "./lib/idp.mjs"
import { suiteNode } from "./conformance/gate.mjs"
import { startProtectedServer } from "./fixtures/protected-server.mjs"

const defer = deferredCleanup(afterEach)
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
const T = { timeout: 60_000 }

async function servers(idpOptions) {
  const idp = await startIdp(idpOptions)
  defer(() => idp.close())
  const rs = await startProtectedServer(idp)
  defer(() => rs.close())
  return { idp, rs }
}

/** An app's token store in memory, with what it holds. */
function memoryStore() {
  const records = new Map()
  return {
    records,
    get: async (key) => records.get(key),
    set: async (key, record) => void records.set(key, record),
    delete: async (key) => void records.delete(key),
  }
}

/** The thumbprint of the DPoP key a token store record keeps (its base64 PKCS#8 `dpopKey`). */
async function storedKey(record) {
  const jwk = createPrivateKey({ key: Buffer.from(record.dpopKey, "base64"), format: "der", type: "pkcs8" }).export({ format: "jwk" })
  return calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y })
}

const entry = (url, auth) => ({ mcpServers: { svc: { type: "http", url, timeout: 10_000, auth } } })
const text = (result) => result.content.map((c) => c.text).join("")

test("client_credentials with a secret: no browser, no registration; the token is stored, used again, asked for again when refused; a wrong secret fails once, in words", T, async () => {
  const { idp, rs } = await servers()
  process.env.TN_SVC_SECRET = idp.serviceSecret
  const config = entry(rs.url, { grant: "client_credentials", clientId: "service", clientSecret: "${TN_SVC_SECRET}", scopes: ["tools:read"] })
  const tokenStore = memoryStore()

  const listed = await listMcpTools(config, { tokenStore })
  assert.equal(listed.status.svc, "connected", listed.errors.svc)
  assert.deepEqual(listed.tools.svc.map((t) => t.name), ["whoami"])
  // oidc-provider takes only HTTP Basic from this client: rmcp's exchange chose it.
  assert.deepEqual(idp.stats.grants, ["client_credentials client_secret_basic"])
  assert.equal(idp.stats.authorizations, 0)
  assert.equal(idp.stats.registrations, 0)
  assert.ok(rs.stats.requests.length > 0 && rs.stats.requests.every((r) => r.endsWith(" Bearer")), rs.stats.requests.join())
  const [record] = tokenStore.records.values()
  assert.equal(record.server, "svc")
  assert.equal(record.issuer, idp.issuer)
  assert.equal(record.credentials.client_id, "service")
  assert.equal(record.dpopKey, undefined, "bearer tokens: no key kept")

  // Used again from the store: no new grant.
  const source = await loadMcp(config, { tokenStore })
  try {
    assert.equal(source.status.svc, "connected", source.errors.svc)
    assert.equal(text(await source.tools[0].execute({})), "service")
    assert.equal(idp.stats.grants.length, 1)
    // The server refuses the token (as when it expires): the grant runs again, the call succeeds.
    rs.revoke()
    assert.equal(text(await source.tools[0].execute({})), "service")
    assert.deepEqual(idp.stats.grants, ["client_credentials client_secret_basic", "client_credentials client_secret_basic"])
  } finally {
    await source.close()
  }

  // A wrong secret: one token request, refused, in words; never asked again.
  process.env.TN_SVC_SECRET = "not-the-secret"
  const refused = await listMcpTools(config, { tokenStore: memoryStore() })
  assert.equal(refused.status.svc, "failed")
  assert.equal(refused.errors.svc, "OAuth: the authorization server refused the client_credentials grant: invalid_client: client authentication failed")
  assert.equal(idp.stats.grants.length, 3)
  assertNoSecret(JSON.stringify([listed, refused, source.errors, [...tokenStore.records.keys()]]), [...idp.minted, idp.serviceSecret], "the results")
})

test("client_credentials with private_key_jwt: a key from a file signs the assertion; a foreign key and a missing file fail in words", T, async () => {
  const { idp, rs } = await servers()
  const keyFile = tmpFile("service.pem")
  fs.writeFileSync(keyFile, idp.serviceKeyPem, { mode: 0o600 })
  const config = entry(rs.url, { grant: "client_credentials", clientId: "service-jwt", privateKeyFile: keyFile })

  const listed = await listMcpTools(config, { tokenStore: memoryStore() })
  assert.equal(listed.status.svc, "connected", listed.errors.svc)
  assert.deepEqual(idp.stats.grants, ["client_credentials private_key_jwt"])
  assert.deepEqual([...rs.stats.subjects], ["service-jwt"])

  // A key the authorisation server does not know: refused, once.
  const foreign = tmpFile("foreign.pem")
  fs.writeFileSync(foreign, await exportPKCS8((await generateKeyPair("ES256", { extractable: true })).privateKey))
  const refused = await listMcpTools(entry(rs.url, { grant: "client_credentials", clientId: "service-jwt", privateKeyFile: foreign }), { tokenStore: memoryStore() })
  assert.equal(refused.status.svc, "failed")
  assert.match(refused.errors.svc, /^OAuth: the authorization server refused the client_credentials grant: invalid_client: /)
  assert.equal(idp.stats.grants.length, 2)

  // A key file that is not there: no token request at all.
  const gone = path.join(tmpDir(), "gone.pem")
  const missing = await listMcpTools(entry(rs.url, { grant: "client_credentials", clientId: "service-jwt", privateKeyFile: gone }), { tokenStore: memoryStore() })
  assert.equal(missing.errors.svc, `OAuth: the private key file ${gone} is missing`)
  assert.equal(idp.stats.tokenRequests, 2)
  assertNoSecret(JSON.stringify([listed, refused, missing]), [...idp.minted, idp.serviceKeyPem], "the results")
})

test("DPoP: every token is bound to the server's one key, kept in the token store; both nonces are answered once; proofs on POST, GET and DELETE", T, async () => {
  const { idp, rs } = await servers({ dpopNonce: true })
  rs.requireDpop()
  rs.requireNonce()
  process.env.TN_SVC_SECRET = idp.serviceSecret
  // dpop is not set: both sides take it, so tokens are bound.
  const config = entry(rs.url, { grant: "client_credentials", clientId: "service", clientSecret: "${TN_SVC_SECRET}" })
  const tokenStore = memoryStore()

  const source = await loadMcp(config, { tokenStore })
  try {
    assert.equal(source.status.svc, "connected", source.errors.svc)
    assert.equal(text(await source.tools[0].execute({})), "service")
    // The authorisation server asked for a nonce once; the proof with it got the token.
    assert.equal(idp.stats.tokenRequests, 2)
    assert.equal(idp.stats.proofs, 2)
    assert.equal(idp.stats.nonceChallenges, 1)
    // Refused, the token is asked for again with the nonce this connection remembers, and bound
    // to the same key.
    rs.revoke()
    assert.equal(text(await source.tools[0].execute({})), "service")
    assert.equal(idp.stats.tokenRequests, 3)
    assert.equal(idp.stats.nonceChallenges, 1)
  } finally {
    await source.close()
  }
  // The MCP server: no token, then its nonce (asked once more by the request that cannot act,
  // whose refusal carries it), then every request with a good proof; the revoked token; the
  // session's DELETE too.
  assert.deepEqual(rs.stats.refusals, ["none", "nonce", "nonce", "revoked"])
  assert.ok(rs.stats.requests.every((r) => r.endsWith(" DPoP")), rs.stats.requests.join())
  assert.ok(rs.stats.requests.includes("DELETE DPoP"), rs.stats.requests.join())
  assert.equal(rs.stats.keys.size, 1)

  // The key is in the store with the token, and it is the key the tokens are bound to.
  const [record] = tokenStore.records.values()
  const thumbprint = await storedKey(record)
  assert.deepEqual([...rs.stats.keys], [thumbprint])

  // Another run with the same store: the stored token and its key, no new grant (this
  // connection learns the server's nonce afresh).
  const again = await loadMcp(config, { tokenStore })
  try {
    assert.equal(text(await again.tools[0].execute({})), "service")
  } finally {
    await again.close()
  }
  assert.equal(idp.stats.tokenRequests, 3)
  assert.deepEqual(rs.stats.refusals.slice(4), ["nonce", "nonce"])
  assert.deepEqual([...rs.stats.keys], [thumbprint])
  assertNoSecret(JSON.stringify([source.errors, again.errors]), [...idp.minted, record.dpopKey], "the results")
})

test("DPoP with a person's sign-in: the code exchange and the refresh carry proofs of the one key kept in the store", T, async () => {
  const { idp, rs } = await servers({ refreshTokens: true })
  rs.requireDpop()
  const tokenStore = memoryStore()
  const authorize = async (url) => void (await idp.browse(url, { user: "ada" }))
  const config = entry(rs.url, { clientId: "toolnexus-cli", scopes: ["tools:read"] })
  const source = await loadMcp(config, { authorize, tokenStore })
  try {
    assert.equal(source.status.svc, "connected", source.errors.svc)
    assert.equal(text(await source.tools[0].execute({})), "ada")
    assert.deepEqual(idp.stats.grants, ["authorization_code none"])
    // The server refuses the token: refreshed with a proof of the same key, never authorised again.
    rs.revoke()
    assert.equal(text(await source.tools[0].execute({})), "ada")
    assert.deepEqual(idp.stats.grants, ["authorization_code none", "refresh_token none"])
    assert.equal(idp.stats.proofs, 2)
    assert.equal(idp.stats.authorizations, 1)
  } finally {
    await source.close()
  }
  assert.ok(rs.stats.requests.every((r) => r.endsWith(" DPoP")), rs.stats.requests.join())
  const [record] = tokenStore.records.values()
  assert.deepEqual([...rs.stats.keys], [await storedKey(record)])
  assertNoSecret(JSON.stringify(source.errors), idp.minted, "the results")
})

test("DPoP, refused: a server that keeps asking for a nonce fails the request in words, never signing in again; private_key_jwt makes a new assertion for the nonce retry", T, async () => {
  const { idp, rs } = await servers({ dpopNonce: true })
  rs.requireDpop()
  rs.requireNonce({ rotate: true })
  const keyFile = tmpFile("service.pem")
  fs.writeFileSync(keyFile, idp.serviceKeyPem, { mode: 0o600 })
  const config = entry(rs.url, { grant: "client_credentials", clientId: "service-jwt", privateKeyFile: keyFile })
  const listed = await listMcpTools(config, { tokenStore: memoryStore() })
  assert.equal(listed.status.svc, "failed")
  assert.equal(listed.errors.svc, "DPoP proof rejected: the server keeps asking for a nonce")
  // One grant: the authorisation server's nonce retry carried a new client assertion (a reused
  // one is refused), and the server's refusals asked for no new token.
  assert.deepEqual(idp.stats.grants, ["client_credentials private_key_jwt", "client_credentials private_key_jwt"])
  assert.equal(idp.stats.nonceChallenges, 1)
  assert.deepEqual(rs.stats.refusals, ["none", "nonce", "nonce", "nonce"])
  assert.deepEqual(rs.stats.requests, [])
})

test("dpop: false sends bearer tokens although both sides take DPoP", T, async () => {
  const { idp, rs } = await servers()
  rs.requireDpop()
  process.env.TN_SVC_SECRET = idp.serviceSecret
  const config = entry(rs.url, { grant: "client_credentials", clientId: "service", clientSecret: "${TN_SVC_SECRET}", dpop: false })
  const listed = await listMcpTools(config, { tokenStore: memoryStore() })
  // The fixture takes unbound tokens as Bearer wherever DPoP is offered: this one was never bound.
  assert.equal(listed.status.svc, "connected", listed.errors.svc)
  assert.equal(idp.stats.proofs, 0)
  assert.ok(rs.stats.requests.every((r) => r.endsWith(" Bearer")))
})

test("jwt-bearer (workload identity): the token file is read again at each sign-in, so a rotated token is used; a refused assertion fails once, in words; a missing file asks nothing", T, async () => {
  const { idp, rs } = await servers()
  const tokenFile = tmpFile("mcp-token")
  fs.writeFileSync(tokenFile, `${await idp.workloadSign({ sub: "runner-1" })}\n`)
  const config = entry(rs.url, { grant: "jwt-bearer", clientId: "workload", assertionFile: tokenFile })
  const source = await loadMcp(config, { tokenStore: memoryStore() })
  try {
    assert.equal(source.status.svc, "connected", source.errors.svc)
    assert.deepEqual(idp.stats.grants, [`${JWT_BEARER} none`])
    assert.deepEqual(idp.stats.assertions, ["runner-1"])
    // The platform rotates the token; the server refuses the old access token: the new file's
    // token is the assertion of the next grant.
    fs.writeFileSync(tokenFile, await idp.workloadSign({ sub: "runner-2" }))
    rs.revoke()
    assert.equal(text(await source.tools[0].execute({})), "workload")
    assert.deepEqual(idp.stats.assertions, ["runner-1", "runner-2"])
  } finally {
    await source.close()
  }

  // An expired assertion: refused, in the server's words, and not asked again.
  fs.writeFileSync(tokenFile, await idp.workloadSign({ exp: Math.floor(Date.now() / 1000) - 60 }))
  const refused = await listMcpTools(config, { tokenStore: memoryStore() })
  assert.equal(refused.status.svc, "failed")
  assert.match(refused.errors.svc, /^OAuth: the authorization server refused the jwt-bearer grant: invalid_grant: /)
  assert.equal(idp.stats.grants.length, 3)

  // No file: refused before any request to the authorization server.
  fs.rmSync(tokenFile)
  const missing = await listMcpTools(config, { tokenStore: memoryStore() })
  assert.equal(missing.errors.svc, `OAuth: the workload token file ${tokenFile} is missing`)
  assert.equal(idp.stats.tokenRequests, 3)
  assertNoSecret(JSON.stringify([source.errors, refused, missing]), idp.minted, "the results")
})

test("config: a machine grant's fields are checked, and parseMcpConfig gives them back", () => {
  const servers = parseMcpConfig({
    mcpServers: {
      a: { url: "https://a/mcp", auth: { grant: "jwt-bearer", assertionFile: "/var/run/secrets/tokens/mcp", dpop: true } },
      b: { url: "https://b/mcp", auth: { grant: "client_credentials", clientId: "svc" } },
      c: { url: "https://c/mcp", auth: { grant: "client_credentials", clientId: "svc", clientSecret: "s", redirectPort: 8080 } },
    },
  })
  assert.deepEqual(servers.a.auth, { grant: "jwt-bearer", assertionFile: "/var/run/secrets/tokens/mcp", dpop: true })
  assert.deepEqual(servers.b, { type: "invalid", enabled: true, timeout: 30000, error: 'mcpServers.b.auth: grant "client_credentials" needs clientSecret or privateKey' })
  assert.equal(servers.c.error, 'mcpServers.c.auth.redirectPort is not used by grant "client_credentials" (no browser)')
})

test("the CLI: toolnexus auth and list sign a machine in with no browser, and print no secret", T, async () => {
  const { idp, rs } = await servers()
  const home = tmpDir()
  const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, "config"), TN_SVC_SECRET: idp.serviceSecret }
  const file = tmpConfig(entry(rs.url, { grant: "client_credentials", clientId: "service", clientSecret: "${TN_SVC_SECRET}" }))
  const authorised = await cli(["auth", file, "svc"], { env })
  assert.equal(authorised.code, 0, authorised.stderr)
  assert.equal(authorised.stdout, "authorised svc as service (1 tools)\n")
  const listed = await cli(["list", file, "--json"], { env })
  assert.equal(listed.code, 0, listed.stderr)
  assert.equal(JSON.parse(listed.stdout).status.svc, "connected")
  assert.equal(idp.stats.grants.length, 1, "list used the stored token")
  const shown = await cli(["auth", "--list"], { env })
  assert.match(shown.stdout, new RegExp(`^svc  ${rs.url.replaceAll(".", "\\.")}  as service\n  issuer ${idp.issuer.replaceAll(".", "\\.")} · client service · `, "m"))
  assertNoSecret(authorised.stdout + authorised.stderr + listed.stdout + listed.stderr + shown.stdout + shown.stderr, [...idp.minted, idp.serviceSecret], "the CLI's output")
})

// The suite's workload-identity scenario with the negative example tokens: the client fails, the
// suite's authorisation server rejects the assertion, and the client neither retries nor falls
// back to another grant.
for (const [token, check] of [
  ["wrong_audience_jwt", "wif-assertion-audience"],
  ["expired_jwt", "wif-assertion-expired"],
]) {
  test(`workload identity with the suite's ${token}: refused as the suite expects, never retried`, T, async () => {
    const out = tmpDir()
    const suite = path.join(repoRoot, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
    const client = path.join(repoRoot, "__test__", "conformance", "client.mjs")
    const node = suiteNode()
    assert.ok(node, "the suite's Node (>= 22) is installed by scripts/setup-test-deps.sh")
    const run = await runNode(suite, {
      node,
      args: ["client", "--command", `exec ${process.execPath} ${client}`, "--scenario", "auth/wif-jwt-bearer", "--spec-version", "2025-11-25", "--force", "--timeout", "20000", "-o", out],
      env: { ...process.env, WIF_ASSERTION: token },
      timeout: 45_000,
    })
    const found = []
    const walk = (d) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, e.name)
        if (e.isDirectory()) walk(full)
        else found.push(full)
      }
    }
    walk(out)
    const checksFile = found.find((f) => f.endsWith("checks.json"))
    assert.ok(checksFile, `no checks.json: ${run.stdout}${run.stderr}`)
    const checks = JSON.parse(fs.readFileSync(checksFile, "utf8"))
    const status = (id) => checks.filter((c) => c.id === id).map((c) => c.status)
    assert.deepEqual(status(check), ["FAILURE"], JSON.stringify(checks, null, 1))
    assert.deepEqual(status("wif-no-retry"), [])
    assert.deepEqual(status("wif-grant-fallback"), [])
    const stderr = fs.readFileSync(found.find((f) => f.endsWith("stderr.txt")), "utf8")
    assert.match(stderr, /^server not usable: failed: OAuth: the authorization server refused the jwt-bearer grant: invalid_grant: /m)
    // The tokens the suite handed over are JWTs: none is in anything the client printed.
    const stdout = found.filter((f) => f.endsWith("stdout.txt")).map((f) => fs.readFileSync(f, "utf8"))
    assert.doesNotMatch(stderr + stdout.join(""), /eyJ/)
  })
}
