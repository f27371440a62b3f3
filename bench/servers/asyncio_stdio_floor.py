"""The floor under an asyncio stdio server: the orjson ceiling's work, served the way an event loop must.

What `hexmcp stdio` does per request minus MCP: uvloop, stdin read by a protocol's callback, each request
served in a task of its own (so a slow one never blocks the next: ADR 0004), the answer written to a
pipe transport. No validation, lifecycle, logging or core. Against `orjson_stdio_loop.py` (a blocking
loop) it shows what the event loop and the task per request cost by themselves; what `hexmcp stdio`
costs above this floor is its own work (ADR 0411).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import orjson
import uvloop

from bench.servers.orjson_stdio_loop import answer_line


class _Lines(asyncio.Protocol):
    def __init__(self, out: asyncio.WriteTransport, done: asyncio.Future[None]) -> None:
        self._out, self._done, self._buffer = out, done, b""
        self._tasks: set[asyncio.Task[None]] = set()

    def data_received(self, data: bytes) -> None:
        *lines, self._buffer = (self._buffer + data).split(b"\n")
        loop = asyncio.get_running_loop()
        for line in lines:
            task = loop.create_task(self._serve(line))
            self._tasks.add(task)

    async def _serve(self, line: bytes) -> None:
        try:
            answer = answer_line(orjson.loads(line))
            if answer is not None:
                self._out.write(answer)
        finally:
            self._tasks.discard(asyncio.current_task())  # type: ignore[arg-type]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._done.done():
            self._done.set_result(None)


async def serve() -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(1, "wb", buffering=0, closefd=False))
    await loop.connect_read_pipe(lambda: _Lines(out, done), os.fdopen(0, "rb", buffering=0, closefd=False))  # type: ignore[arg-type]
    await done


def main() -> int:
    uvloop.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
