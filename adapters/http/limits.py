"""The cap on how many requests are served at once.

Beyond the cap a request is refused at once with 503 + Retry-After (and a JSON-RPC -32005 body), so
load beyond capacity costs almost nothing instead of queueing into timeouts. Long-lived streams (the
GET stream, `subscriptions/listen`) give their slot back when they settle into waiting, by calling
`release_slot(request)`; they are bounded separately (`max_streams`). Work that is not a request of its
own takes a slot with `acquire`/`release`: each further request of a JSON-RPC batch (the POST holds the
first), and each WebSocket call (`adapters/ws`), so neither multiplies what one slot admits. Request bodies are read before a
request gets here (`body.py`), so a slow or stalled upload never holds a slot. A step the app runs
(`app.py`) rather than a middleware layer: `take` is a counter and a field, not a coroutine frame.
"""

from __future__ import annotations

from typing import Iterable

from hexmcp.core import ErrorCode

from .asgi import Send
from .json_body import readable_id
from .refusals import refuse
from .request import HttpRequest

RETRY_AFTER_S = b"1"


class ConcurrencyLimit:
    def __init__(self, *, limit: int, exempt_paths: Iterable[str] = ()) -> None:
        if limit < 1:
            raise ValueError(f"the concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self.in_flight = 0
        self.exempt = frozenset(exempt_paths)
        """Paths never capped (/health, /metrics): a probe must get through a saturated server."""

    def take(self, request: HttpRequest) -> bool:
        """A slot for an HTTP request (False: the cap is reached); the caller runs the request, then calls
        `release_slot(request)`, which a request that becomes a stream calls first (the second call is a
        no-op). The slot is a field of the request, not a closure: nothing is allocated per request."""
        if self.in_flight >= self.limit:
            return False
        self.in_flight += 1
        request.slot = self
        return True

    def acquire(self) -> bool:
        """A slot for work that is not an HTTP request of its own (a batch's further requests, a WebSocket
        call): False at the cap; else give it back with `release()`."""
        if self.in_flight >= self.limit:
            return False
        self.in_flight += 1
        return True

    def release(self) -> None:
        self.in_flight -= 1

    def busy_message(self) -> str:
        return f"Server busy: {self.limit} requests already in flight, retry shortly"

    async def refuse(self, request: HttpRequest, send: Send) -> None:
        await refuse(send, ErrorCode.SERVER_BUSY, self.busy_message(),
                     headers=[(b"retry-after", RETRY_AFTER_S)], request_id=readable_id(request))


def release_slot(request: HttpRequest) -> None:
    """Give back the request's concurrency slot, once (no-op if it holds none, or gave it back already)."""
    limit = request.slot
    if limit is not None:
        request.slot = None
        limit.in_flight -= 1
