"""The classifier head: calibrated softmax regression on [last | mid-layer] segment features.

Training:
1. z-score each feature column (statistics from the training rows only);
2. fit L2-penalised multinomial logistic regression on the training rows: one per example, or one
   per segment of each example with the example's rows weighted to sum to one (segments.py);
3. fit one temperature on out-of-fold logits of the examples' own features from stratified k-fold
   cross-validation (folds split examples, never an example's segments), so probabilities are
   calibrated without ever looking at evaluation data.
Deterministic: fixed fold assignment from `seed`, deterministic solver.

The design and its trade-offs: docs/adr/0102-classifier-head.md.
"""

from __future__ import annotations

import functools
import math

import attrs
import numpy as np

from . import softmax_regression

MIN_TEMPERATURE, MAX_TEMPERATURE = 0.05, 20.0


@attrs.frozen(kw_only=True)
class HeadSettings:
    l2_penalty: float = 1e-4
    folds: int = 5
    seed: int = 0


@attrs.frozen(kw_only=True, eq=False, slots=False)
class SoftmaxHead:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    temperature: float

    @property
    def n_classes(self) -> int:
        return self.weights.shape[1]

    def logits(self, features: np.ndarray) -> np.ndarray:
        return softmax_regression.logits(self.weights, (features - self.mean) / self.scale)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return softmax_regression.softmax(self.logits(features) / self.temperature)

    @functools.cached_property  # writes the instance __dict__ directly, so it works on a frozen class
    def folded(self) -> tuple[np.ndarray, np.ndarray]:
        """(matrix, offset) with softmax(features @ matrix + offset) == probabilities(features):
        standardisation and temperature folded in once, so a query costs one product."""
        matrix = self.weights[:-1] / self.scale[:, None] / self.temperature
        offset = (self.weights[-1] - (self.mean / self.scale) @ self.weights[:-1]) / self.temperature
        return np.ascontiguousarray(matrix), offset


def standardiser(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Dividing by sqrt(dim) keeps row norms ~1, so the L2 penalty means the same at any width.
    mean = features.mean(axis=0)
    scale = (features.std(axis=0) + 1e-6) * math.sqrt(features.shape[1])
    return mean, scale


def train_head(
    features: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    settings: HeadSettings,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
) -> SoftmaxHead:
    """`features`: one row per example, what the head will read at query time. `rows`: optional
    (training rows, index of the example each row belongs to); by default the features themselves."""
    features = np.asarray(features, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if rows is None:
        train_rows, owners = features, np.arange(len(labels))
    else:
        train_rows, owners = np.asarray(rows[0], dtype=np.float64), np.asarray(rows[1], dtype=np.int64)
    # Each example weighs the same however many rows it has.
    row_weights = 1.0 / np.bincount(owners, minlength=len(labels))[owners]
    row_labels = labels[owners]

    def fit_on(selected: np.ndarray, initial: np.ndarray | None = None) -> SoftmaxHead:
        return _fit(
            train_rows[selected], row_labels[selected], n_classes, settings.l2_penalty, row_weights[selected], initial
        )

    head = fit_on(np.ones(len(owners), dtype=bool))
    out_of_fold = np.zeros((len(labels), n_classes))
    folds = stratified_folds(labels, settings.folds, settings.seed)
    for fold in range(settings.folds):
        held_out = folds == fold
        if held_out.all() or not held_out.any():
            continue
        # Warm start: a fold's solution lies near the full one (so the solver needs fewer steps).
        fold_head = fit_on(~held_out[owners], head.weights)
        out_of_fold[held_out] = fold_head.logits(features[held_out])
    return attrs.evolve(head, temperature=fit_temperature(out_of_fold, labels))


def _fit(
    rows: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    l2: float,
    weights: np.ndarray,
    initial: np.ndarray | None = None,
) -> SoftmaxHead:
    mean, scale = standardiser(rows)
    coefficients = softmax_regression.fit((rows - mean) / scale, labels, n_classes, l2, weights, initial)
    return SoftmaxHead(mean=mean, scale=scale, weights=coefficients, temperature=1.0)


def stratified_folds(labels: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Fold id per example; each class is shuffled (fixed seed) and dealt round-robin."""
    rng = np.random.default_rng(seed)
    assignment = np.empty(len(labels), dtype=np.int64)
    offset = 0
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        assignment[members] = (np.arange(len(members)) + offset) % folds
        offset += len(members)  # rotate starting folds so small classes don't all land in fold 0
    return assignment


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """Temperature minimising the negative log-likelihood; golden-section search on log T.

    NLL is convex in 1/T, hence unimodal in log T, so golden section finds the optimum.
    """

    def nll(log_t: float) -> float:
        scaled = logits / math.exp(log_t)
        scaled = scaled - scaled.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(scaled).sum(axis=1))
        return float((log_norm - scaled[np.arange(len(labels)), labels]).mean())

    low, high = math.log(MIN_TEMPERATURE), math.log(MAX_TEMPERATURE)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    fa, fb = nll(a), nll(b)
    for _ in range(60):
        if fa < fb:
            high, b, fb = b, a, fa
            a = high - ratio * (high - low)
            fa = nll(a)
        else:
            low, a, fa = a, b, fb
            b = low + ratio * (high - low)
            fb = nll(b)
    return math.exp((low + high) / 2)


def entropy_of(probabilities: np.ndarray) -> float:
    """entropy_nats of one distribution, as a float (plain Python: faster for a handful of classes)."""
    return -sum(p * math.log(p) for p in probabilities.tolist() if p > 0.0)


def entropy_nats(probabilities: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats (natural log); 0 for a one-hot vector, ln(K) for uniform."""
    p = np.clip(probabilities, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return terms.sum(axis=-1)
