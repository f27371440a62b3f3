"""A concurrency cap shared across connections, as a connection sees it: take a slot per request, give it back.

The HTTP adapter's `http.limits.ConcurrencyLimit` is one; the WebSocket endpoint mounted in the HTTP app
hands it to each socket's `RpcConnection`, so calls on sockets and HTTP requests share one budget.
"""

from __future__ import annotations

from typing import Protocol

UNCAPPED_METHODS = frozenset({"subscriptions/listen"})
"""Requests that take no shared slot: they wait for notifications, for as long as the client listens (the
HTTP adapter gives their slot back too); a connection's own `max_in_flight` still bounds them."""


class Slots(Protocol):
    def acquire(self) -> bool:
        """A slot for one request; False at the cap (answer the request busy)."""

    def release(self) -> None:
        """Give back a slot `acquire` gave."""

    def busy_message(self) -> str:
        """What a request refused at the cap is told."""
