"""What Python code prints while stdio serves, as log lines instead of raw text on stderr.

stdout belongs to the protocol, so `claim_stdout` sends prints elsewhere. Written to stderr as they
are, a tool's or a library's `print` breaks "one JSON object per line" for whoever parses the log; here
each printed line becomes a warning record of the `stdout` logger (JSON when the log is), with the ids of
the request being served, so the operator also sees which request printed it. Writes below Python (a
C library on fd 1) still reach stderr raw: fd 1 is a duplicate of fd 2, and turning those into records
would take a pipe and a reader thread for the life of the process.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
from typing import Any

PRINTED = logging.getLogger("stdout")
"""Not under `hexmcp.`: what a tool or a library printed, shown at warning like a library's warnings."""


class PrintedLines(io.TextIOBase):
    """A text stream whose every complete line is logged (`PRINTED`); what has no newline yet waits for one,
    or for `flush`. Binary writes (`buffer`) and `fileno()` are stderr's, as they were."""

    def __init__(self, stderr: Any) -> None:
        super().__init__()
        self._stderr = stderr
        self._pending = ""
        self._lock = threading.Lock()  # prints come from worker threads too

    @property
    def buffer(self) -> Any:
        return self._stderr.buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stderr.encoding

    def fileno(self) -> int:
        return self._stderr.fileno()

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            lines = (self._pending + text).split("\n")
            self._pending = lines.pop()
        for line in lines:
            PRINTED.warning("printed to stdout: %s", line)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            line, self._pending = self._pending, ""
        if line:
            PRINTED.warning("printed to stdout: %s", line)


def print_to_log() -> None:
    """From now on, Python's `sys.stdout` logs what it is given (fd 1 is the caller's business)."""
    sys.stdout = PrintedLines(sys.stderr)
