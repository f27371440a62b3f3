"""Run one JSON-RPC request through a core session under the adapter's deadline."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hexmcp.core import ErrorCode, Ok, Outcome, Session

from .. import jsonrpc
from .status import rejection

_traces = itertools.count(1)


async def run(core: Session, request: jsonrpc.Request, timeout_s: float | None) -> Outcome:
    trace_id = f"h{next(_traces):x}"
    if timeout_s is None:
        return await core.handle_request(request.method, request.params, request_key=request.id, trace_id=trace_id)
    try:
        async with asyncio.timeout(timeout_s):
            return await core.handle_request(request.method, request.params, request_key=request.id,
                                             trace_id=trace_id)
    except TimeoutError:
        return rejection(ErrorCode.REQUEST_TIMEOUT, f"Request timed out after {timeout_s:g} s: {request.method}")


def encode(request_id: jsonrpc.RequestId, outcome: Outcome) -> dict[str, Any] | None:
    """The JSON-RPC answer for an outcome; None for a cancelled request (the client wants no answer)."""
    if isinstance(outcome, Ok):
        return jsonrpc.encode_result(request_id, outcome.result)
    if outcome.code is ErrorCode.REQUEST_CANCELLED:
        return None
    return jsonrpc.encode_rejection(request_id, outcome)
