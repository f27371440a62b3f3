"""The cyclic garbage collector during the command's start: paused, and what start-up made frozen.

Start-up makes a great many objects that live as long as the process (modules, classes, the methods
attrs generates, the server's registries) and almost no cyclic garbage. With collection on, every 700
allocations the collector walks the young objects and every tenth pass the older ones: dozens of passes
that free next to nothing. Merely paused, they are replaced by one pass that walks everything at once,
a long one, on the way to the first answer. So on the way out of a pause, what exists joins the
collector's permanent generation (gc.freeze), which later passes never walk.

The price: the little cyclic garbage start-up leaves is never reclaimed. Only the command (app/cli.py)
pauses, and only while it imports and composes.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection inside the block; on the way out, whatever raised, every object made so
    far is frozen and collection comes back as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
