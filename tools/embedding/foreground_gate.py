"""Foreground first: background embedding (indexing, concept extraction) waits while a request's model
pass is queued or running, and leaves a core free while requests keep coming.

On two cores a background pass that starts while a classification waits takes the core that
classification needs: the issue measured classify_text's p99 at 3.1x its idle value while a corpus
indexed. So every background pass first asks the gate: while any foreground pass is queued or running,
it waits (up to `max_wait_s`, so a foreground that never rests slows indexing but cannot stop it).

Waiting for an idle foreground is not enough for a caller that sends one request after another (c=1):
the gap between two requests is a millisecond, every background worker starts a pass in it, and the next
request then finds every core busy with a pass it cannot interrupt (tens of milliseconds on a long
passage). So while the foreground has been active within `recent_s`, at most `cores - 1` background passes
run at once: one core stays free for the next request. With a foreground idle for longer than that, every
core indexes, and indexing keeps its full rate.

One gate per process (`FOREGROUND`): the classifier and the knowledge base are separate packs that
share the machine's cores, so they share the gate too. Entering and leaving is a lock and a counter,
microseconds against a pass of milliseconds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: How long one background pass waits for the foreground at most. A pass takes 5-40 ms on this model,
#: so under a foreground that never pauses indexing still advances a few passages a second per worker.
MAX_WAIT_S = 0.25
#: How long after the foreground's last pass a core stays reserved for it: longer than the gap between a
#: client's back-to-back requests (milliseconds), short enough that indexing soon has every core again.
RECENT_S = 1.0


class ForegroundGate:
    def __init__(self, cores: int | None = None, recent_s: float = RECENT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._active = 0
        self._idle = threading.Condition()
        self.cores = max(1, cores if cores is not None else os.cpu_count() or 1)
        self.recent_s = recent_s
        self._clock = clock
        self._last_active = -float("inf")  # when the foreground last had a pass outstanding
        self._running = 0  # background passes running now
        self.waits = 0  # background passes that found the foreground busy (tests and benches read it)
        self.held_back = 0  # background passes that waited for the core kept free (tests and benches read it)

    @property
    def active(self) -> int:
        """Foreground passes queued or running now."""
        return self._active

    @property
    def running(self) -> int:
        """Background passes running now."""
        return self._running

    def enter(self) -> None:
        with self._idle:
            self._active += 1

    def leave(self) -> None:
        with self._idle:
            self._active -= 1
            self._last_active = self._clock()
            if self._active <= 0:
                self._active = 0
                self._idle.notify_all()

    @contextmanager
    def foreground(self) -> Iterator[None]:
        """Marks the block as foreground work: background passes wait while it runs."""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def busy(self) -> bool:
        """Whether requests are coming: a foreground pass outstanding, or one ended within `recent_s`."""
        return self._active > 0 or self._clock() - self._last_active < self.recent_s

    def background_limit(self) -> int:
        """Background passes allowed at once now: every core with a foreground idle for `recent_s`,
        else one core fewer (at least one)."""
        return max(1, self.cores - 1) if self.busy() else self.cores

    @contextmanager
    def background_pass(self, max_wait_s: float = MAX_WAIT_S) -> Iterator[float]:
        """Wraps one background pass: waits while a foreground pass is outstanding and while the background
        already holds its share of the cores (background_limit), at most `max_wait_s` in all, then runs the
        block. Yields the seconds waited."""
        started = time.monotonic()
        deadline = started + max_wait_s
        with self._idle:
            if self._active:
                self.waits += 1
            elif self._running >= self.background_limit():
                self.held_back += 1
            while self._active or self._running >= self.background_limit():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                # Woken when the foreground goes idle or a background pass ends; and in any case when the
                # reserved core would be released (the foreground quiet for recent_s).
                release = self._last_active + self.recent_s - self._clock()
                self._idle.wait(timeout=min(left, release) if release > 0 else left)
            self._running += 1
        try:
            yield time.monotonic() - started
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()


FOREGROUND = ForegroundGate()
"""The process's gate: the inference pool enters it, background embedding waits on it."""
