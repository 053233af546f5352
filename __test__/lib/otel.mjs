// The app side of the telemetry tests: the real OpenTelemetry Node SDK registered globally (a
// tracer provider with an in-memory exporter and the W3C propagators, a meter provider with an
// in-memory exporter read on demand), and helpers to read what toolnexus recorded.
import { after } from "node:test"
import { metrics, trace } from "@opentelemetry/api"
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { W3CTraceContextPropagator, W3CBaggagePropagator, CompositePropagator } from "@opentelemetry/core"

export const exporter = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
provider.register({
  propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
})
after(() => provider.shutdown())
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })
const meterProvider = new MeterProvider({ readers: [reader] })
metrics.setGlobalMeterProvider(meterProvider)
after(() => meterProvider.shutdown())

/** The data points of toolnexus's histogram `name` exported now: { unit, attributes, count, sum, boundaries }. */
export async function durationPoints(name = "mcp.client.operation.duration") {
  metricExporter.reset()
  await reader.forceFlush()
  const found = metricExporter
    .getMetrics()
    .flatMap((m) => m.scopeMetrics)
    .filter((s) => s.scope.name === "toolnexus")
    .flatMap((s) => s.metrics)
    .filter((m) => m.descriptor.name === name)
  return found.flatMap((m) => m.dataPoints.map((p) => ({ unit: m.descriptor.unit, attributes: p.attributes, count: p.value.count, sum: p.value.sum, boundaries: p.value.buckets.boundaries })))
}
export const appTracer = trace.getTracer("app")

/** Runs `fn` inside an active app span; returns what it returned and that span. */
export async function inSpan(fn) {
  return appTracer.startActiveSpan("agent step", async (span) => {
    try {
      return { value: await fn(), parent: span }
    } finally {
      span.end()
    }
  })
}

export const mcpSpans = () => exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === "toolnexus")

