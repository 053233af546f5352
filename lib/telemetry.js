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
  const parent = a.context.active()
  const span = tracer.startSpan(target === null ? method : `${method} ${target}`, { kind: a.SpanKind.CLIENT, attributes }, parent)
  /** @type {Record<string, string>} */
  const carrier = {}
  a.propagation.inject(a.trace.setSpan(parent, span), carrier)
  /** @param {any} error */
  const fail = (error) => {
    const code = typeof error?.code === "number" ? String(error.code) : undefined
    span.setAttribute("error.type", code ?? (opts?.signal?.aborted ? "cancelled" : "_OTHER"))
    if (code !== undefined) span.setAttribute("rpc.response.status_code", code)
    span.setStatus({ code: a.SpanStatusCode.ERROR })
    span.end()
    throw error
  }
  let sent
  try {
    sent = send(Object.keys(carrier).length > 0 ? { ...opts, meta: carrier } : opts)
  } catch (error) {
    fail(error)
  }
  return /** @type {Promise<T>} */ (sent).then((value) => {
    span.end()
    return value
  }, fail)
}

module.exports = { startToolCall, traceRequest }
