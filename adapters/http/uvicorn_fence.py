"""The fence around uvicorn: the one module that relies on more of it than `uvicorn.Config` and `.serve()`.

pyproject pins uvicorn below the next minor release, and tests/adapters/test_uvicorn_contract.py fails
loudly, naming the piece, when a release moves any of what this module relies on:

1. Its httptools protocol, subclassed (`GuardedHttpToolsProtocol`):
   `HttpToolsProtocol.__init__(config, server_state, app_state, _loop)`, `self.loop`, `self.transport`;
   the hooks `connection_made`, `connection_lost`, `data_received`, and httptools' parser callbacks
   `on_message_begin` (first byte of a request; it builds `self.scope`), `on_url` and `on_header`, which
   gather the target in `self.url` and each whole header in `self.headers` before `on_headers_complete` (its
   head is complete), `on_body` and `on_message_complete` (its body is complete), which uvicorn defines as methods of the protocol; `self.cycle`, the request being
   answered (its `scope` and `response_complete`), which uvicorn's `connection_lost` marks disconnected;
   `on_response_complete`, which a cycle calls when its response is sent (after setting its `response_complete`);
   `self.pipeline`, the cycles whose heads were parsed while an earlier request was being answered (the
   newest on the left), and `self.cycle`, the newest cycle, so that when it is complete every one before it
   is; `send_400_response`, which `data_received` calls when the parser fails (after the parser has called
   the hooks for every request before the failure); `handle_websocket_upgrade`, after which the transport
   belongs to a new WebSocket protocol (`transport.get_protocol()`), so that protocol's
   `connection_lost` is the end of the connection. uvicorn writes a response's head and body as two
   writes, which is why the protocol sits on a `CoalescingTransport` (`http/coalesce.py`).
2. Its `Server`, subclassed (`HookedServer`): `shutdown(sockets)` runs when graceful shutdown begins
   (before it waits for connections to finish), `servers` holds the listening asyncio servers, and a
   connection's protocol is `config.http_protocol_class(config=, server_state=, app_state=lifespan.state,
   _loop=)` (what `startup` builds; the drain builds one for each connection it takes from the queue), `capture_signals()` installs the signal handlers
   around `serve()` and re-raises the caught signal afterwards, `handle_exit(sig, frame)` is what a
   signal calls, and setting `should_exit` stops the main loop. `startup(sockets)` returns with `started`
   set once the listeners are bound (or adopted) and accepting, which is when `listening` is called.
3. The text of two of its log records on `uvicorn.error`, which `ws/server_log.py` rewrites or drops:
   `INVALID_UTF8_MESSAGE`, and `UNFINISHED_HANDSHAKE_MESSAGE`, which its WebSocket protocol logs at ERROR
   in the task that ran the app even when the app answered the upgrade with an HTTP refusal
   (`websocket.http.response.*`), its handshake flag being set only by accept and close.

On top of uvicorn's protocol (each refusal below is also reported to the audit trail, coalesced per peer
and reason, by `connection_refusals.py`; only on the refusal paths):
- writes are coalesced per event-loop pass (`coalesce.py`);
- connections are admitted through a `ConnectionLedger` (`admission.py`): beyond a cap the client
  gets a complete 503 with Retry-After and Connection: close, and the socket is closed;
- each request gets its `request.HttpRequest` at its first byte (in the scope under `REQUEST`), which
  says whether it is the connection's first and names the event loop, so the app finds its request's
  task without a `get_running_loop` (`HttpRequest.serving_task`);
- a request whose whole body has arrived says so (`body_arrived`): reading it cannot stall, so it is
  read without a body deadline;
- a request whose client leaves is told at once (`client_left`, and the callback it put in
  `on_client_gone` is called from `connection_lost`), so noticing a disconnect costs no watcher task
  (`disconnects.py`);
- a request head larger than `max_head_bytes` gets 431 Request Header Fields Too Large and the connection
  is closed. uvicorn has no such limit, and httptools gathers a header's value across reads before it
  hands it over, so a head is measured as its bytes arrive (`HeadMeter`), before they reach the parser:
  what an oversized head leaves in memory is at most the limit plus one read. The whole head, as parsed,
  is counted again in `on_headers_complete`, for a head that began in the middle of a read (pipelining),
  which the byte count only sees from the next read on;
- a request head must be complete within `head_timeout_s` of the connection opening (or of the first
  byte of a later request on a kept-alive connection), else the connection is closed. uvicorn has no
  such deadline: its keep-alive timer stops at the first byte, so a client that trickles a header
  line every few seconds would hold its descriptor for ever. A WebSocket upgrade's head is complete
  when it is handed over, so the deadline never cuts an open WebSocket;
- a malformed request pipelined behind complete ones gets its 400 after they are answered, in order.
  uvicorn answers a parse error at once with a 400 and closes, dropping the answers of the requests
  parsed from the same read before it; here nothing after the malformed part is parsed or answered, the
  complete requests before it are answered, then the 400 is sent and the connection closed. The 431 of
  an oversized head waits in the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import socket
import threading
from typing import Any, Iterator

import structlog
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from .admission import Admitted, ConnectionLedger, RefusalReason, refusal_bytes
from .coalesce import CoalescingTransport
from .connection_refusals import ConnectionReason, ConnectionRefusals
from .head_limit import HeadMeter, head_too_large_bytes
from .request import NOT_TAKEN, REQUEST, HttpRequest

log = structlog.get_logger("hexmcp.adapters.http")

CLOCK_TICK_S = 0.001
"""A timer may fire up to a clock tick (uvloop: 1 ms) before the time it was armed for."""
REFUSED_LINGER_S = 1.0
"""How long a refused connection stays open after its 503, reading and dropping what the client sends:
closing with unread request bytes would answer them with a reset, which can destroy the 503 before the
client reads it. The caps bound everything else; refusals are bounded by this linger."""


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with coalesced writes, connection caps and a request-head deadline.

    Pass `functools.partial(GuardedHttpToolsProtocol, ledger=..., head_timeout_s=..., max_head_bytes=...)` as
    `uvicorn.Config(http=...)`; uvicorn adds its own keyword arguments when a connection arrives.
    """

    def __init__(self, *args: Any, ledger: ConnectionLedger, head_timeout_s: float | None,
                 max_head_bytes: int | None = None, refusals: ConnectionRefusals | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refusals = refusals  # None: no observer hears refusals (no audit trail)
        self._head = HeadMeter(max_head_bytes) if max_head_bytes is not None else None
        self._ledger = ledger
        self._head_timeout_s = head_timeout_s
        self._ticket: Admitted | None = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_due: float | None = None  # when the head being read must be complete; None: none is
        self._refused = False
        self._refusal_due: bytes | None = None  # a 431 or 400 waiting for the pipelined answers before it
        self._requests_begun = 0
        self._message_open = False  # the parser is inside a request (from its first byte to its body's end)
        self._cycle_before_message: RequestResponseCycle | None = None  # `self.cycle` when the open request began

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        verdict = self._ledger.admit(address)
        if isinstance(verdict, Admitted):
            self._ticket = verdict
            self._start_head_deadline()
            return
        self._refused = True
        log.debug("connection refused", client=address, reason=verdict.reason.value, cap=verdict.cap)
        if self._refusals is not None:
            self._refusals.refused(address, ConnectionReason.PER_ADDRESS if verdict.reason is RefusalReason.PER_ADDRESS
                                   else ConnectionReason.TOTAL, f"at most {verdict.cap}")
        self.transport.write(refusal_bytes(verdict))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(REFUSED_LINGER_S, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._head is not None and not self._head.fits(data):
            self._refuse_head()
            return
        super().data_received(data)

    def eof_received(self) -> bool | None:
        if self._refused:  # the client has read our 503 and hung up: no need to linger
            self.transport.close()
        return super().eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_deadline()
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self._release()
        cycle = self.cycle
        on_gone = None
        if cycle is not None and not cycle.response_complete:
            request = cycle.scope.get(REQUEST)
            if request is not None:
                request.client_left = True  # a request that has not asked yet finds this when it does
                on_gone = request.on_client_gone
        super().connection_lost(exc)  # marks the cycle disconnected first, as a `receive` watcher would see it
        if on_gone is not None:
            on_gone()

    def on_message_begin(self) -> None:
        if self._refused:
            return
        self._message_open = True
        self._cycle_before_message = self.cycle
        super().on_message_begin()
        # Not given its scope yet (the app does that): an app that never takes it leaves no cycle behind.
        # Positional (scope, loop, kept_alive, watched): keywords would cost a dict per request.
        request = HttpRequest(NOT_TAKEN, self.loop, self._requests_begun > 0, True)
        self.scope[REQUEST] = request  # type: ignore[typeddict-unknown-key]
        self._requests_begun += 1
        if self._head_due is None:  # a later request on a kept-alive connection
            self._start_head_deadline()

    def on_headers_complete(self) -> None:
        self._head_due = None  # `_stop_head_deadline`, written out: every request passes here
        if self._refused:  # the 431 is on its way: no request for the app
            return
        # The head as parsed, counted once it is whole (uvicorn has gathered its target and headers): a hook
        # per header cost more than the rest of the head's handling. While it arrived, the byte count
        # bounded what it could hold (`HeadMeter.fits`).
        head = self._head
        if head is not None and not head.completed(self.url, self.headers):
            self._refuse_head()
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        if self._head is not None:
            self._head.began()  # what follows on the connection is the next request's head
        self._message_open = False
        super().on_message_complete()
        request = self.scope.get(REQUEST)  # gone when the app answered before the body was in (413)
        if request is not None:
            request.body_arrived = True

    def handle_websocket_upgrade(self) -> None:
        super().handle_websocket_upgrade()
        # The WebSocket protocol now receives this connection's end; release our place then.
        websocket = self.transport.get_protocol()
        end_websocket = websocket.connection_lost

        def connection_lost(exc: Exception | None) -> None:
            try:
                end_websocket(exc)
            finally:
                self._release()

        websocket.connection_lost = connection_lost

    def _refuse_head(self) -> None:
        """431 and close: the rest of the head is neither kept nor parsed."""
        self._refused = True
        self._stop_head_deadline()
        limit = self._head.limit if self._head is not None else 0
        log.debug("request head too large, connection closed", client=self.client, max_head_bytes=limit)
        if self._refusals is not None:
            self._refusals.refused(self._peer(), ConnectionReason.HEAD_TOO_LARGE, f"over {limit} bytes")
        self._close_with(head_too_large_bytes(limit))

    def send_400_response(self, msg: str) -> None:
        """The parser failed (uvicorn has logged it): 400 and close, nothing after the failure parsed. The
        requests parsed before it are answered first; the one it failed in is not answered."""
        self._refused = True
        self._stop_head_deadline()
        if self._refusals is not None:
            self._refusals.refused(self._peer(), ConnectionReason.MALFORMED, msg)
        broken = self._take_broken_request()
        if broken is not None:  # the app is answering the broken request itself: no 400 can follow it
            if broken.response_started:
                self.transport.close()
            else:  # as uvicorn does: the app then finds its client gone (`connection_lost`)
                super().send_400_response(msg)
            return
        self._close_with(malformed_request_bytes(msg))

    def _take_broken_request(self) -> RequestResponseCycle | None:
        """The request the parser failed in, if its head was complete (it has a cycle): taken out of the
        pipeline when it waits there, so it is never answered; returned when the app is answering it."""
        if not self._message_open or self.cycle is self._cycle_before_message:
            return None  # failed in a head, or between requests: nothing was made of it
        broken = self.cycle
        if self.pipeline and self.pipeline[0][0] is broken:
            self.pipeline.popleft()
            self.cycle = self._cycle_before_message
            return None
        return None if broken.response_complete else broken

    def _close_with(self, answer: bytes) -> None:
        """Send `answer` (a whole response with Connection: close) and close, once every request parsed
        before it is answered: the newest cycle is the last answered (`on_response_complete`)."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            self._refusal_due = answer
            return
        self._send_closing(answer)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # starts the next pipelined request, if one waits
        answer = self._refusal_due
        if answer is not None and self.cycle is not None and self.cycle.response_complete:
            self._refusal_due = None
            self._send_closing(answer)

    def _send_closing(self, answer: bytes) -> None:
        if self.transport.is_closing():  # the last request said Connection: close; nothing more is sent
            return
        self.transport.write(answer)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        # Not closed at once: unread request bytes would make the close a reset, which can destroy the
        # answers before the client reads them. What arrives meanwhile is dropped (`data_received`).
        self.loop.call_later(REFUSED_LINGER_S, self.transport.close)

    def _peer(self) -> str:
        """The client's address, as the ledger counts it (uvicorn's `client`: host and port, or None)."""
        client = self.client
        return str(client[0]) if client else ""

    def _release(self) -> None:
        if self._ticket is not None:
            self._ledger.release(self._ticket)
            self._ticket = None

    # One timer per connection, not one per request: a request's head only sets and clears `_head_due`,
    # and the timer, when it fires, re-arms for a later head's deadline or lets go when none is due
    # (under steady keep-alive traffic it fires once per head_timeout_s, instead of call_later + cancel
    # on every request).
    def _start_head_deadline(self) -> None:
        if self._head_timeout_s is not None:
            self._head_due = self.loop.time() + self._head_timeout_s
            if self._head_timer is None:
                self._head_timer = self.loop.call_at(self._head_due, self._head_timer_fired)

    def _stop_head_deadline(self) -> None:
        self._head_due = None

    def _head_timer_fired(self) -> None:
        self._head_timer = None
        due = self._head_due
        if due is None:
            return
        if due > self.loop.time() + CLOCK_TICK_S:  # the head of a later request: its own deadline
            self._head_timer = self.loop.call_at(due, self._head_timer_fired)
            return
        self._head_due = None
        self._head_deadline_passed()

    def _head_deadline_passed(self) -> None:
        if not self.transport.is_closing():
            log.debug("request head not complete in time, connection closed", client=self.client,
                     head_timeout_s=self._head_timeout_s)
            if self._refusals is not None:
                self._refusals.refused(self._peer(), ConnectionReason.HEAD_TIMEOUT, f"{self._head_timeout_s} s")
            self.transport.close()


def malformed_request_bytes(message: str) -> bytes:
    """The whole 400 for a request the parser could not read: Connection: close, a one-line body."""
    body = (message + "\n").encode("ascii", "replace")
    head = ("HTTP/1.1 400 Bad Request\r\n"
            "Connection: close\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("ascii") + body


class CannotListen(Exception):
    """The listening address could not be bound (in use, not permitted, not this host's)."""

    def __init__(self, error: OSError) -> None:
        # asyncio rewords the error ("error while attempting to bind on address ..."); the errno's own words
        # are what `serve --workers N` says for the same failure
        self.reason = os.strerror(error.errno) if error.errno else str(error)
        super().__init__(self.reason)


class HookedServer(uvicorn.Server):
    """uvicorn's `Server` with a hook that runs when graceful shutdown *begins*, and, on request, signal
    handlers that let a SIGTERM'd server exit 0.

    uvicorn's graceful shutdown stops accepting, then waits for every open connection to finish; a
    stream that never finishes by itself (SSE, an idle WebSocket) would hold it until its timeout.
    `before_shutdown` ends them first. uvicorn's own handlers re-raise the caught signal after serving,
    which turns a clean SIGTERM into exit status 143; with `keep_exit_status` ours are installed instead
    (in the main thread only: a server run in a test's thread leaves signals alone).
    """

    keep_exit_status = False

    async def before_shutdown(self) -> None:
        """Override: end what would otherwise keep uvicorn waiting."""

    def listening(self) -> None:
        """Override: the listeners (in `servers`) are bound and accepting."""

    async def startup(self, sockets: Any = None) -> None:
        try:
            await super().startup(sockets)
        except SystemExit as stop:
            # uvicorn logs a failed bind and exits with its own status, 3, which is hexmcp's "model
            # package missing": the caller says which address and why, and exits as hexmcp's codes say.
            if isinstance(stop.__context__, OSError):
                raise CannotListen(stop.__context__) from None
            raise
        if self.started:  # not when the app's lifespan startup failed (uvicorn then stops)
            self.listening()

    def request_exit(self) -> None:
        """Stop serving (graceful shutdown follows), as uvicorn's own signal handler does."""
        self.should_exit = True

    async def shutdown(self, sockets: Any = None) -> None:
        # Stop accepting first, so a draining server refuses new connections (a balancer retries them
        # elsewhere) while `before_shutdown` lets the work already received finish. uvicorn closes the
        # same listeners again in its own shutdown, which is harmless.
        await self._stop_accepting(sockets)
        await self.before_shutdown()
        await super().shutdown(sockets)

    async def _stop_accepting(self, sockets: Any) -> None:
        """Close the listeners, but serve the connections already in their accept queues.

        Closing a listening socket resets every connection the kernel completed but nobody accepted yet;
        their clients had sent requests (a proxy cannot tell those from requests that were served), so
        a POST would be lost rather than retried elsewhere. A duplicate of each listener's descriptor
        keeps its queue alive while asyncio lets go of it; what is queued is accepted here and handed
        to uvicorn's protocol, exactly as its own accept would, then the duplicate is closed."""
        loop = asyncio.get_running_loop()
        held = [socket.socket(fileno=os.dup(listening.fileno()))
                for server in self.servers for listening in (server.sockets or ())]
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        queued: list[socket.socket] = []
        for listener in held:
            listener.setblocking(False)
            with contextlib.suppress(BlockingIOError, InterruptedError):
                while True:
                    queued.append(listener.accept()[0])
            listener.close()
        for connection in queued:
            connection.setblocking(False)
            await loop.connect_accepted_socket(lambda: self._new_protocol(loop), connection)
        if queued:
            log.info("connections accepted from the queue at shutdown", connections=len(queued))

    def _new_protocol(self, loop: asyncio.AbstractEventLoop) -> asyncio.Protocol:
        """What uvicorn's `startup` builds for each accepted connection (its `create_protocol`)."""
        return self.config.http_protocol_class(config=self.config, server_state=self.server_state,  # type: ignore[call-arg]
                                               app_state=self.lifespan.state, _loop=loop)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if not self.keep_exit_status:
            with super().capture_signals():
                yield
            return
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()
        handled = (signal.SIGINT, signal.SIGTERM)
        for sig in handled:
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)


UVICORN_ERROR_LOGGER = "uvicorn.error"
INVALID_UTF8_MESSAGE = "Invalid UTF-8 sequence received from client."
UNFINISHED_HANDSHAKE_MESSAGE = "ASGI callable returned without completing handshake."
UPGRADE_ANSWERED: contextvars.ContextVar[str | None] = contextvars.ContextVar("hexmcp_upgrade_answered", default=None)
"""The eventId of the HTTP refusal the app sent instead of accepting a WebSocket upgrade, in the task that
ran the app (where uvicorn then logs `UNFINISHED_HANDSHAKE_MESSAGE`)."""
"""What uvicorn's websockets-sansio protocol logs, with a traceback, when a text frame is not UTF-8."""
