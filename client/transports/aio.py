"""The aiohttp session under both HTTP wires (Streamable HTTP, REST), and how its failures read as ours.

aiohttp rather than httpx for its per-request cost: with its C-accelerated parser a POST round trip
costs about a quarter of httpx's on the same server (ADR 0802 has the figures).
"""

from __future__ import annotations

from typing import Sequence

import aiohttp

from ..errors import ClientError, unreachable

CONNECT_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256
# Failures that mean no connection was made, so the request certainly never reached the server.
NEVER_SENT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)


def new_session(middlewares: Sequence[aiohttp.ClientMiddlewareType] = ()) -> aiohttp.ClientSession:
    """One session per wire, made inside the running loop (aiohttp binds a session to its loop).

    No overall timeout: the dispatcher owns each request's deadline and cancels the exchange itself.
    """
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_S),
                                 connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS),
                                 middlewares=tuple(middlewares))


def failed(what: str, error: aiohttp.ClientError) -> ClientError:
    """UNREACHABLE, with `delivered=False` when no connection could be made."""
    return unreachable(what, error, delivered=False if isinstance(error, NEVER_SENT) else None)
