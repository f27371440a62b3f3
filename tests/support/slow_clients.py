"""Slowloris clients: many connections that each trickle a request head and never finish it.

Each `SlowHead` sends a request line, then one more header line every `trickle_s`, and records what
the server answered (nothing, for a connection closed by the head deadline; a whole 503 for one
refused at a cap) and how long the connection lived. Used by the tests and by bench/slowloris.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import AsyncIterator

import attrs

TRICKLE_S = 0.5


@attrs.define
class SlowHead:
    opened_at: float
    closed_at: float | None = None
    answer: bytes = b""

    @property
    def lifetime_s(self) -> float:
        assert self.closed_at is not None, "the connection is still open"
        return self.closed_at - self.opened_at


@attrs.define
class SlowHeads:
    heads: list[SlowHead]
    tasks: list[asyncio.Task[None]]

    async def until_all_closed(self, *, timeout_s: float) -> None:
        """Wait for the server to close every connection; TimeoutError names how many it left open."""
        done, pending = await asyncio.wait(self.tasks, timeout=timeout_s)
        if pending:
            raise TimeoutError(f"{len(pending)} of {len(self.tasks)} slow connections still open after {timeout_s} s")


async def _trickle(writer: asyncio.StreamWriter, host: str) -> None:
    with contextlib.suppress(OSError):
        writer.write(f"GET /health HTTP/1.1\r\nHost: {host}\r\n".encode())
        while True:
            await asyncio.sleep(TRICKLE_S)
            writer.write(b"X-Slow: 1\r\n")
            await writer.drain()


async def _hold(head: SlowHead, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
    trickle = asyncio.create_task(_trickle(writer, host))
    try:
        while chunk := await reader.read(65536):
            head.answer += chunk
    except OSError:  # a reset is a close too (the server closed with our trickle unread)
        pass
    finally:
        head.closed_at = time.monotonic()
        trickle.cancel()
        writer.close()


@contextlib.asynccontextmanager
async def open_slow_heads(host: str, port: int, count: int, *, local_host: str | None = None) -> AsyncIterator[SlowHeads]:
    """Open `count` slow connections (all connected when the block starts); cancel what is left at its end.
    `local_host`: the address they come from (127.0.0.2, say: another client than the one measuring)."""
    heads: list[SlowHead] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        for _ in range(count):
            # Timed from before the connect: the server's deadline starts when it accepts, which can be
            # well before this busy client gets back to the connection it opened.
            opened_at = time.monotonic()
            reader, writer = await asyncio.open_connection(
                host, port, local_addr=(local_host, 0) if local_host else None)
            head = SlowHead(opened_at=opened_at)
            heads.append(head)
            tasks.append(asyncio.create_task(_hold(head, reader, writer, host)))
        yield SlowHeads(heads, tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
