"""Audit lines for connections refused before the app sees a request (`uvicorn_fence.py`), rate-limited.

The fence turns connections away by itself: the per-address and total caps (503 and close), the head
deadline (closed unanswered), a head over `max_head_bytes` (431) and bytes the parser cannot read (400).
Each is reported to the observers that hear refusals (the audit trail) as an `ObservedRefusal` with
transport "http", the peer address as the client (the audit salts it), the reason and the status.

A refused connection costs its sender a handshake and a few bytes; a line costs the server a few hundred
bytes of disk. Written one for one, a flood of refusals would make the trail an amplifier that fills the
disk, so lines are coalesced (ADR 1131, amendment): at most one line per peer address and reason per
`window_s`; the refusals in between are counted, and the next line of that address and reason carries the
count (`suppressed`). The table of addresses is bounded (`max_peers`): when it is full, windows that have
ended are forgotten, and what they and any refusal that finds no room counted goes into the next line
written for anyone (`suppressed_elsewhere`), so every refusal is counted in some line once another comes.
Lines are thus at most `max_peers` per window, whatever the number of addresses.

Accepted connections never reach this module: the fence calls it only when it refuses.
"""

from __future__ import annotations

import enum
import time
from typing import Any, Callable

from hexmcp.core import ErrorCode
from hexmcp.core.ids import new_event_id
from hexmcp.core.observation import ObservedRefusal, report_refusal

WINDOW_S = 1.0
MAX_PEERS = 1024


class ConnectionReason(str, enum.Enum):
    """Why the fence refused a connection; the value is the line's `reason`."""

    PER_ADDRESS = "per_address_connections"
    TOTAL = "total_connections"
    HEAD_TIMEOUT = "head_timeout"
    HEAD_TOO_LARGE = "head_too_large"
    MALFORMED = "malformed_request"


# reason → (code, status answered (None: closed unanswered), message). Messages never name the address:
# the line's client is its salted form.
_LINES: dict[ConnectionReason, tuple[ErrorCode, int | None, str]] = {
    ConnectionReason.PER_ADDRESS: (ErrorCode.SERVER_BUSY, 503, "Too many connections from this address"),
    ConnectionReason.TOTAL: (ErrorCode.SERVER_BUSY, 503, "Too many connections open"),
    ConnectionReason.HEAD_TIMEOUT: (ErrorCode.REQUEST_TIMEOUT, None,
                                    "Request head not complete in time, connection closed"),
    ConnectionReason.HEAD_TOO_LARGE: (ErrorCode.PAYLOAD_TOO_LARGE, 431, "Request head too large"),
    ConnectionReason.MALFORMED: (ErrorCode.INVALID_REQUEST, 400, "Malformed HTTP request"),
}


class ConnectionRefusals:
    """Reports the fence's refusals to `observers`, at most one line per (address, reason) per window."""

    def __init__(self, observers: list[Any], *, window_s: float = WINDOW_S, max_peers: int = MAX_PEERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._observers = observers
        self._window_s = window_s
        self._max_peers = max_peers
        self._clock = clock
        self._windows: dict[tuple[str, ConnectionReason], list[float | int]] = {}  # key → [opened at, suppressed]
        self._elsewhere = 0  # counted refusals whose key was forgotten, for the next line written
        self.lines = 0
        self.suppressed = 0

    def refused(self, address: str, reason: ConnectionReason, detail: str | None = None) -> None:
        if not self._observers:  # no audit trail: nothing to count
            return
        now = self._clock()
        key = (address, reason)
        window = self._windows.get(key)
        if window is not None and now - window[0] < self._window_s:
            window[1] += 1
            self.suppressed += 1
            return
        if window is None and len(self._windows) >= self._max_peers:
            self._forget_ended(now)
            if len(self._windows) >= self._max_peers:  # every address still in its window: count, write nothing
                self._elsewhere += 1
                self.suppressed += 1
                return
        suppressed = int(window[1]) if window is not None else 0
        self._windows[key] = [now, 0]
        elsewhere, self._elsewhere = self._elsewhere, 0
        code, status, message = _LINES[reason]
        self.lines += 1
        report_refusal(self._observers, ObservedRefusal(
            event_id=new_event_id(), code=code, message=f"{message}: {detail}" if detail else message,
            transport="http", client_id=f"address:{address}" if address else "address:unknown",
            reason=reason.value, http_status=status, suppressed=suppressed,
            suppressed_elsewhere=elsewhere))

    def _forget_ended(self, now: float) -> None:
        ended = [key for key, window in self._windows.items() if now - window[0] >= self._window_s]
        for key in ended:
            self._elsewhere += int(self._windows.pop(key)[1])
