"""Segment pooling and the on-disk cache of encoded examples, on synthetic token states (no model)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hexmcp.tools.classification import embedding_cache
from hexmcp.tools.embedding.segments import SEGMENT_TOKENS, EncodedTexts, pool_text, segment_count
from hypothesis import given, settings
from hypothesis import strategies as st

HIDDEN = 8


def token_states(length: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(length, HIDDEN)).astype(np.float32), rng.normal(size=(length, HIDDEN)).astype(np.float32)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 260), st.integers(0, 2**16))
def test_every_inner_token_lands_in_exactly_one_segment(length, seed):
    last, mid = token_states(length, seed)
    rows = pool_text(last, mid, length)
    inner = length - 2 if length > 2 else length
    assert rows.shape == (segment_count(inner), 2 * HIDDEN) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows[:, :HIDDEN], axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(rows[:, HIDDEN:], axis=1), 1.0, atol=1e-5)
    # Reassemble: a segment row is the direction of its tokens' mean, so check coverage through sizes.
    sizes = np.diff(np.append((np.arange(len(rows)) * inner) // len(rows), inner))
    assert sizes.sum() == inner and sizes.min() >= 1 and sizes.max() - sizes.min() <= 1


def test_segment_count_rounds_half_up_and_never_reaches_zero():
    assert [segment_count(n) for n in (0, 1, 7, 8, 23, 24, 120)] == [1, 1, 1, 1, 1, 2, 8]
    assert segment_count(SEGMENT_TOKENS * 10) == 10


def test_markers_are_left_out_and_a_short_text_is_one_segment():
    last, mid = token_states(6, seed=3)
    rows = pool_text(last, mid, 6)
    expected = last[1:5].mean(axis=0)
    np.testing.assert_allclose(rows[0, :HIDDEN], expected / np.linalg.norm(expected), atol=1e-6)
    # Nothing between [CLS] and [SEP] (say, text of characters the tokenizer drops): pool both markers.
    rows = pool_text(last[:2], mid[:2], 2)
    expected = last[:2].mean(axis=0)
    np.testing.assert_allclose(rows[0, :HIDDEN], expected / np.linalg.norm(expected), atol=1e-6)


def encoded(lengths: list[int], seed: int = 0) -> EncodedTexts:
    rng = np.random.default_rng(seed)
    rows = [pool_text(*token_states(n, int(rng.integers(1 << 16))), n) for n in lengths]
    sentences = rng.normal(size=(len(lengths), HIDDEN)).astype(np.float32)
    return EncodedTexts.from_texts(sentences, rows)


def test_text_features_are_the_mean_of_each_texts_rows():
    texts = encoded([5, 60, 200])
    assert texts.counts.tolist() == [1, 4, 12]
    assert texts.owners().tolist() == [0] + [1] * 4 + [2] * 12
    features = texts.text_features()
    for index in range(3):
        own = texts.segments[texts.offsets[index] : texts.offsets[index + 1]].astype(np.float64)
        np.testing.assert_allclose(features[index], own.mean(axis=0))
    assert texts.is_consistent(3, HIDDEN)
    assert not texts.is_consistent(2, HIDDEN) and not texts.is_consistent(3, HIDDEN + 1)


def test_cache_round_trip_and_self_repair(tmp_path):
    calls = []

    def compute(texts: list[str]) -> EncodedTexts:
        calls.append(list(texts))
        return encoded([len(t) * 7 for t in texts])

    texts = ["short", "a good deal longer text"]
    first = embedding_cache.load_or_compute(tmp_path, "model-a", texts, HIDDEN, compute)
    again = embedding_cache.load_or_compute(tmp_path, "model-a", texts, HIDDEN, compute)
    assert len(calls) == 1
    for name in ("sentences", "segments", "offsets"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))

    embedding_cache.load_or_compute(tmp_path, "model-b", texts, HIDDEN, compute)  # another model: own entry
    assert len(calls) == 2

    (path,) = [p for p in (tmp_path / "embeddings").iterdir() if p.name.startswith(embedding_cache.cache_key("model-a", texts))]
    for damage in (b"not a zip file", path.read_bytes()[:100]):
        path.write_bytes(damage)
        repaired = embedding_cache.load_or_compute(tmp_path, "model-a", texts, HIDDEN, compute)
        np.testing.assert_array_equal(repaired.segments, first.segments)
    assert len(calls) == 4

    # Well-formed but inconsistent (offsets past the end): recomputed, not trusted.
    np.savez(path.open("wb"), sentences=first.sentences, segments=first.segments[:1], offsets=first.offsets)
    embedding_cache.load_or_compute(tmp_path, "model-a", texts, HIDDEN, compute)
    assert len(calls) == 5


@pytest.mark.parametrize("lengths", [[3], [3, 40], [300, 3, 17]])
def test_rows_argument_changes_only_the_training_rows(lengths):
    from hexmcp.tools.classification.head import HeadSettings, train_head

    texts = encoded(lengths * 4, seed=len(lengths))
    labels = np.arange(len(texts)) % 2
    head = train_head(texts.text_features(), labels, 2, HeadSettings(folds=2), rows=(texts.segments, texts.owners()))
    probabilities = head.probabilities(texts.text_features())
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-9)
    if all(count == 1 for count in texts.counts):  # one row per text: same as training on the features
        plain = train_head(texts.text_features(), labels, 2, HeadSettings(folds=2))
        np.testing.assert_allclose(plain.weights, head.weights)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, SEGMENT_TOKENS + SEGMENT_TOKENS // 2 + 1), st.integers(0, 2**16))
def test_a_one_segment_text_is_the_unit_mean_of_its_inner_tokens_bit_for_bit(length, seed):
    """The short-text path sums and divides instead of calling ndarray.mean (a cheaper call per request):
    the answer must stay the one the mean gives, to the last bit, or cached answers would drift."""
    last, mid = token_states(length, seed)
    start, stop = (1, length - 1) if length > 2 else (0, length)
    if segment_count(stop - start) != 1:
        return
    halves = [layer[start:stop].mean(axis=0) for layer in (last, mid)]
    expected = np.concatenate([h / max(math.sqrt(float(h @ h)), 1e-12) for h in halves])[None].astype(np.float32)
    assert np.array_equal(pool_text(last, mid, length), expected)


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=60))
def test_top_k_mean_is_numpys_mean_of_the_k_largest_bit_for_bit(similarities):
    from hexmcp.tools.classification.routing import TOP_K, _top_k_mean

    values = np.asarray(similarities)
    assert _top_k_mean(values) == float(np.sort(values)[-min(TOP_K, len(values)):].mean())
