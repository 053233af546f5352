"""The official Python MCP client (mcp 2.x) driving a stdio server, for the Node suite.

Usage: stdio_client.py MODE TOOL ARGS_JSON COMMAND [ARG ...]
  Launches COMMAND over stdio, connects in MODE ("legacy" or "auto"), lists tools, calls TOOL
  with ARGS_JSON once, and prints one JSON object: the negotiated protocolVersion, serverInfo,
  the tool names and the call's text and isError.
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from report import connected, text_of


async def main() -> None:
    mode, tool, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    server = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:])
    async with Client(server, mode=mode) as client:
        out = await connected(client)
        result = await client.call_tool(tool, args)
        out["text"] = text_of(result)
        out["isError"] = bool(result.is_error)
    print(json.dumps(out))


asyncio.run(main())
