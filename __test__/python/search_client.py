"""The official Python MCP client (mcp 2.x) against a toolkit served with `toolSearch`.

Usage: search_client.py URL MODE QUERY TOOL ARGS_JSON
  MODE is "auto", "legacy" or a protocol version pin ("2026-07-28"). Connects with elicitation
  (accepts with {"name": "Ada Lovelace"}), lists the tools, calls search_tools with QUERY, then
  call_tool with {"name": TOOL, "arguments": ARGS_JSON} asking for progress, and prints one
  JSON object: the negotiated protocolVersion, the listed tool names, the names search_tools
  found (from structuredContent), whether its text part is the same JSON, whether every match
  carries a description and an inputSchema, and the call's text, isError, structuredContent,
  progress values and the elicitation messages it answered.
"""

import asyncio
import json
import sys

from mcp import types
from mcp.client.client import Client
from report import text_of


async def main() -> None:
    url, mode, query, tool, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
    out: dict = {"progress": [], "elicitations": []}

    async def on_elicit(_context, params):
        out["elicitations"].append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async def on_progress(progress, total, message):
        out["progress"].append(progress)

    async with Client(url, mode=mode, elicitation_callback=on_elicit) as client:
        out["protocolVersion"] = client.protocol_version
        listed = await client.list_tools()
        out["tools"] = [t.name for t in listed.tools]

        found = await client.call_tool("search_tools", {"query": query})
        matches = (found.structured_content or {}).get("tools", [])
        out["searchIsError"] = bool(found.is_error)
        out["found"] = [m.get("name") for m in matches]
        out["textIsStructured"] = json.loads(text_of(found)) == found.structured_content
        out["complete"] = all(isinstance(m.get("description"), str) and isinstance(m.get("inputSchema"), dict) for m in matches)

        result = await client.call_tool("call_tool", {"name": tool, "arguments": args}, progress_callback=on_progress)
        out["text"] = text_of(result)
        out["isError"] = bool(result.is_error)
        out["structuredContent"] = result.structured_content
    print(json.dumps(out))


asyncio.run(main())
