"""The benchmark's hexmcp server: one trivial `echo` tool over stdio, built on hexmcp's public API."""

from __future__ import annotations

import sys

from hexmcp.adapters.stdio.transport import claim_stdout, run_stdio
from hexmcp.core import McpServer
from hexmcp.core.log import configure_logging


def build() -> McpServer:
    server = McpServer("bench-echo", "1.0.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    return server


def main() -> int:
    wire_fd = claim_stdout()
    configure_logging("warning", json_output=True)  # per-request info logs would be part of what we time
    return run_stdio(build(), wire_fd=wire_fd)


if __name__ == "__main__":
    sys.exit(main())
