// @ts-check
// The calling side's traces: a CLIENT span for each request a loadMcp source makes, through the
// app's own OpenTelemetry API (`@opentelemetry/api`, an optional peer dependency), so they use
// the app's tracer provider, sampler and exporter. A span is a child of the context active when
// the request is made, and that context (`traceparent`, `tracestate`, `baggage`, as the app's
// propagator writes them) travels to the server in the request's `_meta`. Names and attributes
// follow the OpenTelemetry semantic conventions for MCP: `{mcp.method.name} {target}`,
// `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`, `network.transport`,
// `server.address`, `server.port`, `mcp.protocol.version`, `error.type`. Arguments and results
// are never recorded.
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

/** The app's OpenTelemetry API, or null. */
function otel() {
  if (api === undefined) {
    try {
      api = require("@opentelemetry/api")
      tracer = api.trace.getTracer("toolnexus", version)
    } catch {
      api = null
    }
  }
  return api
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
 * Starts the CLIENT span of a loadMcp tool's call (`ref` its native handle), or null without
 * OpenTelemetry.
 * @param {unknown} ref
 * @returns {ClientSpan | null}
 */
function startToolCall(ref) {
  const a = api === undefined ? otel() : api
  if (a === null) return null
  const attributes = toolAttributes(ref)
  const parent = a.context.active()
  const span = tracer.startSpan(`tools/call ${attributes["gen_ai.tool.name"]}`, { kind: a.SpanKind.CLIENT, attributes }, parent)
  /** @type {Record<string, string>} */
  const carrier = {}
  a.propagation.inject(a.trace.setSpan(parent, span), carrier)
  return {
    meta: Object.keys(carrier).length > 0 ? carrier : undefined,
    end(result) {
      if (result?.isError) {
        const type = String(result.metadata?.errorType ?? "tool_error")
        span.setAttribute("error.type", type)
        // A JSON-RPC error's code is its status (as the convention's `rpc.response.status_code`).
        if (/^-?\d+$/.test(type)) span.setAttribute("rpc.response.status_code", type)
        span.setStatus({ code: a.SpanStatusCode.ERROR })
      }
      span.end()
    },
  }
}

module.exports = { startToolCall }
