"""One live `hexmcp serve` for the whole package (live.py): each property attacks it, then checks it lives."""

from __future__ import annotations

from typing import Iterator

import pytest

from .live import LiveServer, live_server


@pytest.fixture(scope="package")
def live() -> Iterator[LiveServer]:
    with live_server() as server:
        yield server
