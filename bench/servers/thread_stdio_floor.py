"""The asyncio floor's work answered by a blocking reader thread beside an idle event loop.

The shape a "reader thread answers synchronous requests inline" stdio adapter would have, minus MCP:
uvloop runs in the main thread (where async work would go) and sleeps in epoll_wait; a second thread
blocks in stdin's readline, answers each line with the orjson loop's work and writes the answer itself
under a lock. Against `orjson_stdio_loop.py` and `asyncio_stdio_floor.py` it shows whether such a
design gets the blocking loop's sequential round trip on this VM (bench/stdio_wakeup.py --product).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import orjson
import uvloop

from bench.servers.orjson_stdio_loop import answer_line


def _read_and_answer(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None], lock: threading.Lock) -> None:
    read = sys.stdin.buffer.readline
    try:
        while line := read():
            answer = answer_line(orjson.loads(line))
            if answer is not None:
                with lock:  # the event loop's own answers would take the same lock
                    os.write(1, answer)
    finally:
        loop.call_soon_threadsafe(done.set_result, None)


async def serve() -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    threading.Thread(target=_read_and_answer, args=(loop, done, threading.Lock()), daemon=True).start()
    await done


def main() -> int:
    uvloop.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
