"""What every start-up block of the command runs under: the cyclic collector paused, with what start-up
made frozen on the way out (start_gc.py, ADR 0011), and attrs' generated methods taken from the compiled
code cache (start_code_cache.py, ADR 0013)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from .code_cache import attrs_methods_cached, the_cache
from .collector import collection_paused


@contextlib.contextmanager
def starting(cache_dir: Path) -> Iterator[None]:
    """`cache_dir`: $HEXMCP_CACHE_DIR or its default, which the composition root knows."""
    with collection_paused(), attrs_methods_cached(the_cache(cache_dir)):
        yield
