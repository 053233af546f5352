"""What the Python client scripts report about a connected client (client.py, stdio_client.py)."""


async def connected(client) -> dict:
    """The negotiated protocolVersion, serverInfo and the listed tool names of `client`."""
    info = client.server_info
    tools = await client.list_tools()
    return {
        "protocolVersion": client.protocol_version,
        "serverInfo": None if info is None else {"name": info.name, "version": info.version},
        "tools": [t.name for t in tools.tools],
    }


def text_of(result) -> str:
    """The text parts of a tool result, joined."""
    return "".join(getattr(c, "text", "") for c in result.content)
