"""The official Python MCP client (mcp 2.x) reading a server's resources, templates and prompts.

Usage: surface.py TARGET MODE PLAN_JSON
  TARGET is a streamable-HTTP URL or "stdio:<command line>" (split as a shell would).
  MODE is "legacy" (initialize) or a protocol version pin ("2026-07-28").
  PLAN_JSON is {"elicit": CONTENT?, "actions": [ACTION, ...]}; with "elicit", every elicitation
  is accepted with CONTENT. Each ACTION is one of
    {"op": "lists"}                                   every page of the three lists
    {"op": "read", "uri": U}
    {"op": "prompt", "name": N, "args": {...}}
    {"op": "complete", "ref": REF, "argument": {"name", "value"}, "context": {...}?}
    {"op": "call", "tool": T, "args": {...}}
    {"op": "subscribe", "uri": U, "tool": T, "args": {...}, "timeout": S}
        subscribes (legacy: resources/subscribe; 2026-07-28: subscriptions/listen with
        resource_subscriptions=[U]), calls T, then waits up to S seconds for U's update
    {"op": "list_changed", "tool": T, "args": {...}, "timeout": S}
        calls T, then waits for notifications/resources/list_changed (legacy) or the
        listen stream's ResourcesListChanged (2026-07-28)
  and prints one JSON object with "protocolVersion" and one entry per action in "results":
  the result as model_dump(by_alias=True, exclude_none=True) without ttlMs, cacheScope and
  resultType, or {"error": {"code", "message", "data"}}. Caching is off (cache=None).
"""

import asyncio
import json
import shlex
import sys
import warnings

import anyio
from mcp import StdioServerParameters, types
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")  # subscribe_resource is deprecated for 2026-07-28 only

DROPPED = ("ttlMs", "cacheScope", "resultType")


def dump(model) -> dict:
    value = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    for key in DROPPED:
        value.pop(key, None)
    return value


async def every_page(fetch, key: str) -> list:
    items, cursor = [], None
    while True:
        page = await fetch(cursor=cursor)
        items.extend(dump(item) for item in getattr(page, key))
        cursor = page.next_cursor
        if not cursor:
            return items


def target_of(target: str):
    if target.startswith("stdio:"):
        command, *args = shlex.split(target[len("stdio:") :])
        return StdioServerParameters(command=command, args=args)
    return target


async def main() -> None:
    target, mode, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    out: dict = {"results": []}
    legacy = mode == "legacy"
    updates: list[str] = []
    list_changes: list[str] = []
    changed = [anyio.Event()]  # set, and replaced, on each notification

    def notify() -> None:
        changed[0].set()
        changed[0] = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)
            notify()
        elif isinstance(message, types.ResourceListChangedNotification):
            list_changes.append("resources")
            notify()

    async def on_elicit(_context, _params):
        return types.ElicitResult(action="accept", content=plan.get("elicit") or {})

    extra = {"elicitation_callback": on_elicit} if "elicit" in plan else {}
    async with Client(target_of(target), mode=mode, cache=None, message_handler=on_message, **extra) as client:
        out["protocolVersion"] = client.protocol_version

        async def wait_for(seen: list, want, timeout: float) -> bool:
            with anyio.move_on_after(timeout):
                while want not in seen:
                    await changed[0].wait()
            return want in seen

        async def listened(action, event_type, matches, **filters):
            """Calls the action's tool with a listen stream open; the first matching event."""
            async with client.listen(**filters) as sub:
                await client.call_tool(action["tool"], action.get("args") or {})
                with anyio.move_on_after(action.get("timeout", 3)):
                    async for event in sub:
                        if isinstance(event, event_type) and matches(event):
                            return True
            return False

        async def run(action) -> object:
            op = action["op"]
            if op == "lists":
                return {
                    "resources": await every_page(client.list_resources, "resources"),
                    "resourceTemplates": await every_page(client.list_resource_templates, "resource_templates"),
                    "prompts": await every_page(client.list_prompts, "prompts"),
                }
            if op == "read":
                return dump(await client.read_resource(action["uri"]))
            if op == "prompt":
                return dump(await client.get_prompt(action["name"], action.get("args")))
            if op == "complete":
                ref = action["ref"]
                ref = (
                    types.PromptReference(type="ref/prompt", name=ref["name"])
                    if ref["type"] == "ref/prompt"
                    else types.ResourceTemplateReference(type="ref/resource", uri=ref["uri"])
                )
                context = (action.get("context") or {}).get("arguments")
                return dump((await client.complete(ref, action["argument"], context)).completion)
            if op == "call":
                return dump(await client.call_tool(action["tool"], action.get("args") or {}))
            if op == "subscribe":
                uri, timeout = action["uri"], action.get("timeout", 3)
                if legacy:
                    await client.subscribe_resource(uri)
                    await client.call_tool(action["tool"], action.get("args") or {})
                    got = await wait_for(updates, uri, timeout)
                    await client.unsubscribe_resource(uri)
                else:
                    from mcp.client.subscriptions import ResourceUpdated

                    got = await listened(
                        action, ResourceUpdated, lambda e: e.uri == uri, resource_subscriptions=[uri]
                    )
                return {"updated": uri if got else None}
            if op == "list_changed":
                if legacy:
                    await client.call_tool(action["tool"], action.get("args") or {})
                    got = await wait_for(list_changes, "resources", action.get("timeout", 3))
                else:
                    from mcp.client.subscriptions import ResourcesListChanged

                    got = await listened(action, ResourcesListChanged, lambda _e: True, resources_list_changed=True)
                return {"listChanged": got}
            raise ValueError(f"unknown op {op!r}")

        for action in plan["actions"]:
            try:
                out["results"].append(await run(action))
            except MCPError as e:
                error = {"code": e.error.code, "message": e.error.message}
                if e.error.data is not None:
                    error["data"] = e.error.data
                out["results"].append({"error": error})
    print(json.dumps(out))


asyncio.run(main())
