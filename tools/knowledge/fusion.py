"""Hybrid scoring: how a dense cosine and a BM25 score become one passage score in 0..1.

score = w · max(cos, 0) + (1 − w) · bm25 / best_bm25

The dense half is absolute (a cosine means the same for every query); the lexical half is relative
to the query's best lexical match, because raw BM25 grows with query length and has no fixed
scale. A passage the dense search did not return gets the lowest cosine it did return (a bound,
not a guess of zero). Reciprocal-rank fusion is kept for comparison: it throws
away how far apart scores are, which is what made it lose to MiniLM alone on held-out corpora.

The design and its trade-offs: docs/adr/0601-knowledge-hybrid-retrieval.md.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the index; the tools module reads DENSE_WEIGHT at start-up
    import numpy as np

DENSE_WEIGHT = 0.9  # dense is the stronger retriever; lexical breaks near-ties on exact terms
RRF_K = 60


class Method(enum.Enum):
    LEXICAL = "lexical"
    DENSE = "dense"
    RRF = "rrf"
    HYBRID = "hybrid"


def fuse(method: Method, dense: dict[int, float], lexical: np.ndarray, limit: int,
         dense_weight: float = DENSE_WEIGHT) -> list[tuple[int, float]]:
    """(passage index, score) pairs, best first, at most `limit`. `dense` maps the dense search's
    hits to their cosine; `lexical` holds every passage's BM25 score."""
    if method is Method.DENSE:
        scored = {i: max(c, 0.0) for i, c in dense.items()}
    elif method is Method.LEXICAL:
        scored = _lexical_relative(lexical)
    elif method is Method.RRF:
        scored = _rrf([sorted(dense, key=lambda i: -dense[i]), _lexical_order(lexical, len(dense) or limit)])
    else:
        relative = _lexical_relative(lexical)
        floor = max(min(dense.values()), 0.0) if dense else 0.0
        scored = {i: dense_weight * max(dense.get(i, floor), 0.0) + (1 - dense_weight) * relative.get(i, 0.0)
                  for i in {*dense, *relative}}
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
    return [(i, float(s)) for i, s in ranked[:limit]]


def _lexical_relative(lexical: np.ndarray) -> dict[int, float]:
    best = float(lexical.max()) if lexical.size else 0.0
    if best <= 0:
        return {}
    import numpy as np

    hits = np.flatnonzero(lexical > 0)
    return {int(i): float(lexical[i]) / best for i in hits}


def _lexical_order(lexical: np.ndarray, depth: int) -> list[int]:
    import numpy as np

    order = np.argsort(-lexical, kind="stable")[:depth]
    return [int(i) for i in order if lexical[i] > 0]


def _rrf(rankings: list[list[int]]) -> dict[int, float]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, index in enumerate(ranking):
            scores[index] = scores.get(index, 0.0) + 1.0 / (RRF_K + rank + 1)
    top = max(scores.values(), default=1.0)
    return {i: s / top for i, s in scores.items()}  # 0..1 like the others; the order is RRF's
