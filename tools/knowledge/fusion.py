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
    hits to their cosine; `lexical` holds every passage's BM25 score.

    Only the passages that can still make the list are scored. A passage the dense search did not
    return scores floor + its lexical share, rising with BM25 alone, so the `limit` best of those are
    among the lexical top len(dense) + limit (every tie of the last kept, as ties go by index): the
    ranking is the one over every passage, at a cost that no longer grows with the corpus (BM25 scores
    half of a large corpus above zero: ordinary words survive stop-word removal)."""
    if method is Method.DENSE:
        scored = {i: max(c, 0.0) for i, c in dense.items()}
    elif method is Method.LEXICAL:
        scored = _lexical_relative(lexical, _lexical_top(lexical, limit))
    elif method is Method.RRF:
        scored = _rrf([sorted(dense, key=lambda i: -dense[i]), _lexical_order(lexical, len(dense) or limit)])
    else:
        relative = _lexical_relative(lexical, [*dense, *_lexical_top(lexical, len(dense) + limit)])
        floor = max(min(dense.values()), 0.0) if dense else 0.0
        scored = {i: dense_weight * max(dense.get(i, floor), 0.0) + (1 - dense_weight) * relative.get(i, 0.0)
                  for i in {*dense, *relative}}
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
    return [(i, float(s)) for i, s in ranked[:limit]]


def _lexical_top(lexical: np.ndarray, count: int) -> list[int]:
    """The indexes of the `count` highest positive scores and of every score tied with the last of them."""
    import numpy as np

    if count <= 0 or not lexical.size:
        return []
    if count < lexical.size:
        cut = float(lexical[np.argpartition(-lexical, count - 1)[count - 1]])
        chosen = np.flatnonzero((lexical >= cut) & (lexical > 0))
    else:
        chosen = np.flatnonzero(lexical > 0)
    return [int(i) for i in chosen]


def _lexical_relative(lexical: np.ndarray, indexes: list[int]) -> dict[int, float]:
    """Each of `indexes` with a positive score, as a share of the query's best score."""
    best = float(lexical.max()) if lexical.size else 0.0
    if best <= 0:
        return {}
    return {i: float(lexical[i]) / best for i in indexes if lexical[i] > 0}


def _lexical_order(lexical: np.ndarray, depth: int) -> list[int]:
    """The `depth` best lexical hits, best first, ties by index (as a stable sort of every score)."""
    import numpy as np

    top = np.asarray(_lexical_top(lexical, depth), dtype=np.int64)
    order = top[np.lexsort((top, -lexical[top]))] if top.size else top
    return [int(i) for i in order[:depth]]


def _rrf(rankings: list[list[int]]) -> dict[int, float]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, index in enumerate(ranking):
            scores[index] = scores.get(index, 0.0) + 1.0 / (RRF_K + rank + 1)
    top = max(scores.values(), default=1.0)
    return {i: s / top for i, s in scores.items()}  # 0..1 like the others; the order is RRF's
