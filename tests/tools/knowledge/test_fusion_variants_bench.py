"""bench/relevance_fusion.py's control row must be the served fusion, or its variants' differences would not be
the variants' alone; and each variant must reduce to the served fusion where its own term vanishes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.relevance_fusion import adaptive, fused_by, minmax, mix, served, sharpness
from hexmcp.tools.knowledge import retrieval
from hexmcp.tools.knowledge.fusion import Method, fuse

# Few distinct values, so ties (which the served fusion breaks by index) are common.
_SCORES = st.sampled_from([0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
_COSINES = st.sampled_from([-0.1, 0.1, 0.2, 0.3, 0.3, 0.5, 0.8])


@st.composite
def queries(draw: st.DrawFn) -> tuple[dict[int, float], np.ndarray, int]:
    size = draw(st.integers(1, 40))
    lexical = np.array(draw(st.lists(_SCORES, min_size=size, max_size=size)), dtype=np.float32)
    hits = draw(st.lists(st.integers(0, size - 1), unique=True, max_size=size))
    dense = {i: draw(_COSINES) for i in hits}
    return dense, lexical, draw(st.integers(1, 12))


def _through(fuser, dense, lexical, limit):  # noqa: ANN001, ANN202 - a test helper
    with fused_by(fuser):
        return retrieval.fuse(Method.HYBRID, dense, lexical, limit)


@settings(max_examples=300, deadline=None)
@given(queries())
def test_the_control_row_ranks_as_the_served_fusion(query) -> None:  # noqa: ANN001
    dense, lexical, limit = query
    assert [i for i, _ in _through(served, *query)] == [i for i, _ in fuse(Method.HYBRID, dense, lexical, limit)]


@settings(max_examples=100, deadline=None)
@given(queries())
def test_a_mix_of_nothing_and_a_gain_of_nothing_are_the_served_fusion(query) -> None:  # noqa: ANN001
    expected = _through(served, *query)
    assert _through(mix(0.0), *query) == expected
    assert _through(adaptive(0.0), *query) == expected


def test_the_patch_is_undone_and_other_methods_are_served_as_before() -> None:
    original = retrieval.fuse
    lexical = np.array([0.0, 2.0, 1.0], dtype=np.float32)
    with fused_by(minmax(0.8)):
        assert retrieval.fuse(Method.RRF, {0: 0.5}, lexical, 3) == original(Method.RRF, {0: 0.5}, lexical, 3)
    assert retrieval.fuse is original


def test_sharpness_is_high_when_few_passages_match_far_better() -> None:
    flat = np.full(20, 3.0, dtype=np.float32)
    sharp = np.array([9.0] + [1.0] * 19, dtype=np.float32)
    assert sharpness(flat) == 0.0 and sharpness(sharp) > 0.85 and sharpness(np.zeros(5)) == 0.0
