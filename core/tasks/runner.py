"""Running a request's work as a task: the record's status follows the work, and the client's
`tasks/update` and `tasks/cancel` reach the work through the store's signals.

The work runs in an asyncio task of this process, beside a watcher that takes the task's signals from
the store: a cancel cancels the work (so a tool's embedding batch or upstream request stops at its next
await), answers wake the question that waits for them. Only the runner that runs a task writes its record:
`tasks/update` hands answers to it directly when the task runs in this process, and other replicas only
queue signals, so two replicas never race on one record.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any, Awaitable, Callable

import structlog

from ..errors import ErrorCode, ProtocolError, Rejection
from ..ids import new_event_id
from .model import SignalKind, TaskLimits, TaskRecord, TaskSignal, TaskStatus, TaskStore
from .memory_store import MemoryTaskStore

log = structlog.get_logger("hexmcp.core")

ErrorWire = Callable[[Rejection], dict[str, Any]]
"""A rejection as the JSON-RPC error object a failed task carries; the transport adapters install theirs."""

_SIGNAL_WAIT_S = 5.0  # a watcher's wait per round: short enough to notice its work ended, in a shared store too


def internal_error_wire(rejection: Rejection) -> dict[str, Any]:
    """Until an adapter installs its code table: every failure as JSON-RPC's internal error, the semantic
    code in `data`."""
    return {"code": -32603, "message": rejection.message,
            "data": {**rejection.wire_data(), "errorCode": rejection.code.value}}


class TaskChannel:
    """One running task as its work sees it: progress messages and questions answered by `tasks/update`."""

    def __init__(self, runner: TaskRunner, record: TaskRecord) -> None:
        self._runner = runner
        self.record = record
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._asked: dict[str, dict[str, Any]] = {}
        self._used_keys: set[str] = set()
        self._valid: Callable[[str, Any], bool] = lambda key, answer: True

    @property
    def task_id(self) -> str:
        return self.record.task_id

    async def progress(self, message: str) -> None:
        await self._write(self.record.with_message(message, now=self._runner.now()))

    async def ask(self, questions: dict[str, dict[str, Any]],
                  valid: Callable[[str, Any], bool]) -> dict[str, dict[str, Any]]:
        """Park the task in input_required until every question (key -> {method, params}) is answered.

        `valid(key, answer)` judges an answer's shape; an invalid one is ignored and the question stays open.
        """
        for key in questions:
            if key in self._used_keys:
                raise ValueError(f"input request key {key!r} was already used in this task")
        loop = asyncio.get_running_loop()
        futures = {key: loop.create_future() for key in questions}
        self._used_keys.update(questions)
        self._asked.update(questions)
        self._waiting.update(futures)
        self._valid = valid
        await self._publish()
        try:
            return {key: await future for key, future in futures.items()}
        finally:
            for key in questions:
                self._asked.pop(key, None)
                self._waiting.pop(key, None)

    async def answer(self, answers: dict[str, Any]) -> None:
        """Answers from `tasks/update`: keys not outstanding are ignored, as the specification asks."""
        answered = False
        for key, answer in answers.items():
            future = self._waiting.get(key)
            if future is None or future.done() or not self._valid(key, answer):
                continue
            future.set_result(answer)
            self._asked.pop(key, None)
            answered = True
        if answered:
            await self._publish()

    async def _publish(self) -> None:
        now = self._runner.now()
        if self._asked:
            await self._write(self.record.moved(TaskStatus.INPUT_REQUIRED, now=now, input_requests=self._asked))
        else:
            await self._write(self.record.moved(TaskStatus.WORKING, now=now))

    async def _write(self, record: TaskRecord) -> None:
        if record is self.record or self.record.terminal:
            return
        self.record = record
        await self._runner.store.save(record)
        self._runner.published(record)


class TaskRunner:
    """Creates tasks, runs their work and keeps their records in `store`."""

    def __init__(self, store: TaskStore | None = None, limits: TaskLimits | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.store: TaskStore = store or MemoryTaskStore(clock=clock)
        self.limits = limits or TaskLimits()
        self.now = clock
        self.error_wire: ErrorWire = internal_error_wire
        self._running: dict[str, asyncio.Task[None]] = {}  # kept: the loop holds tasks only weakly
        self._channels: dict[str, TaskChannel] = {}
        self._listeners: list[Callable[[TaskRecord], None]] = []

    def on_change(self, listener: Callable[[TaskRecord], None]) -> None:
        """Call `listener` with every record this process writes (status notifications)."""
        self._listeners.append(listener)

    def published(self, record: TaskRecord) -> None:
        for listener in self._listeners:
            listener(record)

    async def open(self, owner: str) -> TaskChannel:
        """Create a task for `owner`, durably, before any work runs; refuse past the per-client bound."""
        record = TaskRecord.new(task_id=secrets.token_urlsafe(18), owner=owner, now=self.now(), limits=self.limits)
        if not await self.store.create(record, max_active=self.limits.max_active_per_client):
            raise ProtocolError(ErrorCode.SERVER_BUSY,
                                f"this client already has {self.limits.max_active_per_client} unfinished tasks; "
                                "retry when one has ended", {"maxActiveTasks": self.limits.max_active_per_client})
        self.published(record)
        return TaskChannel(self, record)

    def run(self, channel: TaskChannel, work: Awaitable[dict[str, Any]]) -> None:
        """Run `work` (it returns the request's shaped result) for the opened task, in the background."""
        job = asyncio.ensure_future(self._run(channel, work))
        self._running[channel.task_id] = job
        self._channels[channel.task_id] = channel
        job.add_done_callback(lambda _: self._forget(channel.task_id))

    def _forget(self, task_id: str) -> None:
        self._running.pop(task_id, None)
        self._channels.pop(task_id, None)

    async def answer(self, task_id: str, answers: dict[str, Any]) -> None:
        """`tasks/update`'s answers, applied before its acknowledgement when this process runs the task, so
        that a `tasks/get` sent after the ack no longer lists what was answered. A task another replica runs
        gets them through the shared store's signals, applied there when its watcher reads them."""
        channel = self._channels.get(task_id)
        if channel is not None:
            await channel.answer(answers)
        else:
            await self.store.signal(task_id, TaskSignal(kind=SignalKind.ANSWERS, answers=answers))

    def running(self) -> int:
        return len(self._running)

    async def _run(self, channel: TaskChannel, work: Awaitable[dict[str, Any]]) -> None:
        worker = asyncio.ensure_future(work)
        watcher = asyncio.ensure_future(self._watch(channel, worker))
        interval = getattr(self.store, "heartbeat_interval_s", None)  # a store with leases (Redis) renews them
        beat = asyncio.ensure_future(self._beat(channel, interval)) if interval else None
        try:
            try:
                result = await worker
                final = channel.record.moved(TaskStatus.COMPLETED, now=self.now(), result=result,
                                             keep_for_ms=self.limits.ttl_ms)
            except asyncio.CancelledError:
                final = channel.record.moved(TaskStatus.CANCELLED, now=self.now(), message="cancelled by the client",
                                             keep_for_ms=self.limits.ttl_ms)
            except ProtocolError as error:
                final = self._failed(channel, Rejection(code=error.code, message=error.message, data=error.data,
                                                        event_id=new_event_id()))
            except Exception:
                event_id = new_event_id()
                log.exception("task failed", taskId=channel.task_id, eventId=event_id)
                final = self._failed(channel, Rejection(code=ErrorCode.INTERNAL_ERROR, event_id=event_id,
                                                        message=f"Internal error while running the task; quote "
                                                                f"eventId {event_id}"))
        finally:
            watcher.cancel()
            if beat is not None:
                beat.cancel()
        channel.record = final
        await self.store.save(final)
        self.published(final)
        log.info("task ended", taskId=channel.task_id, status=final.status.value)

    def _failed(self, channel: TaskChannel, rejection: Rejection) -> TaskRecord:
        return channel.record.moved(TaskStatus.FAILED, now=self.now(), message=rejection.message,
                                    error=self.error_wire(rejection), keep_for_ms=self.limits.ttl_ms)

    async def _beat(self, channel: TaskChannel, interval_s: float) -> None:
        """While the work runs, renew its lease: a shared store frees the tasks of a replica that stops
        renewing (it died), so they never hold their owner's slots forever."""
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.store.heartbeat(channel.record)  # type: ignore[attr-defined]
            except Exception:  # out of reach: the work goes on; the next beat may make it in time
                log.warning("cannot renew the task's lease; retrying", taskId=channel.task_id, exc_info=True)

    async def _watch(self, channel: TaskChannel, worker: asyncio.Future[Any]) -> None:
        while not worker.done():
            try:
                signal = await self.store.next_signal(channel.task_id, _SIGNAL_WAIT_S)
            except Exception:  # a shared store out of reach: the work goes on, signals wait for it to be back
                log.warning("cannot read the task's signals; retrying", taskId=channel.task_id, exc_info=True)
                await asyncio.sleep(_SIGNAL_WAIT_S)
                continue
            if signal is None:
                continue
            if signal.kind is SignalKind.CANCEL:
                log.info("task cancelled by client", taskId=channel.task_id)
                worker.cancel()
                return
            await channel.answer(dict(signal.answers))

    async def shutdown(self) -> None:
        """Stop every task this process runs (they end as cancelled) and close the store."""
        jobs = list(self._running.values())
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        await self.store.close()


def cancel_signal() -> TaskSignal:
    return TaskSignal(kind=SignalKind.CANCEL)
