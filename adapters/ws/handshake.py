"""Who may open a socket: Host/Origin allow-lists, the bearer token, and refusing before `accept`.

The rules are the HTTP adapter's (`adapters/http/guard.py`): the Host/Origin matching is its
`HostOriginGuard`, reused as is, and the token check mirrors its `BearerAuth` (scheme name case-
insensitive, constant-time compare). When the socket is mounted inside the HTTP app those middlewares
have already run and this is a cheap second look; standalone (a plain Starlette app) it is the only one.

A refusal is an HTTP response to the upgrade request, never an accepted-then-closed socket, so a
client sees 401/403/503 and no protocol traffic. uvicorn offers the `websocket.http.response`
extension for that; without it, closing before `accept` still makes the server answer 403.
"""

from __future__ import annotations

import hmac

import attrs

from hexmcp.core import ErrorCode

from ..http.asgi import Receive, Scope, Send
from ..http.guard import HostOriginGuard
from ..http.refusals import refuse_upgrade
from ..http.request_headers import header
from .config import WsConfig


@attrs.frozen(kw_only=True)
class Refusal:
    code: ErrorCode
    message: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


async def _never_called(scope: Scope, receive: Receive, send: Send) -> None:  # pragma: no cover
    raise AssertionError("HostOriginGuard is used here only for its host_allowed/origin_allowed checks")


class HandshakeGuard:
    def __init__(self, config: WsConfig) -> None:
        self._hosts = HostOriginGuard(_never_called, bound_host=config.bound_host,
                                      allowed_hosts=config.allowed_hosts, allowed_origins=config.allowed_origins)
        self._expected = f"Bearer {config.auth_token}".encode() if config.auth_token else None

    def check(self, scope: Scope) -> Refusal | None:
        """None when the handshake may proceed; the refusal otherwise (Host/Origin first, as over HTTP)."""
        if not self._hosts.host_allowed(header(scope, b"host")):
            return Refusal(code=ErrorCode.FORBIDDEN, message="Forbidden: Host header not allowed")
        if not self._hosts.origin_allowed(header(scope, b"origin")):
            return Refusal(code=ErrorCode.FORBIDDEN, message="Forbidden: Origin not allowed")
        if self._expected is not None and not self._token_ok(header(scope, b"authorization")):
            return Refusal(code=ErrorCode.UNAUTHORIZED, message="Unauthorized: a valid bearer token is required",
                           headers=((b"www-authenticate", b'Bearer realm="hexmcp"'),))
        return None

    def _token_ok(self, given: bytes | None) -> bool:
        assert self._expected is not None
        given = given or b""
        if given[:7].lower() == b"bearer ":
            given = b"Bearer " + given[7:].strip()
        return hmac.compare_digest(given, self._expected)


async def refuse(scope: Scope, send: Send, refusal: Refusal) -> None:
    """Answer the upgrade request with the HTTP status from the HTTP adapter's table and a JSON-RPC body."""
    await refuse_upgrade(scope, send, refusal.code, refusal.message, headers=list(refusal.headers))
