// The serving side's telemetry in the engine, through `toolnexus serve` as a gateway: a call
// made by an app with the OpenTelemetry Node SDK, inside its own span, becomes one trace across
// three processes at an OTLP/HTTP receiver that decodes the protobuf with the official
// `opentelemetry-proto` package (the app's CLIENT span, the gateway's SERVER span, its CLIENT
// span to the upstream, the upstream's SERVER span), with the conventions' names and
// attributes, no argument in any span, the trace ids in the access log, the durations over
// OTLP and at /metrics; and a collector that refuses everything costs the calls nothing but
// dropped spans, counted, with one warning. Real parts: the CLI, stdio upstreams (toolnexus's
// own buildMcpServer and the TypeScript SDK), the Node SDK, the Python receiver.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { SpanKind } from "@opentelemetry/api"
import { loadMcp } from "../index.js"
import { deferredCleanup, fixture, tmpConfig, waitFor } from "./helpers.mjs"
import { startCli } from "./lib/gateway.mjs"
import { inSpan, mcpSpans } from "./lib/otel.mjs"
import { KIND, startReceiver } from "./lib/otlp.mjs"

const defer = deferredCleanup(afterEach)

const SECRET = "s3cr3t-argument-value"

/** `toolnexus serve` over a toolnexus stdio server (`native`) and an SDK one (`meta`), exporting to `endpoint`. */
async function gateway(endpoint, flags = []) {
  const config = tmpConfig({
    mcpServers: {
      native: { command: process.execPath, args: [fixture("native-stdio-server.mjs")], env: { OTEL_SERVICE_NAME: "upstream-under-test" } },
      meta: { command: process.execPath, args: [fixture("meta-surface-server.mjs")] },
    },
  })
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_SERVICE_NAME: "gateway-under-test",
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_METRIC_EXPORT_INTERVAL: "200",
  }
  const cli = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--access-log", "--metrics", ...flags], { env })
  const base = await cli.serving
  return { ...cli, base }
}

/** The app's loadMcp source over the gateway, closed by `defer`; `tool(suffix)` finds a relayed tool. */
async function appSource(base) {
  const source = await loadMcp({ mcpServers: { gw: { url: `${base}/mcp` } } })
  defer(() => source.close())
  const tool = (suffix) => source.tools.find((t) => t.name.endsWith(suffix))
  return { source, tool }
}

const accessLines = (stderr) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))

test("a call through a gateway is one trace at the OTLP receiver: app CLIENT → gateway SERVER → gateway CLIENT → upstream SERVER", async () => {
  const receiver = await startReceiver(defer)
  const gw = await gateway(receiver.endpoint)
  const { source, tool } = await appSource(gw.base)
  const echo = tool("echo")
  const { value, parent } = await inSpan(() => echo.execute({ text: SECRET }))
  assert.equal(value.output, SECRET)
  const trace = parent.spanContext().traceId
  // The gateway serves the tool as `native_echo`; loadMcp names it `gw_native_echo`.
  const served = echo.name.replace(/^gw_/, "")
  const appClient = mcpSpans().find((s) => s.kind === SpanKind.CLIENT && s.name === `tools/call ${served}` && s.spanContext().traceId === trace)
  assert.ok(appClient, "the app's CLIENT span")

  const inTrace = () => receiver.spans().filter((s) => s.traceId === trace)
  await receiver.until(() => inTrace().length >= 3, "three spans of the app's trace")
  const spans = inTrace()
  const gwServer = spans.find((s) => s.service === "gateway-under-test" && s.kind === KIND.SERVER)
  const gwClient = spans.find((s) => s.service === "gateway-under-test" && s.kind === KIND.CLIENT)
  const upServer = spans.find((s) => s.service === "upstream-under-test" && s.kind === KIND.SERVER)
  assert.ok(gwServer && gwClient && upServer, JSON.stringify(spans, null, 1))
  assert.equal(spans.length, 3, "nothing else in the trace")

  // Names, parents and scope.
  assert.equal(gwServer.span, `tools/call ${served}`)
  assert.equal(gwClient.span, "tools/call echo")
  assert.equal(upServer.span, "tools/call echo")
  assert.equal(gwServer.parentSpanId, appClient.spanContext().spanId)
  assert.equal(gwClient.parentSpanId, gwServer.spanId)
  assert.equal(upServer.parentSpanId, gwClient.spanId)
  for (const s of spans) {
    assert.equal(s.scope, "toolnexus")
    assert.equal(s.contentType, "application/x-protobuf")
    assert.equal(s.status.code, 0, "unset: the call succeeded")
  }

  // Attributes, as the conventions name them.
  const a = gwServer.attributes
  assert.equal(a["mcp.method.name"], "tools/call")
  assert.equal(a["gen_ai.tool.name"], served)
  assert.equal(a["gen_ai.operation.name"], "execute_tool")
  assert.equal(a["network.transport"], "tcp")
  assert.equal(a["client.address"], "127.0.0.1")
  assert.equal(typeof a["client.port"], "number")
  assert.match(a["jsonrpc.request.id"], /^\d+$/)
  assert.match(a["mcp.protocol.version"], /^\d{4}-\d{2}-\d{2}$/)
  assert.equal(a["error.type"], undefined)
  const c = gwClient.attributes
  assert.equal(c["mcp.method.name"], "tools/call")
  assert.equal(c["gen_ai.tool.name"], "echo")
  assert.equal(c["network.transport"], "pipe")
  assert.match(c["mcp.protocol.version"], /^\d{4}-\d{2}-\d{2}$/)
  assert.equal(upServer.attributes["network.transport"], "pipe")
  assert.equal(upServer.attributes["gen_ai.tool.name"], "echo")

  // No argument, in any span of any service.
  assert.ok(!JSON.stringify(receiver.records).includes(SECRET), "an argument reached the collector")

  // The access log joins up: the call's line names the trace and the gateway's SERVER span.
  const logged = accessLines(gw.stderr()).find((e) => e.method === "tools/call" && e.traceId === trace)
  assert.ok(logged, gw.stderr())
  assert.equal(logged.spanId, gwServer.spanId)
  assert.equal(logged.tool, served)

  // A failing tool: tool_error on the gateway's SERVER and CLIENT spans, status ERROR.
  const fail = tool("fail")
  const failed = await inSpan(() => fail.execute({}))
  assert.equal(failed.value.isError, true)
  const failTrace = failed.parent.spanContext().traceId
  await receiver.until(() => receiver.spans().filter((s) => s.traceId === failTrace).length >= 3, "the failing call's spans")
  for (const s of receiver.spans().filter((s) => s.traceId === failTrace)) {
    assert.equal(s.attributes["error.type"], "tool_error", `${s.span} ${s.service} ${s.kind}`)
    assert.equal(s.status.code, 2, s.span)
  }

  // A relayed read carries the gateway's CLIENT span upstream, not the caller's.
  const read = await inSpan(() => source.readResource("gw", "meta://request"))
  const readTrace = read.parent.spanContext().traceId
  const upstreamMeta = JSON.parse(read.value.contents[0].text)
  await receiver.until(() => receiver.spans().some((s) => s.traceId === readTrace && s.kind === KIND.CLIENT), "the read's CLIENT span")
  const readClient = receiver.spans().find((s) => s.traceId === readTrace && s.kind === KIND.CLIENT)
  assert.equal(readClient.span, "resources/read")
  assert.equal(readClient.attributes["mcp.resource.uri"], "meta://request")
  assert.equal(upstreamMeta.traceparent, `00-${readTrace}-${readClient.spanId}-01`)

  // The durations over OTLP, labelled by method and tool, in seconds with the conventions' buckets.
  // The upstream (a toolnexus server too) exports its own, under its own service name.
  const gatewayMetrics = (name) => receiver.metrics().filter((m) => m.metric === name && m.service === "gateway-under-test")
  const failPoint = (m) => m.points.some((p) => p.attributes["gen_ai.tool.name"] === "fail" && p.attributes["error.type"] === "tool_error")
  await receiver.until(
    () =>
      gatewayMetrics("mcp.server.operation.duration").some((m) => m.points.some((p) => p.attributes["gen_ai.tool.name"] === served)) &&
      gatewayMetrics("mcp.client.operation.duration").some(failPoint),
    "the gateway's durations for the echo and fail calls",
  )
  const server = gatewayMetrics("mcp.server.operation.duration").findLast((m) => m.points.some((p) => p.attributes["gen_ai.tool.name"] === served))
  assert.equal(server.unit, "s")
  assert.equal(server.service, "gateway-under-test")
  const point = server.points.find((p) => p.attributes["gen_ai.tool.name"] === served && p.attributes["error.type"] === undefined)
  assert.equal(point.attributes["mcp.method.name"], "tools/call")
  assert.deepEqual(point.bounds, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300])

  // /metrics says the same in Prometheus text.
  const text = await (await fetch(`${gw.base}/metrics`)).text()
  const echoCount = new RegExp(`^mcp_server_operation_duration_seconds_count\\{[^}]*gen_ai_tool_name="${served}"[^}]*\\} 1$`, "m")
  assert.match(text, echoCount)
  const failCount = text.split("\n").find((l) => l.startsWith("mcp_client_operation_duration_seconds_count{") && l.includes('gen_ai_tool_name="fail"'))
  assert.match(failCount, /error_type="tool_error"/)
  assert.match(failCount, /network_transport="pipe"/)
  assert.match(failCount, /\} 1$/)
  assert.match(text, /^toolnexus_telemetry_dropped_spans_total 0$/m)

  // At the end, the upstream sessions' durations go out before the process does.
  await source.close()
  gw.child.kill("SIGTERM")
  const { code } = await gw.exited
  assert.equal(code, 0)
  await receiver.until(() => receiver.metrics().some((m) => m.metric === "mcp.client.session.duration" && m.points.some((p) => p.attributes["network.transport"] === "pipe" && p.count === 2)), "the upstream sessions' durations")
})

test("a collector that refuses every export costs the calls nothing: the spans are dropped, counted, and said once", async () => {
  const receiver = await startReceiver(defer, { refuse: true })
  const gw = await gateway(receiver.endpoint)
  const { tool } = await appSource(gw.base)
  const echo = tool("echo")
  for (let i = 0; i < 5; i++) assert.equal((await echo.execute({ text: `call ${i}` })).output, `call ${i}`)
  await receiver.until(() => receiver.records.some((r) => r.refused === "/v1/traces"), "an export the receiver refused")
  await receiver.until(() => /spans are being dropped/.test(gw.stderr()), "the warning")
  for (let i = 5; i < 10; i++) assert.equal((await echo.execute({ text: `call ${i}` })).output, `call ${i}`)
  // Each call is two spans at the gateway (SERVER, and CLIENT upstream), all refused in turn.
  const dropped = async () => Number(/^toolnexus_telemetry_dropped_spans_total (\d+)$/m.exec(await (await fetch(`${gw.base}/metrics`)).text())?.[1])
  await waitFor(async () => (await dropped()) >= 20, { message: "the calls' 20 spans counted as dropped" })
  const warnings = gw.stderr().split("\n").filter((l) => l.includes("spans are being dropped"))
  assert.equal(warnings.length, 1, gw.stderr())
  assert.match(warnings[0], /^toolnexus: telemetry: spans are being dropped: the collector did not take them \(.*503.*\)\. Calls go on as before/)
  assert.doesNotMatch(warnings[0], /::|Error \{/, "a Rust type in the words")
  gw.child.kill("SIGTERM")
  const { code, stderr } = await gw.exited
  assert.equal(code, 0)
  assert.match(stderr, /^toolnexus: telemetry: \d+ spans were dropped in all$/m)
})

test("without OTEL_EXPORTER_OTLP_ENDPOINT the gateway exports nothing, /metrics is served only when asked, and the access log still names the caller's trace", async () => {
  const config = tmpConfig({ mcpServers: { native: { command: process.execPath, args: [fixture("native-stdio-server.mjs")] } } })
  for (const flags of [[], ["--metrics"]]) {
    const cli = startCli(defer, ["serve", config, "--addr", "127.0.0.1:0", "--access-log", ...flags], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "" } })
    const base = await cli.serving
    assert.equal((await fetch(`${base}/metrics`)).status, flags.length === 0 ? 404 : 200, flags.join(" "))
    const { tool } = await appSource(base)
    const { parent } = await inSpan(() => tool("echo").execute({ text: "x" }))
    const trace = parent.spanContext().traceId
    await waitFor(() => accessLines(cli.stderr()).some((e) => e.method === "tools/call"), { message: "the call's access-log line" })
    const logged = accessLines(cli.stderr()).find((e) => e.method === "tools/call")
    assert.equal(logged.traceId, trace, flags.join(" "))
    assert.equal(logged.spanId, undefined)
  }
})
