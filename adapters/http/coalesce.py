"""One system call per response: a transport wrapper that joins writes per event-loop pass.

uvicorn writes a response's head when the app sends `http.response.start` and its body on
`http.response.body`: two `send()` calls on the socket for every JSON answer. On loopback each costs
about as much as the protocol work for a trivial tool. `CoalescingTransport` holds what is written
during one pass of the event loop and hands it to the socket as one write at the end of the pass, so
head and body leave together (SSE events written in one pass are joined the same way). Anything that
ends the connection flushes first, so no byte is lost or reordered, and more than `FLUSH_AT` bytes held
are written at once, so a large or fast producer still meets the transport's flow control.
uvicorn's protocol is put on it in `adapters/http/uvicorn_fence.py`, which owns this reliance on how uvicorn writes.

The end of the pass is one callback per loop (`PassFlush`), not one per transport: under load a pass
answers many connections, and a callback scheduled and run for each of them cost more than the joining.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

FLUSH_AT = 64 * 1024


class PassFlush:
    """One event loop's end-of-pass flush: the transports that held writes during a pass, flushed by one
    callback scheduled when the first of them wrote."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # the table below is keyed by the loop: no strong reference back
        self._due: list[CoalescingTransport] = []

    def add(self, transport: CoalescingTransport) -> None:
        if not self._due:
            loop = self._loop()
            assert loop is not None  # a transport being written to keeps its loop alive
            loop.call_soon(self._run)
        self._due.append(transport)

    def _run(self) -> None:
        due, self._due = self._due, []
        for transport in due:
            try:
                transport.flush()
            except Exception as error:  # as the loop reports a failing callback; the others still flush
                loop = self._loop()
                if loop is not None:
                    loop.call_exception_handler({"message": "flushing a coalesced write failed",
                                                 "exception": error, "transport": transport})


_PASS_FLUSHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PassFlush] = weakref.WeakKeyDictionary()


def pass_flush(loop: asyncio.AbstractEventLoop) -> PassFlush:
    """The loop's `PassFlush` (made on first use)."""
    found = _PASS_FLUSHES.get(loop)
    if found is None:
        found = _PASS_FLUSHES[loop] = PassFlush(loop)
    return found


class CoalescingTransport:
    """Wraps a transport; `write` is deferred to the end of the loop pass, everything else passes through."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._pass = pass_flush(loop)
        self._held: list[bytes] = []
        self._held_bytes = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._pass.add(self)
        chunk = bytes(data)
        self._held.append(chunk)
        self._held_bytes += len(chunk)
        if self._held_bytes >= FLUSH_AT:
            self.flush()

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._held:
            data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
            self._held.clear()
            self._held_bytes = 0
            if not self._transport.is_closing():
                self._transport.write(data)

    def is_closing(self) -> bool:  # uvicorn asks after every response: spared the __getattr__ detour
        return self._transport.is_closing()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._held_bytes

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held.clear()
        self._held_bytes = 0
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
