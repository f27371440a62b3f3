"""Properties of the classifier head and the general gate, on synthetic embeddings (fast, no model)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.classification.general_gate import build_gate
from hexmcp.tools.classification.head import HeadSettings, entropy_nats, entropy_of, fit_temperature, train_head


def synthetic(n_classes: int, per_class: int, dim: int, seed: int, spread: float = 0.6):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, dim))
    features = np.repeat(centres, per_class, axis=0) + spread * rng.normal(size=(n_classes * per_class, dim))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    labels = np.repeat(np.arange(n_classes), per_class)
    return features, labels


@pytest.fixture(scope="module")
def trained():
    features, labels = synthetic(4, 12, 16, seed=1)
    return train_head(features, labels, 4, HeadSettings(folds=3)), features, labels


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=16, max_size=16), min_size=1, max_size=8))
def test_probabilities_are_a_distribution(trained, rows):
    head, _, _ = trained
    probabilities = head.probabilities(np.array(rows))
    assert probabilities.shape == (len(rows), 4)
    assert np.all(probabilities >= 0) and np.all(probabilities <= 1)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-9)
    entropy = entropy_nats(probabilities)
    assert np.all(entropy >= -1e-12) and np.all(entropy <= math.log(4) + 1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=16, max_size=16), min_size=1, max_size=8))
def test_the_folded_head_and_scalar_entropy_agree_with_the_reference(trained, rows):
    # The per-request path (engine.classify) uses these; the batch forms are the reference.
    head, _, _ = trained
    features = np.array(rows)
    matrix, offset = head.folded
    logits = features @ matrix + offset
    folded = np.exp(logits - logits.max(axis=1, keepdims=True))
    folded /= folded.sum(axis=1, keepdims=True)
    reference = head.probabilities(features)
    np.testing.assert_allclose(folded, reference, rtol=1e-9, atol=1e-12)
    for row in reference:
        assert entropy_of(row) == pytest.approx(entropy_nats(row[None])[0], rel=1e-12, abs=1e-15)


@given(st.integers(2, 12))
def test_entropy_is_in_nats(k):
    assert entropy_nats(np.full((1, k), 1.0 / k))[0] == pytest.approx(math.log(k))
    assert entropy_nats(np.eye(k)[:1])[0] == 0.0


def test_head_learns_separable_classes(trained):
    head, features, labels = trained
    assert (head.probabilities(features).argmax(axis=1) == labels).mean() > 0.95


def test_training_is_deterministic():
    features, labels = synthetic(3, 10, 8, seed=2)
    a = train_head(features, labels, 3, HeadSettings(folds=3))
    b = train_head(features, labels, 3, HeadSettings(folds=3))
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.temperature == b.temperature


def test_temperature_softens_overconfident_logits():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, size=300)
    logits = rng.normal(size=(300, 3))
    logits[np.arange(300), labels] += 1.0  # weak true signal...
    assert fit_temperature(logits * 10, labels) > 5  # ...claimed with 10x confidence: T undoes it
    assert fit_temperature(logits * 10, labels) == pytest.approx(10 * fit_temperature(logits, labels), rel=1e-3)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_gate_only_moves_mass_to_general(seed):
    features, labels = synthetic(3, 10, 8, seed=seed % 7)
    gate = build_gate(features, labels, general_index=2, quantile=0.05)
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet(np.ones(3), size=5)
    queries = rng.normal(size=(5, 8))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    shifted = gate.apply(probabilities, queries)
    np.testing.assert_allclose(shifted.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(shifted[:, 2] >= probabilities[:, 2] - 1e-12)
    assert np.all(shifted[:, :2] <= probabilities[:, :2] + 1e-12)


def test_gate_fires_far_from_domain_examples_only():
    features, labels = synthetic(3, 10, 8, seed=3)
    gate = build_gate(features, labels, general_index=2, quantile=0.05)
    centre = features[labels == 0].mean(axis=0, keepdims=True)
    centre /= np.linalg.norm(centre)
    assert gate.weight(centre)[0] < 0.1  # typical of a domain: barely touched
    assert gate.weight(-centre)[0] > 0.95  # unlike every domain example: goes to general
