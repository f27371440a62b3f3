"""Request deadlines on one shared timer, instead of a timer handle per request.

`asyncio.timeout(seconds)` arms a `loop.call_at` handle on entry and cancels it on exit: a heap push,
a cancelled handle left in the loop's heap until it surfaces, per request. With a default timeout of a
minute nearly every request finishes long before its deadline, so here each request enters
`asyncio.timeout(None)` (no handle) and registers it; one handle is armed for the earliest deadline
and, when it fires, moves every overdue request's timeout to "now", so asyncio itself cancels the
waiting task and turns the cancellation into `TimeoutError` exactly as `asyncio.timeout` does.
(ADR 0803: this was about a tenth of the client's per-call time over stdio.)
"""

from __future__ import annotations

import asyncio


class Deadlines:
    def __init__(self) -> None:
        self._due: dict[asyncio.Timeout, float] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")

    def watch(self, scope: asyncio.Timeout, seconds: float) -> None:
        """Time `scope` (an entered `asyncio.timeout(None)`) out `seconds` from now."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        self._due[scope] = deadline
        if deadline < self._timer_at:
            self._arm(loop, deadline)

    def forget(self, scope: asyncio.Timeout) -> None:
        # The timer stays armed: at worst it fires once for nothing and re-arms for what is left.
        self._due.pop(scope, None)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = loop.call_at(when, self._expire)

    def _expire(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._timer, self._timer_at = None, float("inf")
        for scope, deadline in list(self._due.items()):
            if deadline <= now:
                del self._due[scope]
                scope.reschedule(now)  # asyncio cancels the task on its next turn
        if self._due:
            self._arm(loop, min(self._due.values()))

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, float("inf")
        self._due.clear()
