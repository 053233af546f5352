"""The official Python MCP client (mcp 2.x) making a list of requests, for the Node suite.

Usage: ops_client.py URL MODE OPS_JSON [TOKEN]
  MODE is "auto", "legacy" or a protocol version pin. OPS_JSON is a list of requests:
  {"list": "tools"}, {"call": NAME, "args": {...}}, {"read": URI} or {"prompt": NAME, "args": {...}}.
  Elicitations are accepted with {"name": "Ada Lovelace"}. Prints one JSON object: the
  negotiated protocolVersion and, per request, what it answered: tool names; a call's text,
  isError and structuredContent; a read's text contents; a prompt's message texts; or a
  JSON-RPC error as {"error": {"code", "message"}}.
"""

import asyncio
import json
import sys

from contextlib import AsyncExitStack

from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from report import text_of


async def answer(client: Client, op: dict) -> dict:
    try:
        if "list" in op:
            return {"tools": [t.name for t in (await client.list_tools()).tools]}
        if "call" in op:
            result = await client.call_tool(op["call"], op.get("args", {}))
            return {"text": text_of(result), "isError": bool(result.is_error), "structuredContent": result.structured_content}
        if "read" in op:
            result = await client.read_resource(op["read"])
            return {"contents": [getattr(c, "text", None) for c in result.contents]}
        if "prompt" in op:
            result = await client.get_prompt(op["prompt"], op.get("args", {}))
            return {"messages": [getattr(m.content, "text", None) for m in result.messages]}
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}
    raise ValueError(f"unknown op {op}")


async def main() -> None:
    url, mode, ops = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    token = sys.argv[4] if len(sys.argv) > 4 else None

    async def on_elicit(_context, params):
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async with AsyncExitStack() as stack:
        target = url
        if token is not None:
            http = await stack.enter_async_context(create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
            target = streamable_http_client(url, http_client=http)
        client = await stack.enter_async_context(Client(target, mode=mode, elicitation_callback=on_elicit))
        out = {"protocolVersion": client.protocol_version, "answers": []}
        for op in ops:
            out["answers"].append(await answer(client, op))
    print(json.dumps(out))


asyncio.run(main())
