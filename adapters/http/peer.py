"""The core's `Peer` port over HTTP: route each notification and server request to the right stream.

On HTTP there is no single pipe back to the client. Something related to a request (progress, a log
line, a sampling or elicitation request during a tool call) goes on that request's own POST response,
which switches to SSE for it; anything else (list changes, resource updates) goes on the session's
standalone GET stream, or nowhere if the client has none open. The client answers a server request
with a separate POST; `PendingRequests` matches that answer to the waiting call.

On 2026-07-28 a JSON-RPC request must never appear on a response stream: there `pending` is None and
`request()` refuses (the core asks through `InputRequiredResult` instead).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import structlog

from hexmcp.core import PeerRequestFailed
from hexmcp.core.ports import RequestKey

from .. import jsonrpc
from .sse import EventStream, Reply

log = structlog.get_logger("hexmcp.adapters.http")


class PendingRequests:
    """Server-to-client requests waiting for the client's answer (which arrives on another POST)."""

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._waiting: dict[RequestKey, asyncio.Future[jsonrpc.Response]] = {}
        self._ids = itertools.count(1)

    def new(self) -> tuple[str, asyncio.Future[jsonrpc.Response]]:
        request_id = f"s-{next(self._ids)}"
        future: asyncio.Future[jsonrpc.Response] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        return request_id, future

    async def wait(self, request_id: str, future: asyncio.Future[jsonrpc.Response], method: str) -> dict[str, Any]:
        try:
            response = await asyncio.wait_for(future, self._timeout_s)
        except TimeoutError:
            raise PeerRequestFailed(f"no answer to {method} within {self._timeout_s:.0f} s") from None
        finally:
            self._waiting.pop(request_id, None)
        return jsonrpc.result_of(response)

    def resolve(self, response: jsonrpc.Response) -> bool:
        future = self._waiting.get(response.id)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def fail_all(self, reason: str) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(PeerRequestFailed(reason))


class HttpPeer:
    def __init__(self, *, pending: PendingRequests | None) -> None:
        self.replies: dict[RequestKey, Reply] = {}
        self.standalone: EventStream | None = None
        self.pending = pending
        self.closed = False

    def _target(self, related: RequestKey | None) -> Reply | EventStream | None:
        if related is not None:
            reply = self.replies.get(related)
            if reply is not None:
                return reply
        standalone = self.standalone
        return standalone if standalone is not None and not standalone.finished.is_set() else None

    async def notify(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> None:
        target = self._target(related)
        if target is None or self.closed:
            return  # nobody is listening: notifications are best-effort by nature
        message = jsonrpc.encode_notification(method, params)
        if isinstance(target, Reply):
            await target.emit(message)
        else:
            await target.write(message)

    async def request(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> dict[str, Any]:
        if self.pending is None:
            raise PeerRequestFailed("this protocol version carries no server-to-client requests")
        if self.closed:
            raise PeerRequestFailed("the session is closed")
        target = self._target(related)
        if target is None:
            raise PeerRequestFailed("no open stream to the client can carry the request")
        request_id, future = self.pending.new()
        message = jsonrpc.encode_request(request_id, method, params)
        if isinstance(target, Reply):
            await target.emit(message)
        else:
            await target.write(message)
        return await self.pending.wait(request_id, future, method)
