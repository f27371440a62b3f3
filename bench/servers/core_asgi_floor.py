"""The HTTP floor: the raw-ASGI ceiling plus the least JSON-RPC work an MCP server must do per request.

What `raw_asgi_echo.py` does (read the body, parse it with orjson, answer), with the answer computed by
hexmcp's core exactly as every transport does it: `jsonrpc.classify`, one core `Session` per MCP
session (`Session.handle_request`: lifecycle, route, params, the tool, the result's shape) and
`rpc_layer.answer` + `jsonrpc.dumps`. No guard, auth, body limit, concurrency cap, deadline, SSE
switch or error handling: what is left between this and `hexmcp serve` is the HTTP adapter's own
cost, and hexmcp cannot be faster than this without making the core cheaper.
`python bench/servers/core_asgi_floor.py --port P`; same uvicorn options as the ceiling.
"""

from __future__ import annotations

import itertools
from typing import Any

from raw_asgi_echo import JSON_HEADERS, read_body, serve  # run as a script: this folder heads sys.path

from hexmcp.adapters import jsonrpc, rpc_layer
from hexmcp.core import McpServer, NullPeer, Session

server = McpServer("bench-echo-floor", "1.0.0")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


SESSION_HEADER = b"mcp-session-id"
sessions: dict[bytes, Session] = {}
session_ids = itertools.count(1)
trace_ids = rpc_layer.TraceIds("f")


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return  # lifespan: nothing to set up
    request = jsonrpc.classify(jsonrpc.decode(await read_body(receive)))
    headers = JSON_HEADERS
    if isinstance(request, jsonrpc.Request) and request.method == "initialize":
        session_id = str(next(session_ids)).encode()
        core = sessions[session_id] = server.open_session(session_id=session_id.decode(), peer=NullPeer(),
                                                          assume_version=None, transport="http")
        headers = [*JSON_HEADERS, (SESSION_HEADER, session_id)]
    else:
        core = sessions[dict(scope["headers"])[SESSION_HEADER]]
    if isinstance(request, jsonrpc.Notification):
        await core.handle_notification(request.method, request.params, trace_id=trace_ids.next())
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    assert isinstance(request, jsonrpc.Request), request
    outcome = await rpc_layer.serve_request(core, request, trace_ids.next())
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": jsonrpc.dumps(rpc_layer.answer(request.id, outcome))})


if __name__ == "__main__":
    serve(app)
