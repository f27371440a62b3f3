"""The HTTP floor: the raw-ASGI ceiling plus the least JSON-RPC work an MCP server must do per request.

What `raw_asgi_echo.py` does (read the body, parse it with orjson, answer), with the answer computed by
hexmcp's core exactly as every transport does it: `jsonrpc.classify`, one core `Session` per MCP
session (`Session.handle_request`: lifecycle, route, params, the tool, the result's shape) and
`rpc_layer.answer` + `jsonrpc.dumps`. No guard, auth, body limit, concurrency cap, deadline, SSE
switch or error handling: what is left between this and `hexmcp serve` is the HTTP adapter's own
cost, and hexmcp cannot be faster than this without making the core cheaper.

It runs on the uvicorn protocol hexmcp runs on (`uvicorn_fence.GuardedHttpToolsProtocol`, through the
runner's `uvicorn_config`: the coalescing transport that sends head and body in one write, the
per-request hooks) and answers with a content-length as hexmcp does. Until ADR 0213 it ran on uvicorn's
plain protocol like the ceiling, answering chunked in two writes: at c=32 it then paid a system call a
request that hexmcp does not, which hid about a fifth of hexmcp's adapter cost behind the kernel's and
made the floor scale worse from c=1 to c=32 than the servers around it.
`python bench/servers/core_asgi_floor.py --port P`.
"""

from __future__ import annotations

import itertools
from typing import Any

import uvicorn
from raw_asgi_echo import JSON_HEADERS, UVICORN_OPTIONS, port_argument, read_body  # run as a script: this folder heads sys.path

from hexmcp.wire import jsonrpc
from hexmcp.adapters import rpc_layer
from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.runner import uvicorn_config
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
    body = jsonrpc.dumps(rpc_layer.answer(request.id, outcome))
    await send({"type": "http.response.start", "status": 200,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def floor_config(port: int = 0) -> uvicorn.Config:
    """hexmcp's uvicorn configuration (its protocol, the fence) serving the floor app, lifespan off."""
    options = {name: value for name, value in UVICORN_OPTIONS.items() if name != "http"}  # the fence's protocol stays
    return uvicorn_config(app, HttpConfig(port=port), **options)


if __name__ == "__main__":
    uvicorn.Server(floor_config(port_argument())).run()
