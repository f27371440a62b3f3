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
import collections
import contextvars
import functools
import os
import select
import signal
import stat
import sys
import threading
from typing import Any, Awaitable, Callable, Sequence

import structlog

from hexmcp.core import ErrorCode, McpServer, new_event_id
from hexmcp.wire import jsonrpc
from hexmcp.wire.lines import LineSplitter

from ..rpc_connection import DEFAULT_MAX_BATCH_MESSAGES, RpcConnection
from ..standard_fds import fill_closed_standard_fds
from .printed_lines import print_to_log
from hexmcp.core.startup import ExitCode

log = structlog.get_logger("hexmcp.adapters.stdio")

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
_CHUNK = 1 << 16
_HIGH_WATER = 1 << 20
_LANE_HIGH_WATER = 1024  # lines waiting for the ordered lane before stdin stops being read
# How long the last answers may wait at exit for a client that has stopped reading stdout.
_FLUSH_TIMEOUT_S = 60.0
_SIGTERM_GRACE_S = 10.0  # what `hexmcp serve` gives requests in flight at SIGTERM by default (--drain-timeout)


def claim_stdout() -> int:
    """Return a private descriptor for the protocol and send everything else written to fd 1 to stderr."""
    if sys.stdout is not None:
        sys.stdout.flush()
    fill_closed_standard_fds()
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    print_to_log()  # Python's prints become log lines (printed_lines.py); fd 1 itself now writes to stderr
    return wire_fd


class _WireWriter:
    """Writes whole messages to the wire descriptor, asynchronously when it is a pipe.

    An answer goes out at once, in one write. When the reader starts several requests from one read
    (a pipelined client), it announces the burst (`expect_burst`): the answers written until the end of
    that event-loop pass are held and joined into one write, and joining goes on while the burst lasts,
    so under pipelined load many answers cost one system call. A lone request costs no extra loop pass.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._writer: asyncio.StreamWriter | None = None
        self._pending: list[bytes] = []
        self._holding = False

    async def open(self) -> None:
        if _pollable(self._fd):
            loop = asyncio.get_running_loop()
            pipe = os.fdopen(self._fd, "wb", buffering=0, closefd=False)
            # FlowControlMixin is not exported, but it is the protocol StreamWriter.drain() needs (pause and
            # resume writing, `_drain_helper`); tests/adapters/test_uvicorn_contract.py checks it is still so.
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
            self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def send(self, message: Any) -> None:
        data = jsonrpc.dumps_line(message)
        writer = self._writer
        if writer is None:
            os.write(self._fd, data)
            return
        transport = writer.transport
        if transport.is_closing():
            return  # the client went away; reading will hit EOF and we shut down
        if self._holding:
            self._pending.append(data)
        else:
            transport.write(data)
        if transport.get_write_buffer_size() > _HIGH_WATER:
            try:
                await writer.drain()  # a client that does not read slows us down, not our memory
            except (ConnectionError, BrokenPipeError):
                pass

    def expect_burst(self) -> None:
        """Several answers are coming in this pass: hold them until its end, then write them as one."""
        if self._writer is not None and not self._holding:
            self._holding = True
            # Scheduled after the tasks the reader just started, so it runs once their first steps have.
            asyncio.get_running_loop().call_soon(self._end_of_pass)

    def _end_of_pass(self) -> None:
        if self._pending and self._writer is not None and not self._writer.transport.is_closing():
            self._writer.write(b"".join(self._pending))
            self._pending.clear()
            asyncio.get_running_loop().call_soon(self._end_of_pass)  # keep joining while the burst lasts
            return
        self._pending.clear()
        self._holding = False

    async def close(self) -> None:
        """Flushes every answer before returning: the process exits right after, and bytes still in the
        transport's buffer would be lost to a client that reads late."""
        if self._writer is None:
            return
        transport = self._writer.transport
        if transport.is_closing():  # the client closed its end of stdout (it exited): nobody to answer
            self._pending.clear()
            self._writer.close()
            return
        if self._pending:
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


class _LineReader(asyncio.Protocol):
    """stdin's bytes in, each line handed to the connection in arrival order, from the read callback itself.

    A request starts being served right here (`RpcConnection.receive_now`: admitted, its task started),
    with no reader task to wake. What must be awaited (`initialize`, served inline; notifications,
    batches, refusals) goes to an ordered lane served by one task, and every line read while the lane is
    busy queues behind it, so the arrival order the core admits in is kept. While the lane holds many
    lines, reading pauses (a client that floods us is slowed, not buffered without bound).
    """

    def __init__(self, connection: RpcConnection, writer: _WireWriter, splitter: LineSplitter,
                 max_message_bytes: int) -> None:
        self._connection = connection
        self._writer = writer
        self._splitter = splitter
        self._max_message_bytes = max_message_bytes
        self._transport: asyncio.ReadTransport | None = None
        self._lane: collections.deque[Callable[[], Awaitable[None]]] = collections.deque()
        self._lane_task: asyncio.Task[None] | None = None
        self._paused = False
        self._stopped = False
        self._ended = asyncio.Event()
        self._on_settled: list[Callable[[], None]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def when_settled(self, callback: Callable[[], None]) -> None:
        """Call `callback` once, as soon as every line read so far has been handled (the lane idle)
        after a read, or when input ends: what was waiting in the pipe at start has been answered."""
        self._on_settled.append(callback)

    def _settle(self) -> None:
        if self._on_settled and (self._lane_task is None or self._ended.is_set()):
            callbacks, self._on_settled = self._on_settled, []
            for callback in callbacks:
                callback()

    def data_received(self, data: bytes) -> None:
        if self._stopped:
            return  # the reader thread of a file or device may still deliver what it had read
        lines, oversize = self._splitter.feed(data)
        for _ in range(oversize):
            self._queue(functools.partial(self._connection.refuse, None, ErrorCode.PAYLOAD_TOO_LARGE,
                                          f"Message too large: the limit is {self._max_message_bytes} bytes"))
        started = 0
        for line in lines:
            if line and not line.isspace():  # a blank line is no message (and isspace copies nothing)
                started += self._receive(line)
        if started > 1:
            self._writer.expect_burst()
        self._settle()

    def eof_received(self) -> bool | None:
        last = None if self._stopped else self._splitter.finish()
        if last is not None:
            self._receive(last)
        self._ended.set()
        self._settle()
        return None  # let the transport close its end

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended.set()
        self._settle()

    async def finished(self) -> None:
        """Return once stdin has ended and every line read has been handed over."""
        await self._ended.wait()
        while self._lane_task is not None:
            await asyncio.shield(self._lane_task)

    def stop(self) -> None:
        """Read no more (SIGTERM, a failed start-up hook); lines not yet handed over are dropped."""
        self._stopped = True
        if self._transport is not None:
            self._transport.close()
        self._lane.clear()
        if self._lane_task is not None:
            self._lane_task.cancel()
        self._ended.set()
        self._settle()

    def _receive(self, line: bytes) -> int:
        """Hand one line over; 1 when it started a request here and then."""
        if not self._lane:
            try:
                value = jsonrpc.decode(line)
            except ValueError:
                pass  # the lane decodes it again and answers the parse error
            else:
                if self._connection.receive_now(value):
                    return 1
                self._queue(functools.partial(self._connection.receive, value))
                return 0
        self._queue(functools.partial(self._connection.receive_raw, line))
        return 0

    def _queue(self, step: Callable[[], Awaitable[None]]) -> None:
        self._lane.append(step)
        if self._lane_task is None:
            self._lane_task = asyncio.ensure_future(self._serve_lane())
        if len(self._lane) > _LANE_HIGH_WATER and self._transport is not None and not self._paused:
            self._paused = True
            self._transport.pause_reading()

    async def _serve_lane(self) -> None:
        try:
            while self._lane:
                # The step stays in the lane while it runs, so lines read meanwhile queue behind it.
                try:
                    await self._lane[0]()
                except Exception:  # a bug in handling one message must not stop the reading of the next
                    log.exception("a message could not be handled", eventId=new_event_id())
                finally:
                    if self._lane:  # `stop` may have emptied it
                        self._lane.popleft()
                if self._paused and len(self._lane) <= _LANE_HIGH_WATER // 2 and self._transport is not None:
                    self._paused = False
                    self._transport.resume_reading()
        finally:
            self._lane_task = None
            self._settle()


async def _start_reading(fd: int, protocol: _LineReader) -> None:
    loop = asyncio.get_running_loop()
    if _pollable(fd):
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        await loop.connect_read_pipe(lambda: protocol, pipe)
        return

    def pump() -> None:  # files and devices (hexmcp stdio < requests.jsonl, < /dev/null) cannot be watched
        while chunk := os.read(fd, _CHUNK):
            loop.call_soon_threadsafe(protocol.data_received, chunk)
        loop.call_soon_threadsafe(protocol.eof_received)

    threading.Thread(target=pump, name="stdin-reader", daemon=True).start()


async def serve_stdio(server: McpServer, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                      max_batch_messages: int = DEFAULT_MAX_BATCH_MESSAGES, stdin_fd: int = 0,
                      wire_fd: int | None = None, on_startup: Sequence[Callable[[], Awaitable[None]]] = (),
                      peer_timeout_s: float = 300.0) -> int:
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
    connection = RpcConnection(server, writer.send, transport="stdio", max_batch_messages=max_batch_messages,
                               peer_timeout_s=peer_timeout_s)
    stop = asyncio.Event()
    _on_sigterm(stop)
    log.info("serving stdio", sessionId=connection.session_id, pid=os.getpid())
    failed: list[BaseException] = []
    background: list[asyncio.Future[None]] = []

    # The hooks start from the reader once the first input is handled, after it bound that input's request
    # ids: each gets a copy of the context as it is now, before any request, and binds only the session,
    # or its lines (a model load, a failure) would name the trace of whichever request came last.
    startup_context = contextvars.copy_context()

    def start_background() -> None:
        if not background:
            loop = asyncio.get_running_loop()
            background.extend(loop.create_task(_watched(hook, failed, stop, connection.session_id),
                                               context=startup_context.run(contextvars.copy_context))
                              for hook in on_startup)

    reader = _LineReader(connection, writer, splitter, max_message_bytes)
    # A host writes `initialize` as soon as it has spawned us, so by now it is usually waiting in the
    # pipe. The hooks (a model load, an index build) then start once that input is handled, the
    # handshake answered by the reader's lane, so their imports and threads never compete with it and
    # the answer goes out before any of them ran (tests/adapters/test_cli_startup.py).
    # With nothing waiting they start at once: a silent client must not keep a failing hook from
    # ending the process.
    if _readable_now(stdin_fd):
        reader.when_settled(start_background)  # registered before reading starts: it cannot be missed
    else:
        start_background()
    await _read_until_eof_or_stop(stdin_fd, reader, stop)
    await _end_session(connection, writer, background, stop)
    log.info("stdio session ended", sessionId=connection.session_id)
    return ExitCode.FAILED_AFTER_START if failed else ExitCode.OK


async def _read_until_eof_or_stop(stdin_fd: int, reader: _LineReader, stop: asyncio.Event) -> None:
    await _start_reading(stdin_fd, reader)
    reading = asyncio.ensure_future(reader.finished())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not reading.done():
        reader.stop()
        reading.cancel()


async def _end_session(connection: RpcConnection, writer: _WireWriter, background: list[asyncio.Future[None]],
                       stop: asyncio.Event) -> None:
    """Nothing more will be read: fail what waits for the client's answers, end listens with their result,
    answer the rest, then close. After SIGTERM the rest get `_SIGTERM_GRACE_S`, then are cancelled: the
    handler that lets us answer them is also what keeps the signal from ending the process, and a request
    that never ends (a tool with no timeout, an upstream that never answers) would otherwise outlive the
    host's SIGTERM (only SIGKILL ended it)."""
    connection.input_ended()
    draining = asyncio.ensure_future(connection.drain())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({draining, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not draining.done():
        await asyncio.wait({draining}, timeout=_SIGTERM_GRACE_S)
    if not draining.done():
        log.warning("requests still running after SIGTERM were cancelled", sessionId=connection.session_id,
                    inFlight=connection.in_flight, graceS=_SIGTERM_GRACE_S)
        draining.cancel()  # cancels the gather inside, and with it every request task still running
        await asyncio.gather(draining, return_exceptions=True)
    for task in background:
        task.cancel()
    await connection.close()
    await writer.close()


async def _watched(hook: Callable[[], Awaitable[None]], failed: list[BaseException], stop: asyncio.Event,
                   session_id: str) -> None:
    structlog.contextvars.bind_contextvars(sessionId=session_id)  # in this task's own context (start_background)
    try:
        await hook()
    except asyncio.CancelledError:
        raise
    except Exception as error:
        log.exception("background start-up task failed; ending the session", eventId=new_event_id())
        failed.append(error)
        stop.set()


def run_stdio(server: McpServer, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
              max_batch_messages: int = DEFAULT_MAX_BATCH_MESSAGES, stdin_fd: int = 0, wire_fd: int | None = None,
              on_startup: Sequence[Callable[[], Awaitable[None]]] = (), peer_timeout_s: float = 300.0) -> int:
    """Serve one client on stdin/stdout until EOF (blocking); returns the process exit code.

    uvloop, when installed, costs less per message than the stdlib loop (pipe reads and writes, task
    switches), for a small price in start-up time.
    """
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        return runner.run(serve_stdio(server, max_message_bytes=max_message_bytes,
                                      max_batch_messages=max_batch_messages, stdin_fd=stdin_fd,
                                      wire_fd=wire_fd, on_startup=on_startup, peer_timeout_s=peer_timeout_s))


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
