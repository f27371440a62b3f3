"""Moves probability to the catch-all category when a text resembles no domain example.

Nearest-example and linear methods both fail on vague chit-chat ("tell me more"): such texts sit far
from every domain. We measure that distance directly: s = the text's highest cosine similarity to any
example of a non-general category. The threshold is the `quantile` of the same statistic computed
leave-one-out over the domain examples themselves, so it adapts to each taxonomy and needs no
evaluation data. The gate is a soft step: g = sigmoid((threshold - s) / WIDTH), and
p' = (1 - g) * p + g * onehot(general). It only ever adds mass to `general`, and p' still sums to 1.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

WIDTH = 0.015  # cosine units over which the gate goes from ~27% to ~73%


@attrs.frozen(kw_only=True, eq=False)
class GeneralGate:
    general_index: int
    domain_embeddings: np.ndarray  # unit rows, examples of every category except general
    threshold: float

    def weight(self, sentence_embeddings: np.ndarray) -> np.ndarray:
        best = (sentence_embeddings @ self.domain_embeddings.T).max(axis=1)
        return 1.0 / (1.0 + np.exp(-(self.threshold - best) / WIDTH))

    def apply_one(self, probabilities: np.ndarray, sentence_embedding: np.ndarray) -> np.ndarray:
        """`apply` for one text (1-D arrays), renormalised like the engine does after `apply`."""
        best = float((self.domain_embeddings @ sentence_embedding).max())
        gate = 1.0 / (1.0 + math.exp(-(self.threshold - best) / WIDTH))
        shifted = (1.0 - gate) * probabilities
        shifted[self.general_index] += gate
        return shifted / shifted.sum()

    def apply(self, probabilities: np.ndarray, sentence_embeddings: np.ndarray) -> np.ndarray:
        gate = self.weight(sentence_embeddings)[:, None]
        shifted = (1.0 - gate) * probabilities
        shifted[:, self.general_index] += gate[:, 0]
        return shifted


def build_gate(
    sentence_embeddings: np.ndarray, labels: np.ndarray, general_index: int, quantile: float
) -> GeneralGate | None:
    domain = sentence_embeddings[labels != general_index].astype(np.float64)
    if len(domain) < 2:
        return None
    similarity = domain @ domain.T
    np.fill_diagonal(similarity, -np.inf)
    threshold = float(np.quantile(similarity.max(axis=1), quantile))
    return GeneralGate(general_index=general_index, domain_embeddings=domain, threshold=threshold)
