"""The HTTP benchmark's subject: an `echo` tool on hexmcp's HTTP adapter, configured as `hexmcp serve` is.

`python bench/servers/hexmcp_http_echo.py --port P`.
"""

from __future__ import annotations

import argparse

from hexmcp.adapters.http import HttpConfig, run_http
from hexmcp.core import McpServer

server = McpServer("bench-echo-hexmcp", "1.0.0")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    raise SystemExit(run_http(server, HttpConfig(port=args.port), log_level="warning"))
