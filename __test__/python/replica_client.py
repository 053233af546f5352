"""The official Python MCP client (mcp 2.x) calling tools that ask for input, many times, for
replicas.test.mjs: behind a round-robin balancer each call's rounds may reach any replica.

Usage: replica_client.py URL MODE CALLS [TOOL ARGS_JSON]
  MODE is "legacy" (initialize: 2025-11-25) or a protocol version pin ("2026-07-28"). Connects
  with elicitation (accepts with {"ok": true, "by": "Ada", "name": "Ada Lovelace"}) and sampling
  (answers "short"), calls `confirm` {item: "item-<i>"} then `summarize` {text: "text-<i>"}
  CALLS times each (with TOOL, that tool with ARGS_JSON CALLS times instead), and
  prints one JSON object: protocolVersion, the outputs in order ({tool, i, text, isError} or
  {tool, i, error}), successes and failures (counts), the elicitation messages and sampling
  prompts it answered, and `replicas`: what each successful answer named as the replica that
  finished it (the text in its last parentheses), sorted and unique.
"""

import asyncio
import json
import re
import sys

from mcp import types
from mcp.client.client import Client


async def main() -> None:
    url, mode, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    only = (sys.argv[4], json.loads(sys.argv[5])) if len(sys.argv) > 5 else None
    out: dict = {"outputs": [], "elicitations": [], "samplings": []}

    async def on_elicit(_context, params):
        out["elicitations"].append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True, "by": "Ada", "name": "Ada Lovelace"})

    async def on_sample(_context, params):
        out["samplings"].append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="short"),
            model="replica-test-model",
            stop_reason="endTurn",
        )

    try:
        async with Client(url, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample) as client:
            out["protocolVersion"] = client.protocol_version
            for i in range(calls):
                plan = [only] if only else [("confirm", {"item": f"item-{i}"}), ("summarize", {"text": f"text-{i}"})]
                for tool, args in plan:
                    try:
                        result = await client.call_tool(tool, args)
                        text = "".join(getattr(c, "text", "") for c in result.content)
                        out["outputs"].append({"tool": tool, "i": i, "text": text, "isError": bool(result.is_error)})
                    except Exception as error:  # noqa: BLE001 - every failure is reported, in words
                        out["outputs"].append({"tool": tool, "i": i, "error": f"{type(error).__name__}: {error}"})
    except Exception as error:  # noqa: BLE001 - the connection itself failed
        out["fatal"] = f"{type(error).__name__}: {error}"
    ok = [o for o in out["outputs"] if "error" not in o and not o["isError"]]
    out["successes"] = len(ok)
    out["failures"] = len(out["outputs"]) - len(ok)
    out["replicas"] = sorted({m.group(1) for o in ok for m in [re.search(r"\(([^()]*)\)$", o["text"])] if m})
    print(json.dumps(out))


asyncio.run(main())
