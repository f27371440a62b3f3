"""`tools/call` answered with a task: when a call becomes one, and how its work is handed to the runner.

A long-running tool becomes a task only on 2026-07-28 and only for a request whose client capabilities
declare the extension (the specification forbids a `CreateTaskResult` to anyone else); a tool that needs
a task answers everyone else -32021. By default the task is opened before the tool runs; an
inputs-first tool runs at once and opens it when it awaits `ctx.begin_task()`, so its questions before
that are answered as ordinary multi round trips, and a tool that ends before that answers synchronously.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

import attrs

from .. import argument_refusals, models, versions
from ..context import ToolContext
from ..errors import ErrorCode, ProtocolError
from ..routing import Call
from ..tools import ToolAnswer, result_wire
from .model import REQUIRED_CAPABILITY, TASKS_EXTENSION, LongRunning, TaskRecord


@attrs.frozen
class CreatedTask:
    """A `tools/call` answered with a task (`resultType: "task"`): the session shapes it as `CreateTaskResult`."""

    record: TaskRecord

    def wire(self) -> dict[str, Any]:
        return {**self.record.creation_wire(), "resultType": "task"}


def client_declares_tasks(call: Call) -> bool:
    extensions = call.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def wanted(long_running: LongRunning, call: Call) -> bool:
    """Whether this call of a long-running tool becomes a task; -32021 if it must and cannot."""
    if not versions.features(call.version).handshake and client_declares_tasks(call):
        return True
    if long_running.required:
        raise ProtocolError(ErrorCode.MISSING_CLIENT_CAPABILITY,
                            f"this tool runs only as a task: declare the '{TASKS_EXTENSION}' extension "
                            "in the request's client capabilities", REQUIRED_CAPABILITY)
    return False


async def call_as_task(session: Any, call: Call, ctx: ToolContext, long_running: LongRunning,
                       run: Callable[[], Awaitable[models.CallToolResult | ToolAnswer]], tool: str) -> Any:
    runner = session.server.tasks
    if not long_running.inputs_first:
        channel = await runner.open(session.client_id)
        ctx.task = channel
        runner.run(channel, _shaped(run(), call, session, tool))
        return CreatedTask(channel.record)
    gate: asyncio.Future[asyncio.Future[Any]] = asyncio.get_running_loop().create_future()
    ctx.task_gate = gate
    work = asyncio.ensure_future(run())
    try:
        await asyncio.wait({work, gate}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        raise
    if not gate.done():  # ended before beginning its task: its result, or this MRTR round's questions
        gate.cancel()
        return work.result()
    handing = gate.result()
    try:
        channel = await runner.open(session.client_id)
    except ProtocolError as refused:  # over the per-client bound: the tool's begin_task raises it too
        handing.set_exception(refused)
        work.add_done_callback(_retrieved)
        raise
    handing.set_result(channel)
    runner.run(channel, _shaped(work, call, session, tool))
    return CreatedTask(channel.record)


async def _shaped(work: Awaitable[models.CallToolResult | ToolAnswer], call: Call, session: Any,
                  tool: str) -> dict[str, Any]:
    """The tool's result as the task's `result`: the CallToolResult for the request's version. The tool's own
    refusal of its arguments after its task began is that result too (with isError), as it is outside a task."""
    try:
        return result_wire(await work, call.version)
    except ProtocolError as refused:
        if argument_refusals.answered_as_result(refused, call.version, session.transport):
            return result_wire(argument_refusals.refusal_result(refused, tool), call.version)
        raise


def _retrieved(work: asyncio.Future[Any]) -> None:
    """Mark an abandoned work's outcome as seen (no 'exception was never retrieved' at exit)."""
    if not work.cancelled():
        work.exception()
