"""Who a client is, for per-client limits, when its session cannot say it.

REST calls, sessionless POSTs and 2026-07-28 requests each get a core session of their own, so a
session id names one request, not a client: a router flooding the classifier would never meet its
per-client cap. The identity is the bearer token the client presents (as a digest: the token itself
is a secret and must not sit in memory tables or logs), else the address it connects from. Clients
that share a token (one configured `--auth-token` for everyone) or an address (behind one proxy)
share a cap; that is the price of a sessionless protocol.
"""

from __future__ import annotations

import hashlib

from .request import HttpRequest

_DIGEST_CHARS = 16  # 64 bits: ample to tell clients apart, short enough to key a table


def client_identity(request: HttpRequest) -> str:
    """`token:<digest>` for a request with a bearer token, else `address:<host>` (HTTP or WebSocket)."""
    authorization = request.header(b"authorization")
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(b" ")
        token = token.strip()
        if scheme.lower() == b"bearer" and token:
            return "token:" + hashlib.sha256(token).hexdigest()[:_DIGEST_CHARS]
    client = request.scope.get("client")
    return f"address:{client[0]}" if client else "address:unknown"
