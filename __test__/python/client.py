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
from report import connected, text_of


async def main() -> None:
    url, mode = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    tool = sys.argv[4] if len(sys.argv) > 4 else "add"
    out: dict = {"outputs": []}
    async with Client(url, mode=mode) as client:
        out.update(await connected(client))
        for i in range(calls):
            result = await client.call_tool(tool, {"a": i, "b": 1})
            out["outputs"].append({"text": text_of(result), "isError": bool(result.is_error)})
    print(json.dumps(out))


asyncio.run(main())
