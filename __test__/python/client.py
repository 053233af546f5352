"""The official Python MCP client (mcp 2.x) driving a server, for the Node suite.

Usage: client.py URL MODE [CALLS] [TOOL]
  MODE is "auto" (probe server/discover, fall back to initialize), "legacy" (initialize) or a
  protocol version pin. Connects, lists tools, calls TOOL (default `add`) with {a: i, b: 1}
  CALLS times (default 1), and prints one JSON object: the
  negotiated protocolVersion, serverInfo, the tool names and the call outputs.
"""

import asyncio
import json
import sys

from mcp.client.client import Client


async def main() -> None:
    url, mode = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    tool = sys.argv[4] if len(sys.argv) > 4 else "add"
    out: dict = {"outputs": []}
    async with Client(url, mode=mode) as client:
        out["protocolVersion"] = client.protocol_version
        info = client.server_info
        out["serverInfo"] = None if info is None else {"name": info.name, "version": info.version}
        tools = await client.list_tools()
        out["tools"] = [t.name for t in tools.tools]
        for i in range(calls):
            result = await client.call_tool(tool, {"a": i, "b": 1})
            text = "".join(getattr(c, "text", "") for c in result.content)
            out["outputs"].append({"text": text, "isError": bool(result.is_error)})
    print(json.dumps(out))


asyncio.run(main())
