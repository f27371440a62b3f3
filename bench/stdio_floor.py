"""Floors under any MCP client over stdio, on the same server program, with nothing parsed or correlated.

- `blocking_pipe`: one echo `tools/call` written to the server's stdin per call, its answer line read
  back with a buffered blocking readline: no event loop at all. The call is a coroutine only to fit
  bench/client.py's `call(text) -> awaitable` shape: it never awaits, so it always runs one call in
  flight whatever `--concurrency` says. What is under it is the server's and the pipes' cost.
- `asyncio_pipe`: the least an asyncio client can do: the server's stdout watched with `add_reader`,
  one `os.write` and one future per call, resolved by the reader callback when a whole line has come
  (two event-loop turns a call, as hexmcp.client's stdio wire takes). One call in flight (a lock), since
  it reads no ids. What is between it and `blocking_pipe` is the event loop's cost, paid by every
  asyncio client; what is between hexmcp.client and it is the client's own work.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
from typing import Any, AsyncIterator, Iterator, Sequence

from hexmcp.core import versions


def _line(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"


def _echo(text: str) -> bytes:
    return _line(1, "tools/call", {"name": "echo", "arguments": {"text": text}})


@contextlib.contextmanager
def _initialized(command: Sequence[str]) -> Iterator[tuple[Any, io.BufferedReader]]:
    """The server process after the handshake: its stdin (unbuffered) and a buffered reader of its stdout."""
    process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, io.BufferedReader(process.stdout, 1 << 16)
    try:
        stdin.write(_line(0, "initialize", {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
                                            "clientInfo": {"name": "bench-floor", "version": "1"}}))
        if b'"result"' not in stdout.readline():
            raise RuntimeError("the server refused the floor's initialize")
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        yield stdin, stdout
    finally:
        stdin.close()
        process.wait(timeout=10)


@contextlib.asynccontextmanager
async def blocking_pipe(command: Sequence[str]) -> AsyncIterator[Any]:
    with _initialized(command) as (stdin, stdout):
        async def call(text: str) -> bytes:
            stdin.write(_echo(text))
            return stdout.readline()

        yield call


@contextlib.asynccontextmanager
async def asyncio_pipe(command: Sequence[str]) -> AsyncIterator[Any]:
    with _initialized(command) as (stdin, stdout):
        loop = asyncio.get_running_loop()
        read_fd, write_fd = stdout.fileno(), stdin.fileno()  # the handshake's answer was the last buffered line
        os.set_blocking(read_fd, False)
        one_in_flight = asyncio.Lock()
        waiting: list[asyncio.Future[bytes]] = []
        received = bytearray()

        def readable() -> None:
            received.extend(os.read(read_fd, 1 << 16))
            if received.endswith(b"\n") and waiting:
                waiting.pop().set_result(bytes(received))
                received.clear()

        async def call(text: str) -> bytes:
            async with one_in_flight:
                answer = loop.create_future()
                waiting.append(answer)
                os.write(write_fd, _echo(text))
                return await answer

        loop.add_reader(read_fd, readable)
        try:
            yield call
        finally:
            loop.remove_reader(read_fd)
            os.set_blocking(read_fd, True)
