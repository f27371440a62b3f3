"""Pure-ASGI middleware capping how many requests are served at once.

Beyond the cap a request is refused at once with 503 + Retry-After (and a JSON-RPC -32005 body), so
load beyond capacity costs almost nothing instead of queueing into timeouts. Long-lived streams (the
GET stream, `subscriptions/listen`) give their slot back when they settle into waiting, by calling
`scope[RELEASE]()`; they are bounded separately (`max_streams`). Request bodies are read before a
request gets here (`body.py`), so a slow or stalled upload never holds a slot.
"""

from __future__ import annotations

from typing import Iterable

from hexmcp.core import ErrorCode

from .asgi import ASGIApp, Receive, Scope, Send
from .json_body import readable_id
from .refusals import refuse

RELEASE = "hexmcp.release_slot"
RETRY_AFTER_S = b"1"


class ConcurrencyLimit:
    def __init__(self, app: ASGIApp, *, limit: int, exempt_paths: Iterable[str] = ()) -> None:
        if limit < 1:
            raise ValueError(f"the concurrency limit must be at least 1, got {limit}")
        self.app = app
        self.limit = limit
        self.in_flight = 0
        self._exempt = frozenset(exempt_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._exempt:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            await refuse(send, ErrorCode.SERVER_BUSY,
                         f"Server busy: {self.limit} requests already in flight, retry shortly",
                         headers=[(b"retry-after", RETRY_AFTER_S)], request_id=readable_id(scope))
            return
        self.in_flight += 1
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self.in_flight -= 1

        scope[RELEASE] = release
        try:
            await self.app(scope, receive, send)
        finally:
            release()


def release_slot(scope: Scope) -> None:
    """Give back the concurrency slot of a request that became a long-lived stream (no-op if none)."""
    release = scope.get(RELEASE)
    if release is not None:
        release()
