"""The cap on how many requests are served at once.

Beyond the cap a request is refused at once with 503 + Retry-After (and a JSON-RPC -32005 body), so
load beyond capacity costs almost nothing instead of queueing into timeouts. Long-lived streams (the
GET stream, `subscriptions/listen`) give their slot back when they settle into waiting, by calling
`scope[RELEASE]()`; they are bounded separately (`max_streams`). Request bodies are read before a
request gets here (`body.py`), so a slow or stalled upload never holds a slot. A step the app runs
(`app.py`) rather than a middleware layer: `take` is a counter and a closure, not a coroutine frame.
"""

from __future__ import annotations

from typing import Callable, Iterable

from hexmcp.core import ErrorCode

from .asgi import Scope, Send
from .json_body import readable_id
from .refusals import refuse

RELEASE = "hexmcp.release_slot"
RETRY_AFTER_S = b"1"


class ConcurrencyLimit:
    def __init__(self, *, limit: int, exempt_paths: Iterable[str] = ()) -> None:
        if limit < 1:
            raise ValueError(f"the concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self.in_flight = 0
        self.exempt = frozenset(exempt_paths)
        """Paths never capped (/health, /metrics): a probe must get through a saturated server."""

    def take(self, scope: Scope) -> Callable[[], None] | None:
        """A slot for an HTTP request (None: the cap is reached); the caller runs the request, then calls
        what this returned. The same function is `scope[RELEASE]`, for a request that becomes a stream."""
        if self.in_flight >= self.limit:
            return None
        self.in_flight += 1
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self.in_flight -= 1

        scope[RELEASE] = release
        return release

    async def refuse(self, scope: Scope, send: Send) -> None:
        await refuse(send, ErrorCode.SERVER_BUSY, f"Server busy: {self.limit} requests already in flight, retry shortly",
                     headers=[(b"retry-after", RETRY_AFTER_S)], request_id=readable_id(scope))


def release_slot(scope: Scope) -> None:
    """Give back the concurrency slot of a request that became a long-lived stream (no-op if none)."""
    release = scope.get(RELEASE)
    if release is not None:
        release()
