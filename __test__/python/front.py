"""The official Python MCP client (mcp 2.x) as the front client of a toolnexus gateway.

Usage: front.py URL MODE TOOL ARGS_JSON
  MODE is "legacy" (initialize) or a protocol version pin ("2026-07-28"). Connects with
  elicitation (accepts with {"name": "Ada Lovelace"}) and sampling (answers "Paris"), calls
  TOOL with ARGS_JSON asking for progress, and prints one JSON object: the negotiated
  protocolVersion, the result's text and isError, the progress values it got, and the messages
  of the elicitations and sampling requests it answered.
"""

import asyncio
import json
import sys

from mcp import types
from mcp.client.client import Client


async def main() -> None:
    url, mode, tool, args = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    out: dict = {"progress": [], "elicitations": [], "samplings": []}

    async def on_elicit(_context, params):
        out["elicitations"].append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async def on_sample(_context, params):
        out["samplings"].append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="front-model",
            stop_reason="endTurn",
        )

    async def on_progress(progress, total, message):
        out["progress"].append(progress)

    async with Client(url, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample) as client:
        out["protocolVersion"] = client.protocol_version
        result = await client.call_tool(tool, args, progress_callback=on_progress)
        out["text"] = "\n".join(getattr(c, "text", "") for c in result.content)
        out["isError"] = bool(result.is_error)
    print(json.dumps(out))


asyncio.run(main())
