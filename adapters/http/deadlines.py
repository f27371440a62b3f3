"""Request deadlines on one timer instead of one timer per request.

`asyncio.timeout` arms and cancels a timer for every request, which costs as much as the core's work
for a trivial tool. Every request run through one `Deadlines` gets the same timeout, so
their deadlines fall in arrival order: a dict kept in that order and one timer armed for its first
entry are enough. A request only joins and leaves the dict; the timer is re-armed when it fires (under
steady load about once per timeout period). A request past its deadline is cancelled, and `run`
raises TimeoutError, told apart from any other cancellation the way `asyncio.timeout` does it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, TypeVar

T = TypeVar("T")

_EARLY_S = 0.001  # a timer may fire up to a clock tick (uvloop: 1 ms) before its deadline


class Deadlines:
    def __init__(self, timeout_s: float | None) -> None:
        """`timeout_s` None: no deadline at all."""
        self.timeout_s = timeout_s
        self._due: dict[asyncio.Task[Any], float] = {}  # insertion order is deadline order
        self._expired: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._due)

    async def run(self, work: Awaitable[T], task: asyncio.Task[Any] | None = None) -> T:
        """Await `work` in the current task; TimeoutError if it is still running after `timeout_s`.

        `task`: the current task, when the caller knows it (`HttpRequest.serving_task`): looking it up
        costs more than the rest of this (on Python 3.11 `get_running_loop` makes a getpid system call)."""
        if self.timeout_s is None:
            return await work
        if task is None:
            task = asyncio.current_task()
            if task is None:
                return await work
        loop = task.get_loop()
        if loop is not self._loop:  # a new event loop (tests run several): the old one's requests are gone
            self._loop, self._timer = loop, None
            self._due.clear()
            self._expired.clear()
        self._due[task] = loop.time() + self.timeout_s
        if self._timer is None:
            self._arm()
        cancelling = task.cancelling()
        try:
            return await work
        except asyncio.CancelledError:
            if task in self._expired and task.uncancel() <= cancelling:
                raise TimeoutError from None
            raise
        finally:
            self._due.pop(task, None)
            if self._expired:
                self._expired.discard(task)

    def expire_all(self) -> None:
        """Put every request still running past its deadline now (shutdown: nothing may wait it out)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in self._due:
            self._expired.add(task)
            task.cancel()
        self._due.clear()

    def _arm(self) -> None:
        assert self._loop is not None
        self._timer = self._loop.call_at(next(iter(self._due.values())), self._expire)

    def _expire(self) -> None:
        self._timer = None
        assert self._loop is not None
        now = self._loop.time() + _EARLY_S
        while self._due:
            task, due = next(iter(self._due.items()))
            if due > now:
                break
            del self._due[task]
            self._expired.add(task)
            task.cancel()
        if self._due:
            self._arm()
