"""stdio: the server as a subprocess, newline-delimited JSON on its pipes, raw bytes when asked.

`send_raw` writes exactly the given bytes, so tests can split a frame anywhere, coalesce several into
one write, or send bytes that are not UTF-8. Reader threads keep stdout and stderr drained, so a
server that writes a lot never blocks on a full pipe while we wait for something else.
"""

from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from .. import deadlines
from ..deadlines import bounded, hung
from .base import Closed, Driver

REPO_ROOT = Path(__file__).resolve().parents[3]
_EOF = object()


class StdioDriver(Driver):
    name = "stdio"
    framing = True

    def __init__(self, command: Sequence[str]) -> None:
        super().__init__()
        self.command = list(command)
        self.process = subprocess.Popen(self.command, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self._lines: queue.Queue[Any] = queue.Queue()
        self.stderr: list[bytes] = []
        self.eof = False
        threading.Thread(target=self._pump, args=(self.process.stdout, self._lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, put: Any) -> None:
        for line in stream:
            put(line)
        put(_EOF)

    def _write(self, message: Any) -> None:
        self.send_raw((json.dumps(message) + "\n").encode())

    def send_raw(self, data: bytes) -> None:
        """Write all of `data`, or raise ServerHung when the server has not read it by the request deadline
        (a server that stops reading fills the pipe, and a plain write would then block forever)."""
        assert self.process.stdin is not None
        view = memoryview(data)
        deadline = time.monotonic() + deadlines.REQUEST_S
        try:
            fd = self.process.stdin.fileno()
            os.set_blocking(fd, False)
            while view:
                left = bounded(deadline - time.monotonic(), self.log)
                if left <= 0 or not select.select([], [fd], [], left)[1]:
                    raise hung(f"{self.name}: the server read {len(data) - len(view)} of {len(data)} bytes "
                               f"within {deadlines.REQUEST_S:g} s and stopped reading", self.log)
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    continue
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise Closed(f"stdin is closed: {exc}") from None

    def _read(self, timeout: float) -> Any | None:
        if self.eof:
            raise Closed("the server closed stdout")
        try:
            line = self._lines.get(timeout=max(timeout, 0.001))
        except queue.Empty:
            return None
        if line is _EOF:
            self.eof = True
            raise Closed(f"the server closed stdout (exit code {self.process.poll()})")
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError(f"the server wrote a line that is not JSON: {line[:300]!r}") from None

    def end_input(self) -> None:
        """Close stdin: the client is done. What was sent before must still be answered."""
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def alive(self) -> bool:
        return self.process.poll() is None and not self.eof

    def stderr_tail(self, lines: int = 20) -> str:
        return b"".join(c for c in self.stderr[-lines:] if isinstance(c, bytes)).decode(errors="replace")

    def close(self) -> None:
        self.end_input()
        try:
            self.process.wait(3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
