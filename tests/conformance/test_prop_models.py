"""Invariant 6: every model survives the wire, structure(unstructure(x)) == x, under the suite's budget.

The property itself lives with the core's tests (tests/core/test_properties.py, fixed at 40 examples);
this runs the same check under the ci/deep profiles so release checks give it 100x the examples.
Nothing here talks to a server, so it does not run per target.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import models, versions
from hexmcp.core.convert import from_wire, to_wire

from ..support.strategies import model_strategy
from .profiles import budget


@pytest.mark.parametrize("model", models.ALL_MODELS, ids=lambda cls: cls.__name__)
@budget(25)
@given(data=st.data())
def test_every_model_round_trips_unchanged(model: type, data: st.DataObject) -> None:
    value = data.draw(model_strategy(model))
    assert from_wire(to_wire(value, versions.LATEST_VERSION), model) == value
