"""stdio: spawn the server and speak newline-delimited JSON-RPC on its stdin/stdout.

A stdout line that is not JSON (a banner, a stray print) is logged and skipped, not fatal. The
server's stderr is read into a short ring of its last lines, so a server that dies at start-up
(a bad flag, a missing model) is reported with what it said, instead of scrolling logs over the
caller's terminal. Closing follows the MCP stdio rule: close stdin, wait, then terminate, then kill.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from typing import Any

import structlog

from hexmcp.adapters import jsonrpc

from ..errors import unreachable
from .base import Inbox

log = structlog.get_logger("hexmcp.client.stdio")
LINE_LIMIT = 64 * 1024 * 1024  # the largest answer we accept; asyncio's default (64 KiB) is far too small
STDERR_LINES = 20
GRACE_S = 2.0


class StdioWire:
    with_version = True
    require_jsonrpc = True

    def __init__(self, command: tuple[str, ...] | list[str]) -> None:
        self.command = tuple(command)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._process: asyncio.subprocess.Process | None = None
        self._readers: list[asyncio.Task[None]] = []

    async def open(self, inbox: Inbox) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, limit=LINE_LIMIT)
        except OSError as error:
            raise unreachable(f"cannot start {self.command[0]!r}", error) from None
        self._readers = [asyncio.ensure_future(self._read(inbox)), asyncio.ensure_future(self._read_stderr())]

    async def _read(self, inbox: Inbox) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        try:
            while line := await stdout.readline():
                if not line.strip():
                    continue
                try:
                    value = jsonrpc.decode(line)
                except ValueError:
                    # A banner or a stray print from a careless library: not ours to die of. The
                    # messages around it still parse, and the line is kept for the error report.
                    log.warning("the server wrote a line that is not JSON", line=line[:120].decode(errors="replace"))
                    self.stderr_tail.append(f"(stdout) {line[:120].decode(errors='replace').rstrip()}")
                    continue
                inbox.receive(value)
        except (ValueError, OSError) as error:  # a line beyond LINE_LIMIT, a broken pipe
            inbox.closed(unreachable("the server's stdout failed", error))
            return
        code = await self._process.wait()
        tail = " | ".join(self.stderr_tail)
        inbox.closed(unreachable(f"the server process exited with code {code}" + (f"; its stderr: {tail}" if tail else "")))

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        with contextlib.suppress(ValueError, OSError):
            while line := await self._process.stderr.readline():
                self.stderr_tail.append(line.decode(errors="replace").rstrip())

    async def send(self, message: dict[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            raise unreachable("the server process is not running", delivered=False)
        try:
            process.stdin.write(jsonrpc.dumps(message) + b"\n")
            await process.stdin.drain()
        except (ConnectionError, OSError) as error:  # the process is gone: its end of the pipe is closed
            raise unreachable("writing to the server process failed", error, delivered=False) from None

    def negotiated(self, version: str) -> None:
        pass

    async def initialized(self) -> None:
        pass

    async def close(self) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        for stop in (None, process.terminate, process.kill):
            if stop is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    stop()
            try:
                await asyncio.wait_for(process.wait(), GRACE_S)
                break
            except TimeoutError:
                continue
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
