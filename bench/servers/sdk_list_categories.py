"""The stdio benchmark's reference for `list_categories`: the official SDK (2.x) returning the same dict.

A `dict[str, Any]` return annotation makes the SDK send it as text and as `structuredContent`, as
`hexmcp stdio` does.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver import MCPServer

from bench.servers.payload import list_categories_answer

ANSWER = list_categories_answer()
server = MCPServer("bench-list-categories-sdk", version="1.0.0", log_level="WARNING")


@server.tool()
async def list_categories() -> dict[str, Any]:
    """List the categories, their system prompts and descriptions."""
    return ANSWER


if __name__ == "__main__":
    logging.getLogger().setLevel(logging.WARNING)
    server.run("stdio")
