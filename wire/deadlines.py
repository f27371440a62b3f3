"""Deadlines on one shared timer instead of a timer per request, for both ends of the wire.

`asyncio.timeout(seconds)` arms a `loop.call_at` handle on entry and cancels it on exit: a heap push, and
a cancelled handle left in the loop's heap, per request, which costs as much as the core's work for a
trivial tool. With timeouts of a minute nearly every request finishes long before its deadline, so
requests register here instead, and one handle is armed for the earliest deadline. When it fires, each
overdue waiter is timed out in the way that fits how it waits:
- a task running the work (`run`: the server's requests and body reads, a client request whose send
  may itself wait): it is cancelled, and `run` raises TimeoutError, told apart from any other
  cancellation the way `asyncio.timeout` does it;
- a future that only waits for the answer to a request already written (`watch`: the client's streaming
  wires): it fails with TimeoutError, with no cancellation at all on its path.

The deadlines are kept in a dict, in deadline order as long as they arrive in that order, which they do
when every request gets the same timeout (the server's case): then the timer only ever needs the first
entry, and a request only joins and leaves the dict. Timeouts that differ (the client's, one per call)
put it out of order; the next expiry sorts it again.
"""

from __future__ import annotations

import asyncio
from operator import itemgetter
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")
Waiter = asyncio.Future[Any]
"""A task running work under `run`, or a future failed on time by `watch`."""

_EARLY_S = 0.001  # a timer may fire up to a clock tick (uvloop: 1 ms) before its deadline
_NEVER = float("inf")


class Deadlines:
    def __init__(self, timeout_s: float | None = None) -> None:
        """`timeout_s`: the deadline `run` gives work unless told otherwise; None: no deadline."""
        self.timeout_s = timeout_s
        self._due: dict[Waiter, float] = {}  # in deadline order while `_ordered`
        self._ordered = True
        self._last = -_NEVER  # the latest deadline in `_due` while it is in order
        self._expired: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = _NEVER
        self._loop: asyncio.AbstractEventLoop | None = None
        self.cut: str | None = None  # why everything waiting was timed out early (`expire_all(reason)`)

    def __len__(self) -> int:
        return len(self._due)

    async def run(self, work: Awaitable[T], task: asyncio.Task[Any] | None = None, *,
                  seconds: float | None = None, timed_out: Callable[[], T] | None = None) -> T:
        """Await `work` in the current task; TimeoutError if it is still running after `seconds`
        (default `timeout_s`; both None: no deadline), or `timed_out()`'s value when that is given.

        `task`: the current task, when the caller knows it (the HTTP adapter keeps it): looking it up costs
        more than the rest of this (on Python 3.11 `get_running_loop` makes a getpid system call).
        `timed_out` spares a caller that answers a timeout with a value its own coroutine around this one."""
        timeout_s = self.timeout_s if seconds is None else seconds
        if timeout_s is None:
            return await work
        if task is None:
            task = asyncio.current_task()
            if task is None:
                return await work
        self._add(task, task.get_loop(), timeout_s)
        cancelling = task.cancelling()
        try:
            return await work
        except asyncio.CancelledError:
            if task in self._expired and task.uncancel() <= cancelling:
                if timed_out is not None:
                    return timed_out()
                raise TimeoutError from None
            raise
        finally:
            self._due.pop(task, None)
            if self._expired:
                self._expired.discard(task)

    def watch(self, future: asyncio.Future[Any], seconds: float) -> float:
        """Fail `future` with TimeoutError `seconds` from now unless it is done or forgotten by then; the
        deadline, in loop time."""
        return self._add(future, asyncio.get_running_loop(), seconds)

    def forget(self, future: asyncio.Future[Any]) -> None:
        # The timer stays armed: at worst it fires once for nothing and re-arms for what is left.
        self._due.pop(future, None)

    def expire_all(self, reason: str | None = None) -> None:
        """Time out everything still waiting, now (shutdown: nothing may wait its deadline out). `reason`,
        kept in `cut`, lets whoever answers a timed-out request say why it ended early."""
        self.cut = reason
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, _NEVER
        for waiter in self._due:
            self._time_out(waiter)
        self._due.clear()

    def _add(self, waiter: Waiter, loop: asyncio.AbstractEventLoop, seconds: float) -> float:
        if loop is not self._loop:  # a new event loop (tests run several): the old one's waiters are gone
            self._loop, self._timer, self._timer_at = loop, None, _NEVER
            self._due.clear()
            self._expired.clear()
            self.cut = None
        deadline = loop.time() + seconds
        if not self._due:
            self._ordered, self._last = True, deadline
        elif deadline >= self._last:
            self._last = deadline
        else:
            self._ordered = False
        self._due[waiter] = deadline
        if deadline < self._timer_at:
            self._arm(deadline)
        return deadline

    def _arm(self, when: float) -> None:
        assert self._loop is not None
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = self._loop.call_at(when, self._expire)

    def _expire(self) -> None:
        assert self._loop is not None
        self._timer, self._timer_at = None, _NEVER
        if not self._ordered:
            self._due = dict(sorted(self._due.items(), key=itemgetter(1)))
            self._ordered, self._last = True, next(reversed(self._due.values()), -_NEVER)
        now = self._loop.time() + _EARLY_S
        due = self._due
        while due:
            waiter, deadline = next(iter(due.items()))
            if deadline > now:
                self._arm(deadline)
                return
            del due[waiter]
            self._time_out(waiter)

    def _time_out(self, waiter: Waiter) -> None:
        if isinstance(waiter, asyncio.Task):
            self._expired.add(waiter)
            waiter.cancel()  # `run` turns the cancellation into TimeoutError
        elif not waiter.done():
            waiter.set_exception(TimeoutError())
