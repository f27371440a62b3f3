"""Who a client is, for per-client limits, task ownership and the audit trail, when its session cannot say it.

REST calls, sessionless POSTs and 2026-07-28 requests each get a core session of their own, so a
session id names one request, not a client: a router flooding the classifier would never meet its
per-client cap. The identity comes only from what was authenticated: the principal's (an OAuth token's
subject, or the configured name of the static token), else the address the client connects from, or
the address a trusted proxy forwarded (`forwarded.py`). Whatever a client merely sends (a bearer value
when no authentication is configured, an `X-Forwarded-For` from an untrusted peer) cannot change it,
so a client cannot escape its limits by sending something new each time. Clients that share the static
token, or an address, share a cap.
"""

from __future__ import annotations

from .request import HttpRequest


def client_identity(request: HttpRequest) -> str:
    """`token:<name>` or `oauth:<subject>` for an authenticated request, else `address:<host>`."""
    principal = request.principal
    if principal is not None:
        return principal.identity  # type: ignore[no-any-return]
    proxies = request.proxies
    if proxies is not None:
        address = proxies.client_address(request)
    else:
        client = request.scope.get("client")
        address = client[0] if client else None
    return f"address:{address}" if address else "address:unknown"
