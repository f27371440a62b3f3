"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) as values: a task record, its statuses,
the one table of legal status changes, and the `TaskStore` port a record lives behind.

Pure: no I/O, no clock reads (every change is handed `now`), no asyncio. `runner.py` runs the work
and writes records through the store; `methods.py` serves `tasks/get`, `tasks/update` and
`tasks/cancel`. A record is owned by the client identity that created it (`Session.client_id`: a bearer
token's digest or an address), never by a connection, so a client that reconnects gets its task back and
another client cannot see it.
"""

from __future__ import annotations

import enum
from datetime import datetime, timezone
from typing import Any, Mapping, Protocol

import attrs

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension id: under `capabilities.extensions` on both sides."""

REQUIRED_CAPABILITY = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
"""The `data` of a -32021 rejection when a request needs the client to declare the extension."""


class TaskStatus(str, enum.Enum):
    WORKING = "working"
    """The work is running."""
    INPUT_REQUIRED = "input_required"
    """The work waits for answers to `inputRequests` (sent with `tasks/update`)."""
    COMPLETED = "completed"
    """The work ended with a result (a tool result with `isError: true` included)."""
    FAILED = "failed"
    """The work ended with a JSON-RPC error (never a tool's own failure)."""
    CANCELLED = "cancelled"
    """`tasks/cancel` stopped the work before it ended."""


TERMINAL = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})

# The specification's state diagram, the one place a status change is judged: working and
# input_required alternate; either may end; an ended task never changes again.
TRANSITIONS: Mapping[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.WORKING: frozenset({TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED}) | TERMINAL,
    TaskStatus.INPUT_REQUIRED: frozenset({TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED}) | TERMINAL,
    TaskStatus.COMPLETED: frozenset(),
    TaskStatus.FAILED: frozenset(),
    TaskStatus.CANCELLED: frozenset(),
}


@attrs.frozen(kw_only=True)
class LongRunning:
    """How a tool runs as a task (`server.tool(..., long_running=True)` is `LongRunning()`)."""

    required: bool = False
    """The tool cannot run without a task: a client that did not declare the extension gets -32021
    instead of a synchronous call."""
    inputs_first: bool = False
    """The task begins when the tool awaits `ctx.begin_task()`; questions asked before that are ordinary
    multi round-trip rounds of the `tools/call` itself (the specification's MRTR-then-task composition)."""

    @classmethod
    def of(cls, value: bool | LongRunning | None) -> LongRunning | None:
        if value is None or value is False:
            return None
        return cls() if value is True else value


class IllegalTransition(Exception):
    """A status change the table does not allow (a bug in the caller, never a client's mistake)."""


@attrs.frozen(kw_only=True)
class TaskLimits:
    """How long tasks live, how often clients should poll, how many each client may run."""

    ttl_ms: int = 3_600_000
    """How long a finished task's result is kept after it finished (the reported `ttlMs` grows to cover it)."""
    poll_interval_ms: int = 500
    """The `pollIntervalMs` suggested to clients."""
    max_active_per_client: int = 32
    """Tasks one client may have working or waiting for input at once; one more is refused (retry later)."""

    def __attrs_post_init__(self) -> None:
        if self.ttl_ms <= 0 or self.poll_interval_ms <= 0 or self.max_active_per_client <= 0:
            raise ValueError("task ttl, poll interval and per-client limit must be positive")


@attrs.frozen(kw_only=True)
class TaskRecord:
    """One task as stored: what `tasks/get` answers, plus its owner and expiry."""

    task_id: str
    owner: str
    """The client identity that created it; every tasks/* request from another identity gets 'not found'."""
    status: TaskStatus
    created_at: float
    """Seconds since the epoch (the clock handed to `new`)."""
    last_updated_at: float
    ttl_ms: int
    poll_interval_ms: int
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: Mapping[str, dict[str, Any]] = attrs.field(factory=dict, converter=dict)
    """Outstanding questions, by key; keys are never reused within one task."""

    @classmethod
    def new(cls, *, task_id: str, owner: str, now: float, limits: TaskLimits) -> TaskRecord:
        return cls(task_id=task_id, owner=owner, status=TaskStatus.WORKING, created_at=now, last_updated_at=now,
                   ttl_ms=limits.ttl_ms, poll_interval_ms=limits.poll_interval_ms)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float | None:
        """When the record may be forgotten: never while it runs; `ttlMs` after creation once ended."""
        return self.created_at + self.ttl_ms / 1000 if self.terminal else None

    def expired(self, now: float) -> bool:
        expires = self.expires_at
        return expires is not None and now >= expires

    def moved(self, status: TaskStatus, *, now: float, message: str | None = None,
              input_requests: Mapping[str, dict[str, Any]] | None = None, result: dict[str, Any] | None = None,
              error: dict[str, Any] | None = None, keep_for_ms: int | None = None) -> TaskRecord:
        """The record after a status change; raises `IllegalTransition` if the table forbids it.

        Ending a task stretches `ttlMs` so the result is kept `keep_for_ms` from now (the specification lets
        ttlMs change over a task's life), so a task that ran longer than its ttl still shows its result.
        """
        if status not in TRANSITIONS[self.status]:
            raise IllegalTransition(f"{self.status.value} -> {status.value}")
        ttl_ms = self.ttl_ms
        if status in TERMINAL and keep_for_ms is not None:
            ttl_ms = max(ttl_ms, int((now - self.created_at) * 1000) + keep_for_ms)
        return attrs.evolve(self, status=status, last_updated_at=max(now, self.last_updated_at),
                            status_message=message if message is not None else self.status_message,
                            input_requests=dict(input_requests or {}) if status is TaskStatus.INPUT_REQUIRED else {},
                            result=result if status is TaskStatus.COMPLETED else None,
                            error=error if status is TaskStatus.FAILED else None, ttl_ms=ttl_ms)

    def with_message(self, message: str, *, now: float) -> TaskRecord:
        """Progress on a running task (no status change): the message `tasks/get` shows."""
        if self.terminal:
            return self
        return attrs.evolve(self, status_message=message, last_updated_at=max(now, self.last_updated_at))

    def wire(self) -> dict[str, Any]:
        """The `Task` members on the wire, with the status's own member (DetailedTask)."""
        wire: dict[str, Any] = {"taskId": self.task_id, "status": self.status.value,
                                "createdAt": iso8601(self.created_at), "lastUpdatedAt": iso8601(self.last_updated_at),
                                "ttlMs": self.ttl_ms, "pollIntervalMs": self.poll_interval_ms}
        if self.status_message is not None:
            wire["statusMessage"] = self.status_message
        if self.status is TaskStatus.INPUT_REQUIRED:
            wire["inputRequests"] = dict(self.input_requests)
        elif self.status is TaskStatus.COMPLETED:
            wire["result"] = self.result or {}
        elif self.status is TaskStatus.FAILED:
            wire["error"] = self.error or {}
        return wire

    def creation_wire(self) -> dict[str, Any]:
        """`CreateTaskResult`: the Task members only (result, error and inputRequests live on tasks/get)."""
        return {k: v for k, v in self.wire().items() if k not in ("result", "error", "inputRequests")}

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object, for stores that keep bytes (owner and expiry included)."""
        return {**self.wire(), "owner": self.owner, "createdAtS": self.created_at,
                "lastUpdatedAtS": self.last_updated_at, "inputRequests": dict(self.input_requests)}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> TaskRecord:
        return cls(task_id=value["taskId"], owner=value["owner"], status=TaskStatus(value["status"]),
                   created_at=value["createdAtS"], last_updated_at=value["lastUpdatedAtS"], ttl_ms=value["ttlMs"],
                   poll_interval_ms=value["pollIntervalMs"], status_message=value.get("statusMessage"),
                   result=value.get("result"), error=value.get("error"),
                   input_requests=value.get("inputRequests") or {})


def iso8601(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SignalKind(str, enum.Enum):
    CANCEL = "cancel"
    """`tasks/cancel`: stop the work."""
    ANSWERS = "answers"
    """`tasks/update`: answers to some of the outstanding `inputRequests`."""


@attrs.frozen(kw_only=True)
class TaskSignal:
    """What a client asked of a running task, carried to whichever replica runs it."""

    kind: SignalKind
    answers: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "answers": dict(self.answers)}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> TaskSignal:
        return cls(kind=SignalKind(value["kind"]), answers=value.get("answers") or {})


class TaskStore(Protocol):
    """Where task records live: in this process by default (`MemoryTaskStore`), or a shared engine (Redis,
    `adapters/task_store_redis.py`) so that stateless replicas behind a load balancer see the same tasks.

    `create` must be durable when it returns: the specification forbids answering `CreateTaskResult`
    before a `tasks/get` for it would resolve.
    """

    async def create(self, record: TaskRecord, *, max_active: int) -> bool:
        """Store a new record unless its owner already has `max_active` unfinished tasks (then False)."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record, or None if unknown or expired."""
        ...

    async def save(self, record: TaskRecord) -> None:
        """Replace a record (its runner's status changes); keep it until its `expires_at`."""
        ...

    async def signal(self, task_id: str, signal: TaskSignal) -> None:
        """Queue a client's request (cancel, answers) for the task's runner."""
        ...

    async def next_signal(self, task_id: str, timeout_s: float) -> TaskSignal | None:
        """The oldest queued signal for the task, waiting up to `timeout_s` for one (None if none came)."""
        ...

    # A shared store whose unfinished records are leased (they expire unless renewed, so a dead replica's
    # tasks do not hold their owner's slots forever) also has `heartbeat_interval_s: float` and
    # `async def heartbeat(record) -> bool`, which the runner calls that often for each task it runs.
    # An in-process store has neither: its tasks end with its process.

    async def close(self) -> None:
        ...
