"""Fixtures shared by the HTTP adapter tests."""

from __future__ import annotations

import pytest

from tests.adapters.http_wire import Wire


@pytest.fixture
def wire(live):
    """A raw HTTP client on the requesting module's `live` server (each module starts its own)."""
    client = Wire(live.base)
    yield client
    client.close()
