"""The aiohttp session under both HTTP wires (Streamable HTTP, REST), and how its failures read as ours.

aiohttp rather than httpx for its per-request cost: with its C-accelerated parser a POST round trip
costs a fraction of httpx's on the same server.
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from typing import Sequence

import aiohttp

from ..errors import ClientError, unreachable
from .base import too_large

CONNECT_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256
# An idle connection is dropped before a server would: uvicorn closes one idle for 5 s, and a request
# sent on a connection the server is closing at that moment fails with no way to know whether it
# arrived (aiohttp keeps idle connections 15 s by default; httpx, 5 s).
KEEPALIVE_S = 4.0
# Failures that mean no connection was made, so the request certainly never reached the server.
NEVER_SENT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)


def new_session(url: str, middlewares: Sequence[aiohttp.ClientMiddlewareType] = ()) -> aiohttp.ClientSession:
    """One session per wire (to `url`), made inside the running loop (aiohttp binds a session to its loop).

    No overall timeout: the dispatcher owns each request's deadline and cancels the exchange itself.
    """
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_S),
                                 connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_S),
                                 middlewares=tuple(middlewares), proxy=env_proxy(url))


def env_proxy(url: str) -> str | None:
    """The HTTP(S)_PROXY that applies to `url` (none when NO_PROXY covers its host), as httpx honoured it.

    Read once per wire: aiohttp's own `trust_env` reads it, and ~/.netrc, in a worker thread on every
    request, which cost two thread hand-offs per call.
    """
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


async def read_limited(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body, refused (ClientError naming the limit) as soon as it is known to pass `limit`: a declared
    length over it is refused before reading, a body that grows past it as it does. Leaving the response
    unread closes its connection; the session's other connections are untouched."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(f"the server's answer (HTTP {response.status}, {declared} bytes declared)", limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > limit:
            raise too_large(f"the server's answer (HTTP {response.status})", limit)
        chunks.append(chunk)
    return b"".join(chunks)


def failed(what: str, error: aiohttp.ClientError) -> ClientError:
    """UNREACHABLE, with `delivered=False` when no connection could be made."""
    return unreachable(what, error, delivered=False if isinstance(error, NEVER_SENT) else None)
