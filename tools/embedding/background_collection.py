"""The cyclic garbage collector around background work: what a job leaves alive is frozen once the last job
ends, so later full collections do not walk the index and concept base it built.

A full (generation 2) collection walks every tracked object the process holds, and a published knowledge
index, its memo and the concept base are most of them: 75-150 ms with the GIL held, which a request that
arrives then waits for whole. When the last background job ends, one young collection, then gc.freeze():
what is alive then (the new index, the concept base) joins the permanent generation, which later full
collections never walk. An index that is replaced is freed by reference counting (it holds no cycles:
tests/tools/knowledge/test_background_collection.py), frozen or not.

The price of freezing is that a cycle among frozen objects is never reclaimed. To bound it, when a job starts
(at rest: the previous index has been replaced and freed) and the frozen population has grown to THAW_GROWTH
times what it was after the last full collection, one full collection runs over everything (unfreeze, collect,
freeze): a pause as before, but once per such growth rather than every few re-indexes. Judged at rest, not at a
job's end, where the index just built and the one it replaces are both alive and the count is double.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Frozen objects at rest may grow to this multiple of their count after the last full collection before the
#: next job's start reclaims the cycles among them.
THAW_GROWTH = 1.5

_lock = threading.Lock()
_jobs = 0
_frozen_after_full: int | None = None
full_collections = 0
"""Full collections run at a job's start to bound frozen garbage (tests read it)."""


@contextmanager
def background_collection() -> Iterator[None]:
    """Marks a background job: at the start of the first, frozen garbage is reclaimed if it has grown; at the
    end of the last one, survivors are frozen (see the module's docstring)."""
    global _jobs
    with _lock:
        if _jobs == 0:
            _reclaim_if_grown()
        _jobs += 1
    try:
        yield
    finally:
        with _lock:
            _jobs -= 1
            if _jobs == 0 and gc.isenabled():  # collection paused by its owner (start-up): not ours to freeze
                gc.collect(1)
                gc.freeze()


def _reclaim_if_grown() -> None:
    """At rest (under _lock, no job running): one full collection over frozen objects too, if they have grown."""
    global _frozen_after_full, full_collections
    if not gc.isenabled():
        return
    frozen = gc.get_freeze_count()
    if _frozen_after_full is None:
        _frozen_after_full = frozen
    elif frozen > THAW_GROWTH * max(_frozen_after_full, 1):
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _frozen_after_full = gc.get_freeze_count()
        full_collections += 1
