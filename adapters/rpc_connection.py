"""One JSON-RPC peer driving one core Session, for any transport that carries whole messages.

The transport hands in decoded JSON values and gives a `send` coroutine; this class does the rest:
classifies messages, serves requests concurrently (each in its own task, so a slow tool never blocks
`ping`), answers each request exactly once with its own id, handles batches where the negotiated
version has them (each item served like a single request, the batch answered once all are), and
implements the core's `Peer` port (notifications and server-to-client requests with their pending
answers). stdio and WebSocket use it as is. What every transport does with JSON-RPC (log-context
binding, outcome to answer, errors with an eventId, pending server requests) is `rpc_layer`'s.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any, Awaitable, Callable

from hexmcp.core import ErrorCode, McpServer, Outcome, PeerRequestFailed, Rejection, versions
from hexmcp.core import observation
from hexmcp.core.ports import RequestKey
from hexmcp.wire import jsonrpc

from . import rpc_layer
from .slots import UNCAPPED_METHODS, Slots

Send = Callable[[Any], Awaitable[None]]

# The most messages one JSON-RPC batch may hold, as HttpConfig.max_batch_messages: a batch is read whole
# before any of it is served, so without a bound one line pins as many parsed messages as it can carry.
DEFAULT_MAX_BATCH_MESSAGES = 64


def new_session_id() -> str:
    return secrets.token_hex(8)


class RpcConnection:
    def __init__(self, server: McpServer, send: Send, *, session_id: str | None = None, with_version: bool = True,
                 require_jsonrpc: bool = True, max_in_flight: int = 512, peer_timeout_s: float = 300.0,
                 client_id: str | None = None, transport: str | None = None, slots: Slots | None = None,
                 max_batch_messages: int = DEFAULT_MAX_BATCH_MESSAGES) -> None:
        self.session_id = session_id or new_session_id()
        self._server = server
        self.session = server.open_session(session_id=self.session_id, peer=self, client_id=client_id,
                                           transport=transport)
        self._send = send
        self._with_version = with_version
        self._require_jsonrpc = require_jsonrpc
        self._max_in_flight = max_in_flight
        self._max_batch_messages = max_batch_messages
        self._slots = slots  # each request takes one of these too (None: only `max_in_flight` bounds them)
        self._tasks: set[asyncio.Task[Any]] = set()  # one per request in flight, batch items included
        self._batches: set[asyncio.Task[Any]] = set()  # one per batch waiting for its items' answers
        self._pending = rpc_layer.pending_requests()
        self._peer_timeout_s = peer_timeout_s
        self._traces = rpc_layer.TraceIds(self.session_id[:8])
        self._closed = False
        # The loop serving this connection, looked up once: on CPython 3.11 every `get_running_loop()`
        # (and `current_task()` without a loop) is a getpid() system call, too dear to repeat on every request.
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- inbound ---------------------------------------------------------------------------------

    async def receive_raw(self, raw: bytes | str) -> None:
        try:
            value = jsonrpc.decode(raw)
        except ValueError as exc:  # not JSON (-32700), or a number out of range (-32600/-32602)
            request_id, code, message, data = jsonrpc.decode_refusal(exc)
            await self.refuse(request_id, code, message, data)
            return
        await self.receive(value)

    async def receive(self, value: Any) -> None:
        if isinstance(value, list):
            await self._receive_batch(value)
            return
        message = jsonrpc.classify(value, require_jsonrpc=self._require_jsonrpc)
        if isinstance(message, jsonrpc.Request):
            if message.method == "initialize":
                # Served inline: what follows on the wire may depend on the negotiated version.
                await self._send_message(await self._answer(message))
            elif len(self._tasks) >= self._max_in_flight:
                await self._send(self._busy(message))
            elif not self._take_slot(message):
                await self._send(self._server_busy(message))
            else:
                self._start(message)
        else:
            reply = await self._handle_non_request(message)
            if reply is not None:
                await self._send_message(reply)

    def receive_now(self, value: Any) -> bool:
        """Start serving a lone request without awaiting anything, as `receive` would; False for every other
        message (a batch, a notification, a response, `initialize`, a request over the in-flight limit,
        anything invalid), which the caller then hands to `receive`, in arrival order.

        For a reader that is a callback (stdio's): the common message costs no task of the reader's own.
        """
        if (not isinstance(value, dict) or value.get("method") == "initialize" or len(self._tasks) >= self._max_in_flight
                or self._slots is not None):
            return False
        message = jsonrpc.classify(value, require_jsonrpc=self._require_jsonrpc)
        if not isinstance(message, jsonrpc.Request):
            return False  # classified again by `receive`: notifications and responses are rare next to requests
        self._start(message)
        return True

    def _start(self, message: jsonrpc.Request) -> None:
        # The task takes itself out of `_tasks` when it ends (`_serve`), not with a done callback: a
        # callback costs the event loop one more pass per request.
        loop = self._loop or self._running_loop()
        task = loop.create_task(self._serve(message, self._begin(message)))
        self._tasks.add(task)
        if self._slots is not None and message.method not in UNCAPPED_METHODS:
            # A callback, not a `finally`: a task cancelled before its first step never runs its own code.
            task.add_done_callback(self._give_back_slot)

    def _take_slot(self, message: jsonrpc.Request) -> bool:
        return self._slots is None or message.method in UNCAPPED_METHODS or self._slots.acquire()

    def _give_back_slot(self, _task: asyncio.Task[Any]) -> None:
        self._slots.release()  # type: ignore[union-attr]

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        self._loop = asyncio.get_running_loop()
        return self._loop

    def _begin(self, message: jsonrpc.Request) -> Awaitable[Outcome]:
        """Admit a request now, in arrival order (lifecycle rules); the caller serves it in a task."""
        # Bound in the reader's context and left there: the task spawned next copies it, and the next
        # request overwrites it (cheaper than binding and resetting around every request).
        trace_id = self._traces.next()
        rpc_layer.bind(self.session_id, trace_id)
        return self.session.begin_request(message.method, message.params, request_key=message.id, trace_id=trace_id)

    async def _receive_batch(self, batch: list[Any]) -> None:
        """Admit every item now, as if it had come alone, and answer the batch once its items are done.

        Only notifications and responses are handled here, in order (a cancellation must find the
        request it names); requests run in tasks of their own, each counting against the in-flight limit.
        A batch longer than `max_batch_messages` is refused whole, none of it admitted.
        """
        if not batch:
            await self.refuse(None, ErrorCode.INVALID_REQUEST, "Invalid request: empty batch")
            return
        if len(batch) > self._max_batch_messages:  # refused whole, as over HTTP: none of it is served
            await self.refuse(None, ErrorCode.INVALID_REQUEST,
                              f"Invalid request: a batch of {len(batch)} messages; this server takes at most "
                              f"{self._max_batch_messages} in one batch")
            return
        if self.session.version is None or not versions.features(self.session.version).batching:
            version = self.session.version or "none negotiated yet"
            await self.refuse(None, ErrorCode.INVALID_REQUEST,
                              f"JSON-RPC batches are not allowed in protocol version {version}")
            return
        parts: list[dict[str, Any] | asyncio.Task[dict[str, Any] | None]] = []
        for item in batch:
            message = jsonrpc.classify(item, require_jsonrpc=self._require_jsonrpc)
            if not isinstance(message, jsonrpc.Request):
                reply = await self._handle_non_request(message)
                if reply is not None:
                    parts.append(reply)
            elif len(self._tasks) >= self._max_in_flight:
                parts.append(self._busy(message))
            elif not self._take_slot(message):
                parts.append(self._server_busy(message))
            else:
                item = self._spawn(self._reply(message, self._begin(message)))
                if self._slots is not None and message.method not in UNCAPPED_METHODS:
                    item.add_done_callback(self._give_back_slot)
                parts.append(item)
        if not all(isinstance(part, dict) for part in parts):
            batch_task = asyncio.ensure_future(self._answer_batch(parts))
            self._batches.add(batch_task)
            batch_task.add_done_callback(self._batches.discard)
        elif parts:
            await self._send(parts)

    async def _answer_batch(self, parts: list[dict[str, Any] | asyncio.Task[dict[str, Any] | None]]) -> None:
        replies = [part if isinstance(part, dict) else await part for part in parts]
        answered = [reply for reply in replies if reply is not None]
        if answered:
            await self._send(answered)

    async def _handle_non_request(self, message: jsonrpc.Message) -> dict[str, Any] | None:
        if isinstance(message, jsonrpc.Notification):
            await rpc_layer.serve_notification(self.session, message, self._traces.next())
            return None
        if isinstance(message, jsonrpc.Response):
            # Bound here: read outside any request, the log line would otherwise name no session (or the last trace).
            with rpc_layer.bound(self.session_id, self._traces.next()):
                rpc_layer.take_answer(self._pending, message)
            return None
        assert isinstance(message, jsonrpc.Invalid)
        trace_id = self._traces.next()
        with rpc_layer.bound(self.session_id, trace_id), rpc_layer.reporting_refusals(self._reporter(message.id, trace_id)):
            return rpc_layer.invalid_reply(message, with_version=self._with_version)

    async def _serve(self, request: jsonrpc.Request, work: Awaitable[Outcome]) -> None:
        # `_reply` and `_send_message` written out instead of awaited: this runs for every request.
        try:
            reply = rpc_layer.answer(request.id, await work, with_version=self._with_version)
            if reply is not None:
                await self._send(reply)
        finally:
            self._tasks.discard(asyncio.current_task(self._loop))  # type: ignore[arg-type]

    async def _reply(self, request: jsonrpc.Request, work: Awaitable[Outcome]) -> dict[str, Any] | None:
        return rpc_layer.answer(request.id, await work, with_version=self._with_version)

    async def _answer(self, request: jsonrpc.Request) -> dict[str, Any] | None:
        outcome = await rpc_layer.serve_request(self.session, request, self._traces.next())
        return rpc_layer.answer(request.id, outcome, with_version=self._with_version)

    # --- the core's Peer port ----------------------------------------------------------------------

    async def notify(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> None:
        if not self._closed:
            await self._send_message(jsonrpc.encode_notification(method, params, with_version=self._with_version))

    async def request(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> dict[str, Any]:
        if self._closed:
            raise PeerRequestFailed("the connection is closed")
        return await rpc_layer.ask_client(self._pending, method, params, self._send, self._peer_timeout_s,
                                          with_version=self._with_version)

    # --- lifecycle -----------------------------------------------------------------------------------

    def input_ended(self) -> None:
        """Nothing more will be read: requests we sent the client can no longer be answered."""
        rpc_layer.no_more_answers(self._pending, "the client closed its input")

    async def drain(self) -> None:
        """Wait until every request already received has been answered.

        subscriptions/listen requests only end when told to: they are ended first, with their result.
        """
        self.session.end_listens()
        while self._tasks or self._batches:
            await asyncio.gather(*self._tasks, *self._batches, return_exceptions=True)
            # A request task cancelled before its first step never ran its own `finally`.
            self._tasks = {task for task in self._tasks if not task.done()}

    async def close(self) -> None:
        self._closed = True
        rpc_layer.no_more_answers(self._pending, "the connection closed")
        await self.session.close()

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    # --- helpers -------------------------------------------------------------------------------------

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _send_message(self, message: dict[str, Any] | None) -> None:
        if message is not None:
            await self._send(message)

    async def refuse(self, request_id: jsonrpc.RequestId | None, code: ErrorCode, message: str,
                     data: dict[str, Any] | None = None) -> None:
        """Send an error the transport itself decided on (bad framing, a message too large), with its eventId."""
        await self._send(self._error(request_id, code, message, data))

    def _error(self, request_id: jsonrpc.RequestId | None, code: ErrorCode, message: str,
               data: dict[str, Any] | None = None) -> dict[str, Any]:
        trace_id = self._traces.next()
        with rpc_layer.bound(self.session_id, trace_id), rpc_layer.reporting_refusals(self._reporter(request_id, trace_id)):
            return rpc_layer.error_reply(request_id, code, message, data, with_version=self._with_version)

    def refused_unanswered(self, code: ErrorCode, message: str) -> Rejection:
        """A refusal the transport answers its own way (a WebSocket close for a frame too large): logged
        and reported like every other, with nothing sent; the transport's answer names its eventId."""
        trace_id = self._traces.next()
        with rpc_layer.bound(self.session_id, trace_id), rpc_layer.reporting_refusals(self._reporter(None, trace_id)):
            return rpc_layer.refusal(code, message)

    def _reporter(self, request_id: jsonrpc.RequestId | None, trace_id: str) -> rpc_layer.RefusalReporter | None:
        """What tells the observers that hear refusals (the audit trail) about one refused message."""
        observers = self._server.refusal_observers
        if not observers:
            return None
        session = self.session

        def report(rejection: Rejection) -> None:
            observation.report_refusal(observers, observation.ObservedRefusal(
                event_id=rejection.event_id, code=rejection.code, message=rejection.message,
                transport=session.transport, session_id=self.session_id, client_id=session.client_id,
                trace_id=trace_id, request_key=request_id))

        return report

    def _busy(self, request: jsonrpc.Request) -> dict[str, Any]:
        return self._error(request.id, ErrorCode.SERVER_BUSY,
                           f"Too many requests in flight on this connection (limit {self._max_in_flight})")

    def _server_busy(self, request: jsonrpc.Request) -> dict[str, Any]:
        """The answer to a request beyond the shared cap (`Slots`): the server, not this connection, is busy."""
        return self._error(request.id, ErrorCode.SERVER_BUSY, self._slots.busy_message())  # type: ignore[union-attr]


