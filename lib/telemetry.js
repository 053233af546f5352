// @ts-check
// Traces and metrics through the app's own OpenTelemetry API. The calling side: a CLIENT span
// for each request a loadMcp source makes (`startToolCall`, `traceRequest`); the serving side:
// a SERVER span around each call of an app's own served tool (`serveToolCall`). All go through
// the app's own OpenTelemetry API (`@opentelemetry/api`, an optional peer dependency), so they use
// the app's tracer provider, sampler and exporter. A span is a child of the context active when
// the request is made, and that context (`traceparent`, `tracestate`, `baggage`, as the app's
// propagator writes them) travels to the server in the request's `_meta`. Names and attributes
// follow the OpenTelemetry semantic conventions for MCP: `{mcp.method.name} {target}`,
// `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`, `network.transport`,
// `server.address`, `server.port`, `mcp.protocol.version`, `error.type`. Arguments and results
// are recorded only when the app opts in with the GenAI conventions' switch,
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (`gen_ai.tool.call.arguments` and
// `gen_ai.tool.call.result` on a loadMcp tool call's span). Each request's duration is also recorded in the app's meter provider as
// the `mcp.client.operation.duration` (or `mcp.server.operation.duration`) histogram, in
// seconds, with the same attributes except the resource URI.
//
// Without @opentelemetry/api in the app nothing is created: the lookup fails once and every
// request after it pays one comparison.
"use strict"

const binding = require("../binding.js")
const { version } = require("../package.json")

/** @type {any} undefined until looked up; null when the app has no OpenTelemetry API. */
let api
/** @type {any} */
let tracer
/** Whether arguments and results go on tool call spans (the app opted in; read once). */
let captureContent = false
/** @type {Map<string, any>} the duration histograms by name, of `meterProvider` */
let durations = new Map()
/** @type {any} the global meter provider `durations` were made with */
let meterProvider

/** The convention's bucket boundaries for MCP operation durations, in seconds. */
const BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/** The app's OpenTelemetry API, or null. */
function otel() {
  if (api === undefined) {
    try {
      api = require("@opentelemetry/api")
      tracer = api.trace.getTracer("toolnexus", version)
      captureContent = /^true$/i.test(process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? "")
    } catch {
      api = null
    }
  }
  return api
}

/**
 * The duration histogram `name` (`mcp.client.operation.duration` or
 * `mcp.server.operation.duration`) of the app's meter provider now (the metrics API has no
 * proxy: an app that registers its provider after a first request gets its histogram from the
 * next one).
 * @param {any} a  the API
 * @param {string} name
 */
function durationHistogram(a, name) {
  const provider = a.metrics.getMeterProvider()
  if (provider !== meterProvider) {
    meterProvider = provider
    durations = new Map()
  }
  let histogram = durations.get(name)
  if (!histogram) {
    const side = name.startsWith("mcp.client") ? "client" : "server"
    histogram = provider.getMeter("toolnexus", version).createHistogram(name, {
      unit: "s",
      description: `The duration of an MCP request as the ${side} sees it`,
      advice: { explicitBucketBoundaries: BUCKETS },
    })
    durations.set(name, histogram)
  }
  return histogram
}

/**
 * Starts a CLIENT span named `name` with `attributes`, child of the active context: the
 * context to send upstream (`meta`, undefined when the propagator wrote nothing), and `end`,
 * which ends it (as an error when given an `error.type`, with the JSON-RPC code as
 * `rpc.response.status_code` when that is one) and records its duration.
 * @param {any} a  the API
 * @param {string} name
 * @param {Record<string, string | number>} attributes
 */
function begin(a, name, attributes) {
  const parent = a.context.active()
  const span = tracer.startSpan(name, { kind: a.SpanKind.CLIENT, attributes }, parent)
  /** @type {Record<string, string>} */
  const carrier = {}
  a.propagation.inject(a.trace.setSpan(parent, span), carrier)
  return {
    span,
    meta: Object.keys(carrier).length > 0 ? carrier : undefined,
    end: ender(a, span, attributes, "mcp.client.operation.duration"),
  }
}

/**
 * `value` as JSON text for an attribute (the app's SDK applies its own length limits).
 * @param {unknown} value
 */
function jsonText(value) {
  try {
    return JSON.stringify(value) ?? "null"
  } catch {
    return "(not representable as JSON)"
  }
}

/**
 * How `span` ends: as an error when given an `error.type` (with the JSON-RPC code as
 * `rpc.response.status_code` when that is one), its duration recorded in `histogram` with its
 * attributes but the resource URI.
 * @param {any} a  the API
 * @param {any} span
 * @param {Record<string, string | number>} attributes
 * @param {string} histogram
 */
function ender(a, span, attributes, histogram) {
  const started = performance.now()
  return {
    /** @param {string} [errorType] */
    end(errorType) {
      const { "mcp.resource.uri": _uri, ...measured } = attributes
      if (errorType !== undefined) {
        span.setAttribute("error.type", errorType)
        measured["error.type"] = errorType
        // A JSON-RPC error's code is its status (as the convention's `rpc.response.status_code`).
        if (/^-?\d+$/.test(errorType)) span.setAttribute("rpc.response.status_code", errorType)
        span.setStatus({ code: a.SpanStatusCode.ERROR })
      }
      span.end()
      durationHistogram(a, histogram).record((performance.now() - started) / 1000, measured)
    },
  }.end
}

/**
 * A loadMcp tool's server as the attributes name it, by the tool's native handle (asked once).
 * @type {WeakMap<object, Record<string, string | number>>}
 */
const peers = new WeakMap()

/** @param {any} ref */
function toolAttributes(ref) {
  let attributes = peers.get(ref)
  if (!attributes) {
    const peer = binding.mcpToolPeer(ref)
    attributes = {
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": peer.tool,
      "network.transport": peer.transport,
    }
    if (peer.address !== undefined) attributes["server.address"] = peer.address
    if (peer.port !== undefined) attributes["server.port"] = peer.port
    if (peer.protocolVersion !== undefined) attributes["mcp.protocol.version"] = peer.protocolVersion
    peers.set(ref, attributes)
  }
  return attributes
}

/**
 * @typedef {object} ClientSpan
 * @property {Record<string, string> | undefined} meta  the context to send in `_meta`
 * @property {(result: any) => void} end  ends the span with a tool call's result
 */

/**
 * Starts the CLIENT span of a loadMcp tool's call (`ref` its native handle, `args` its
 * arguments, recorded only when the app opted in), or null without OpenTelemetry.
 * @param {unknown} ref
 * @param {unknown} args
 * @returns {ClientSpan | null}
 */
function startToolCall(ref, args) {
  const a = api === undefined ? otel() : api
  if (a === null) return null
  const attributes = toolAttributes(ref)
  const started = begin(a, `tools/call ${attributes["gen_ai.tool.name"]}`, attributes)
  if (captureContent) started.span.setAttribute("gen_ai.tool.call.arguments", jsonText(args ?? {}))
  return {
    meta: started.meta,
    end(result) {
      if (captureContent) {
        const { structuredContent, content, output } = result ?? {}
        started.span.setAttribute("gen_ai.tool.call.result", jsonText(structuredContent ?? content ?? output))
      }
      started.end(result?.isError ? String(result.metadata?.errorType ?? "tool_error") : undefined)
    },
  }
}

/**
 * A source's server as the attributes name it (asked once per source and server).
 * @type {WeakMap<object, Map<string, Record<string, string | number>>>}
 */
const servers = new WeakMap()

/**
 * @param {any} handle  the source's NativeSource
 * @param {string} server
 */
function serverAttributes(handle, server) {
  let known = servers.get(handle)
  if (!known) servers.set(handle, (known = new Map()))
  let attributes = known.get(server)
  if (!attributes) {
    const peer = handle.serverPeer(server)
    attributes = {}
    if (peer) {
      attributes["network.transport"] = peer.transport
      if (peer.address !== undefined) attributes["server.address"] = peer.address
      if (peer.port !== undefined) attributes["server.port"] = peer.port
      if (peer.protocolVersion !== undefined) attributes["mcp.protocol.version"] = peer.protocolVersion
      known.set(server, attributes)
    }
  }
  return attributes
}

/**
 * Sends a source's request on one of its servers (`send` given the request options, with the
 * trace context in `meta` when there is a span) inside a CLIENT span: `method` is its MCP
 * method, `target` the prompt's name (or null), `extra` its own attributes. A rejection ends
 * the span as an error: `error.type` the JSON-RPC code of the server's refusal, `cancelled`
 * when the request's signal fired, else `_OTHER`.
 * @template T
 * @param {any} handle  the source's NativeSource
 * @param {string} server
 * @param {string} method
 * @param {string | null} target
 * @param {Record<string, string>} extra
 * @param {any} opts  the request's checked options
 * @param {(opts: any) => Promise<T>} send
 * @returns {Promise<T>}
 */
function traceRequest(handle, server, method, target, extra, opts, send) {
  const a = api === undefined ? otel() : api
  if (a === null) return send(opts)
  const attributes = { "mcp.method.name": method, ...serverAttributes(handle, server), ...extra }
  const span = begin(a, target === null ? method : `${method} ${target}`, attributes)
  /** @param {any} error */
  const fail = (error) => {
    const code = typeof error?.code === "number" ? String(error.code) : undefined
    span.end(code ?? (opts?.signal?.aborted ? "cancelled" : "_OTHER"))
    throw error
  }
  let sent
  try {
    sent = send(span.meta === undefined ? opts : { ...opts, meta: span.meta })
  } catch (error) {
    fail(error)
  }
  return /** @type {Promise<T>} */ (sent).then((value) => {
    span.end()
    return value
  }, fail)
}

/**
 * The app's active trace context as its propagator writes it (`traceparent`, `tracestate`):
 * the engine's CLIENT spans of a call's listings are its children (roots when it is empty,
 * as it is without OpenTelemetry in the app).
 * @returns {Record<string, string>}
 */
function activeCarrier() {
  const a = api === undefined ? otel() : api
  // Without the API there is no context: the engine's spans (when it exports any, from the
  // OTEL_* variables) are roots.
  if (a === null) return {}
  /** @type {Record<string, string>} */
  const carrier = {}
  a.propagation.inject(a.context.active(), carrier)
  return carrier
}

/**
 * Runs a served tool's `run` (a toolkit's or buildMcpServer's own tool, called by an MCP
 * client) inside a SERVER span `tools/call <name>`: parented on the trace context the request
 * came with (`carrier`: its `traceparent` and `tracestate`, from the request's `_meta` or its
 * HTTP headers), else on the active context; the app's own spans inside `run` are its
 * children. An error result ends it as `tool_error`, a throw as `_OTHER`; its duration goes to
 * `mcp.server.operation.duration`. Without OpenTelemetry, `run` is simply called. When the
 * engine made the SERVER span itself (`spanned`: it exports spans over OTLP), `carrier` names
 * that span and `run` only runs inside it.
 * @template T
 * @param {string} name
 * @param {Record<string, string> | undefined} carrier
 * @param {boolean} spanned
 * @param {() => Promise<T>} run
 * @returns {Promise<T>}
 */
function serveToolCall(name, carrier, spanned, run) {
  const a = api === undefined ? otel() : api
  if (a === null) return run()
  const parent = carrier === undefined ? a.context.active() : a.propagation.extract(a.ROOT_CONTEXT, carrier)
  // The engine exports this call's SERVER span itself (OTLP): `run` only runs inside it.
  if (spanned) return a.context.with(parent, run)
  const attributes = { "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name }
  const span = tracer.startSpan(`tools/call ${name}`, { kind: a.SpanKind.SERVER, attributes }, parent)
  const end = ender(a, span, attributes, "mcp.server.operation.duration")
  let running
  try {
    running = a.context.with(a.trace.setSpan(parent, span), run)
  } catch (error) {
    end("_OTHER")
    throw error
  }
  return Promise.resolve(running).then(
    (result) => {
      end(/** @type {any} */ (result)?.isError ? "tool_error" : undefined)
      return result
    },
    (error) => {
      end("_OTHER")
      throw error
    },
  )
}

/**
 * The spans the engine makes itself (a served request's SERVER span, a gateway's CLIENT span
 * for each request it relays upstream, a source's listings), handed to the app's own span
 * processor: each is turned into the SDK's `ReadableSpan` shape and given to its `onEnd`.
 * @type {{ processor: any, sink: any, given: number, waiting: Array<{ upTo: number, resolve: () => void }> } | null}
 */
let exported = null

/** How long a flush waits for the spans the engine queued to reach the app's processor. */
const FLUSH_BOUND_MS = 5000

/** Whether a throwing span processor was already reported (once per process). */
let processorThrew = false

/**
 * A trace state header as the API's `TraceState` (what the SDK's exporters serialize).
 * @param {string} header
 */
function traceState(header) {
  const a = otel()
  if (a?.createTraceState) return a.createTraceState(header)
  return { serialize: () => header, get: () => undefined, set() { return this }, unset() { return this } }
}

/**
 * The resource engine spans are exported with when the app names none: `service.name` from
 * OTEL_SERVICE_NAME, else `toolnexus`, built with the app's `@opentelemetry/resources` when it
 * has one (so exporters group it as they group their own).
 */
function defaultResource() {
  const attributes = { "service.name": process.env.OTEL_SERVICE_NAME || "toolnexus" }
  try {
    /** @type {any} the app's package, 1.x or 2.x */
    const resources = require("@opentelemetry/resources")
    if (typeof resources.resourceFromAttributes === "function") return resources.resourceFromAttributes(attributes)
    if (typeof resources.Resource === "function") return new resources.Resource(attributes)
  } catch {}
  const plain = {
    attributes,
    asyncAttributesPending: false,
    schemaUrl: undefined,
    waitForAsyncAttributes: async () => {},
    getRawAttributes: () => Object.entries(attributes),
    merge: () => plain,
  }
  return plain
}

/**
 * An engine span's record (src/telemetry.rs) as the SDK's `ReadableSpan`, with the field
 * names of both the 1.x and 2.x SDKs.
 * @param {any} r
 * @param {any} resource
 */
function readableSpan(r, resource) {
  /** @type {Record<string, unknown>} */
  const context = { traceId: r.traceId, spanId: r.spanId, traceFlags: r.traceFlags, isRemote: false }
  if (r.traceState) context.traceState = traceState(r.traceState)
  const parent =
    r.parentSpanId == null
      ? undefined
      : { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: r.traceFlags, isRemote: r.parentIsRemote }
  const nanos = (r.endTime[0] - r.startTime[0]) * 1e9 + (r.endTime[1] - r.startTime[1])
  const status = r.status.message ? { code: r.status.code, message: r.status.message } : { code: r.status.code }
  const links = r.links.map((/** @type {any} */ link) => ({
    context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.traceFlags, isRemote: true },
    attributes: link.attributes,
  }))
  const scope = { name: r.scope.name, version: r.scope.version ?? undefined }
  return {
    name: r.name,
    kind: r.kind,
    spanContext: () => context,
    parentSpanContext: parent,
    parentSpanId: parent?.spanId,
    startTime: r.startTime,
    endTime: r.endTime,
    duration: [Math.floor(nanos / 1e9), nanos % 1e9],
    status,
    attributes: r.attributes,
    links,
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    instrumentationLibrary: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  }
}

/**
 * Sends the spans the engine makes from now on to `processor` (an OpenTelemetry SDK span
 * processor: its `onEnd` is given each, ended), instead of to an OTLP endpoint; null stops.
 * @param {any} processor
 * @param {{ resource?: any }} [opts]
 */
function exportSpans(processor, opts) {
  if (processor === null || processor === undefined) {
    exported = null
    binding.exportSpans(null)
    return
  }
  if (typeof processor !== "object" || typeof processor.onEnd !== "function") {
    throw new TypeError("toolnexus: exportSpans takes an OpenTelemetry span processor (an object with onEnd), or null")
  }
  if (opts !== undefined && (opts === null || typeof opts !== "object")) {
    throw new TypeError("toolnexus: exportSpans's options must be an object")
  }
  const resource = opts?.resource ?? defaultResource()
  const state = { processor, sink: /** @type {any} */ (null), given: 0, waiting: /** @type {Array<{ upTo: number, resolve: () => void }>} */ ([]) }
  state.sink = binding.exportSpans((/** @type {any} */ record) => {
    state.given++
    try {
      processor.onEnd(readableSpan(record, resource))
    } catch (error) {
      if (!processorThrew) {
        processorThrew = true
        const message = error instanceof Error ? error.message : String(error)
        process.stderr.write(`toolnexus: telemetry: the span processor threw (${message}); its spans are lost, later throws are not reported\n`)
      }
    }
    state.waiting = state.waiting.filter((w) => (w.upTo <= state.given ? (w.resolve(), false) : true))
  })
  exported = state
}

/**
 * Sends what the engine has queued for the collector (OTLP), or hands what it has queued to
 * the app's span processor and flushes that.
 * @returns {Promise<void>}
 */
async function flushTelemetry() {
  await binding.flushTelemetry()
  const state = exported
  if (state === null) return
  const upTo = state.sink.queued()
  if (state.given < upTo) {
    // Bounded, as a flush to a collector is: a span the JavaScript thread is never given (its
    // environment ending) must not hold the flush forever.
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer
    await new Promise((resolve) => {
      state.waiting.push({ upTo, resolve: () => resolve(undefined) })
      timer = setTimeout(resolve, FLUSH_BOUND_MS)
    })
    clearTimeout(timer)
  }
  await state.processor.forceFlush?.()
}

module.exports = { activeCarrier, exportSpans, flushTelemetry, serveToolCall, startToolCall, traceRequest }
