-- wrk: one handshake-era (2025-11-25) tools/call per request inside one session (its
-- Mcp-Session-Id from env WRK_SESSION, made by bench/serve-compare.mjs with initialize and
-- notifications/initialized), of the tool named by env WRK_TOOL (default fx_echo). Accept puts
-- application/json first, as bench/load.mjs does; an SSE answer would do too (wrk only counts
-- the status). Each request has an id of its own (thread number + 16 × count), so calls in
-- flight on the session's 32 connections never share one.
local tool = os.getenv("WRK_TOOL") or "fx_echo"
local session = os.getenv("WRK_SESSION")
if session == nil or session == "" then error("wrk-session.lua needs WRK_SESSION (an Mcp-Session-Id)") end
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["accept"] = "application/json, text/event-stream"
wrk.headers["mcp-protocol-version"] = "2025-11-25"
wrk.headers["mcp-session-id"] = session
local head = '{"jsonrpc":"2.0","id":'
local tail = ',"method":"tools/call","params":{"name":"' .. tool .. '","arguments":{"text":"hi"}}}'

local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("number", threads)
end

local count = 0
request = function()
  count = count + 1
  return wrk.format(nil, nil, nil, head .. (count * 16 + (number or 0)) .. tail)
end

-- wrk counts answers that are not 2xx/3xx: printed, so a broken run is not taken for a fast one.
done = function(summary)
  io.stderr:write(string.format("non-2xx answers: %d; socket errors: %d\n", summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
