"""What a server is doing in the background and how far it has got, for /health: a router that starts
sending traffic to a fresh server can see that it is still indexing, how fast, and for how long yet.

    {"kind": "indexing", "done": 1200, "total": 11500, "unit": "passages",
     "rate_per_s": 41.3, "eta_s": 249.4, "elapsed_s": 31.0}
    {"kind": "concept extraction", "done": 120, "total": 300, "unit": "documents", "rate_per_s": 6.2,
     "eta_s": 29.0, "elapsed_s": 19.5, "step": "reading documents"}

The rate counts only work done by this run since its first real unit (an embedded passage): what a
cache hands back arrives at once and would promise an ETA of seconds for minutes of work (the same
rule as `hexmcp index`'s progress line, tools/knowledge/index_progress.py). It does count as done.
Updated from the worker thread, read from the event loop: plain attribute writes, each atomic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class BackgroundWork:
    def __init__(self, kind: str, total: int | None, *, unit: str = "passages", step: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.kind, self.total, self.unit = kind, total, unit
        self.step = step  # which part of a work of several parts runs now (reported when set)
        self.done = 0
        self.worked = 0  # units this run did itself (not handed back by a cache)
        self._clock = clock
        self.started = clock()
        self._working_since = self.started  # moved on while only cached units arrive

    def advance(self, units: int, worked: int) -> None:
        """`units` more are done; `worked` units have been done by this run itself so far."""
        self.done += units
        if worked == 0:
            self._working_since = self._clock()
        self.worked = worked

    def rate(self, now: float | None = None) -> float | None:
        """Units this run did per second since its first one, or None before there is one."""
        elapsed = (self._clock() if now is None else now) - self._working_since
        return self.worked / elapsed if self.worked and elapsed > 0 else None

    def report(self) -> dict[str, Any]:
        now = self._clock()
        rate = self.rate(now)
        left = None if self.total is None else max(0, self.total - self.done)
        return {"kind": self.kind, "done": self.done, "total": self.total, "unit": self.unit,
                "rate_per_s": None if rate is None else round(rate, 1),
                "eta_s": None if rate is None or left is None else round(left / rate, 1),
                "elapsed_s": round(now - self.started, 1), **({"step": self.step} if self.step else {})}
