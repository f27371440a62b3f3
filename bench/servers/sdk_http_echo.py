"""The HTTP benchmark's reference: the same `echo` tool on the official MCP Python SDK (2.x).

Stateful Streamable HTTP in JSON-response mode, under uvicorn at log level WARNING with the options the
other servers of bench/http.py run under (httptools, uvloop, no access log, no server header):
`python bench/servers/sdk_http_echo.py --port P`.
"""

from __future__ import annotations

import argparse
import logging

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo-sdk", version="1.0.0", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    app = server.streamable_http_app(json_response=True, stateless_http=False)
    uvicorn.run(app, host="127.0.0.1", port=args.port, http="httptools", loop="uvloop", log_level="warning",
                access_log=False, server_header=False)
