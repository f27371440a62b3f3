"""The core's `Peer` port over HTTP: route each notification and server request to the right stream.

On HTTP there is no single pipe back to the client. Something related to a request (progress, a log
line, a sampling or elicitation request during a tool call) goes on that request's own POST response,
which switches to SSE for it; anything else (list changes, resource updates) goes on the session's
standalone GET stream, or nowhere if the client has none open. The client answers a server request
with a separate POST, which hands it to the call waiting in `pending` (`rpc_layer.take_answer`).

On 2026-07-28 a JSON-RPC request must never appear on a response stream: there `pending` is None and
`request()` refuses (the core asks through `InputRequiredResult` instead).
"""

from __future__ import annotations

from typing import Any

from hexmcp.core import PeerRequestFailed
from hexmcp.core.ports import RequestKey
from hexmcp.wire import jsonrpc
from hexmcp.wire.pending import PendingRequests

from .. import rpc_layer
from .sse import EventStream, Reply


class HttpPeer:
    def __init__(self, *, pending: PendingRequests | None, timeout_s: float = 0.0) -> None:
        """`pending`: where requests to the client wait for their answers, `timeout_s` how long (None: this
        version has no such requests)."""
        self.replies: dict[RequestKey, Reply] = {}
        self.standalone: EventStream | None = None
        self.pending = pending
        self.timeout_s = timeout_s
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
        send = target.emit if isinstance(target, Reply) else target.write
        return await rpc_layer.ask_client(self.pending, method, params, send, self.timeout_s)
