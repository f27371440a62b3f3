"""The HTTP ceiling: a raw ASGI app under the same uvicorn (httptools + uvloop) that hexmcp serves on.

Not an MCP server (no sessions, lifecycle, validation or error handling): it reads the body, parses it
with orjson and answers a CallToolResult echoing `arguments.text`, so what it costs is what uvicorn and
JSON cost. `initialize` gets a session id header (the benchmark client needs one), notifications 202.
`python bench/servers/raw_asgi_echo.py --port P`.
"""

from __future__ import annotations

import argparse
from typing import Any

import orjson
import uvicorn

JSON_HEADERS = [(b"content-type", b"application/json")]
SESSION_HEADERS = [*JSON_HEADERS, (b"mcp-session-id", b"ceiling")]
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
              "serverInfo": {"name": "raw-asgi", "version": "0"}}


async def read_body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return  # lifespan: nothing to set up
    request = orjson.loads(await read_body(receive))
    if "id" not in request:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    if request["method"] == "initialize":
        result, headers = INITIALIZE, SESSION_HEADERS
    else:
        text = request["params"]["arguments"]["text"]
        result, headers = {"content": [{"type": "text", "text": text}], "isError": False}, JSON_HEADERS
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body",
                "body": orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})})


UVICORN_OPTIONS = dict(http="httptools", loop="uvloop", lifespan="off", log_level="warning", access_log=False,
                       server_header=False)
"""The uvicorn options every server of bench/http.py runs under (hexmcp's runner sets the same)."""


def port_argument() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    return parser.parse_args().port


def serve(asgi_app: Any) -> None:
    """Serve `asgi_app` on `--port` under uvicorn's own httptools protocol."""
    uvicorn.run(asgi_app, host="127.0.0.1", port=port_argument(), **UVICORN_OPTIONS)


if __name__ == "__main__":
    serve(app)
