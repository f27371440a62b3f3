"""Run one JSON-RPC request through a core session under the adapter's deadline."""

from __future__ import annotations

import itertools
from typing import Any

from hexmcp.core import ErrorCode, Ok, Outcome, Session

from .. import jsonrpc
from .deadlines import Deadlines
from .status import refusal

_traces = itertools.count(1)


async def run(core: Session, request: jsonrpc.Request, deadlines: Deadlines | None) -> Outcome:
    """`deadlines` None: no deadline (long-lived requests such as subscriptions/listen)."""
    work = core.handle_request(request.method, request.params, request_key=request.id,
                               trace_id=f"h{next(_traces):x}")
    if deadlines is None:
        return await work
    try:
        return await deadlines.run(work)
    except TimeoutError:
        return refusal(ErrorCode.REQUEST_TIMEOUT,
                       f"Request timed out after {deadlines.timeout_s:g} s: {request.method}")


def encode(request_id: jsonrpc.RequestId, outcome: Outcome) -> dict[str, Any] | None:
    """The JSON-RPC answer for an outcome; None for a cancelled request (the client wants no answer)."""
    if isinstance(outcome, Ok):
        return jsonrpc.encode_result(request_id, outcome.result)
    if outcome.code is ErrorCode.REQUEST_CANCELLED:
        return None
    return jsonrpc.encode_rejection(request_id, outcome)
