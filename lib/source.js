// @ts-check
// loadMcp: the native load, then the source object around its handle: tools with an `execute`
// each, which follow their servers' list changes.
"use strict"

const binding = require("../binding.js")
const { checkLoad, callOptions } = require("./options.js")

/** @typedef {import("../index").McpSource} McpSource */
/** @typedef {import("../index").LoadOptions} LoadOptions */
/** @typedef {import("../index").Tool} Tool */
/** @typedef {import("../binding").NativeSource} NativeSource */

/**
 * The key of a loadMcp tool's native handle (not enumerable): a gateway serving the tool calls
 * its connection in Rust, and a toolkit names it by its server and original name.
 */
const MCP_TOOL_REF = "__toolnexusMcpTool"

/**
 * loadMcp tools' calls in flight, by number: the native side starts a call and answers it
 * later, with others that finished meanwhile, as one JSON text (src/js/settle.rs).
 * @type {Map<number, (result: any) => void>}
 */
const calls = new Map()

/** @param {string} batch */
function settleCalls(batch) {
  for (const [id, result] of JSON.parse(batch)) {
    const resolve = calls.get(id)
    calls.delete(id)
    resolve?.(result)
  }
}
binding.receiveCallResults(settleCalls)

/**
 * The `execute` of a loadMcp tool; `ref` is its native handle.
 * @param {unknown} ref
 * @returns {Tool["execute"]}
 */
function mcpExecute(ref) {
  return function execute(args, ctx) {
    const options = callOptions(ctx)
    return new Promise((resolve) => calls.set(binding.callMcpTool(ref, args, options), resolve))
  }
}

/**
 * The handle's tools as they are now, each with its `execute` and its hidden native handle.
 * @param {NativeSource} handle
 * @returns {Tool[]}
 */
function toolsOf(handle) {
  const [tools, refs] = /** @type {[any[], unknown[]]} */ (handle.tools())
  for (let i = 0; i < tools.length; i++) {
    tools[i].execute = mcpExecute(refs[i])
    Object.defineProperty(tools[i], MCP_TOOL_REF, { value: refs[i] })
  }
  return tools
}

/**
 * A loadMcp source's `tools` follow its servers' list changes: read, they are rebuilt when the
 * session's generation moved on since the last read. Assigning `source.tools` replaces the live
 * list with a plain value.
 * @param {McpSource} source
 * @param {NativeSource} handle
 */
function followTools(source, handle) {
  let tools = source.tools
  let seen = handle.generation()
  Object.defineProperty(source, "tools", {
    enumerable: true,
    configurable: true,
    get() {
      const now = handle.generation()
      if (now !== seen) {
        seen = now
        tools = toolsOf(handle)
      }
      return tools
    },
    set(value) {
      Object.defineProperty(source, "tools", { value, writable: true, enumerable: true, configurable: true })
    },
  })
}

/**
 * loadMcp with a toolkit's `hooks` (its own `onToolsChanged`, `relayInput`, `namedByToolkit`);
 * lib/options.js checks the options.
 * @param {string | object} input
 * @param {LoadOptions} [opts]
 * @param {{ onToolsChanged?: unknown, relayInput?: boolean, namedByToolkit?: boolean }} [hooks]
 * @returns {Promise<McpSource>}
 */
function loadSource(input, opts, hooks) {
  const checked = checkLoad(input, opts, hooks)
  if ("reject" in checked) return Promise.reject(checked.reject)
  return binding.loadMcp(input, checked.options, checked.more).then((loaded) => {
    const { handle, status, errors, info } = /** @type {any} */ (loaded)
    /** @type {McpSource} */
    const source = { tools: toolsOf(handle), status, errors, info, close: () => handle.close() }
    followTools(source, handle)
    return source
  })
}

/**
 * Connects to every enabled server and returns live, callable tools. Connections stay open
 * until `source.close()`.
 * @param {string | object} input
 * @param {LoadOptions} [opts]
 * @returns {Promise<McpSource>}
 */
function loadMcp(input, opts) {
  return loadSource(input, opts)
}

module.exports = { loadMcp, loadSource, MCP_TOOL_REF }
