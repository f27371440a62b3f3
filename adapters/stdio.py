"""MCP over stdio: newline-delimited JSON-RPC 2.0 on stdin/stdout.

stdout belongs to the protocol. At start the real stdout is duplicated to a private descriptor for
the wire, and fd 1 is pointed at stderr, so a stray `print` or a native library's logging (onnxruntime
writes from C++) lands in stderr instead of corrupting the stream. EOF on stdin (or SIGTERM) stops
reading; requests already received are still answered (an open subscriptions/listen with its result)
before the process exits 0 (1 if a start-up hook failed). `run_stdio` is the
blocking entry point, on uvloop when it is installed.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import stat
import sys
import threading
from typing import Any, Awaitable, Callable, Sequence

import structlog

from hexmcp.core import ErrorCode, McpServer, new_event_id

from . import jsonrpc
from .lines import LineSplitter
from .rpc_connection import RpcConnection
from .startup import ExitCode

log = structlog.get_logger("hexmcp.adapters.stdio")

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
_CHUNK = 1 << 16
_HIGH_WATER = 1 << 20
# How long the last answers may wait at exit for a client that has stopped reading stdout.
_FLUSH_TIMEOUT_S = 60.0


def claim_stdout() -> int:
    """Return a private descriptor for the protocol and send everything else written to fd 1 to stderr."""
    sys.stdout.flush()
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return wire_fd


class _WireWriter:
    """Writes whole messages to the wire descriptor, asynchronously when it is a pipe.

    A message written when the wire has been quiet goes out at once (a lone answer waits for nothing);
    messages that follow within the same event-loop pass are held and joined into one write at the end
    of the pass, so under pipelined load many answers cost one system call.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._writer: asyncio.StreamWriter | None = None
        self._pending: list[bytes] = []
        self._window_open = False

    async def open(self) -> None:
        if _pollable(self._fd):
            loop = asyncio.get_running_loop()
            pipe = os.fdopen(self._fd, "wb", buffering=0, closefd=False)
            # FlowControlMixin is not exported, but it is the protocol StreamWriter.drain() needs (pause and
            # resume writing, `_drain_helper`); tests/adapters/test_uvicorn_contract.py checks it is still so.
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
            self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def send(self, message: Any) -> None:
        data = jsonrpc.dumps(message) + b"\n"
        writer = self._writer
        if writer is None:
            os.write(self._fd, data)
            return
        if writer.transport.is_closing():
            return  # the client went away; reading will hit EOF and we shut down
        if self._window_open:
            self._pending.append(data)
        else:
            writer.write(data)
            self._window_open = True
            asyncio.get_running_loop().call_soon(self._end_of_pass)
        if writer.transport.get_write_buffer_size() > _HIGH_WATER:
            try:
                await writer.drain()  # a client that does not read slows us down, not our memory
            except (ConnectionError, BrokenPipeError):
                pass

    def _end_of_pass(self) -> None:
        if self._pending and self._writer is not None and not self._writer.transport.is_closing():
            self._writer.write(b"".join(self._pending))
            self._pending.clear()
            asyncio.get_running_loop().call_soon(self._end_of_pass)  # keep joining while the burst lasts
            return
        self._pending.clear()
        self._window_open = False

    async def close(self) -> None:
        """Flushes every answer before returning: the process exits right after, and bytes still in the
        transport's buffer would be lost to a client that reads late."""
        if self._writer is None:
            return
        transport = self._writer.transport
        if self._pending and not transport.is_closing():
            self._writer.write(b"".join(self._pending))
            self._pending.clear()
        # With a zero high-water mark, drain() returns only once the buffer is empty.
        transport.set_write_buffer_limits(high=0)
        try:
            await asyncio.wait_for(self._writer.drain(), _FLUSH_TIMEOUT_S)
        except (ConnectionError, BrokenPipeError):
            pass  # the client closed its end: nobody to answer
        except TimeoutError:
            log.warning("client did not read its last answers; dropped them at exit",
                        unsent_bytes=transport.get_write_buffer_size(), waited_s=_FLUSH_TIMEOUT_S)
        self._writer.close()


def _readable_now(fd: int) -> bool:
    """Whether reading `fd` would return at once: input, or EOF, is already there."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def _pollable(fd: int) -> bool:
    """Pipes and sockets only. A character device may refuse epoll (/dev/null does, with EPERM), and
    uvloop then aborts the whole process; terminals and devices take the blocking paths, which cost
    nothing measurable there."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _open_reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK * 4)
    if _pollable(fd):
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        return reader

    def pump() -> None:  # files and devices (hexmcp stdio < requests.jsonl, < /dev/null) cannot be watched
        while chunk := os.read(fd, _CHUNK):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="stdin-reader", daemon=True).start()
    return reader


async def serve_stdio(server: McpServer, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                      stdin_fd: int = 0, wire_fd: int | None = None,
                      on_startup: Sequence[Callable[[], Awaitable[None]]] = ()) -> int:
    """Serve one client on stdin/stdout until EOF; returns the process exit code.

    `on_startup` hooks (loading a model, say) run in the background while the session is served;
    one that fails is logged, ends the session as EOF would (requests already read are answered) and
    makes the exit code ExitCode.FAILED_AFTER_START: a host then sees the server exit, not hang.
    """
    splitter = LineSplitter(max_message_bytes)  # first: a nonsensical limit fails before anything starts
    if wire_fd is None:
        wire_fd = claim_stdout()
    writer = _WireWriter(wire_fd)
    await writer.open()
    jsonrpc.install_task_errors(server)  # once per server, as the HTTP and WebSocket entry points do
    connection = RpcConnection(server, writer.send, transport="stdio")
    input_waiting = _readable_now(stdin_fd)
    reader = await _open_reader(stdin_fd)
    stop = asyncio.Event()
    _on_sigterm(stop)
    log.info("stdio session started", sessionId=connection.session_id, pid=os.getpid())
    failed: list[BaseException] = []
    background: list[asyncio.Future[None]] = []

    def start_background() -> None:
        if not background:
            background.extend(asyncio.ensure_future(_watched(hook, failed, stop)) for hook in on_startup)

    async def pump_lines() -> None:
        while chunk := await reader.read(_CHUNK):
            lines, oversize = splitter.feed(chunk)
            for _ in range(oversize):
                await connection.refuse(None, ErrorCode.PAYLOAD_TOO_LARGE,
                                        f"Message too large: the limit is {max_message_bytes} bytes")
            for line in lines:
                if line.strip():
                    await connection.receive_raw(line)
            start_background()
        last = splitter.finish()
        if last is not None:
            await connection.receive_raw(last)

    reading = asyncio.ensure_future(pump_lines())
    # A host writes `initialize` as soon as it has spawned us, so by now it is usually waiting in the
    # pipe. The hooks (a model load, an index build) then start once that input is handled, the
    # handshake answered inline with it (RpcConnection), so their imports and threads never compete
    # with it and the answer goes out before any of them ran (ADR 0011; tests/adapters/test_cli_startup.py).
    # With nothing waiting they start at once: a silent client must not keep a failing hook from
    # ending the process.
    if not input_waiting:
        start_background()
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not reading.done():
        reading.cancel()
    # Nothing more will be read: fail what waits for the client's answers, end listens with their result,
    # answer the rest.
    connection.input_ended()
    await connection.drain()
    for task in background:
        task.cancel()
    await connection.close()
    await writer.close()
    log.info("stdio session ended", sessionId=connection.session_id)
    return ExitCode.FAILED_AFTER_START if failed else ExitCode.OK


async def _watched(hook: Callable[[], Awaitable[None]], failed: list[BaseException], stop: asyncio.Event) -> None:
    try:
        await hook()
    except asyncio.CancelledError:
        raise
    except Exception as error:
        log.exception("background start-up task failed; ending the session", eventId=new_event_id())
        failed.append(error)
        stop.set()


def run_stdio(server: McpServer, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, stdin_fd: int = 0,
              wire_fd: int | None = None, on_startup: Sequence[Callable[[], Awaitable[None]]] = ()) -> int:
    """Serve one client on stdin/stdout until EOF (blocking); returns the process exit code.

    uvloop, when installed, costs less per message than the stdlib loop (pipe reads and writes, task
    switches), for a small price in start-up time (ADR 0008 keeps the figures).
    """
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        return runner.run(serve_stdio(server, max_message_bytes=max_message_bytes, stdin_fd=stdin_fd,
                                      wire_fd=wire_fd, on_startup=on_startup))


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _on_sigterm(stop: asyncio.Event) -> None:
    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    except (NotImplementedError, RuntimeError):
        pass
