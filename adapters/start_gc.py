"""The cyclic garbage collector, paused while the command starts.

Start-up allocates about 100,000 objects that live as long as the process (modules, classes, the
functions attrs generates, the server's registries) and almost no garbage. With collection on, every
700 allocations the collector walks the young ones, and every tenth pass the older ones too: ~70
passes that free next to nothing and cost about a tenth of importing the command (ADR 0011). Paused,
they do not happen; what little cyclic garbage start-up leaves is collected by the first pass after.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection inside the block; it comes back as it was, whatever the block raises."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
