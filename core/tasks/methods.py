"""`tasks/get`, `tasks/update` and `tasks/cancel`: the extension's methods, on 2026-07-28 only.

Every one needs the request to declare the extension (-32021 otherwise, before anything else is looked
at), and answers 'not found' (-32602) alike for a task that never existed, one that expired and one that
belongs to another client, so that nobody learns about someone else's tasks. `tasks/result` and
`tasks/list` (of the 2025-11-25 experimental tasks) are not routes: they answer -32601.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..errors import ErrorCode, ProtocolError
from ..params import SubscriptionFilter
from ..routing import Call, Route
from .calls import client_declares_tasks
from .runner import cancel_signal
from .model import REQUIRED_CAPABILITY, TASKS_EXTENSION, TaskRecord


@attrs.frozen(kw_only=True)
class TaskIdParams:
    task_id: str


@attrs.frozen(kw_only=True)
class UpdateTaskParams:
    task_id: str
    input_responses: dict[str, Any]


def _require_extension(call: Call, what: str) -> None:
    if not client_declares_tasks(call):
        raise ProtocolError(ErrorCode.MISSING_CLIENT_CAPABILITY,
                            f"{what} need the '{TASKS_EXTENSION}' extension in the request's client capabilities",
                            REQUIRED_CAPABILITY)


async def agreed_task_ids(session: Any, call: Call, wanted: SubscriptionFilter) -> SubscriptionFilter:
    """`subscriptions/listen` with `taskIds`: -32021 without the extension; agreed are the ids of this
    client's live tasks (others are left out of the acknowledgement, not refused: no existence leaks)."""
    if wanted.task_ids is None:
        return wanted
    _require_extension(call, "task notifications")
    agreed = []
    for task_id in wanted.task_ids:
        record = await session.server.tasks.store.get(task_id)
        if record is not None and record.owner == session.client_id:
            agreed.append(task_id)
    return attrs.evolve(wanted, task_ids=agreed)


async def _owned(session: Any, call: Call, task_id: str) -> TaskRecord:
    _require_extension(call, "tasks/* requests")
    record = await session.server.tasks.store.get(task_id)
    if record is None or record.owner != session.client_id:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "Failed to retrieve task: Task not found (or expired)",
                            {"path": "$.taskId", "taskId": task_id})
    return record


async def _get(session: Any, params: TaskIdParams, call: Call) -> dict[str, Any]:
    return (await _owned(session, call, params.task_id)).wire()


async def _update(session: Any, params: UpdateTaskParams, call: Call) -> dict[str, Any]:
    record = await _owned(session, call, params.task_id)
    if not record.terminal and params.input_responses:
        await session.server.tasks.answer(record.task_id, params.input_responses)
    return {}


async def _cancel(session: Any, params: TaskIdParams, call: Call) -> dict[str, Any]:
    """Acknowledged alike whether the task still runs or has ended (the specification's idempotent ack)."""
    record = await _owned(session, call, params.task_id)
    if not record.terminal:
        await session.server.tasks.store.signal(record.task_id, cancel_signal())
    return {}


ROUTES: dict[str, Route] = {
    "tasks/get": Route(handler=_get, params=TaskIdParams, handshake=False),
    "tasks/update": Route(handler=_update, params=UpdateTaskParams, handshake=False),
    "tasks/cancel": Route(handler=_cancel, params=TaskIdParams, handshake=False),
}
