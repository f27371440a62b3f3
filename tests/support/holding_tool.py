"""A tool that holds a concurrency slot for a while and counts how many run at once: the probe the
concurrency-cap tests (HTTP batches, WebSocket calls) read their peak from."""

from __future__ import annotations

import asyncio

from hexmcp.core import McpServer, ToolContext


class Gauge:
    def __init__(self) -> None:
        self.running = 0
        self.peak = 0


def add_hold_tool(server: McpServer, gauge: Gauge) -> McpServer:
    """Register `hold(seconds)` on `server`, counted in `gauge`; returns the server."""

    @server.tool()
    async def hold(seconds: float, ctx: ToolContext) -> str:
        """Runs for `seconds`, counting how many run at once."""
        gauge.running += 1
        gauge.peak = max(gauge.peak, gauge.running)
        try:
            await asyncio.sleep(seconds)
        finally:
            gauge.running -= 1
        return "held"

    return server
