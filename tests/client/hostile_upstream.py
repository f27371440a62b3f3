"""A minimal MCP server that misbehaves on request, over Streamable HTTP and WebSocket (aiohttp) and
over stdio (run this file): enough of the protocol to be mounted (initialize, tools/list, tools/call),
then its tool `big` answers with more bytes than any cap should let through, in the shape `mode`
names. Its tool `small` answers honestly. The HTTP server records each request's Authorization.

Modes for `big`: `json` (one JSON body of `size` bytes), `sse-line` (an SSE answer whose one line of
`size` bytes never ends), `frame` (one WebSocket frame of `size` bytes), `line` (one stdio line of
`size` bytes); on the REST dialect (POST /rest/{method}) it is always one JSON body.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, AsyncIterator

PROTOCOL_VERSION = "2025-06-18"
TOOLS = [{"name": "big", "description": "too much", "inputSchema": {"type": "object"}},
         {"name": "small", "description": "just enough", "inputSchema": {"type": "object"}}]


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to an ordinary request (None for a notification); `big` is the transport's to answer."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    if method == "initialize":
        result: Any = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}},
                       "serverInfo": {"name": "hostile", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "small and honest"}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def is_big(message: dict[str, Any]) -> bool:
    return message.get("method") == "tools/call" and (message.get("params") or {}).get("name") == "big"


def big_text_answer(ident: Any, size: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident,
                       "result": {"content": [{"type": "text", "text": "x" * size}]}}).encode()


class HostileHttp:
    """The aiohttp app: POST /mcp (Streamable HTTP, JSON answers), GET /ws (WebSocket, subprotocol mcp)."""

    def __init__(self, mode: str, size: int) -> None:
        self.mode = mode
        self.size = size
        self.authorizations: list[str | None] = []
        self.url = ""

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[HostileHttp]:
        from aiohttp import web

        app = web.Application(client_max_size=1024 ** 2)
        app.router.add_post("/mcp", self._post)
        app.router.add_get("/mcp", _status(405))
        app.router.add_delete("/mcp", _status(200))
        app.router.add_get("/ws", self._ws)
        app.router.add_post("/rest/{method:.+}", self._rest)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        try:
            yield self
        finally:
            await runner.cleanup()

    async def _post(self, request: Any) -> Any:
        from aiohttp import web

        self.authorizations.append(request.headers.get("authorization"))
        message = await request.json()
        if is_big(message):
            if self.mode == "sse-line":
                response = web.StreamResponse(headers={"content-type": "text/event-stream"})
                await response.prepare(request)
                with contextlib.suppress(ConnectionError):
                    await response.write(b"data: ")
                    for _ in range(self.size // 65536 + 1):
                        await response.write(b"x" * 65536)
                return response
            return web.Response(body=big_text_answer(message["id"], self.size), content_type="application/json")
        reply = answer(message)
        if reply is None:
            return web.Response(status=202)
        return web.json_response(reply)

    async def _rest(self, request: Any) -> Any:
        """The router's REST dialect: POST /rest/{method}, the bare result back."""
        from aiohttp import web

        body = await request.json()
        message = {"jsonrpc": "2.0", "id": 1, "method": request.match_info["method"], "params": body.get("params")}
        if is_big(message):
            return web.Response(body=json.dumps({"content": [{"type": "text", "text": "x" * self.size}]}).encode(),
                                content_type="application/json")
        reply = answer(message) or {"result": {}}
        return web.json_response(reply.get("result", reply.get("error")), status=200 if "result" in reply else 400)

    async def _ws(self, request: Any) -> Any:
        from aiohttp import web

        socket = web.WebSocketResponse(protocols=("mcp",), max_msg_size=1024 ** 2)
        await socket.prepare(request)
        async for frame in socket:
            message = json.loads(frame.data)
            if is_big(message):
                with contextlib.suppress(ConnectionError):
                    await socket.send_bytes(big_text_answer(message["id"], self.size))  # binary: aiohttp
                    # would not send a str this large any faster, and the client reads both kinds
                continue
            reply = answer(message)
            if reply is not None:
                await socket.send_str(json.dumps(reply))
        return socket


def _status(status: int) -> Any:
    async def handle(request: Any) -> Any:
        from aiohttp import web

        return web.Response(status=status)
    return handle


def serve_stdio(size: int) -> None:
    """`python hostile_upstream.py SIZE`: JSON lines on stdio; `big` answers one line of SIZE bytes."""
    for line in sys.stdin:
        message = json.loads(line)
        reply = big_text_answer(message["id"], size) if is_big(message) else \
            (json.dumps(answer(message)).encode() if answer(message) is not None else None)
        if reply is not None:
            sys.stdout.buffer.write(reply + b"\n")
            sys.stdout.flush()


if __name__ == "__main__":
    serve_stdio(int(sys.argv[1]))
