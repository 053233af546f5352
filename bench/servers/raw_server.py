"""A small MCP stdio server speaking newline-delimited JSON-RPC directly (no SDK), so that the
client under test, not the server, dominates what the benchmarks measure.

    raw_server.py [--tools N] [--page-size P] [--hang]

Tools: `echo` (returns its `message`), `sleep` (answers after `ms` milliseconds, or never when
`ms` is absent: for abort benchmarks), then `tool_3` … up to N tools in total. `--hang` reads
everything and answers nothing (a hung server).
"""
import json
import sys
import threading

args = sys.argv[1:]
TOOLS = int(args[args.index("--tools") + 1]) if "--tools" in args else 3
PAGE = int(args[args.index("--page-size") + 1]) if "--page-size" in args else 0
HANG = "--hang" in args

SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}}}


def tool(i):
    name = ["echo", "sleep"][i] if i < 2 else f"tool_{i}"
    return {"name": name, "description": f"Tool number {i}.", "inputSchema": SCHEMA}


LISTING = [tool(i) for i in range(TOOLS)]
out = sys.stdout
lock = threading.Lock()


def send(message):
    line = json.dumps(message, separators=(",", ":")) + "\n"
    with lock:
        out.write(line)
        out.flush()


def answer(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-bench", "version": "1.0.0"},
        }
    if method == "tools/list":
        if not PAGE:
            return {"tools": LISTING}
        start = int(params.get("cursor") or 0)
        page = {"tools": LISTING[start : start + PAGE]}
        if start + PAGE < len(LISTING):
            page["nextCursor"] = str(start + PAGE)
        return page
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        if params.get("name") == "sleep":
            ms = arguments.get("ms")
            if ms is None:
                return None  # never answered
            threading.Timer(ms / 1000, lambda: send(reply(request, text("slept")))).start()
            return None
        return text(str(arguments.get("message", "")))
    if method == "ping":
        return {}
    raise KeyError(method)


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def reply(request, result):
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


for line in sys.stdin:
    if HANG or not line.strip():
        continue
    request = json.loads(line)
    if "id" not in request or "method" not in request:
        continue  # a notification or a response
    try:
        result = answer(request)
    except KeyError:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
        continue
    if result is not None:
        send(reply(request, result))
