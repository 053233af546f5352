"""The same `echo` tool on the official Python `mcp` SDK (MCPServer, mcp 2.x), for comparison with
raw_server.py: `node bench/server-cost.mjs` shows what the SDK server itself costs per call."""
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("mcp-bench")


@mcp.tool()
def echo(message: str = "") -> str:
    """Returns its message."""
    return message


if __name__ == "__main__":
    mcp.run()
