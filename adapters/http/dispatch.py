"""Run one JSON-RPC request through a core session under the adapter's deadline."""

from __future__ import annotations

import asyncio
from typing import Any

from hexmcp.core import ErrorCode, Outcome, Session
from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines

from .. import rpc_layer


async def run(core: Session, request: jsonrpc.Request, deadlines: Deadlines | None,
              task: asyncio.Task[Any] | None = None) -> Outcome:
    """`deadlines` None: no deadline (long-lived requests such as subscriptions/listen). `task`: the
    current task when the caller knows it (`HttpRequest.serving_task`)."""
    trace_id = rpc_layer.HTTP_TRACES.next()
    work = rpc_layer.serve_request(core, request, trace_id)
    if deadlines is None:
        return await work
    try:
        return await deadlines.run(work, task)
    except TimeoutError:
        with rpc_layer.bound(core.session_id, trace_id):
            return rpc_layer.refusal(ErrorCode.REQUEST_TIMEOUT,
                                     f"Request timed out after {deadlines.timeout_s:g} s: {request.method}")
