// The serving side's traces for an app's own tools (lib/telemetry.js): a served `tools/call`
// runs the tool inside a SERVER span parented on the trace context the request came with (its
// `_meta` or its `traceparent` header), and the app's own spans inside `run` are its children;
// a loadMcp call to the served toolkit makes one trace: the app's span, the CLIENT span, the
// SERVER span, the tool's own span. Real parts: the OpenTelemetry Node SDK (__test__/lib/otel.mjs),
// a toolkit served over loopback HTTP, and raw JSON-RPC over fetch.
import { test } from "node:test"
import assert from "node:assert/strict"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { createToolkit, defineTool, loadMcp } from "../index.js"
import { appTracer, durationPoints, exporter, inSpan, mcpSpans } from "./lib/otel.mjs"
import { mcpPost } from "./lib/gateway.mjs"

/** A toolkit serving `work` (which records a span of its own) and `broken`, on 127.0.0.1:0. */
async function served() {
  const work = defineTool({
    name: "work",
    description: "Does some work in a span of its own",
    run: () => appTracer.startActiveSpan("inner work", (span) => (span.end(), "done")),
  })
  const broken = defineTool({ name: "broken", description: "Always fails", run: () => { throw new Error("no") } })
  const toolkit = await createToolkit({ builtins: false, extraTools: [work, broken] })
  const handle = await toolkit.serve("127.0.0.1:0")
  return { base: handle.url, url: `${handle.url}/mcp`, close: async () => (await handle.close(), await toolkit.close()) }
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
const CALLER = "00f067aa0ba902b7"

/** One stateless 2026-07-28 tools/call, with `headers` and `meta`: its result. */
async function call(base, name, { headers = {}, meta = {} } = {}) {
  const res = await mcpPost(base, {
    headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name, ...headers },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
          ...meta,
        },
      },
    },
  })
  assert.equal(res.status, 200, res.text)
  return res.json.result
}

test("a served tools/call is a SERVER span under the request's trace context, the tool's own spans under it", async () => {
  const server = await served()
  try {
    for (const [how, options] of [
      ["_meta", { meta: { traceparent: `00-${TRACE}-${CALLER}-01` } }],
      ["the traceparent header", { headers: { traceparent: `00-${TRACE}-${CALLER}-01` } }],
    ]) {
      exporter.reset()
      const result = await call(server.base, "work", options)
      assert.equal(result.content[0].text, "done", how)
      const spans = exporter.getFinishedSpans()
      const serverSpan = spans.find((s) => s.instrumentationScope.name === "toolnexus")
      const inner = spans.find((s) => s.name === "inner work")
      assert.equal(serverSpan.name, "tools/call work", how)
      assert.equal(serverSpan.kind, SpanKind.SERVER, how)
      assert.equal(serverSpan.spanContext().traceId, TRACE, how)
      assert.equal(serverSpan.parentSpanContext?.spanId, CALLER, how)
      assert.deepEqual(serverSpan.attributes, { "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "work" }, how)
      assert.equal(inner.parentSpanContext?.spanId, serverSpan.spanContext().spanId, how)
      assert.equal(inner.spanContext().traceId, TRACE, how)
    }
    // A tool that throws: the SERVER span is an error; a malformed traceparent is no parent.
    exporter.reset()
    const failed = await call(server.base, "broken", { meta: { traceparent: "garbage" } })
    assert.equal(failed.isError, true)
    const [span] = mcpSpans()
    assert.equal(span.attributes["error.type"], "tool_error")
    assert.equal(span.status.code, SpanStatusCode.ERROR)
    assert.equal(span.parentSpanContext, undefined)
  } finally {
    await server.close()
  }
})

test("loadMcp to a served toolkit: the app's span, the CLIENT span, the SERVER span and the tool's span are one trace", async () => {
  const server = await served()
  const source = await loadMcp({ kit: { url: server.url } })
  try {
    exporter.reset()
    const before = await durationPoints("mcp.server.operation.duration")
    const { value: result, parent } = await inSpan(() => source.tools.find((t) => t.name === "kit_work").execute({}))
    assert.equal(result.output, "done")
    const spans = exporter.getFinishedSpans()
    const client = spans.find((s) => s.kind === SpanKind.CLIENT)
    const serverSpan = spans.find((s) => s.kind === SpanKind.SERVER)
    const inner = spans.find((s) => s.name === "inner work")
    assert.equal(client.parentSpanContext?.spanId, parent.spanContext().spanId)
    assert.equal(serverSpan.parentSpanContext?.spanId, client.spanContext().spanId)
    assert.equal(inner.parentSpanContext?.spanId, serverSpan.spanContext().spanId)
    assert.equal(new Set([parent, client, serverSpan, inner].map((s) => s.spanContext().traceId)).size, 1)
    const after = await durationPoints("mcp.server.operation.duration")
    const count = (points) => points.find((p) => p.attributes["gen_ai.tool.name"] === "work")?.count ?? 0
    assert.equal(count(after) - count(before), 1)
    assert.equal(after[0].unit, "s")
  } finally {
    await source.close()
    await server.close()
  }
})
