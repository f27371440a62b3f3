"""Telling the core's observers (the audit trail) about HTTP requests refused before the core saw them.

Every refusal an adapter makes is minted by `rpc_layer.refusal`, wherever in the app it happens (the
Host/Origin and token gates, the concurrency cap, a body too large or too slow, bytes that are not
JSON-RPC, an unknown path, a WebSocket upgrade turned away). The app sets, per request, a reporter in a
context variable that `refusal` calls: one hook in `app.py`, none at the places that refuse. Only set
when some observer hears refusals, so a server without an audit trail pays nothing.
"""

from __future__ import annotations

import re
from typing import Any

from hexmcp.core import Rejection
from hexmcp.core.log import current_request_ids
from hexmcp.core.observation import ObservedRefusal, report_refusal
from hexmcp.wire import jsonrpc

from ..rpc_layer import RefusalReporter
from .client_identity import client_identity
from .request import HttpRequest


def refusal_reporter(observers: list[Any], request: HttpRequest, rest_prefix: str) -> RefusalReporter:
    """What reports a refusal of `request` to `observers` (called only if one is minted)."""

    def report(rejection: Rejection) -> None:
        scope = request.scope
        path = scope.get("path")
        if scope.get("type") == "websocket":
            transport = "ws"
        else:
            transport = "rest" if isinstance(path, str) and path.startswith(rest_prefix) else "http"
        session = request.header(b"mcp-session-id")
        body = request.body
        message = _message(body) if body else None
        if transport == "rest" and isinstance(path, str):  # the path names the method, the body is its params
            message = {"method": path[len(rest_prefix):], "params": message}
        report_refusal(observers, ObservedRefusal(
            event_id=rejection.event_id, code=rejection.code, message=rejection.message, transport=transport,
            session_id=session.decode("latin-1") if session else None, client_id=client_identity(request),
            trace_id=traceparent_trace_id(request) or current_request_ids()[1],  # else the log line's
            http_method=scope.get("method") or "GET", path=path,
            body_bytes=len(body) if body is not None else None,
            method=message.get("method") if message else None, params=message.get("params") if message else None,
            request_key=message.get("id") if message else None))

    return report


def _message(body: bytes) -> dict[str, Any] | None:
    """The body as a JSON object (a JSON-RPC request, or the REST dialect's params), if it is one."""
    try:
        value = jsonrpc.decode(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_TRACEPARENT = re.compile(rb"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def traceparent_trace_id(request: HttpRequest) -> str | None:
    """The W3C trace id of the request's `traceparent` header, if it has a well-formed one: the id that ties
    a request refused before the core (which mints trace ids) to the client's own trace."""
    value = request.header(b"traceparent")
    match = _TRACEPARENT.match(value.strip()) if value else None
    return match.group(1).decode() if match else None
