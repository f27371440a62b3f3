"""While background work runs, a thread waiting for the GIL gets it sooner.

CPython lets a thread that waits for the GIL have it only once the holder has run for the switch
interval (`sys.setswitchinterval`, 5 ms by default). A request takes the GIL several times on its way
(the event loop reads it, an inference worker tokenizes and runs the head, the loop writes the answer),
and behind a background thread running Python (a partial index's BM25, chunking, concept extraction)
each of those can wait the whole interval: milliseconds against an idle p99 of about ten. So while any
background work runs, the interval is BACKGROUND_SWITCH_INTERVAL_S; the previous one comes back when the
last background job ends. The cost is more hand-overs between threads that both want the interpreter,
microseconds each, and only while they contend.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BACKGROUND_SWITCH_INTERVAL_S = 0.0005

_lock = threading.Lock()
_jobs = 0
_saved: float | None = None


@contextmanager
def quick_handoff(interval_s: float = BACKGROUND_SWITCH_INTERVAL_S) -> Iterator[None]:
    """Marks a background job: the switch interval is at most `interval_s` while it (or any other) runs."""
    global _jobs, _saved
    with _lock:
        if _jobs == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(interval_s, _saved))
        _jobs += 1
    try:
        yield
    finally:
        with _lock:
            _jobs -= 1
            if _jobs == 0 and _saved is not None:
                sys.setswitchinterval(_saved)
                _saved = None


def background_jobs() -> int:
    """Background jobs running now (tests read it)."""
    return _jobs
