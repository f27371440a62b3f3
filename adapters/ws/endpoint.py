"""The ASGI endpoint serving MCP over WebSocket at `/ws`: admission, dialect choice, shutdown.

`WsEndpoint` is a pure ASGI app. Mount it with `websocket_route(server, config)` in a Starlette app,
or as `extra_routes={"/ws": endpoint}` in the HTTP adapter's `create_app`. Either way the app's
shutdown must call `await endpoint.shutdown()` *before* uvicorn's own connection shutdown, which would
otherwise close every socket at once with 1012 (see `runner.py`).
"""

from __future__ import annotations

import asyncio
import collections

import structlog
from starlette.routing import WebSocketRoute

from hexmcp.core import ErrorCode, McpServer
from hexmcp.wire import jsonrpc

from ..held_open import HeldOpen
from ..http.address_group import held_key
from ..http.asgi import Receive, Scope, Send
from ..http.client_identity import client_identity
from ..http.request import request_of
from ..http.responses import respond
from ..slots import Slots
from .config import WsConfig
from .connection import WsConnection
from .dialect import choose_dialect
from .handshake import HandshakeGuard, Refusal, refuse
from .server_log import install_invalid_utf8_filter

log = structlog.get_logger("hexmcp.adapters.ws")

UPGRADE_REQUIRED = 426


class WsEndpoint:
    def __init__(self, server: McpServer, config: WsConfig | None = None) -> None:
        self.server = server
        self.config = config or WsConfig()
        self.guard = HandshakeGuard(self.config)
        self.connections: set[WsConnection] = set()
        self.held = HeldOpen(what="WebSocket connections", per_client=self.config.max_connections_per_client,
                             total=self.config.max_connections, idle_timeout_s=self.config.idle_timeout_s)
        self.closes: collections.Counter[int | None] = collections.Counter()
        """How connections ended, by the close code we sent (None: the client left first). For operators and tests."""
        self.stopping = False
        self.slots: Slots | None = None
        """The HTTP app's concurrency cap, which every call on every socket counts against (`share_concurrency`)."""
        install_invalid_utf8_filter()
        jsonrpc.install_task_errors(server)  # once per server: a failed task's error in JSON-RPC terms

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await respond(send, UPGRADE_REQUIRED, b'{"error":"this endpoint speaks WebSocket only"}',
                          headers=[(b"upgrade", b"websocket"), (b"connection", b"Upgrade")])
            return
        if (await receive())["type"] != "websocket.connect":
            return
        refusal = self.guard.check(scope) or self._stopping()
        if refusal is not None:
            await refuse(scope, send, refusal)
            return
        client = client_identity(request_of(scope))
        key = held_key(client)
        place = _Place()
        refused = self.held.take(key, place)
        if refused is not None:
            await refuse(scope, send, Refusal(code=ErrorCode.SERVER_BUSY, message=refused,
                                              headers=((b"retry-after", b"1"),)))
            return
        connection = WsConnection(self.server, self.config, choose_dialect(scope.get("subprotocols") or ()),
                                  receive, send, client_id=client, slots=self.slots)
        place.connection = connection
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)
            self.held.give(key, place)
            self.closes[connection.ended.code if connection.ended else None] += 1

    def share_concurrency(self, slots: Slots) -> None:
        """Count every call on these sockets against `slots` (the HTTP app mounting this endpoint calls it):
        1,024 sockets × `max_in_flight` calls must not get round the server's `max_concurrent_requests`."""
        self.slots = slots

    def _stopping(self) -> Refusal | None:
        if self.stopping:
            return Refusal(code=ErrorCode.SERVER_BUSY, message="The server is shutting down",
                           headers=((b"retry-after", b"5"),))
        return None

    async def shutdown(self) -> None:
        """Refuse new sockets; let each open one finish its in-flight requests, then close it with 1001.

        Idempotent. Returns when every socket is closed (each bounded by `shutdown_grace_s` for its
        requests plus `close_timeout_s` to deliver the close frame).
        """
        if self.stopping:
            return
        self.stopping = True
        open_now = list(self.connections)
        log.info("websocket shutdown", connections=len(open_now))
        await asyncio.gather(*(c.shutdown(self.config.shutdown_grace_s) for c in open_now), return_exceptions=True)


class _Place:
    """A socket's place in `WsEndpoint.held`, taken before the socket is accepted: until then (`connection`
    None) nothing may close it."""

    connection: WsConnection | None = None

    @property
    def session_id(self) -> str:
        return self.connection.session_id if self.connection is not None else "-"

    def idle(self) -> bool:
        return self.connection is not None and self.connection.idle()

    def activity(self) -> int:
        return self.connection.activity() if self.connection is not None else 0

    def let_go(self, reason: str, *, idle: bool) -> None:
        if self.connection is not None:
            self.connection.let_go(reason, idle=idle)


def websocket_route(server: McpServer, config: WsConfig | None = None) -> WebSocketRoute:
    """A Starlette route serving `server` at `config.path`; `route.endpoint` is the `WsEndpoint`."""
    endpoint = WsEndpoint(server, config)
    return WebSocketRoute(endpoint.config.path, endpoint, name="mcp-websocket")
