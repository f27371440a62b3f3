"""Server-Sent Events: one stream's framing, numbering, replay buffer, and the JSON-or-SSE reply.

`EventStream` owns one SSE stream. On handshake versions it is resumable: every event gets an id
`<stream>_<seq>`, the last `replay` events are kept, and a GET with `Last-Event-ID` re-attaches a new
connection to the stream (replaying what was missed, then continuing live). On 2026-07-28 streams are
not resumable: no ids, nothing kept.

`Reply` is where one POST's answer goes. It starts as a plain JSON response and becomes an SSE stream
the moment something must be sent before the result (a progress or log notification, a server-to-client
request), or at once when the client accepts only SSE.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from typing import Any, Callable, Sequence

from hexmcp.wire import jsonrpc

from .asgi import RawHeaders, Send
from .replay import KeptEvent, SessionReplay
from .request_headers import JSON, SSE

SSE_HEADERS: RawHeaders = [(b"content-type", SSE), (b"cache-control", b"no-cache, no-transform"),
                           (b"x-accel-buffering", b"no")]
KEEPALIVE = b": keepalive\n\n"
# An event id as `EventStream` writes it: ASCII digits only, and few of them. `str.isdigit` also accepts
# '²' or '٣' (which `int` then refuses), and `int` refuses strings of more than 4300 digits.
EVENT_ID = re.compile(rb"([0-9]{1,10})_([0-9]{1,18})")


def event_position(raw: bytes) -> tuple[str, int] | None:
    """(stream id, sequence number) from a `Last-Event-ID` value, None when it is not an id we could
    have sent (the caller answers 400: a resumption it cannot honour is not silently a new stream)."""
    match = EVENT_ID.fullmatch(raw.strip(b" \t"))
    if match is None:
        return None
    return match.group(1).decode("ascii"), int(match.group(2))


class EventStream:
    def __init__(self, stream_id: str | None, *, replay: int = 0, retry_ms: int | None = None,
                 account: SessionReplay | None = None) -> None:
        self.stream_id = stream_id  # None: not resumable
        self._retry_ms = retry_ms
        self._seq = 0  # events framed so far, resumable or not
        self._replay = replay
        self._account = account  # bytes kept are counted there (`replay.py`); None: only `replay` events bound them
        self._kept: deque[tuple[int, bytes, KeptEvent | None]] = deque()
        self._send: Send | None = None
        self._lock = asyncio.Lock()
        self.finished = asyncio.Event()
        self.replaced = asyncio.Event()
        """Set when a resumer takes the stream over from the connection attached so far (a fresh event
        for each connection): that connection's holder lets go, so a stream keeps one connection open."""

    @property
    def attached(self) -> bool:
        return self._send is not None

    @property
    def events(self) -> int:
        """Events written so far: what the idle timeout watches (`held_streams.py`)."""
        return self._seq

    def _frame(self, data: bytes, *, priming: bool = False) -> bytes:
        self._seq += 1
        if self.stream_id is None:
            return b"event: message\ndata: " + data + b"\n\n"
        head = f"id: {self.stream_id}_{self._seq}\n".encode()
        if priming and self._retry_ms is not None:
            head += f"retry: {self._retry_ms}\n".encode()
        frame = head + b"event: message\ndata: " + data + b"\n\n"
        self._keep(self._seq, frame)
        return frame

    def _keep(self, seq: int, frame: bytes) -> None:
        """Keep `frame` for a resumer, within the stream's event count and its account's byte caps."""
        if self._replay <= 0:
            return
        if len(self._kept) >= self._replay:
            self._uncount(self._kept.popleft()[2])
        if self._account is None:
            self._kept.append((seq, frame, None))
            return
        event = self._account.keep(self, len(frame))
        if event is not None:  # None: larger than a cap allows; it went out live, it is not kept
            self._kept.append((seq, frame, event))

    def forget(self, event: KeptEvent) -> None:
        """Drop a kept event the ledger evicted (the oldest kept, as a rule)."""
        if self._kept and self._kept[0][2] is event:
            self._kept.popleft()
            return
        for index, (_, _, kept) in enumerate(self._kept):
            if kept is event:
                del self._kept[index]
                return

    def forget_all(self) -> None:
        """The stream is no longer resumable (dropped by its session): give back what it kept."""
        for _, _, event in self._kept:
            self._uncount(event)
        self._kept.clear()

    def _uncount(self, event: KeptEvent | None) -> None:
        if event is not None and self._account is not None:
            self._account.release(event)

    async def open(self, send: Send, headers: RawHeaders, *, status: int = 200, priming: bool = False) -> None:
        """Start the HTTP response on `send` and attach it. A priming event (id, retry, empty data) lets
        a 2025-11-25 client resume even if the stream breaks before the first real event."""
        async with self._lock:
            await send({"type": "http.response.start", "status": status, "headers": [*SSE_HEADERS, *headers]})
            self._send = send
            if priming and self.stream_id is not None:
                await self._write_raw(self._frame(b"", priming=True))

    async def attach(self, send: Send, headers: RawHeaders, after: int) -> None:
        """Resume on a new connection: replay the kept events after `after`, then carry on live."""
        async with self._lock:
            if self._send is not None:
                # Resuming the same stream again and again must not stack up connections, each held open
                # for the stream's life: the one attached so far is ended, and its holder told to let go.
                await self._end()
                self.replaced.set()
                self.replaced = asyncio.Event()
            await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]})
            self._send = send
            for seq, frame, _ in list(self._kept):
                if seq > after:
                    await self._write_raw(frame)
            if self.finished.is_set():
                await self._end()

    async def write(self, message: Any) -> None:
        async with self._lock:
            frame = self._frame(jsonrpc.dumps(message))
            await self._write_raw(frame)

    async def comment(self, text: bytes = KEEPALIVE) -> None:
        async with self._lock:
            await self._write_raw(text)

    async def close(self) -> None:
        """The stream has said everything: end the attached response (a resumer still gets the replay)."""
        async with self._lock:
            self.finished.set()
            await self._end()

    async def let_go(self, send: Send) -> None:
        """End the response attached on `send`, if it still is, and tell its holder to let go (`replaced`), as
        a resumption does; the stream itself goes on, kept for the client to resume (fair share, idle timeout)."""
        async with self._lock:
            if self._send is send:
                await self._end()
                self.replaced.set()
                self.replaced = asyncio.Event()

    def detach(self, send: Send) -> None:
        if self._send is send:
            self._send = None

    def knows(self, seq: int) -> bool:
        return 0 <= seq <= self._seq

    async def _write_raw(self, frame: bytes) -> None:
        if self._send is not None:
            try:
                await self._send({"type": "http.response.body", "body": frame, "more_body": True})
            except Exception:  # the connection went away; keep the events for a resumer
                self._send = None

    async def _end(self) -> None:
        send, self._send = self._send, None
        if send is not None:
            try:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except Exception:
                pass


class Reply:
    """One POST's response: JSON unless something has to be streamed first (or the client wants SSE)."""

    def __init__(self, send: Send, headers: RawHeaders, make_stream: Callable[[], EventStream],
                 priming: bool = False, json_ok: bool = True) -> None:
        self._send = send
        self._headers = headers
        self._make_stream = make_stream
        self._priming = priming
        self.json_ok = json_ok
        self.stream: EventStream | None = None

    @property
    def streaming(self) -> bool:
        return self.stream is not None

    async def start_stream(self) -> EventStream:
        if self.stream is None:
            stream = self._make_stream()
            self.stream = stream
            await stream.open(self._send, self._headers, priming=self._priming)
        return self.stream

    async def emit(self, message: dict[str, Any]) -> None:
        """Something for the client before the result: switches the reply to SSE on first use."""
        stream = self.stream or await self.start_stream()
        await stream.write(message)

    async def finish(self, message: Any, status: int = 200, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
        """`headers`: for this answer only (a `Retry-After`), sent only when it is a JSON response."""
        if self.stream is None and self.json_ok:
            body = jsonrpc.dumps(message)
            await self._send({"type": "http.response.start", "status": status,
                              "headers": [(b"content-type", JSON), (b"content-length", str(len(body)).encode()),
                                          *self._headers, *headers]})
            await self._send({"type": "http.response.body", "body": body})
            return
        stream = self.stream or await self.start_stream()
        await stream.write(message)
        await stream.close()

    async def finish_many(self, messages: list[Any]) -> None:
        """A batch's answers: one JSON array, or one event each on an SSE stream."""
        if self.stream is None and self.json_ok:
            await self.finish(messages)
            return
        stream = self.stream or await self.start_stream()
        for message in messages:
            await stream.write(message)
        await stream.close()
