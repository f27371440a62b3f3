"""A small server for observer tests: a tool that answers, one that fails (a tool error), one that never ends."""

from __future__ import annotations

import asyncio
from typing import Any

from hexmcp.core import McpServer, ToolError


def observed_server(*observers: Any) -> McpServer:
    server = McpServer("obs", "1")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def broken() -> str:
        raise ToolError("no luck")

    @server.tool()
    async def forever() -> str:
        await asyncio.Event().wait()
        return "never"

    for observer in observers:
        server.add_observer(observer)
    return server
