// serve's `stateKey` and `replicaUrl` options (issue 25, replicas that serve any request), checked
// and normalised in lib/serve-options.js before the native server sees them: keys become Buffers
// (strings as UTF-8, copies of the caller's bytes), the URL loses a trailing slash; refusals are
// TypeErrors in words that give a key's length, never the key.
import { test } from "node:test"
import assert from "node:assert/strict"
import { createRequire } from "node:module"
import { createToolkit } from "toolnexus"

const { serveOptions } = createRequire(import.meta.url)("../lib/serve-options.js")

const TE = (message) => ({ name: "TypeError", message })
const KEY = "k3y-SECRET-0123456789abcdef"
const ADVICE = "(32 random bytes are best: openssl rand -base64 32)"

test("serve options: stateKey becomes an array of Buffers, the first sealing; replicaUrl loses a trailing slash", () => {
  const one = serveOptions({ stateKey: KEY })
  assert.deepEqual(one.stateKey, [Buffer.from(KEY, "utf8")])
  assert.ok(Buffer.isBuffer(one.stateKey[0]))
  assert.equal(one.replicaUrl, undefined)

  // UTF-8 bytes count, not characters: 8 two-byte characters are 16 bytes.
  assert.deepEqual(serveOptions({ stateKey: "éééééééé" }).stateKey, [Buffer.from("éééééééé", "utf8")])
  assert.equal(serveOptions({ stateKey: "éééééééé" }).stateKey[0].length, 16)

  const bytes = new Uint8Array(32).map((_, i) => i)
  const raw = Buffer.alloc(16, 7)
  const rotated = serveOptions({ stateKey: ["new-key-that-seals-now", bytes, raw] }).stateKey
  assert.deepEqual(rotated, [Buffer.from("new-key-that-seals-now"), Buffer.from(bytes), Buffer.alloc(16, 7)])
  assert.ok(rotated.every((b) => Buffer.isBuffer(b)))
  // Copies: changing the caller's bytes later changes nothing served.
  bytes[0] = 99
  raw[0] = 99
  assert.equal(rotated[1][0], 0)
  assert.equal(rotated[2][0], 7)
  // A Uint8Array view of part of a buffer is just its bytes.
  const view = new Uint8Array(new ArrayBuffer(40), 8, 20).fill(5)
  assert.deepEqual(serveOptions({ stateKey: view }).stateKey, [Buffer.alloc(20, 5)])
  // Sixteen keys in rotation at most.
  assert.equal(serveOptions({ stateKey: Array.from({ length: 16 }, (_, i) => `key-number-${String(i).padStart(6, "0")}`) }).stateKey.length, 16)
  assert.equal(serveOptions({ stateKey: null }).stateKey, undefined)

  for (const [given, passed] of [
    ["http://10.0.0.5:8808", "http://10.0.0.5:8808"],
    ["http://10.0.0.5:8808/", "http://10.0.0.5:8808"],
    ["https://replica-2.internal", "https://replica-2.internal"],
    ["https://replica-2.internal/", "https://replica-2.internal"],
    ["http://[fd00::5]:8808/", "http://[fd00::5]:8808"],
  ]) {
    assert.equal(serveOptions({ stateKey: KEY, replicaUrl: given }).replicaUrl, passed, given)
  }
})

test("serve options: a bad stateKey or replicaUrl is a TypeError in words that never quotes a key", () => {
  const cases = [
    [{ stateKey: 5 }, "toolnexus: stateKey must be a string, a Buffer or Uint8Array, or an array of them (the first seals, all open), got number"],
    [{ stateKey: { key: KEY } }, "toolnexus: stateKey must be a string, a Buffer or Uint8Array, or an array of them (the first seals, all open), got object"],
    [{ stateKey: new ArrayBuffer(32) }, "toolnexus: stateKey must be a string, a Buffer or Uint8Array, or an array of them (the first seals, all open), got object"],
    [{ stateKey: [] }, "toolnexus: stateKey must hold at least one key (an empty array)"],
    [{ stateKey: "" }, `toolnexus: stateKey must be at least 16 bytes, got 0 ${ADVICE}`],
    [{ stateKey: "SECRET-15-bytes" }, `toolnexus: stateKey must be at least 16 bytes, got 15 ${ADVICE}`],
    [{ stateKey: Buffer.alloc(15) }, `toolnexus: stateKey must be at least 16 bytes, got 15 ${ADVICE}`],
    [{ stateKey: [KEY, "SECRET-short"] }, `toolnexus: stateKey[1] must be at least 16 bytes, got 12 ${ADVICE}`],
    [{ stateKey: [KEY, 5] }, "toolnexus: stateKey[1] must be a string, a Buffer or a Uint8Array, got number"],
    [{ stateKey: [[KEY]] }, "toolnexus: stateKey[0] must be a string, a Buffer or a Uint8Array, got an array"],
    [{ stateKey: Array(17).fill(KEY) }, "toolnexus: stateKey holds 17 keys; at most 16 can be in rotation"],
    [{ stateKey: KEY, replicaUrl: 8808 }, "toolnexus: replicaUrl must be an http:// or https:// URL other replicas reach this one at (e.g. http://10.0.0.5:8808), got number"],
    [{ stateKey: KEY, replicaUrl: "10.0.0.5:8808" }, "toolnexus: replicaUrl must be an http:// or https:// URL other replicas reach this one at (e.g. http://10.0.0.5:8808), got a string that is not a URL"],
    [{ stateKey: KEY, replicaUrl: "replica two" }, "toolnexus: replicaUrl must be an http:// or https:// URL other replicas reach this one at (e.g. http://10.0.0.5:8808), got a string that is not a URL"],
    [{ stateKey: KEY, replicaUrl: "ws://10.0.0.5:8808" }, "toolnexus: replicaUrl must be an http:// or https:// URL other replicas reach this one at (e.g. http://10.0.0.5:8808), got ws://10.0.0.5:8808"],
    [{ stateKey: KEY, replicaUrl: `http://u:${KEY}@10.0.0.5` }, "toolnexus: replicaUrl must not hold a user name or password"],
    [{ stateKey: KEY, replicaUrl: "http://10.0.0.5:8808/mcp" }, "toolnexus: replicaUrl must be an origin with no path, query or fragment (e.g. http://10.0.0.5:8808, not …/mcp), got http://10.0.0.5:8808 with more after it"],
    [{ stateKey: KEY, replicaUrl: `http://10.0.0.5:8808/?k=${KEY}` }, "toolnexus: replicaUrl must be an origin with no path, query or fragment (e.g. http://10.0.0.5:8808, not …/mcp), got http://10.0.0.5:8808 with more after it"],
    [{ stateKey: KEY, replicaUrl: "http://10.0.0.5:8808?" }, "toolnexus: replicaUrl must be an origin with no path, query or fragment (e.g. http://10.0.0.5:8808, not …/mcp), got http://10.0.0.5:8808 with more after it"],
    [{ stateKey: KEY, replicaUrl: "http://10.0.0.5:8808#a" }, "toolnexus: replicaUrl must be an origin with no path, query or fragment (e.g. http://10.0.0.5:8808, not …/mcp), got http://10.0.0.5:8808 with more after it"],
    [{ replicaUrl: "http://10.0.0.5:8808" }, "toolnexus: replicaUrl needs stateKey (replicas hand each other answers only when they share a state key)"],
    [{ stateKey: KEY, stateStore: 6379 }, "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), got number"],
    [{ stateKey: KEY, stateStore: "10.0.0.7:6379" }, "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), got something that is not a URL"],
    [{ stateKey: KEY, stateStore: "cache" }, "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), got something that is not a URL"],
    [{ stateKey: KEY, stateStore: `http://u:SECRET@10.0.0.7` }, "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), got http://"],
    [{ stateKey: KEY, stateStore: `redis://u:SECRET@10.0.0.7/cache` }, "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379): what follows the host must be a database number (redis://host:6379/2)"],
    [{ stateKey: KEY, stateStore: `redis://10.0.0.7?password=SECRET` }, "toolnexus: stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379), with no query or fragment (the database may follow the port: redis://host:6379/2)"],
    [{ stateStore: "redis://10.0.0.7:6379" }, "toolnexus: stateStore needs stateKey (what replicas keep in the store is named and sealed with the key they share)"],
  ]
  for (const [opts, message] of cases) {
    assert.throws(() => serveOptions(opts), TE(message), message)
    assert.ok(!message.includes("SECRET"))
  }
})

test("serve options: stateStore is a redis:// or rediss:// URL, credentials kept as given", () => {
  for (const url of ["redis://10.0.0.7:6379", "rediss://cache.example.com:6380/2", "redis://:pw@127.0.0.1", "redis://user:pw@[::1]:6379/0"]) {
    assert.equal(serveOptions({ stateKey: KEY, stateStore: url }).stateStore, url)
  }
  assert.equal(serveOptions({ stateKey: KEY, stateStore: null }).stateStore, undefined)
})

test("toolkit.serve refuses a short stateKey before it listens, and serves with a good one", { timeout: 30000 }, async () => {
  const toolkit = await createToolkit({ builtins: false })
  try {
    await assert.rejects(toolkit.serve("127.0.0.1:0", { stateKey: "too-short" }), TE(`toolnexus: stateKey must be at least 16 bytes, got 9 ${ADVICE}`))
    // Every replica bound to 0.0.0.0 would name itself 127.0.0.1 to the others: refused before
    // anything is bound.
    await assert.rejects(
      toolkit.serve("0.0.0.0:0", { auth: "none", allowedHosts: ["*"], stateKey: KEY }),
      { message: "toolnexus: serving on 0.0.0.0:0 with a stateKey needs replicaUrl (--replica-url): the URL the other replicas reach this one at" },
    )
    const handle = await toolkit.serve("127.0.0.1:0", { stateless: true, stateKey: [KEY, Buffer.alloc(32, 1)], replicaUrl: "http://127.0.0.1:1/" })
    try {
      assert.match(handle.url, /^http:\/\/127\.0\.0\.1:\d+$/)
      const health = await fetch(`${handle.url}/healthz`)
      assert.equal(health.status, 200)
    } finally {
      await handle.stop()
    }
  } finally {
    await toolkit.close()
  }
})
