"""Streamable HTTP for 2026-07-28: one POST, one request, no sessions, headers that must match the body.

The order of checks: method (405) → Accept (406) → body (-32700; 408/413 came earlier, see `body.py`)
→ the `MCP-Protocol-Version` header names a version this path serves (-32022: nothing else about the
request can be judged against an unknown version, and the 2025-06-18+ transport says an unsupported
header is a 400) → notification (202) → one request (-32600) → `_meta` envelope (-32602) → routing
headers vs body (-32020) → the core (-32022 for a `_meta` version it does not serve, -32601 for a
method 2026 does not have, ...). Errors go out with the status from `status.STATUS` (400/404, else 200).

A request's notifications (progress, logs it opted into) stream on its own response as SSE; a JSON-RPC
request never does (the core asks the client through `InputRequiredResult`). `subscriptions/listen`
is a long-lived SSE stream: the core routes list-change notifications to it through this request's
peer, and ends it with a result when the server shuts down. Closing a response stream cancels the request.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Awaitable, Callable

from hexmcp.core import ErrorCode, McpServer, Ok, Outcome, Session
from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines

from .. import rpc_layer
from ..held_open import HeldOpen
from ..retry_hint import retry_after_header
from . import dispatch, headers
from .address_group import held_key
from .asgi import Receive, Scope, Send
from .client_identity import client_identity
from .config import HttpConfig
from .disconnects import GONE, unless_gone, until_done_or_gone
from .held_streams import HeldListen
from .json_body import json_body, readable_id
from .limits import release_slot
from .peer import HttpPeer
from .refusals import Refused, refuse
from .request import HttpRequest
from .sse import EventStream, Reply
from .status import rpc_status

ALLOW = [(b"allow", b"POST")]
LISTEN = "subscriptions/listen"


class StatelessEraTransport:
    def __init__(self, server: McpServer, config: HttpConfig, streams: HeldOpen | None = None) -> None:
        self.server = server
        self.config = config
        self._ids = itertools.count(1)
        self.deadlines = Deadlines(config.request_timeout_s)
        self.streams = streams if streams is not None else HeldOpen(
            what="open streams", per_client=config.max_streams_per_client, total=config.max_streams)
        self._annotations: dict[int, tuple[Any, list[headers.Annotation]]] = {}  # per inputSchema, computed once
        self._listening: dict[Session, asyncio.Future[Outcome]] = {}

    async def end_streams(self, grace_s: float = 2.0) -> None:
        """End every subscriptions/listen stream gracefully: each gets its final result, then closes."""
        for core in list(self._listening):
            core.closed.set()  # what the core's listen handler waits on; cancelling would drop the result
        if self._listening:
            await asyncio.wait(list(self._listening.values()), timeout=grace_s)

    async def handle(self, http: HttpRequest, receive: Receive, send: Send) -> None:
        scope = http.scope
        if scope["method"] != "POST":
            await refuse(send, ErrorCode.INVALID_REQUEST,
                         f"Method not allowed: {scope['method']} (protocol 2026-07-28 has no sessions or GET streams)",
                         status=405, headers=ALLOW)
            return
        json_ok, sse_ok = http.accepts()
        if not json_ok:
            await refuse(send, ErrorCode.INVALID_REQUEST, "Not Acceptable: the client must accept application/json",
                         status=406, request_id=readable_id(http))
            return
        value = json_body(http, send)
        if type(value) is Refused:
            await value.answer
            return
        message = jsonrpc.classify(value)
        unsupported = headers.check_version(scope)
        if unsupported is not None:
            code, text, data = unsupported
            request_id = message.id if isinstance(message, (jsonrpc.Request, jsonrpc.Invalid)) else None
            await refuse(send, code, text, data=data, request_id=request_id, status=rpc_status(code))
            return
        if isinstance(message, jsonrpc.Notification):
            # Nothing to do with one: cancellation is closing the stream, and there is no handshake.
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if not isinstance(message, jsonrpc.Request):
            request_id = message.id if isinstance(message, jsonrpc.Invalid) else None
            await refuse(send, ErrorCode.INVALID_REQUEST,
                         "Invalid request: the body must be exactly one JSON-RPC request or notification",
                         request_id=request_id)
            return
        problem = headers.check_envelope(message.params) or headers.check_headers(scope, message.method,
                                                                                  message.params)
        if problem is None and message.method == "tools/call":
            problem = self._check_params(scope, message.params)
        if problem is not None:
            code, text, data = problem
            await refuse(send, code, text, data=data, request_id=message.id, status=rpc_status(code))
            return
        if message.method == LISTEN:
            await self._listen(http, receive, send, message, sse_ok)
            return
        await self._serve(http, receive, send, message)

    def _check_params(self, scope: Scope, params: dict) -> headers.Problem | None:
        tool = self.server.tools.get(params.get("name")) if isinstance(params.get("name"), str) else None
        if tool is None:
            return None  # the core answers an unknown tool
        schema = tool.definition.input_schema
        cached = self._annotations.get(id(schema))
        if cached is None or cached[0] is not schema:
            cached = (schema, headers.param_annotations(schema))
            self._annotations[id(schema)] = cached
        return headers.check_param_headers(scope, cached[1], params.get("arguments")) if cached[1] else None

    def _open(self, http: HttpRequest, send: Send, request: jsonrpc.Request) -> tuple[Reply, Session]:
        """A one-request core session whose answer (and any stream) goes out through `send`."""
        reply = Reply(send, headers=[], make_stream=lambda: EventStream(None))
        peer = HttpPeer(pending=None)
        peer.replies[request.id] = reply
        return reply, self.server.open_session(session_id=f"r{next(self._ids):x}", peer=peer,
                                               client_id=client_identity(http), transport="http")

    async def _serve(self, http: HttpRequest, receive: Receive, send: Send, request: jsonrpc.Request) -> None:
        """Answer one request on its reply, unless the client closes the stream first: that is how 2026
        cancels, so the work is cancelled and its session closed."""
        reply, core = self._open(http, send, request)
        outcome = await unless_gone(http, receive, lambda task: dispatch.run(core, request, self.deadlines, task))
        if outcome is GONE:
            await core.close()
            return
        await _finish(reply, request, outcome)

    async def _answer(self, receive: Receive, reply: Reply, core: Session, request: jsonrpc.Request,
                      work: asyncio.Future[Outcome], *, keepalive_s: float | None = None,
                      keepalive: Callable[[], Awaitable[None]] | None = None) -> None:
        """`_serve` for a long-lived request already running as `work`, with keep-alives on its stream."""
        if not await until_done_or_gone(work, receive, keepalive_s=keepalive_s, keepalive=keepalive):
            work.cancel()
            await core.close()
            return
        await _finish(reply, request, work.result())

    async def _listen(self, http: HttpRequest, receive: Receive, send: Send, request: jsonrpc.Request,
                      sse_ok: bool) -> None:
        if not sse_ok:
            await refuse(send, ErrorCode.INVALID_REQUEST,
                         "Not Acceptable: subscriptions/listen streams need Accept: text/event-stream",
                         status=406, request_id=request.id)
            return
        client = held_key(client_identity(http))
        held = HeldListen()
        refused = self.streams.take(client, held)
        if refused is not None:
            await refuse(send, ErrorCode.SERVER_BUSY, refused, request_id=request.id, headers=[(b"retry-after", b"5")])
            return
        release_slot(http)
        reply, core = self._open(http, send, request)
        try:
            held.attach(core, await reply.start_stream())  # headers now: the client waits on this stream for long
            work = asyncio.ensure_future(dispatch.run(core, request, None))
            self._listening[core] = work
            await self._answer(receive, reply, core, request, work, keepalive_s=self.config.keepalive_s,
                               keepalive=reply.stream.comment)  # type: ignore[union-attr]
        finally:
            self.streams.give(client, held)
            self._listening.pop(core, None)


async def _finish(reply: Reply, request: jsonrpc.Request, outcome: Outcome) -> None:
    """The answer on `reply`: with the status its error maps to, or no answer at all for a cancelled request."""
    answer = rpc_layer.answer(request.id, outcome)
    if answer is None:
        if reply.stream is not None:
            await reply.stream.close()
        return
    if isinstance(outcome, Ok):
        await reply.finish(answer)
    else:
        await reply.finish(answer, rpc_status(outcome.code), retry_after_header(outcome.data))
