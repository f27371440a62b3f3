"""`/livez`: the process is alive and its event loop turns; nothing else.

A liveness probe restarts the container when it fails, so it must not fail for reasons a restart does
not cure: a model still loading, a drain in progress, a gateway that is down, a server at its concurrency
cap. `/health` answers those (readiness: stop sending traffic); `/livez` answers 200 `ok` whenever this
coroutine runs at all, without a token and outside the concurrency cap, and says nothing about the
server (no version, pid or configuration), so leaving it open tells a caller nothing.
"""

from __future__ import annotations

from .asgi import Receive, Scope, Send
from .responses import respond

LIVENESS_PATH = "/livez"
_HEADERS = ((b"cache-control", b"no-store"),)


async def liveness(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] not in ("GET", "HEAD"):
        await respond(send, 405, b"", headers=[(b"allow", b"GET, HEAD")])
        return
    body = b"" if scope["method"] == "HEAD" else b"ok"
    await respond(send, 200, body, content_type=b"text/plain; charset=utf-8", headers=_HEADERS)
