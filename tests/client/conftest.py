"""Fixtures of the client tests: the live demo servers (one set per module) and the cancellation log."""

from __future__ import annotations

import pytest

from .servers import Cancellations, live_targets


@pytest.fixture(scope="module")
def cancellations() -> Cancellations:
    return Cancellations()


@pytest.fixture(scope="module")
def live(cancellations: Cancellations):
    with live_targets(cancellations) as targets:
        yield targets
