"""Who may open a socket: Host/Origin allow-lists, the bearer token, and refusing before `accept`.

The rules are the HTTP adapter's (`adapters/http/guard.py`): its `HostOriginGuard` and `BearerAuth`
gates, reused as they are. When the socket is mounted inside the HTTP app those gates have already run
and this is a cheap second look; standalone (a plain Starlette app) it is the only one.

A refusal is an HTTP response to the upgrade request, never an accepted-then-closed socket, so a
client sees 401/403/503 and no protocol traffic. uvicorn offers the `websocket.http.response`
extension for that; without it, closing before `accept` still makes the server answer 403.
"""

from __future__ import annotations

from ..http.asgi import Scope, Send
from ..http.guard import BearerAuth, HostOriginGuard, Refusal, deny
from ..http.request import request_of
from .config import WsConfig

__all__ = ["HandshakeGuard", "Refusal", "refuse"]


class HandshakeGuard:
    def __init__(self, config: WsConfig) -> None:
        self._hosts = HostOriginGuard(bound_host=config.bound_host, allowed_hosts=config.allowed_hosts,
                                      allowed_origins=config.allowed_origins)
        self._token = BearerAuth(token=config.auth_token)

    def check(self, scope: Scope) -> Refusal | None:
        """None when the handshake may proceed; the refusal otherwise (Host/Origin first, as over HTTP)."""
        request = request_of(scope)
        refused = self._hosts.denial(request)
        if refused is not None or request.principal is not None:
            return refused  # authenticated already by the HTTP app this endpoint is mounted in (token or OAuth)
        return self._token.denial(request)


async def refuse(scope: Scope, send: Send, refusal: Refusal) -> None:
    """Answer the upgrade request with the HTTP status from the HTTP adapter's table and a JSON-RPC body."""
    await deny(scope, send, refusal)
