"""A re-list that coalesces: however many `list_changed` notifications arrive, one refresh runs at a time
and at most one more is owed behind it.

An upstream may send `notifications/tools/list_changed` as fast as it can write them. Starting a re-list
for each one held one task, one tools/list request and its answer per notification, and the server's
memory grew with the flood (bench/diaries/hostile_probes.md). A refresh that starts after a notification reads the list as it is
then, so every notification that arrives while one runs is answered by a single further refresh: that
is a flag, not a queue, and memory stays flat whatever the rate.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable


class CoalescingRefresh:
    """`request()` (a notification handler: synchronous, returns at once) runs `work` now if it is idle, or
    marks one more run owed if it is running; the owed run starts when the current one ends."""

    def __init__(self, work: Callable[[], Awaitable[Any]]) -> None:
        self._work = work
        self._task: asyncio.Task[None] | None = None
        self._owed = False
        self.runs = 0  # how many times `work` has started: what a test of the coalescing counts

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def request(self) -> None:
        if self.running:
            self._owed = True
            return
        self._owed = False
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            self.runs += 1
            await self._work()
            if not self._owed:
                return
            self._owed = False

    def cancel(self) -> None:
        """Stop a run in progress and forget an owed one (the connection it reads from is gone)."""
        self._owed = False
        if self._task is not None:
            self._task.cancel()
