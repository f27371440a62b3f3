"""`Deadlines`: TIMEOUT for every gateway call in flight, kept by one timer rather than one per call.

`asyncio.timeout` arms a loop timer on entry and cancels it on exit; on uvloop that is a libuv timer made,
started, stopped and closed for every call, which cost a routed completion more event-loop time than
anything else in the client's own code (bench/diaries/gateway.md). Every call here has the same length of
deadline, so deadlines fall in the order the calls began: the calls in flight sit in a dict in that order,
and the one timer is armed for the oldest call's deadline only when no timer is armed. When it fires, it
ends the calls whose deadline has passed and re-arms for the oldest left, if any. A call that ends in time
costs a dict insert and delete. A call past its deadline ends exactly as under `asyncio.timeout`: its task
is cancelled and, unless something else cancelled it too, the block raises TimeoutError.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

# A loop timer may fire up to a clock tick early (uvloop: 1 ms, as asyncio.timeout's does): a deadline
# that close counts as passed, rather than re-arming for the rest of the tick again and again.
CLOCK_TICK_S = 0.001


class Deadlines:
    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._calls: dict[asyncio.Task[object], float] = {}  # in flight -> its deadline, oldest first
        self._expired: set[asyncio.Task[object]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self) -> _Deadline:
        """`async with deadlines():` the block gets `timeout_s` from now, as `asyncio.timeout(timeout_s)`."""
        return _Deadline(self)

    def _enter(self, task: asyncio.Task[object]) -> None:
        if task in self._calls:
            raise RuntimeError("a task is already inside one of these deadlines")
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a client used from a new loop (tests do): nothing of the old one applies
            self._calls, self._expired, self._timer, self._loop = {}, set(), None, loop
        self._calls[task] = deadline = loop.time() + self.timeout_s
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._expire)

    def _exit(self, task: asyncio.Task[object]) -> bool:
        """Whether the call's deadline passed (its task was cancelled for it)."""
        self._calls.pop(task, None)  # gone only if the block began on a loop since replaced
        if self._expired:
            try:
                self._expired.remove(task)
                return True
            except KeyError:
                pass
        return False

    def _expire(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # armed on a loop since replaced
            return
        self._timer = None
        now = loop.time()
        for task, deadline in self._calls.items():
            if task in self._expired:
                continue
            if deadline > now + CLOCK_TICK_S:  # the oldest still in time: every later call is too
                self._timer = loop.call_at(deadline, self._expire)
                return
            self._expired.add(task)
            task.cancel()


class _Deadline:
    __slots__ = ("_deadlines", "_task", "_cancelling")

    def __init__(self, deadlines: Deadlines) -> None:
        self._deadlines = deadlines

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline is kept for a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._deadlines._enter(task)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        if self._deadlines._exit(self._task):
            # As asyncio.timeout does: the cancellation was ours unless another request came meanwhile.
            if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
                raise TimeoutError from exc
