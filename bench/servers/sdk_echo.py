"""The benchmark's reference: the same `echo` tool on the official MCP Python SDK (2.x), over stdio."""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo-sdk", version="1.0.0", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    logging.getLogger().setLevel(logging.WARNING)
    server.run("stdio")
