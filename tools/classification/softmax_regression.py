"""Multinomial logistic regression with an L2 penalty, fitted by L-BFGS in numpy.

Deterministic: zero (or caller-given) initialisation, no randomness. The bias is not penalised.
The two big products per step (features @ weights and its transpose) run in float32, much faster
than float64; logits, softmax, loss and the solver's state are float64.
"""

from __future__ import annotations

import numpy as np

HISTORY = 10
MAX_ITERATIONS = 400
# On the max-abs gradient of the mean loss: tight enough that a tighter one changes no prediction,
# loose enough to save the solver's last, slowest steps.
GRADIENT_TOLERANCE = 1e-5
ARMIJO = 1e-4


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def with_bias(features: np.ndarray) -> np.ndarray:
    return np.hstack([features, np.ones((features.shape[0], 1), dtype=features.dtype)])


def _loss_and_gradient(w, x, x_t, y, l2: float, n_classes: int, sample_weight):
    n, d = x.shape
    weights = w.reshape(d, n_classes)
    probs = softmax((x @ weights.astype(np.float32)).astype(np.float64))
    nll = -np.log(probs[np.arange(n), y] + 1e-300)
    loss = nll @ sample_weight + 0.5 * l2 * np.sum(weights[:-1] ** 2)
    probs[np.arange(n), y] -= 1.0
    grad = (x_t @ (probs * sample_weight[:, None]).astype(np.float32)).astype(np.float64)
    grad[:-1] += l2 * weights[:-1]
    return loss, grad.ravel()


def fit(
    features: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    l2: float,
    sample_weight: np.ndarray | None = None,
    initial: np.ndarray | None = None,
) -> np.ndarray:
    """Weights of shape [dim + 1, n_classes]; the last row is the bias.

    The data term is a weighted mean of per-example log losses (weights normalised to sum to 1).
    `initial` (same shape as the result) warm-starts the solver, e.g. from a fit on a superset.
    """
    x = with_bias(np.asarray(features, dtype=np.float32))
    x_t = np.ascontiguousarray(x.T)  # the gradient's product is faster on a contiguous transpose
    y = np.asarray(labels, dtype=np.int64)
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    sw = sw / sw.sum()
    w = np.zeros(x.shape[1] * n_classes) if initial is None else np.array(initial, dtype=np.float64).ravel()
    loss, grad = _loss_and_gradient(w, x, x_t, y, l2, n_classes, sw)
    steps: list[np.ndarray] = []
    changes: list[np.ndarray] = []
    for _ in range(MAX_ITERATIONS):
        if np.abs(grad).max() < GRADIENT_TOLERANCE:
            break
        direction = -_two_loop(grad, steps, changes)
        slope = grad @ direction
        if slope >= 0:  # lost descent (numerical trouble): restart from steepest descent
            steps.clear()
            changes.clear()
            direction, slope = -grad, -(grad @ grad)
        step = 1.0
        while True:
            new_loss, new_grad = _loss_and_gradient(w + step * direction, x, x_t, y, l2, n_classes, sw)
            if new_loss <= loss + ARMIJO * step * slope:
                break
            step *= 0.5
            if step < 1e-10:  # no decrease left that float32 products can resolve: converged
                return w.reshape(x.shape[1], n_classes)
        s = step * direction
        change = new_grad - grad
        if change @ s > 1e-12:
            steps.append(s)
            changes.append(change)
            del steps[:-HISTORY], changes[:-HISTORY]
        w, loss, grad = w + s, new_loss, new_grad
    return w.reshape(x.shape[1], n_classes)


def _two_loop(grad: np.ndarray, steps: list[np.ndarray], changes: list[np.ndarray]) -> np.ndarray:
    """L-BFGS approximation of inverse-Hessian @ grad."""
    q = grad.copy()
    alphas = []
    for s, c in zip(reversed(steps), reversed(changes)):
        alpha = (s @ q) / (c @ s)
        alphas.append(alpha)
        q -= alpha * c
    if steps:
        q *= (steps[-1] @ changes[-1]) / (changes[-1] @ changes[-1])
    else:
        q /= max(1.0, np.abs(q).max())  # first step: keep it short
    for (s, c), alpha in zip(zip(steps, changes), reversed(alphas)):
        beta = (c @ q) / (c @ s)
        q += s * (alpha - beta)
    return q


def logits(weights: np.ndarray, features: np.ndarray) -> np.ndarray:
    return with_bias(np.asarray(features, dtype=np.float64)) @ weights
