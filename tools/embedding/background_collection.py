"""The cyclic garbage collector around background work: what a job leaves alive is frozen once the last job
ends, so later full collections do not walk the index and concept base it built.

A full (generation 2) collection walks every tracked object the process holds, and a published knowledge
index, its memo and the concept base are most of them: 75-150 ms with the GIL held, which a request that
arrives then waits for whole. When the last background job ends, one young collection, then gc.freeze():
what is alive then (the new index, the concept base) joins the permanent generation, which later full
collections never walk. An index that is replaced is freed by reference counting (it holds no cycles:
tests/tools/knowledge/test_background_collection.py), frozen or not.

The price of freezing is that a cycle among frozen objects is never reclaimed. To bound it, every
THAW_EVERY_JOBS-th job starts (at rest: the previous index has been replaced and freed) with one full
collection over everything (unfreeze, collect, freeze): a pause as before, but once per so many jobs rather
than every few re-indexes. Counted in jobs, not in frozen objects: gc.get_freeze_count() walks the whole
permanent generation, 30-90 ms with the GIL held on a served index, which is the stall this module removes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Background jobs between two full collections over frozen objects (what cycles they froze is reclaimed then).
THAW_EVERY_JOBS = 64

_lock = threading.Lock()
_jobs = 0
_since_full = 0
full_collections = 0
"""Full collections run at a job's start to bound frozen garbage (tests read it)."""


@contextmanager
def background_collection() -> Iterator[None]:
    """Marks a background job: at the start of the first, frozen garbage is reclaimed if it has grown; at the
    end of the last one, survivors are frozen (see the module's docstring)."""
    global _jobs
    with _lock:
        if _jobs == 0:
            _reclaim_if_due()
        _jobs += 1
    try:
        yield
    finally:
        with _lock:
            _jobs -= 1
            if _jobs == 0 and gc.isenabled():  # collection paused by its owner (start-up): not ours to freeze
                gc.collect(1)
                gc.freeze()


def _reclaim_if_due() -> None:
    """At rest (under _lock, no job running): every THAW_EVERY_JOBS-th job, one full collection, frozen too."""
    global _since_full, full_collections
    _since_full += 1
    if _since_full < THAW_EVERY_JOBS or not gc.isenabled():
        return
    _since_full = 0
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    full_collections += 1
