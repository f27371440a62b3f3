"""The cyclic garbage collector around background work: no full collection while it runs, and what it
leaves behind frozen once the last job ends.

A full (generation 2) collection walks every tracked object the process holds, and a published knowledge
index, its memo and the concept base are most of them: 75-150 ms with the GIL held, which a request that
arrives then waits for whole. They fall due while background work runs, because that is when objects are
made (a re-index builds a new index beside the one serving; concept extraction builds its graph). So:

- while any background job runs, the oldest generation's threshold is out of reach: the young generations
  are still collected (short-lived cycles, futures and frames, die there), the full walk is put off;
- when the last job ends, one young collection, then gc.freeze(): what is alive then (the new index, the
  concept base) joins the permanent generation, which later full collections never walk. An index that is
  replaced is freed by reference counting (it holds no cycles: tests/tools/knowledge), frozen or not.

The price of freezing is that a cycle among frozen objects is never reclaimed. To bound it, once the frozen
population has grown to THAW_GROWTH times what it was after the last full collection, the job's end runs
one full collection over everything (unfreeze, collect, freeze): a pause as before, but once per such growth
rather than every few re-indexes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The generation-2 threshold while background work runs: more generation-1 collections than any build makes.
DEFERRED_THRESHOLD2 = 1 << 30
#: Frozen objects may grow to this multiple of their count after the last full collection before the next
#: job's end reclaims the cycles among them.
THAW_GROWTH = 1.5

_lock = threading.Lock()
_jobs = 0
_saved_threshold2: int | None = None
_frozen_after_full: int | None = None
full_collections = 0
"""Full collections run at a job's end to bound frozen garbage (tests read it)."""


@contextmanager
def background_collection() -> Iterator[None]:
    """Marks a background job: no generation-2 collection while it (or any other) runs; at the end of the
    last one, survivors are frozen (see the module's docstring)."""
    global _jobs, _saved_threshold2
    with _lock:
        if _jobs == 0:
            young, middle, _saved_threshold2 = gc.get_threshold()
            gc.set_threshold(young, middle, DEFERRED_THRESHOLD2)
        _jobs += 1
    try:
        yield
    finally:
        with _lock:
            _jobs -= 1
            if _jobs == 0:
                _settle()


def _settle() -> None:
    """The last background job ended (under _lock): restore the threshold, freeze what survived."""
    global _saved_threshold2, _frozen_after_full, full_collections
    young, middle, _ = gc.get_threshold()
    if _saved_threshold2 is not None:
        gc.set_threshold(young, middle, _saved_threshold2)
        _saved_threshold2 = None
    if not gc.isenabled():  # collection paused by its owner (start-up): not ours to run or freeze
        return
    if _frozen_after_full is None:
        _frozen_after_full = gc.get_freeze_count()
    gc.collect(1)
    gc.freeze()
    if gc.get_freeze_count() > THAW_GROWTH * max(_frozen_after_full, 1):
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _frozen_after_full = gc.get_freeze_count()
        full_collections += 1
