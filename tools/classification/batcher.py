"""Coalesces concurrent requests into micro-batches, run on one worker thread off the event loop.

Why no batching window: the worker never sleeps waiting for company. While it runs one batch, new
requests queue up; the next iteration takes everything waiting (up to max_batch). A lone request
therefore pays no extra latency, and under load batches grow by themselves.

Bounded everywhere: at most `max_queue` requests are outstanding (one more is rejected at once with
ServiceOverloadedError) and every caller waits at most `timeout` seconds. The hand-off is a C-level
`SimpleQueue` and a timer handle rather than `queue.Queue` and `wait_for`: on a single short query
the hand-off is the only cost besides the model, so it is kept to a few microseconds.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

import structlog
from hexmcp.core import new_event_id

from .errors import ClassificationError

log = structlog.get_logger(__name__)

_STOP = object()


class ServiceOverloadedError(ClassificationError):
    """The request queue is full; the caller should retry later."""


class RequestTimeoutError(ClassificationError):
    """A request waited longer than the configured timeout."""


class MicroBatcher:
    def __init__(
        self,
        process: Callable[[list[Any]], list[Any]],
        *,
        max_batch: int,
        max_queue: int,
        timeout: float,
        name: str = "hexmcp-classifier",
    ) -> None:
        self._process = process
        self._max_batch = max_batch
        self._timeout = timeout
        self._max_queue = max_queue
        self._outstanding = 0  # submitted and not yet answered; only touched on the event loop's thread
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self.batches = 0  # observability for benches and tests
        self.items = 0

    async def submit(self, item: Any) -> Any:
        if self._outstanding >= self._max_queue:
            raise ServiceOverloadedError("classification queue is full; retry later")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        expiry = loop.call_later(self._timeout, _expire, future, self._timeout)
        self._outstanding += 1
        self._queue.put((item, future, loop))
        try:
            return await future
        finally:
            self._outstanding -= 1
            expiry.cancel()

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            stop_after = False
            while len(batch) < self._max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop_after = True
                    break
                batch.append(nxt)
            self._run_batch(batch)
            if stop_after:
                return

    def _run_batch(self, batch: list[tuple]) -> None:
        self.batches += 1
        self.items += len(batch)
        try:
            results = self._process([item for item, _, _ in batch])
            outcomes = [(True, result) for result in results]
        except Exception as exc:  # delivered to every waiting caller, never lost in the thread
            log.exception("classification batch failed", eventId=new_event_id())
            outcomes = [(False, exc)] * len(batch)
        for (_, future, loop), (ok, value) in zip(batch, outcomes):
            try:
                loop.call_soon_threadsafe(_settle, future, ok, value)
            except RuntimeError:  # the caller's event loop is closed: nobody is waiting
                pass


def _expire(future: asyncio.Future, timeout: float) -> None:
    if not future.done():
        future.set_exception(RequestTimeoutError(f"classification took longer than {timeout}s"))


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.done():  # timed out or cancelled meanwhile
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
