-- wrk: one stateless 2026-07-28 tools/call per request (the tool named by env WRK_TOOL, default
-- fx_echo), as bench/log-calls.mjs sends it.
local tool = os.getenv("WRK_TOOL") or "fx_echo"
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["accept"] = "application/json, text/event-stream"
wrk.headers["mcp-protocol-version"] = "2026-07-28"
wrk.headers["mcp-method"] = "tools/call"
wrk.headers["mcp-name"] = tool
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool ..
  '","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},' ..
  '"io.modelcontextprotocol/clientCapabilities":{}}}}'

-- wrk counts answers that are not 2xx/3xx: printed, so a broken run is not taken for a fast one.
done = function(summary)
  io.stderr:write(string.format("non-2xx answers: %d; socket errors: %d\n", summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
