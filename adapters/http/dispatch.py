"""Run one JSON-RPC request through a core session under the adapter's deadline."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Awaitable

from hexmcp.core import ErrorCode, Outcome, Session
from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines

from .. import rpc_layer


def run(core: Session, request: jsonrpc.Request, deadlines: Deadlines | None,
        task: asyncio.Task[Any] | None = None) -> Awaitable[Outcome]:
    """The request admitted now (its ids bound in the current context), served when the returned awaitable
    is awaited; past the deadline its outcome is a -32001 refusal. `deadlines` None: no deadline (long-lived
    requests such as subscriptions/listen). `task`: the task that will await it, when the caller knows it
    (`HttpRequest.serving_task`). A plain function, not a coroutine: every HTTP request passes here."""
    trace_id = rpc_layer.HTTP_TRACES.next()
    work = rpc_layer.serve_request(core, request, trace_id)
    if deadlines is None:
        return work
    return deadlines.run(work, task, timed_out=functools.partial(_timed_out, core, request, trace_id, deadlines))


async def run_in_own_task(core: Session, request: jsonrpc.Request, deadlines: Deadlines | None) -> Outcome:
    """`run` as a coroutine, for work handed to a task of its own (a batch item under `gather`): admitted and
    its ids bound when that task runs, in that task's context, not in the caller's."""
    return await run(core, request, deadlines)


def _timed_out(core: Session, request: jsonrpc.Request, trace_id: str, deadlines: Deadlines) -> Outcome:
    with rpc_layer.bound(core.session_id, trace_id):
        if deadlines.cut is not None:  # the drain deadline passed (HttpApp.shutdown), not the request's own
            return rpc_layer.refusal(ErrorCode.SERVER_BUSY, f"{deadlines.cut}: {request.method}")
        return rpc_layer.refusal(ErrorCode.REQUEST_TIMEOUT,
                                 f"Request timed out after {deadlines.timeout_s:g} s: {request.method}")
