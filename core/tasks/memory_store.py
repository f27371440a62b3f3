"""The in-process `TaskStore`: the default, for one server process (stdio, or one HTTP replica).

Records sit in a dict and are forgotten lazily, when a read finds them past their `expires_at` (and on
each `create`, which sweeps, so memory is bounded by the live tasks plus those finished within their ttl).
Signals for a running task go through an asyncio queue per task, so a cancel reaches the work at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

from .model import TaskRecord, TaskSignal


class MemoryTaskStore:
    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._records: dict[str, TaskRecord] = {}
        self._signals: dict[str, asyncio.Queue[TaskSignal]] = {}

    async def create(self, record: TaskRecord, *, max_active: int) -> bool:
        self._sweep()
        active = sum(1 for r in self._records.values() if r.owner == record.owner and not r.terminal)
        if active >= max_active:
            return False
        self._records[record.task_id] = record
        return True

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expired(self._clock()):
            self._forget(task_id)
            return None
        return record

    async def save(self, record: TaskRecord) -> None:
        self._records[record.task_id] = record
        if record.terminal:
            self._signals.pop(record.task_id, None)

    async def signal(self, task_id: str, signal: TaskSignal) -> None:
        record = self._records.get(task_id)
        if record is not None and not record.terminal:
            self._queue(task_id).put_nowait(signal)

    async def next_signal(self, task_id: str, timeout_s: float) -> TaskSignal | None:
        try:
            return await asyncio.wait_for(self._queue(task_id).get(), timeout_s)
        except TimeoutError:
            return None

    async def close(self) -> None:
        self._records.clear()
        self._signals.clear()

    def _queue(self, task_id: str) -> asyncio.Queue[TaskSignal]:
        return self._signals.setdefault(task_id, asyncio.Queue())

    def _sweep(self) -> None:
        now = self._clock()
        for task_id in [t for t, r in self._records.items() if r.expired(now)]:
            self._forget(task_id)

    def _forget(self, task_id: str) -> None:
        self._records.pop(task_id, None)
        self._signals.pop(task_id, None)
