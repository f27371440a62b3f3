"""Runs classifications on a few worker threads off the event loop, one text at a time or, for a model
whose answers do not depend on their batch-mates, in micro-batches.

Why one text by default: the int8 model quantises activations per input tensor, so a text's answer
changed with its batch-mates. One text per pass keeps answers deterministic, and with one
onnxruntime thread per worker, `workers` passes in parallel keep every core busy instead. The fp32 and
int8row models give a text the same token states in any padded batch, so with them the workers batch
the requests that queued while they were busy (ADR 1201, 1203).

Bounded everywhere: at most `max_queue` requests are outstanding (one more is rejected at once with
ServiceOverloadedError) and every caller waits at most `timeout` seconds. Work nobody waits for any
more (the caller timed out, was cancelled, or disconnected) is dropped when a worker reaches it, so
an abandoned backlog does not delay other clients. The hand-off is a C-level `SimpleQueue` and a
timer handle rather than `queue.Queue` and `wait_for`: on a single short query the hand-off is the
only cost besides the model, so it is kept as cheap as it can be. Asked to (`nice_increment`), the
workers run a few nice steps below the event loop, so the thread that reads requests and writes
answers does not queue for a core behind a forward pass. Every request counts as foreground work from
submission to answer (foreground_gate.py): background embedding waits while one is queued or running.

The design and its trade-offs: docs/adr/0104-inference-pool.md.
"""

from __future__ import annotations

import asyncio
import atexit
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog
from hexmcp.core import new_event_id

from .errors import EmbeddingError, ServiceNotReadyError
from .foreground_gate import FOREGROUND, ForegroundGate
from .thread_priority import lower_current_thread

log = structlog.get_logger(__name__)

_STOP = object()
_JOIN_SECONDS = 30.0  # one pass takes milliseconds; this only guards against a wedged native call


class ServiceOverloadedError(EmbeddingError):
    """The request queue is full; the caller should retry later."""


class RequestTimeoutError(EmbeddingError):
    """A request waited longer than the configured timeout."""


class InferencePool:
    def __init__(
        self,
        process: Callable[[Any], Any],
        *,
        workers: int,
        max_queue: int,
        timeout: float,
        max_per_owner: int | None = None,
        nice_increment: int = 0,
        name: str = "hexmcp-classifier",
        process_batch: Callable[[list[Any]], list[Any]] | None = None,
        max_batch: int = 1,
        batch_window_s: float = 0.0,
        gate: ForegroundGate = FOREGROUND,
    ) -> None:
        """`nice_increment`: how many nice steps below the creating thread the workers run (thread_priority.py).

        Micro-batching, with `process_batch` (items → answers, in order) and `max_batch` > 1: a worker takes
        the oldest request and, with it, up to `max_batch - 1` more that are already queued (they arrived
        while the previous batch ran; without a window, no more than its share of the outstanding
        requests: see `_gather`), then waits at most `batch_window_s` for others to fill the batch.
        A lone request is thus delayed by at most `batch_window_s` (0: not at all). Only for a model whose
        answers do not depend on their batch-mates (fp32, int8row; see SentenceEncoder.embed_many).
        `gate`: what background work waits on while requests are outstanding."""
        if max_batch < 1 or batch_window_s < 0:
            raise ValueError("max_batch must be >= 1 and batch_window_s >= 0")
        if max_batch > 1 and process_batch is None:
            raise ValueError("max_batch > 1 needs process_batch")
        self._process = process
        self._gate = gate
        self._process_batch = process_batch if max_batch > 1 else None
        self._max_batch = max_batch
        self._batch_window_s = batch_window_s
        self.batches = 0  # passes run (a batch of one included), for benches and tests
        self._nice_increment = nice_increment
        self._timeout = timeout
        self._max_queue = max_queue
        # One client (a WebSocket firing hundreds of requests) must not fill the queue for everyone.
        self._max_per_owner = max_per_owner or max(1, max_queue // 4)
        self._outstanding = 0  # submitted and not yet answered; only touched on the event loop's thread
        self._by_owner: dict[str, int] = {}
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closing = False
        self.completed = 0  # observability for benches, tests and metrics
        self.dropped = 0
        # Seconds each worker spent in `process`: one slot per worker, so no two threads add to one float.
        self._busy_s = [0.0] * max(1, workers)
        self._threads = [
            threading.Thread(target=self._run, args=(index,), name=f"{name}-{index}", daemon=True)
            for index in range(max(1, workers))
        ]
        for thread in self._threads:
            thread.start()
        # The interpreter must not finalise while a worker is inside onnxruntime: that aborted the
        # process (SIGABRT), cutting its last stdout line. atexit runs while daemon threads still
        # live, so an unclosed pool is stopped there; daemon threads keep a forgotten pool from
        # hanging the exit instead.
        atexit.register(self.close)

    @property
    def workers(self) -> int:
        return len(self._threads)

    @property
    def busy_seconds(self) -> float:
        """Time spent in the model (and the head) so far, summed over the workers."""
        return sum(self._busy_s)

    @property
    def waiting(self) -> int:
        """Submitted and not yet answered (queued or running)."""
        return self._outstanding

    async def submit(self, item: Any, owner: str | None = None) -> Any:
        """`owner` (a client identity) gets at most `max_per_owner` of the queue's places."""
        if self._closing:
            raise ServiceNotReadyError("the classification service is shutting down")
        if self._outstanding >= self._max_queue:
            raise ServiceOverloadedError("classification queue is full; retry later")
        owned = self._by_owner.get(owner, 0) if owner is not None else 0
        if owned >= self._max_per_owner:
            raise ServiceOverloadedError(
                f"this client already has {owned} classifications waiting (the limit per client); retry later"
            )
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        expiry = loop.call_later(self._timeout, _expire, future, self._timeout)
        self._outstanding += 1
        if owner is not None:
            self._by_owner[owner] = owned + 1
        self._gate.enter()
        self._queue.put((item, future, loop))
        try:
            return await future
        finally:
            self._gate.leave()
            self._outstanding -= 1
            if owner is not None:
                left = self._by_owner[owner] - 1
                if left:
                    self._by_owner[owner] = left
                else:
                    del self._by_owner[owner]
            expiry.cancel()

    def close(self) -> None:
        """Stops the workers: queued work is dropped (its callers get an error), running passes finish."""
        atexit.unregister(self.close)
        if self._closing:
            return
        self._closing = True
        for _ in self._threads:
            self._queue.put(_STOP)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=_JOIN_SECONDS)

    def _run(self, index: int) -> None:
        change = lower_current_thread(self._nice_increment)
        if change.skipped is not None and self._nice_increment > 0:
            log.warning("inference worker keeps its priority", reason=change.skipped)
        while True:
            entry = self._queue.get()
            if entry is _STOP:
                return
            if self._process_batch is not None:
                batch, stop = self._gather(entry)
                self._run_batch(index, batch)
                if stop:
                    return
                continue
            item, future, loop = entry
            if not self._wanted(future, loop):
                continue
            started = time.perf_counter()
            try:
                outcome = (True, self._process(item))
            except Exception as exc:  # delivered to the caller, never lost in the thread
                log.exception("classification failed", eventId=new_event_id())
                outcome = (False, exc)
            self._busy_s[index] += time.perf_counter() - started
            self.completed += 1
            self.batches += 1
            self._deliver(future, loop, *outcome)

    def _wanted(self, future: asyncio.Future, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether to run an entry: not while closing (its caller is told), nor when nobody waits for it."""
        if self._closing:
            self._deliver(future, loop, False, ServiceNotReadyError("the classification service is shutting down"))
            return False
        # Reading done() from this thread races only with the caller giving up, which _settle
        # handles anyway; the check just avoids a pass whose answer nobody would read.
        if future.done():
            self.dropped += 1
            return False
        return True

    def _gather(self, first: tuple) -> tuple[list[tuple], bool]:
        """`first` and the requests queued behind it, up to max_batch, waiting at most batch_window_s for
        more; and whether a stop sentinel was taken meanwhile (the worker stops after this batch).

        Without a window a worker takes what is queued up to its share of every outstanding request
        (outstanding / workers, rounded up; queued, running and being answered all count). Not all of
        them: callers answered together come back together, and a worker that took all 16 of 16 callers
        left the other core idle while it ran their batch (c=16 throughput below c=1's on long texts).
        Not a share of the queue either: a worker that wakes while the other computes would then leave
        half of what queued behind for a worker that is busy for a whole pass, and both drift into
        lockstep, finishing together and splitting each wave into passes of about three (ADR 1203). With
        the share of the outstanding requests, 16 callers settle into two alternating waves of eight:
        one worker computes while the other's callers come back and queue."""
        batch = [first]
        deadline = time.monotonic() + self._batch_window_s
        limit = self._max_batch
        if self._batch_window_s <= 0:
            # Read from a worker thread without a lock: a count a request or two stale moves the cap by one at most.
            limit = min(limit, max(1, -(-self._outstanding // len(self._threads))))
        while len(batch) < limit:
            try:
                entry = self._queue.get_nowait()
            except queue.Empty:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    entry = self._queue.get(timeout=remaining)
                except queue.Empty:
                    break
            if entry is _STOP:
                return batch, True
            batch.append(entry)
        return batch, False

    def _run_batch(self, index: int, entries: list[tuple]) -> None:
        wanted = [entry for entry in entries if self._wanted(entry[1], entry[2])]
        if not wanted:
            return
        started = time.perf_counter()
        try:
            answers = self._process_batch([item for item, _, _ in wanted])  # type: ignore[misc]
            if len(answers) != len(wanted):
                raise RuntimeError(f"process_batch answered {len(answers)} of {len(wanted)} items")
            outcomes = [(True, answer) for answer in answers]
        except Exception as exc:  # every caller in the batch gets the error
            log.exception("classification failed", eventId=new_event_id(), batch=len(wanted))
            outcomes = [(False, exc)] * len(wanted)
        self._busy_s[index] += time.perf_counter() - started
        self.completed += len(wanted)
        self.batches += 1
        # One wake-up of the caller's loop for the whole batch, not one per answer.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple]] = {}
        for (_, future, loop), outcome in zip(wanted, outcomes):
            by_loop.setdefault(loop, []).append((future, *outcome))
        for loop, settled in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle_all, settled)
            except RuntimeError:  # the callers' event loop is closed: nobody is waiting
                pass

    @staticmethod
    def _deliver(future: asyncio.Future, loop: asyncio.AbstractEventLoop, ok: bool, value: Any) -> None:
        try:
            loop.call_soon_threadsafe(_settle, future, ok, value)
        except RuntimeError:  # the caller's event loop is closed: nobody is waiting
            pass


def _expire(future: asyncio.Future, timeout: float) -> None:
    if not future.done():
        future.set_exception(RequestTimeoutError(f"classification took longer than {timeout}s"))


def _settle_all(settled: list[tuple[asyncio.Future, bool, Any]]) -> None:
    for future, ok, value in settled:
        _settle(future, ok, value)


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.done():  # timed out or cancelled meanwhile
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
