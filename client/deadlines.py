"""Request deadlines on one shared timer, instead of a timer handle per request.

`asyncio.timeout(seconds)` arms a `loop.call_at` handle on entry and cancels it on exit: a heap push,
a cancelled handle left in the loop's heap until it surfaces, per request. With a default timeout of a
minute nearly every request finishes long before its deadline, so requests register here instead, and
one handle is armed for the earliest deadline. When it fires, each overdue request is timed out in the
way that fits how it waits:
- a request already written, waiting only for its answer (streaming wires, ADR 0811), by failing its
  answer's future with `TimeoutError`: no cancellation scope at all on its path;
- a request whose send itself may wait (flow control, an HTTP exchange), by moving the deadline of the
  `asyncio.timeout(None)` it entered to "now", so asyncio itself cancels the waiting task and turns the
  cancellation into `TimeoutError` exactly as `asyncio.timeout` does (ADR 0803).
"""

from __future__ import annotations

import asyncio
from typing import Any

Waiter = asyncio.Timeout | asyncio.Future[Any]


class Deadlines:
    def __init__(self) -> None:
        self._due: dict[Waiter, float] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")

    def watch(self, waiter: Waiter, seconds: float) -> float:
        """Time `waiter` (an answer's future, or an entered `asyncio.timeout(None)`) out `seconds` from now;
        the deadline, in loop time."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        self._due[waiter] = deadline
        if deadline < self._timer_at:
            self._arm(loop, deadline)
        return deadline

    def forget(self, waiter: Waiter) -> None:
        # The timer stays armed: at worst it fires once for nothing and re-arms for what is left.
        self._due.pop(waiter, None)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = loop.call_at(when, self._expire)

    def _expire(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._timer, self._timer_at = None, float("inf")
        for waiter, deadline in list(self._due.items()):
            if deadline <= now:
                del self._due[waiter]
                if isinstance(waiter, asyncio.Future):
                    if not waiter.done():
                        waiter.set_exception(TimeoutError())
                else:
                    waiter.reschedule(now)  # asyncio cancels the task on its next turn
        if self._due:
            self._arm(loop, min(self._due.values()))

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, float("inf")
        self._due.clear()
