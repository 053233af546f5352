// The abort contract on every road, under a storm of aborts at random points: over stdio
// (server-everything) and over HTTP (server-everything behind a toolnexus gateway), each kind of
// request on a loadMcp source is started 1000 times and aborted at once, after some microtasks,
// after a macrotask or after a short timer. A request the abort overtook rejects with
// `signal.reason` itself, never with the engine's own words; one that settled first stays
// settled (its value); a tool's `execute` resolves either way (`isError: true` when aborted).
// The source still answers afterwards, and nothing is left subscribed or running.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { createToolkit, loadMcp } from "toolnexus"
import { deferredCleanup, leakCheck, serverEverything } from "./helpers.mjs"

const T = { timeout: 240000 }
const RUNS = 1000
const AT_ONCE = 32
const defer = deferredCleanup(afterEach)
leakCheck(afterEach)

const everything = () => ({ command: process.execPath, args: [serverEverything, "stdio"], timeout: 20000 })
const STATIC = "demo://resource/static/document/features.md"
const TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"

/** A small seeded PRNG (mulberry32), so a failing storm can be replayed from its seed. */
function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Calls `abort` at a random point: at once, after 1-3 microtasks, after a macrotask, or a random
 * time up to twice the request's usual latency later (`spanMs`), where it races the answer.
 */
function abortAt(rand, abort, spanMs) {
  const point = Math.floor(rand() * 4)
  if (point === 0) abort()
  else if (point === 1) {
    let hops = 1 + Math.floor(rand() * 3)
    const hop = () => (--hops === 0 ? abort() : queueMicrotask(hop))
    queueMicrotask(hop)
  } else if (point === 2) setImmediate(abort)
  else setTimeout(abort, rand() * spanMs)
}

/**
 * The kinds of request on `source`, each `(signal) => Promise`, with how a settled value is
 * checked (and undone: a subscription that won its race is stopped).
 */
function kinds(source, prompt) {
  const simple = source.prompts.find((p) => p.name === prompt("simple-prompt"))
  const features = source.resources.find((r) => r.uri === STATIC)
  const template = source.resourceTemplates.find((t) => t.uriTemplate === TEXT_TEMPLATE)
  const echo = source.tools.find((t) => t.name.endsWith("echo"))
  assert.ok(simple && features && template && echo, "server-everything's prompt, resource, template and echo tool are listed")
  const completes = ["department", { values: ["Engineering"] }]
  return {
    readResource: {
      start: (signal) => source.readResource(features.server, STATIC, { signal }),
      check: (v) => assert.equal(v.contents[0].uri, STATIC),
    },
    getPrompt: {
      start: (signal) => source.getPrompt(simple.server, simple.name, {}, { signal }),
      check: (v) => assert.equal(v.messages.length, 1),
    },
    complete: {
      start: (signal) =>
        source.complete(simple.server, { type: "ref/prompt", name: prompt("completable-prompt") }, { name: completes[0], value: "E" }, undefined, {
          signal,
        }),
      check: (v) => assert.deepEqual(v.values, completes[1].values),
    },
    subscribe: {
      start: (signal) => source.subscribe(features.server, STATIC, () => {}, { signal }),
      check: async (off) => {
        assert.equal(typeof off, "function")
        await off()
      },
    },
    "resource.read": {
      start: (signal) => features.read({ signal }),
      check: (v) => assert.equal(v.contents[0].uri, STATIC),
    },
    "prompt.get": {
      start: (signal) => simple.get({}, { signal }),
      check: (v) => assert.equal(v.messages.length, 1),
    },
    "template.read": {
      start: (signal) => template.read({ resourceId: 7 }, { signal }),
      check: (v) => assert.equal(v.contents[0].uri, "demo://resource/dynamic/text/7"),
    },
    execute: {
      start: (signal) => echo.execute({ message: "hi" }, { signal }),
      // execute never rejects: the echo, or an isError result saying it was aborted.
      check: (v, aborted) => {
        if (v.isError) {
          assert.ok(aborted, `an error result only for an aborted call: ${JSON.stringify(v)}`)
          assert.equal(v.output, "MCP tool call aborted")
        } else assert.equal(v.output, "Echo: hi")
      },
      resolves: true,
    },
  }
}

/** Fires `RUNS` aborts at random points at one kind of request; returns what happened. */
async function storm(kind, seed) {
  const rand = random(seed)
  // The request's usual latency with as many in flight as the storm keeps.
  const started = performance.now()
  await Promise.all(Array.from({ length: AT_ONCE }, async () => kind.check(await kind.start(new AbortController().signal), false)))
  const spanMs = 2 * (performance.now() - started)
  const tally = { reason: 0, settledFirst: 0, wrong: [] }
  let next = 0
  const one = async () => {
    const reason = new Error(`stop ${next}`)
    const controller = new AbortController()
    let aborted = false
    const pending = kind.start(controller.signal).then(
      (value) => ({ value, settledBeforeAbort: !aborted }),
      (error) => ({ error, settledBeforeAbort: !aborted }),
    )
    abortAt(rand, () => {
      aborted = true
      controller.abort(reason)
    }, spanMs)
    const out = await pending
    // Wait for the abort to have happened, so `aborted` is known for every run.
    while (!aborted) await new Promise((r) => setImmediate(r))
    if ("error" in out) {
      if (out.error === reason && !out.settledBeforeAbort) tally.reason++
      else tally.wrong.push(out.error?.message ?? String(out.error))
    } else if (kind.resolves) {
      await kind.check(out.value, !out.settledBeforeAbort)
      if (out.settledBeforeAbort) tally.settledFirst++
      else tally.reason++
    } else if (out.settledBeforeAbort) {
      await kind.check(out.value)
      tally.settledFirst++
    } else {
      tally.wrong.push(`resolved after the abort: ${JSON.stringify(out.value)?.slice(0, 80)}`)
      if (typeof out.value === "function") await out.value()
    }
  }
  const worker = async () => {
    while (next < RUNS) {
      next++
      await one()
    }
  }
  await Promise.all(Array.from({ length: AT_ONCE }, worker))
  return tally
}

async function stormEveryKind(source, prompt, label) {
  const seed = Number(process.env.TOOLNEXUS_ABORT_SEED ?? Date.now() % 2 ** 31)
  const results = {}
  for (const [name, kind] of Object.entries(kinds(source, prompt))) {
    results[name] = await storm(kind, seed)
  }
  if (process.env.TOOLNEXUS_ABORT_TALLY) console.log(label, JSON.stringify(results))
  for (const [name, tally] of Object.entries(results)) {
    assert.deepEqual(tally.wrong, [], `${label} ${name} (seed ${seed}): every abort rejects with signal.reason`)
    assert.equal(tally.reason + tally.settledFirst, RUNS)
    // The storm aborts in flight, not only before or after: most runs are overtaken.
    assert.ok(tally.reason > RUNS / 2, `${label} ${name}: ${tally.reason} of ${RUNS} aborted`)
  }
  // The source still answers every kind afterwards, and an abort before the start still wins.
  for (const [name, kind] of Object.entries(kinds(source, prompt))) {
    const value = await kind.start(new AbortController().signal)
    await kind.check(value, false)
    const reason = new Error(`already ${name}`)
    const out = await kind.start(AbortSignal.abort(reason)).catch((e) => e)
    if (kind.resolves) assert.equal(out.isError, true)
    else assert.equal(out, reason, `${label} ${name}: an aborted signal rejects with its reason`)
  }
  return results
}

test("stdio: 1000 aborts at random points for each kind of request, every one signal.reason", T, async () => {
  const source = await loadMcp({ mcpServers: { everything: everything() } })
  defer(() => source.close())
  assert.equal(source.status.everything, "connected", source.errors.everything)
  await stormEveryKind(source, (name) => name, "stdio")
})

test("HTTP through a toolnexus gateway: 1000 aborts at random points for each kind, every one signal.reason", T, async () => {
  const tk = await createToolkit({ mcpConfig: { mcpServers: { everything: everything() } } })
  defer(() => tk.close())
  const served = await tk.serve("127.0.0.1:0")
  defer(() => served.stop())
  const source = await loadMcp({ mcpServers: { gateway: { url: `${served.url}/mcp`, timeout: 20000 } } })
  defer(() => source.close())
  assert.equal(source.status.gateway, "connected", source.errors.gateway)
  await stormEveryKind(source, (name) => `everything_${name}`, "http")
})
