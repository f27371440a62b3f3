"""One accepted socket: a read loop feeding `RpcConnection`, a writer draining the `Outbox`, one way out.

The read loop turns each inbound frame into an error frame (binary, not JSON) or hands the decoded
value to `RpcConnection`, which classifies it (an array is a batch, served only where the negotiated
version has batches), serves requests concurrently, and implements the core's Peer over the same
socket. Nothing a client sends can raise out of here: what is wrong with one frame is answered on the
socket, which keeps serving.

Three things end a connection, and each picks its close code exactly once (`_decide`):
- the client goes away (disconnect event, or the transport refuses a write): nothing to send;
- the client breaks a bound: oversize message → 1009, a full send queue → 1013; in-flight work is
  cancelled, since its answers could not be delivered anyway;
- the server shuts down (`shutdown()`): new requests get -32005 error frames while the ones already
  received finish (responses to our own elicitation/sampling requests are still read), then 1001;
- the server lets go of it (`let_go`, ADR 1214), only while no request is in flight: idle too long → 1000,
  or closed to admit another client while this one holds more than its fair share → 1013.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import structlog

from hexmcp.core import ErrorCode, McpServer, Rejection, new_event_id
from hexmcp.wire import jsonrpc

from ..http.asgi import Receive, Send
from ..rpc_connection import RpcConnection
from ..slots import Slots
from .config import WsConfig
from .dialect import CLOSE_CODES, CloseCode, Dialect
from .outbox import Outbox

log = structlog.get_logger("hexmcp.adapters.ws")

SESSION_HEADER = b"mcp-session-id"
MAX_REASON_BYTES = 123  # RFC 6455 §5.5: a control frame's payload is at most 125 bytes, 2 of them the code


@attrs.frozen
class Ending:
    """Why the connection ends: the close code to send (None: the client is already gone) and why."""

    code: CloseCode | None
    reason: str


class WsConnection:
    def __init__(self, server: McpServer, config: WsConfig, dialect: Dialect, receive: Receive, send: Send, *,
                 client_id: str | None = None, slots: Slots | None = None) -> None:
        self.config = config
        self.dialect = dialect
        self._receive = receive
        self._send = send
        self._ending: asyncio.Future[Ending] = asyncio.get_running_loop().create_future()
        self.outbox = Outbox(send, max_messages=config.send_queue_messages, max_chars=config.send_queue_chars,
                             on_overflow=self._overflowed)
        self.rpc = RpcConnection(server, self.outbox.put, with_version=dialect.with_version,
                                 require_jsonrpc=dialect.require_jsonrpc, max_in_flight=config.max_in_flight,
                                 peer_timeout_s=config.client_request_timeout_s, client_id=client_id,
                                 transport="ws", slots=slots)
        self.session_id = self.rpc.session_id
        self.received = 0
        """Messages read from the client, for `activity`."""
        self.stopping = False
        self.ended: Ending | None = None
        self.done = asyncio.Event()

    async def run(self) -> None:
        """Accept, serve until one of the endings, close. Returns when the socket is finished with."""
        with structlog.contextvars.bound_contextvars(sessionId=self.session_id):
            await self._send({"type": "websocket.accept", "subprotocol": self.dialect.subprotocol,
                              "headers": [(SESSION_HEADER, self.session_id.encode())]})
            log.info("websocket session started", dialect=self.dialect.name)
            writer = asyncio.ensure_future(self.outbox.run())
            writer.add_done_callback(self._writer_done)
            reader = asyncio.ensure_future(self._read())
            reader.add_done_callback(self._reader_done)
            try:
                self.ended = await self._ending
                reader.cancel()
                await self._finish(self.ended, writer)
            finally:
                reader.cancel()
                writer.cancel()
                self.done.set()
            code = None if self.ended.code is None else int(self.ended.code)
            log.info("websocket session ended", code=code, reason=self.ended.reason)

    async def shutdown(self, grace_s: float) -> None:
        """Refuse new requests, let those in flight finish (up to `grace_s`), then close with 1001."""
        self.stopping = True
        try:
            await asyncio.wait_for(self.rpc.drain(), grace_s)
        except TimeoutError:
            log.warning("in-flight requests cancelled at shutdown", sessionId=self.session_id,
                        inFlight=self.rpc.in_flight)
        self._decide(Ending(CloseCode.GOING_AWAY, "server shutting down"))
        await self.done.wait()

    # --- as a place held open (`held_open.Holder`) ------------------------------------------------

    def idle(self) -> bool:
        """No request in flight (a call waiting on the client's sampling answer is one): closing it cuts off nothing."""
        return self.rpc.in_flight == 0

    def activity(self) -> int:
        """Messages sent and read: a client that only sends notifications (progress, cancellations, roots
        changed) is as active as one that asks, and so is one that only receives what it subscribed to."""
        return self.outbox.sent + self.received

    def let_go(self, reason: str, *, idle: bool) -> None:
        """Close with 1000 (idle) or 1013 (try again later: made room for another client), saying why."""
        code = CloseCode.NORMAL if idle else CloseCode.TRY_AGAIN_LATER
        self._decide(Ending(code, reason.encode()[:MAX_REASON_BYTES].decode(errors="ignore")))

    # --- reading ---------------------------------------------------------------------------------

    async def _read(self) -> None:
        while True:
            message = await self._receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                if message.get("code") == CloseCode.MESSAGE_TOO_BIG:  # uvicorn closed it at ws_max_size, unread
                    self.rpc.refused_unanswered(ErrorCode.PAYLOAD_TOO_LARGE,
                                                f"message larger than {self.config.max_frame_bytes} bytes")
                self._decide(Ending(None, f"client closed ({message.get('code')})"))
                return
            if kind != "websocket.receive":
                continue
            self.received += 1
            text = message.get("text")
            if text is None:
                await self.rpc.refuse(None, ErrorCode.INVALID_REQUEST,
                                      "Invalid request: binary frames are not accepted; send each JSON message as text")
                continue
            if _too_big(text, self.config.max_frame_bytes):
                reason = f"message larger than {self.config.max_frame_bytes} bytes"
                refused = self.rpc.refused_unanswered(ErrorCode.PAYLOAD_TOO_LARGE, reason)  # logged and audited
                self._decide(Ending(CLOSE_CODES[ErrorCode.PAYLOAD_TOO_LARGE], _quoting(refused)))  # the close says why
                return
            await self._handle_text(text)

    async def _handle_text(self, text: str) -> None:
        try:
            value = jsonrpc.decode(text)
        except ValueError as exc:  # not JSON (-32700), or a number out of range (-32600/-32602)
            request_id, code, text_of, data = jsonrpc.decode_refusal(exc)
            await self.rpc.refuse(request_id, code, text_of, data)
            return
        if isinstance(value, list) and self.stopping:
            await self.rpc.refuse(None, ErrorCode.SERVER_BUSY, "The server is shutting down; reconnect and retry")
            return
        # An array is a JSON-RPC batch: RpcConnection serves it where the negotiated version has batches
        # (2025-03-26 says receivers MUST take them, whatever the transport) and refuses it elsewhere.
        if self.stopping:
            message = jsonrpc.classify(value, require_jsonrpc=self.dialect.require_jsonrpc)
            if isinstance(message, jsonrpc.Request):
                await self.rpc.refuse(message.id, ErrorCode.SERVER_BUSY,
                                      "The server is shutting down; reconnect and retry")
                return
        await self.rpc.receive(value)

    # --- ending ----------------------------------------------------------------------------------

    def _decide(self, ending: Ending) -> None:
        if not self._ending.done():
            self._ending.set_result(ending)

    def _overflowed(self) -> None:
        if self._ending.done():
            return
        reason = f"send queue full ({self.config.send_queue_messages} messages): the client is not reading"
        self._decide(Ending(CLOSE_CODES[ErrorCode.SERVER_BUSY], _quoting(self.rpc.refused_unanswered(
            ErrorCode.SERVER_BUSY, reason))))

    def _reader_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            event_id = new_event_id()
            log.error("websocket reader failed", eventId=event_id, exc_info=task.exception())
            self._decide(Ending(CLOSE_CODES[ErrorCode.INTERNAL_ERROR], f"internal error; quote eventId {event_id}"))

    def _writer_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled():
            self._decide(Ending(None, "the transport refused a write (client gone)"))

    async def _finish(self, ending: Ending, writer: asyncio.Task[None]) -> None:
        if ending.code is CloseCode.GOING_AWAY:
            # Requests already received were answered (shutdown() drained them): deliver those answers.
            await _within(self.config.close_timeout_s, self.outbox.flushed())
        self.outbox.close()
        writer.cancel()
        await self.rpc.close()  # cancels what is still running; pending client requests fail
        if ending.code is not None:
            await _within(self.config.close_timeout_s,
                          self._send({"type": "websocket.close", "code": int(ending.code), "reason": ending.reason}))


def _quoting(refused: Rejection) -> str:
    """A close reason naming the eventId its log line carries (as the internal-error close does); a close
    reason holds at most 123 bytes, and these are ASCII well under it."""
    return f"{refused.message}; quote eventId {refused.event_id}"


def _too_big(text: str, limit: int) -> bool:
    # A character is 1 to 4 UTF-8 bytes: most frames are decided without encoding them again.
    if len(text) > limit:
        return True
    if len(text) * 4 <= limit:
        return False
    return len(text.encode()) > limit


async def _within(seconds: float, work: Any) -> None:
    """Await `work`, giving up after `seconds` or if the client is gone (then nothing more can be sent)."""
    try:
        async with asyncio.timeout(seconds):
            await work
    except Exception:  # TimeoutError, or uvicorn's ClientDisconnected: the socket is beyond help
        pass
