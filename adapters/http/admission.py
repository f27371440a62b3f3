"""Which connections may open: a cap per client address and one in total, decided as values (sans-IO).

One address holding every descriptor locks all other clients out (slowloris), so the server counts
open connections per peer IP and in total, and refuses beyond either cap at `connection_made`, before
a byte of the request is read. `ConnectionLedger.admit` answers an `Admitted` ticket (hand it back
to `release` when the connection ends) or a `Refusal` value; `refusal_bytes` is its wire form, a
complete minimal HTTP/1.1 response, because the refused connection never reaches the ASGI app.
The protocol that calls this lives in `adapters/http/uvicorn_fence.py`; nothing here knows sockets or uvicorn.
"""

from __future__ import annotations

import enum
from collections import Counter

import attrs

from hexmcp.core import ErrorCode

from ..settings import positive
from .status import STATUS

RETRY_AFTER_S = 1
"""Seconds a refused client is told to wait: connections free up as soon as any other one ends."""


class RefusalReason(str, enum.Enum):
    """Which cap a connection met."""

    PER_ADDRESS = "per_address"
    """Its client address already holds `per_address` open connections."""
    TOTAL = "total"
    """The server already holds `total` open connections."""


@attrs.frozen(kw_only=True)
class Admitted:
    address: str


@attrs.frozen(kw_only=True)
class Refusal:
    address: str
    reason: RefusalReason
    cap: int

    @property
    def message(self) -> str:
        if self.reason is RefusalReason.PER_ADDRESS:
            return f"Too many connections from {self.address}: at most {self.cap} at once, retry shortly"
        return f"Server busy: {self.cap} connections already open, retry shortly"


@attrs.define(kw_only=True)
class ConnectionLedger:
    """Open connections per client address and in total; the caps are checked in `admit`."""

    per_address: int = attrs.field(validator=[attrs.validators.instance_of(int), positive])
    total: int = attrs.field(validator=[attrs.validators.instance_of(int), positive])
    _open: Counter[str] = attrs.field(factory=Counter, init=False)
    _count: int = attrs.field(default=0, init=False)

    def __len__(self) -> int:
        return self._count

    def open_from(self, address: str) -> int:
        return self._open[address]

    def admit(self, address: str) -> Admitted | Refusal:
        if self._open[address] >= self.per_address:
            return Refusal(address=address, reason=RefusalReason.PER_ADDRESS, cap=self.per_address)
        if self._count >= self.total:
            return Refusal(address=address, reason=RefusalReason.TOTAL, cap=self.total)
        self._open[address] += 1
        self._count += 1
        return Admitted(address=address)

    def release(self, ticket: Admitted) -> None:
        """Give back an admitted connection's place; call it exactly once per ticket."""
        left = self._open[ticket.address] - 1
        if left < 0:
            raise ValueError(f"released more connections from {ticket.address} than were admitted")
        if left:
            self._open[ticket.address] = left
        else:
            del self._open[ticket.address]  # an address that comes and goes must not grow the table
        self._count -= 1


REFUSAL_STATUS = STATUS[ErrorCode.SERVER_BUSY].http


def refusal_bytes(refusal: Refusal) -> bytes:
    """The whole response to a refused connection: status, Retry-After, Connection: close, a one-line body."""
    body = (refusal.message + "\n").encode("ascii", "replace")
    head = (f"HTTP/1.1 {REFUSAL_STATUS} Service Unavailable\r\n"
            f"Retry-After: {RETRY_AFTER_S}\r\n"
            "Connection: close\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("ascii") + body
