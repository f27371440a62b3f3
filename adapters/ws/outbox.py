"""The bounded send queue between a socket's producers (request tasks, the core's Peer) and the wire.

Producers never wait: `put` serialises the message and queues it, or — when the client has let the
queue fill up — drops it and reports the overflow once, so the connection can close with 1013. One
writer task drains the queue into ASGI `websocket.send`; that call blocks while the socket's buffer is
full (uvicorn pauses on the transport's high-water mark), which is exactly what lets the queue fill.
Memory per connection is therefore bounded by this queue plus the transport buffer, whatever the
client does.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any, Callable

from hexmcp.core.json_encoder import dumps

from ..http.asgi import Send


class Outbox:
    def __init__(self, send: Send, *, max_messages: int, max_chars: int, on_overflow: Callable[[], None]) -> None:
        self._send = send
        self._max_messages = max_messages
        self._max_chars = max_chars
        self._on_overflow = on_overflow
        self._queue: collections.deque[str] = collections.deque()
        self._chars = 0
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.closed = False
        self.sent = 0
        self._waiting = False  # the writer is in `send`: if that outlasts a put, the transport pushed back

    async def put(self, message: Any) -> None:
        """Queue one message (the `send` coroutine RpcConnection calls); never blocks."""
        if self.closed:
            return
        text = dumps(message).decode()
        # A lone message larger than the character bound still goes out: the bound is for backlog. The count
        # bound is for a client that does not read, which is when the writer waits in `send` (uvicorn's send
        # returns at once while the transport takes writes); a backlog built before the writer has run (a
        # burst of pipelined requests answered in one pass of the loop) is bounded by characters only.
        if self._queue and ((self._waiting and len(self._queue) >= self._max_messages)
                            or self._chars + len(text) > self._max_chars):
            self.closed = True
            self._queue.clear()
            self._chars = 0
            self._on_overflow()
            return
        self._queue.append(text)
        self._chars += len(text)
        self._idle.clear()
        self._ready.set()

    async def run(self) -> None:
        """The writer task: until cancelled, or until the transport raises (the client is gone)."""
        while True:
            if not self._queue:
                self._idle.set()
                self._ready.clear()
                await self._ready.wait()
                continue
            text = self._queue.popleft()
            self._chars -= len(text)
            self._waiting = True
            try:
                await self._send({"type": "websocket.send", "text": text})
            finally:
                self._waiting = False
            self.sent += 1

    async def flushed(self) -> None:
        """Wait until everything queued so far has been handed to the transport."""
        await self._idle.wait()

    def close(self) -> None:
        """Accept nothing more (what is queued is dropped if the writer is stopped)."""
        self.closed = True
