"""Foreground first: background embedding (indexing, concept extraction) waits while a request's model
pass is queued or running.

On two cores a background pass that starts while a classification waits takes the core that
classification needs: the issue measured classify_text's p99 at 3.1x its idle value while a corpus
indexed. Lower OS priority (background_thread.py) shares the cores in the foreground's favour once
both run, but a background pass already on a core still delays a request that arrives after it.
So every background pass first asks the gate: while any foreground pass is queued or running, it
waits (up to `max_wait_s`, so a foreground that never rests slows indexing but cannot stop it); with
an idle foreground it goes straight on, and indexing keeps its full rate.

One gate per process (`FOREGROUND`): the classifier and the knowledge base are separate packs that
share the machine's cores, so they share the gate too. Entering and leaving is a lock and a counter,
microseconds against a pass of milliseconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: How long one background pass waits for the foreground at most. A pass takes 5-40 ms on this model,
#: so under a foreground that never pauses indexing still advances a few passages a second per worker.
MAX_WAIT_S = 0.25


class ForegroundGate:
    def __init__(self) -> None:
        self._active = 0
        self._idle = threading.Condition()
        self.waits = 0  # background passes that found the foreground busy (tests and benches read it)

    @property
    def active(self) -> int:
        """Foreground passes queued or running now."""
        return self._active

    def enter(self) -> None:
        with self._idle:
            self._active += 1

    def leave(self) -> None:
        with self._idle:
            self._active -= 1
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

    def wait_until_idle(self, max_wait_s: float = MAX_WAIT_S) -> float:
        """Called by a background worker before each pass: returns at once if no foreground pass is
        queued or running, else when the last one ends or after `max_wait_s`. Returns the seconds waited."""
        if self._active == 0:  # the common case with an idle foreground: no lock taken
            return 0.0
        started = time.monotonic()
        with self._idle:
            if self._active:
                self.waits += 1
                self._idle.wait_for(lambda: self._active == 0, timeout=max_wait_s)
        return time.monotonic() - started


FOREGROUND = ForegroundGate()
"""The process's gate: the inference pool enters it, background embedding waits on it."""
