// The calling side's traces (lib/telemetry.js): a loadMcp tool call made inside an active span
// of the app's OpenTelemetry SDK (the real Node SDK, its in-memory exporter) is a CLIENT span
// child of it, named and attributed as the MCP semantic conventions say, and its context
// reaches the server in the request's `_meta`. Real servers: the SDK's McpServer over stdio
// (meta-echo-server.mjs) and over streamable HTTP (http-servers.mjs).
import { test } from "node:test"
import assert from "node:assert/strict"
import { context, propagation, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { loadMcp } from "../index.js"
import path from "node:path"
import { nodeFixture, repoRoot, runNode } from "./helpers.mjs"
import { startStreamableHttp } from "./fixtures/http-servers.mjs"
import { durationPoints, exporter, inSpan, mcpSpans } from "./lib/otel.mjs"

test("a stdio tool call is a CLIENT span child of the active span, and its context reaches the server in _meta", async () => {
  exporter.reset()
  const source = await loadMcp({ echo: { command: nodeFixture("meta-echo-server.mjs") } })
  try {
    const baggage = propagation.createBaggage({ user: { value: "ada" } })
    const { value: result, parent } = await inSpan(() =>
      context.with(propagation.setBaggage(context.active(), baggage), () => source.tools[0].execute({})),
    )
    assert.equal(result.isError, false)
    const [span] = mcpSpans()
    assert.equal(mcpSpans().length, 1)
    assert.equal(span.name, "tools/call meta")
    assert.equal(span.kind, SpanKind.CLIENT)
    assert.equal(span.parentSpanContext?.spanId, parent.spanContext().spanId)
    assert.equal(span.spanContext().traceId, parent.spanContext().traceId)
    assert.deepEqual(span.attributes, {
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "meta",
      "network.transport": "pipe",
      "mcp.protocol.version": "2025-11-25",
    })
    assert.equal(span.status.code, SpanStatusCode.UNSET)
    // The server saw this span as the parent, and the app's baggage.
    const meta = JSON.parse(result.output)
    const { traceId, spanId } = span.spanContext()
    assert.equal(meta.traceparent, `00-${traceId}-${spanId}-01`)
    assert.equal(meta.baggage, "user=ada")
    assert.deepEqual(result.metadata, { server: "echo" })
  } finally {
    await source.close()
  }
})

test("over HTTP: tcp, server.address and server.port, and the context in the tools/call's _meta", async () => {
  exporter.reset()
  const http = await startStreamableHttp({ toolNames: ["alpha"] })
  const source = await loadMcp({ remote: { url: http.url } })
  try {
    const { value: result } = await inSpan(() => source.tools[0].execute({}))
    assert.equal(result.isError, false)
    assert.equal(mcpSpans().length, 1)
    const [span] = mcpSpans()
    const url = new URL(http.url)
    assert.equal(span.name, "tools/call alpha")
    assert.equal(span.kind, SpanKind.CLIENT)
    assert.equal(span.attributes["network.transport"], "tcp")
    assert.equal(span.attributes["server.address"], url.hostname)
    assert.equal(span.attributes["server.port"], Number(url.port))
    const call = http.stats.requests.flatMap((r) => r.messages).find((m) => m.method === "tools/call")
    const { traceId, spanId } = span.spanContext()
    assert.equal(call.params._meta.traceparent, `00-${traceId}-${spanId}-01`)
  } finally {
    await source.close()
    await http.close()
  }
})

test("error.type: tool_error for an error result, the code of a JSON-RPC error, timeout, cancelled; the app's result is unchanged", async () => {
  const source = await loadMcp({
    fx: { command: nodeFixture("stdio-server.mjs", "--tools", "fail,sleep") },
    rpc: { command: nodeFixture("rpc-error-server.mjs") },
  })
  try {
    const tool = (name) => source.tools.find((t) => t.name === name)
    const cases = [
      ["fx_fail", {}, undefined, "tool_error", undefined],
      ["rpc_refuse", { why: "no" }, undefined, "-32603", "-32603"],
      ["fx_sleep", { ms: 5000 }, { timeout: 100 }, "timeout", undefined],
      ["fx_sleep", { ms: 5000 }, { signal: AbortSignal.timeout(50) }, "cancelled", undefined],
    ]
    for (const [name, args, ctx, errorType, status] of cases) {
      exporter.reset()
      const { value: result } = await inSpan(() => tool(name).execute(args, ctx))
      assert.equal(result.isError, true, name)
      assert.deepEqual(result.metadata, { server: name.split("_")[0] }, `${name}: no errorType in the app's result`)
      const [span] = mcpSpans()
      assert.equal(span.attributes["error.type"], errorType, `${name} ${errorType}`)
      assert.equal(span.attributes["rpc.response.status_code"], status, name)
      assert.equal(span.status.code, SpanStatusCode.ERROR, name)
    }
  } finally {
    await source.close()
  }
})

test("outside any span a call is a root span; under an unsampled parent nothing is recorded and that context goes on", async () => {
  exporter.reset()
  const source = await loadMcp({ echo: { command: nodeFixture("meta-echo-server.mjs") } })
  try {
    // No active span: a root CLIENT span is still made (the app's sampler decides), its context sent.
    const root = await source.tools[0].execute({})
    const [span] = mcpSpans()
    assert.equal(span.parentSpanContext, undefined)
    assert.match(JSON.parse(root.output).traceparent, new RegExp(`^00-${span.spanContext().traceId}-`))
    // Inside a context that says "do not trace" (an unsampled parent): nothing recorded, and
    // the unsampled context goes upstream as it is.
    exporter.reset()
    const unsampled = trace.setSpanContext(context.active(), {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: 0,
    })
    const quiet = await context.with(unsampled, () => source.tools[0].execute({}))
    assert.equal(mcpSpans().length, 0)
    assert.match(JSON.parse(quiet.output).traceparent, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/)
  } finally {
    await source.close()
  }
})

for (const mode of ["absent", "unregistered"]) {
  test(`without OpenTelemetry (${mode === "absent" ? "no @opentelemetry/api" : "the API but no SDK"}), a call sends no trace context and its result is as before`, async () => {
    const run = await runNode(path.join(repoRoot, "__test__", "fixtures", "untraced-app.cjs"), { args: [mode] })
    assert.equal(run.code, 0, run.stderr)
    const { meta, metadata } = JSON.parse(run.stdout)
    // Only the progress token every stdio call carries (its request id).
    assert.deepEqual(Object.keys(meta), ["progressToken"])
    assert.deepEqual(metadata, { server: "echo" })
  })
}

test("resources/read, prompts/get and completion/complete are CLIENT spans too, their context in the request's _meta", async () => {
  exporter.reset()
  const source = await loadMcp({ m: { command: nodeFixture("meta-surface-server.mjs") } })
  try {
    const { value: read, parent } = await inSpan(() => source.readResource("m", "meta://request"))
    const { value: prompt } = await inSpan(() => source.getPrompt("m", "meta", { word: "a" }))
    const { value: completion } = await inSpan(() => source.complete("m", { type: "ref/prompt", name: "meta" }, { name: "word", value: "al" }))
    assert.deepEqual(completion.values, ["alpha"])
    const spans = mcpSpans()
    assert.deepEqual(
      spans.map((s) => [s.name, s.kind, s.attributes]),
      [
        ["resources/read", SpanKind.CLIENT, { "mcp.method.name": "resources/read", "network.transport": "pipe", "mcp.protocol.version": "2025-11-25", "mcp.resource.uri": "meta://request" }],
        ["prompts/get meta", SpanKind.CLIENT, { "mcp.method.name": "prompts/get", "network.transport": "pipe", "mcp.protocol.version": "2025-11-25", "gen_ai.prompt.name": "meta" }],
        ["completion/complete", SpanKind.CLIENT, { "mcp.method.name": "completion/complete", "network.transport": "pipe", "mcp.protocol.version": "2025-11-25" }],
      ],
    )
    assert.equal(spans[0].parentSpanContext?.spanId, parent.spanContext().spanId)
    const sent = [JSON.parse(read.contents[0].text), JSON.parse(prompt.messages[0].content.text)]
    for (const [i, meta] of sent.entries()) {
      const { traceId, spanId } = spans[i].spanContext()
      assert.equal(meta.traceparent, `00-${traceId}-${spanId}-01`, spans[i].name)
    }
  } finally {
    await source.close()
  }
})

test("a refused read ends its span as an error with the server's code; the rejection is the one the app gets", async () => {
  exporter.reset()
  const source = await loadMcp({ m: { command: nodeFixture("meta-surface-server.mjs") } })
  try {
    const { value: error } = await inSpan(() => source.readResource("m", "meta://nowhere").then(() => assert.fail("read"), (e) => e))
    assert.equal(typeof error.code, "number")
    const [span] = mcpSpans()
    assert.equal(span.name, "resources/read")
    assert.equal(span.attributes["error.type"], String(error.code))
    assert.equal(span.attributes["rpc.response.status_code"], String(error.code))
    assert.equal(span.status.code, SpanStatusCode.ERROR)
    // A request refused before it is sent (a bad argument) makes no span.
    exporter.reset()
    await assert.rejects(source.readResource("m", 42), TypeError)
    assert.equal(mcpSpans().length, 0)
  } finally {
    await source.close()
  }
})

test("mcp.client.operation.duration: a histogram in seconds in the app's meter provider, by method, tool, prompt and error.type", async () => {
  const source = await loadMcp({
    fx: { command: nodeFixture("stdio-server.mjs", "--tools", "echo,fail,sleep") },
    m: { command: nodeFixture("meta-surface-server.mjs") },
  })
  try {
    const before = await durationPoints()
    const tool = (name) => source.tools.find((t) => t.name === name)
    await tool("fx_echo").execute({ text: "a" })
    await tool("fx_echo").execute({ text: "b" })
    await tool("fx_fail").execute({})
    await tool("fx_sleep").execute({ ms: 200 })
    await source.getPrompt("m", "meta", { word: "a" })
    await source.readResource("m", "meta://request")
    const points = (await durationPoints()).map((p) => {
      const earlier = before.find((b) => JSON.stringify(b.attributes) === JSON.stringify(p.attributes))
      return { ...p, count: p.count - (earlier?.count ?? 0), sum: p.sum - (earlier?.sum ?? 0) }
    }).filter((p) => p.count > 0)
    const fx = { "network.transport": "pipe", "mcp.protocol.version": "2025-11-25" }
    const call = (name) => ({ "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, ...fx })
    const by = (attributes) => points.find((p) => JSON.stringify(p.attributes) === JSON.stringify(attributes))
    assert.equal(by(call("echo"))?.count, 2)
    assert.equal(by({ ...call("fail"), "error.type": "tool_error" })?.count, 1)
    const slept = by(call("sleep"))
    assert.equal(slept?.count, 1)
    assert.ok(slept.sum >= 0.2 && slept.sum < 30, `${slept.sum} s for a 200 ms sleep`)
    assert.equal(by({ "mcp.method.name": "prompts/get", ...fx, "gen_ai.prompt.name": "meta" })?.count, 1)
    // A read is measured without its URI (one series per server, not per resource).
    assert.equal(by({ "mcp.method.name": "resources/read", ...fx })?.count, 1)
    assert.equal(points.length, 5, JSON.stringify(points.map((p) => p.attributes)))
    assert.ok(points.every((p) => p.unit === "s"))
    assert.deepEqual(points[0].boundaries, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300])
  } finally {
    await source.close()
  }
})

test("arguments and results go on a call's span only when the app opts in (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)", async () => {
  const app = path.join(repoRoot, "__test__", "fixtures", "traced-app.mjs")
  const run = async (value) => {
    const env = { ...process.env, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value }
    const out = await runNode(app, { env })
    assert.equal(out.code, 0, out.stderr)
    return JSON.parse(out.stdout)
  }
  const off = await run("")
  assert.equal(off["gen_ai.tool.call.arguments"], undefined)
  assert.equal(off["gen_ai.tool.call.result"], undefined)
  assert.equal(off["gen_ai.tool.name"], "meta")
  const on = await run("true")
  assert.equal(on["gen_ai.tool.call.arguments"], '{"note":"hello"}')
  // meta-echo answers with the request's _meta as text: the result is its content, as JSON.
  const [part] = JSON.parse(on["gen_ai.tool.call.result"])
  assert.equal(part.type, "text")
  assert.match(JSON.parse(part.text).traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
})
