"""Fixtures shared by the adapter tests: a raw HTTP client, and a cache warmed by a real first start."""

from __future__ import annotations

import pytest

from tests.adapters.http_wire import Wire
from tests.support.first_start import WarmCache, first_start


@pytest.fixture
def wire(live):
    """A raw HTTP client on the requesting module's `live` server (each module starts its own)."""
    client = Wire(live.base)
    yield client
    client.close()


@pytest.fixture(scope="session")
def warm_cache(tmp_path_factory: pytest.TempPathFactory) -> WarmCache:
    """Point HEXMCP_CACHE_DIR at its `path` for a test about a start after the first."""
    return first_start(tmp_path_factory.mktemp("warm-cache"))
