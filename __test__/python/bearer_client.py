"""The official Python MCP client (mcp 2.x) with a static bearer token, for the Node suite.

Usage: BEARER_TOKEN=... bearer_client.py URL MODE TOOL ARGS_JSON
  The token comes from the environment (never argv). MODE is "auto", "legacy" or a protocol
  version pin. Connects with `Authorization: Bearer <token>` on every request, lists the tools,
  calls TOOL with ARGS_JSON and prints one JSON object: the negotiated protocolVersion,
  serverInfo, the tool names and the call's text and isError. A failure to connect prints
  {"error": "<exception class>: <message>"} (the first leaf of an exception group) and exits 1.
"""

import asyncio
import json
import os
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from report import connected, text_of


async def main() -> int:
    url, mode, tool, args = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    token = os.environ["BEARER_TOKEN"]
    out: dict = {}
    try:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                out.update(await connected(client))
                result = await client.call_tool(tool, args)
                out["text"] = text_of(result)
                out["isError"] = bool(result.is_error)
    except BaseException as err:  # noqa: BLE001 - reported to the test, which asserts on it
        while isinstance(err, BaseExceptionGroup) and len(err.exceptions) > 0:
            err = err.exceptions[0]
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}))
        return 1
    print(json.dumps(out))
    return 0


sys.exit(asyncio.run(main()))
