"""A server written with the official MCP SDK (MCPServer), for the client's interoperability tests.

`python tests/client/sdk_server.py` serves stdio; `--port P` serves Streamable HTTP at /mcp (SSE
answers, as the SDK does by default; `--json` for JSON answers). Tools mirror the demo server's
`echo`, `add` and `slow` (with progress), plus a resource, a resource template and a prompt.
"""

from __future__ import annotations

import argparse
import logging

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-demo", version="2.0.0", log_level="WARNING")
GREETING = "Hello from the SDK server"


@server.tool()
async def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
async def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress `steps` times."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"{steps} steps"


@server.resource("sdk://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return GREETING


@server.resource("sdk://items/{name}")
def item(name: str) -> str:
    """An item, by name (a resource template)."""
    return f"the SDK's {name}"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Write a greeting for {name}."


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--json", action="store_true", help="JSON answers instead of SSE")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    if args.port is None:
        server.run("stdio")
    else:
        import uvicorn

        app = server.streamable_http_app(json_response=args.json)
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
