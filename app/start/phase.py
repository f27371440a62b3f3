"""What every start-up block of the command runs under: the cyclic collector paused, with what start-up
made frozen on the way out (collector.py), and attrs' generated methods taken from the compiled
code cache (code_cache.py)."""

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
