"""`hexmcp index`'s progress on stderr: passages done of the total, the embedding rate, the time left.

    indexing: 1200/50139 passages (2%), 41.3 passages/s, ETA 19m43s

On a terminal the line is rewritten in place twice a second. Into a file or a pipe a new line is
written when embedding first gives a rate and then every LOG_INTERVAL_S, so the log of a long build
is a readable history rather than one line of carriage returns.

The rate counts only passages embedded by this run, from the moment embedding began: the passages
the vector cache already holds arrive all at once before any embedding and would otherwise promise
an ETA of seconds for an hour of work. They do count as done.
"""

from __future__ import annotations

import time
from typing import Callable, TextIO

TERMINAL_INTERVAL_S = 0.5
LOG_INTERVAL_S = 10.0


def format_duration(seconds: float) -> str:
    """`45s`, `3m07s`, `1h02m`: precise where it is short, coarse where a second means nothing."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class IndexProgress:
    def __init__(self, total: int, stream: TextIO, *, clock: Callable[[], float] = time.monotonic,
                 terminal: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.embedded = 0
        self._stream, self._clock = stream, clock
        self._terminal = stream.isatty() if terminal is None else terminal
        self._interval = TERMINAL_INTERVAL_S if self._terminal else LOG_INTERVAL_S
        self._embedding_since = clock()  # moved to the last cache-only update: embedding starts after it
        self._shown_at: float | None = None
        self._width = 0

    def advance(self, passages: int, embedded: int) -> None:
        """`passages` more are done; `embedded` passages have been embedded by this run so far."""
        now = self._clock()
        self.done += passages
        if embedded == 0:
            self._embedding_since = now
        self.embedded = embedded
        if self._shown_at is None:
            due = embedded > 0 or self._terminal
        else:
            due = now - self._shown_at >= self._interval
        if due:
            self._show(self.line(now))
            self._shown_at = now

    def rate(self, now: float) -> float | None:
        """Passages embedded per second since embedding began, or None before there is one."""
        elapsed = now - self._embedding_since
        return self.embedded / elapsed if self.embedded and elapsed > 0 else None

    def line(self, now: float) -> str:
        percent = 100 * self.done // self.total if self.total else 100
        rate = self.rate(now)
        if rate is None:
            pace = "waiting for the first embedded passage" if self.done < self.total else "all from the cache"
            return f"indexing: {self.done}/{self.total} passages ({percent}%), {pace}"
        left = format_duration((self.total - self.done) / rate)
        return f"indexing: {self.done}/{self.total} passages ({percent}%), {rate:.1f} passages/s, ETA {left}"

    def close(self) -> None:
        """The last line: where the run stopped (finished or interrupted), ended with a newline."""
        self._show(self.line(self._clock()))
        if self._terminal:
            self._stream.write("\n")
            self._stream.flush()

    def _show(self, line: str) -> None:
        if self._terminal:  # pad over what a longer previous line left on screen
            self._stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            self._stream.write(line + "\n")
        self._stream.flush()
