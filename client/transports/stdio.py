"""stdio: spawn the server and speak newline-delimited JSON-RPC on its stdin/stdout.

The server's stdout is a pipe of our own, read when the loop says it is readable (no StreamReader,
no pipe transport; `_StdoutReader` says why): each chunk the server writes is split into lines (the
server's own sans-IO splitter) and handed to the dispatcher in the same callback, so an answer costs
one event-loop turn, not a reader task's wake-up (nor the extra `call_soon` asyncio's subprocess
transport puts before each `pipe_data_received`; stdin, stderr and the exit still go through that
transport). A send is one pipe write that waits only when the
pipe's buffer is over its high-water mark; below it, `write_now` writes without a coroutine,
so the dispatcher needs no cancellation scope for the request.

A stdout line that is not JSON (a banner, a stray print) is logged and skipped, not fatal. The
server's stderr is read into a short ring of its last lines, so a server that dies at start-up
(a bad flag, a missing model) is reported with what it said, instead of scrolling logs over the
caller's terminal. Closing follows the MCP stdio rule: close stdin, wait, then terminate, then kill.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import subprocess
from typing import Any

import structlog

from hexmcp.wire import jsonrpc
from hexmcp.wire.lines import LineSplitter

from ..errors import unreachable
from .base import MAX_MESSAGE_BYTES, Inbox

log = structlog.get_logger("hexmcp.client.stdio")
STDERR_LINE_LIMIT = 64 * 1024
STDERR_LINES = 20
GRACE_S = 2.0
STDOUT, STDERR = 1, 2
READ_CHUNK = 64 * 1024


class _ServerPipes(asyncio.SubprocessProtocol):
    """The server process's pipes, as asyncio calls them back: stdout lines to the inbox, stderr to a ring."""

    def __init__(self, inbox: Inbox, stderr_tail: collections.deque[str], max_message_bytes: int) -> None:
        self.inbox = inbox
        self.max_message_bytes = max_message_bytes
        self.stderr_tail = stderr_tail
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin_lost = False
        self._drained: asyncio.Future[None] | None = None  # set while the stdin pipe is over its high-water mark
        self._stdout = LineSplitter(max_message_bytes)
        self._stderr = LineSplitter(STDERR_LINE_LIMIT)
        self._stdout_done = False
        self._failed = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport  # an asyncio.SubprocessTransport in duck type (uvloop's is not a subclass)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == STDERR:
            lines, _ = self._stderr.feed(data)
            self.stderr_tail.extend(line.decode(errors="replace").rstrip() for line in lines)
            return
        if self._failed:
            return
        lines, oversize = self._stdout.feed(data)
        for line in lines:
            self._line(line)
        if oversize:
            self._failed = True
            # The rest of its output is skipped (`_failed`); the owner closes the process, and a mounted
            # upstream is started again.
            self.inbox.closed(unreachable(f"the server sent a message (a stdout line) over the "
                                          f"{self.max_message_bytes}-byte limit (max_message_bytes)"))

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            value = jsonrpc.decode(line)
        except ValueError:
            # A banner or a stray print from a careless library: not ours to die of. The messages
            # around it still parse, and the line is kept for the error report.
            text = line[:120].decode(errors="replace")
            log.warning("the server wrote a line that is not JSON", line=text)
            self.stderr_tail.append(f"(stdout) {text.rstrip()}")
            return
        self.inbox.receive(value)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == STDOUT:
            last = self._stdout.finish()
            if last is not None and not self._failed:
                self._line(last)
            self._stdout_done = True
            self._report_exit()
        elif fd == 0:
            self.stdin_lost = True
            self.resume_writing()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        self._report_exit()

    def _report_exit(self) -> None:
        # Reported once both happened: the last answers on stdout are delivered before the exit is.
        if not (self._stdout_done and self.exited.done()) or self._failed:
            return
        self._failed = True
        assert self.transport is not None
        tail = " | ".join(self.stderr_tail)
        self.inbox.closed(unreachable(f"the server process exited with code {self.transport.get_returncode()}"
                                      + (f"; its stderr: {tail}" if tail else "")))

    def pause_writing(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    @property
    def writing_paused(self) -> bool:
        return self._drained is not None

    async def drained(self) -> None:
        if self._drained is not None:
            await asyncio.shield(self._drained)


class _StdoutReader:
    """The read end of the server's stdout pipe, watched with `loop.add_reader` and read in 64 KiB
    reads. asyncio's pipe transport reads 256 KiB at a time: an allocation above malloc's mmap
    threshold, mapped and unmapped for every 150-byte answer (22 us against 1.3 us per read here)."""

    def __init__(self, fd: int, pipes: _ServerPipes) -> None:
        self.fd = fd
        self.pipes = pipes
        os.set_blocking(fd, False)
        asyncio.get_running_loop().add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self.close(error)
            return
        if data:
            self.pipes.pipe_data_received(STDOUT, data)
        else:
            self.close(None)

    def close(self, error: Exception | None = None) -> None:
        if self.fd < 0:
            return
        asyncio.get_running_loop().remove_reader(self.fd)
        os.close(self.fd)
        self.fd = -1
        self.pipes.pipe_connection_lost(STDOUT, error)


class StdioWire:
    with_version = True
    require_jsonrpc = True

    def __init__(self, command: tuple[str, ...] | list[str], *, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.command = tuple(command)
        self.max_message_bytes = max_message_bytes
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._pipes: _ServerPipes | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._stdout: _StdoutReader | None = None

    @property
    def pid(self) -> int | None:
        """The server process's id (None before `open`)."""
        return self._pipes.transport.get_pid() if self._pipes and self._pipes.transport else None

    async def open(self, inbox: Inbox) -> None:
        loop = asyncio.get_running_loop()
        read_end, write_end = os.pipe()
        try:
            transport, pipes = await loop.subprocess_exec(
                lambda: _ServerPipes(inbox, self.stderr_tail, self.max_message_bytes), *self.command,
                stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE)
        except OSError as error:
            os.close(read_end)
            raise unreachable(f"cannot start {self.command[0]!r}", error) from None
        finally:
            os.close(write_end)  # the server holds its own copy: its exit is our EOF
        self._pipes = pipes
        self._stdout = _StdoutReader(read_end, pipes)
        self._stdin = transport.get_pipe_transport(0)  # type: ignore[assignment]

    def write_now(self, message: dict[str, Any]) -> bool:
        """Write `message` unless the pipe is over its high-water mark (then False: `send` waits for it)."""
        if self._pipes is not None and self._pipes.writing_paused:
            return False
        self._write(message)
        return True

    async def send(self, message: dict[str, Any]) -> None:
        self._write(message)
        pipes = self._pipes
        assert pipes is not None
        await pipes.drained()  # returns at once unless the pipe is over its high-water mark
        if pipes.stdin_lost:
            raise unreachable("writing to the server process failed: the pipe closed", delivered=False)

    def _write(self, message: dict[str, Any]) -> None:
        pipes, stdin = self._pipes, self._stdin
        if pipes is None or stdin is None or pipes.stdin_lost or pipes.exited.done() or stdin.is_closing():
            raise unreachable("the server process is not running", delivered=False)
        try:
            stdin.write(jsonrpc.dumps_line(message))
        except (ConnectionError, OSError) as error:  # the process is gone: its end of the pipe is closed
            raise unreachable("writing to the server process failed", error, delivered=False) from None

    def negotiated(self, version: str) -> None:
        pass

    async def initialized(self) -> None:
        pass

    async def close(self) -> None:
        pipes = self._pipes
        if pipes is None or pipes.transport is None:
            return
        transport = pipes.transport
        if self._stdin is not None:
            self._stdin.close()
        for stop in (None, transport.terminate, transport.kill):
            if stop is not None and not pipes.exited.done():
                with contextlib.suppress(ProcessLookupError):
                    stop()
            try:
                await asyncio.wait_for(asyncio.shield(pipes.exited), GRACE_S)
                break
            except TimeoutError:
                continue
        transport.close()
        if self._stdout is not None:
            self._stdout.close()

