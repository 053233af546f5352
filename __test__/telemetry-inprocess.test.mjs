// The engine's spans exported in-process (exportSpans): a library user serving a gateway in
// their own process hands toolnexus their SDK's span processor, and the engine's SERVER span
// for each served request and its CLIENT span for each relayed request reach the app's
// exporter, in the app's trace: the app's span → loadMcp's CLIENT span → the engine's SERVER
// span → the engine's CLIENT span upstream (whose context the upstream receives in _meta), and
// the app's own served tool runs inside the engine's SERVER span. null stops it; a processor
// that throws costs nothing but its spans, with one warning. Real parts: the OpenTelemetry
// Node SDK (SimpleSpanProcessor, InMemorySpanExporter), a toolkit served on 127.0.0.1:0, an
// SDK stdio upstream.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { createToolkit, defineTool, exportSpans, flushTelemetry, listMcpTools, loadMcp } from "../index.js"
import { deferredCleanup, fixture } from "./helpers.mjs"
import { appTracer, exporter, inSpan } from "./lib/otel.mjs"

const defer = deferredCleanup(afterEach)

/** A gateway toolkit in this process over the `meta` echo server, with a tool of its own, served on 127.0.0.1:0: its /mcp URL. */
async function gateway() {
  const own = defineTool({
    name: "own",
    description: "Records a span of its own",
    run: () => appTracer.startActiveSpan("own work", (span) => (span.end(), "done")),
  })
  const toolkit = await createToolkit({
    builtins: false,
    mcpConfig: { mcpServers: { up: { command: process.execPath, args: [fixture("meta-echo-server.mjs")] } } },
    extraTools: [own],
  })
  defer(() => toolkit.close())
  const handle = await toolkit.serve("127.0.0.1:0")
  defer(() => handle.close())
  return `${handle.url}/mcp`
}

/** A loadMcp source on the gateway at `url`: `tool(name)` finds its tool `gw_<name>`. */
async function sourceOn(url) {
  const source = await loadMcp({ mcpServers: { gw: { url } } })
  defer(() => source.close())
  return { tool: (name) => source.tools.find((t) => t.name === `gw_${name}`) }
}

const gatewayAndSource = async () => sourceOn(await gateway())

test("exportSpans: the engine's SERVER and upstream CLIENT spans reach the app's processor, in the app's trace", async () => {
  const mine = new InMemorySpanExporter()
  exportSpans(new SimpleSpanProcessor(mine))
  defer(() => exportSpans(null))
  const { tool } = await gatewayAndSource()
  await flushTelemetry() // the listings' spans (the next test's)
  mine.reset()

  const { value: relayed, parent } = await inSpan(() => tool("up_meta").execute({}))
  await flushTelemetry()
  const spans = mine.getFinishedSpans()
  assert.deepEqual(spans.map((s) => [s.name, s.kind]), [
    ["tools/call meta", SpanKind.CLIENT],
    ["tools/call up_meta", SpanKind.SERVER],
  ])
  const [upstream, served] = spans
  // The app's span (its own exporter) → loadMcp's CLIENT span (its own exporter) → the
  // engine's SERVER span → the engine's CLIENT span, which is what the upstream received.
  const appClient = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT && s.name === "tools/call up_meta")
  assert.equal(appClient.parentSpanContext?.spanId, parent.spanContext().spanId)
  assert.equal(served.parentSpanContext.spanId, appClient.spanContext().spanId)
  assert.equal(served.parentSpanContext.isRemote, true)
  assert.equal(upstream.parentSpanContext.spanId, served.spanContext().spanId)
  const traceId = parent.spanContext().traceId
  for (const span of spans) assert.equal(span.spanContext().traceId, traceId)
  const sent = JSON.parse(relayed.output)
  assert.equal(sent.traceparent, `00-${traceId}-${upstream.spanContext().spanId}-01`)

  assert.equal(served.attributes["mcp.method.name"], "tools/call")
  assert.equal(served.attributes["gen_ai.tool.name"], "up_meta")
  assert.equal(served.attributes["network.transport"], "tcp")
  assert.equal(served.attributes["client.address"], "127.0.0.1")
  assert.equal(typeof served.attributes["client.port"], "number")
  assert.equal(upstream.attributes["gen_ai.tool.name"], "meta")
  assert.equal(upstream.attributes["network.transport"], "pipe")
  assert.equal(served.status.code, SpanStatusCode.UNSET)
  assert.equal(served.resource.attributes["service.name"], "toolnexus")
  assert.equal(served.instrumentationScope.name, "toolnexus")
  assert.ok(served.duration[0] >= 0 && served.duration[1] >= 0)
  assert.ok(served.endTime[0] * 1e9 + served.endTime[1] >= upstream.endTime[0] * 1e9 + upstream.endTime[1])

  // The app's own served tool runs inside the engine's SERVER span (no second SERVER span).
  exporter.reset()
  mine.reset()
  const { value: own } = await inSpan(() => tool("own").execute({}))
  assert.equal(own.output, "done")
  await flushTelemetry()
  const [ownServed] = mine.getFinishedSpans()
  assert.equal(mine.getFinishedSpans().length, 1)
  assert.equal(ownServed.name, "tools/call own")
  const inner = exporter.getFinishedSpans().find((s) => s.name === "own work")
  assert.equal(inner.parentSpanContext?.spanId, ownServed.spanContext().spanId)
  assert.deepEqual(exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER), [], "the app's tracer made no SERVER span")
})

test("a source's listings while it connects are CLIENT spans under the app's span, their context in the listing's _meta", async () => {
  const mine = new InMemorySpanExporter()
  exportSpans(new SimpleSpanProcessor(mine))
  defer(() => exportSpans(null))
  const url = await gateway()
  await flushTelemetry()
  // The toolkit's own connecting (outside any span) listed its upstream: a root span.
  const [own] = mine.getFinishedSpans()
  assert.deepEqual(mine.getFinishedSpans().map((s) => [s.name, s.kind, s.parentSpanContext]), [["tools/list", SpanKind.CLIENT, undefined]])
  assert.equal(own.attributes["network.transport"], "pipe")
  mine.reset()

  const { parent } = await inSpan(() => sourceOn(url))
  await flushTelemetry()
  const [served, listed] = mine.getFinishedSpans()
  assert.deepEqual(mine.getFinishedSpans().map((s) => [s.name, s.kind]), [["tools/list", SpanKind.SERVER], ["tools/list", SpanKind.CLIENT]])
  // The app's span → the source's CLIENT span → the gateway's SERVER span: the listing's
  // request carried its span's context.
  assert.equal(listed.parentSpanContext.spanId, parent.spanContext().spanId)
  assert.equal(served.parentSpanContext.spanId, listed.spanContext().spanId)
  assert.equal(served.spanContext().traceId, parent.spanContext().traceId)
  assert.deepEqual(listed.attributes, {
    "mcp.method.name": "tools/list",
    "network.transport": "tcp",
    "server.address": "127.0.0.1",
    "server.port": Number(new URL(url).port),
    "mcp.protocol.version": "2026-07-28",
  })

  // listMcpTools over stdio (the direct road): every kind the server declares is a span.
  mine.reset()
  const surface = { mcpServers: { s: { command: process.execPath, args: [fixture("surface-server.mjs"), "--bad-item"] } } }
  const { value: inventory, parent: step } = await inSpan(() => listMcpTools(surface))
  assert.equal(inventory.status.s, "connected")
  await flushTelemetry()
  const spans = mine.getFinishedSpans()
  assert.deepEqual(spans.map((s) => s.name).sort(), ["prompts/list", "resources/list", "resources/templates/list", "tools/list"])
  for (const span of spans) {
    assert.equal(span.kind, SpanKind.CLIENT)
    assert.equal(span.parentSpanContext.spanId, step.spanContext().spanId)
    assert.equal(span.attributes["network.transport"], "pipe")
  }
  // Its resources/list has an item without a uri: that listing failed, its span an error.
  const refused = spans.find((s) => s.name === "resources/list")
  assert.equal(refused.status.code, SpanStatusCode.ERROR)
  assert.equal(refused.attributes["error.type"], "_OTHER")
  assert.equal(spans.find((s) => s.name === "tools/list").status.code, SpanStatusCode.UNSET)
})

test("exportSpans(null) stops it: the app's served tool gets its SERVER span from the app's tracer again", async () => {
  const mine = new InMemorySpanExporter()
  exportSpans(new SimpleSpanProcessor(mine))
  exportSpans(null)
  const { tool } = await gatewayAndSource()
  exporter.reset()
  await inSpan(() => tool("own").execute({}))
  await flushTelemetry()
  assert.deepEqual(mine.getFinishedSpans(), [])
  const servedByApp = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER)
  assert.deepEqual(servedByApp.map((s) => s.name), ["tools/call own"])
})

test("a processor that throws: calls go on, one warning in words; a bad argument is a TypeError", async () => {
  const warnings = []
  const write = process.stderr.write
  process.stderr.write = (chunk, ...rest) => (String(chunk).includes("toolnexus: telemetry") ? (warnings.push(String(chunk)), true) : write.call(process.stderr, chunk, ...rest))
  defer(() => (process.stderr.write = write))
  let offered = 0
  exportSpans({ onEnd: () => { offered++; throw new Error("exporter is broken") } })
  defer(() => exportSpans(null))
  const { tool } = await gatewayAndSource()
  for (let i = 0; i < 3; i++) assert.equal((await tool("own").execute({})).output, "done")
  await flushTelemetry()
  assert.equal(offered, 6, "the three listings' and the three calls'")
  assert.deepEqual(warnings, [
    "toolnexus: telemetry: the span processor threw (exporter is broken); its spans are lost, later throws are not reported\n",
  ])
  assert.throws(() => exportSpans({}), { name: "TypeError", message: "toolnexus: exportSpans takes an OpenTelemetry span processor (an object with onEnd), or null" })
  assert.throws(() => exportSpans(new SimpleSpanProcessor(new InMemorySpanExporter()), 5), { name: "TypeError", message: "toolnexus: exportSpans's options must be an object" })
})
