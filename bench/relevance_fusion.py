"""How dense and BM25 scores are fused: where `search` and the RRF anchor disagree, and fusion variants
measured on the public sets beside the served pipeline and the three anchors, in one run.

    python -m bench.relevance_fusion [--set NAME ...] [--json FILE] [--explain]

`--explain` lists, per set, the questions whose acceptable page one of `search` and the RRF anchor puts in its
top 5 and the other does not: each method's rank of the page, the page's dense and BM25 rank and score among
distinct pages (a page by its best passage), and what outranked it. Without it, the variants, each replacing
only the passage-level fusion of `search` (distinct pages, support and the dense search are the served ones):
- **`mix λ`**: (1 − λ) × the served score + λ × an RRF term over the same dense and BM25 candidates, the RRF
  term divided by its largest possible value 2 / (k + 1), so both halves run 0..1.
- **`adaptive g`**: the served fusion with a lexical weight that rises with how sharp BM25's evidence is for
  the query: 0.1 + g × (1 − the 10th best BM25 score / the best), capped at 0.5.
- **`minmax w`**: each channel min-max normalised over its own candidates (dense: the passages the dense search
  returned; BM25: its top as many), then w × dense + (1 − w) × BM25.
`control` re-ranks through the same replacement with the served fusion, so it must reproduce `served`.
The figures: bench/diaries/knowledge.md.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from hexmcp.tools.knowledge import fusion, retrieval
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex

from .relevance import (ANCHORS, built_public_set, print_systems, rank_public, run_public_sets_with_switch,
                        score_systems)

Fuser = Callable[[dict[int, float], np.ndarray, int], dict[int, float]]
SHARP_AT = 10  # the BM25 score compared with the best to tell a sharp lexical match from a flat one
ADAPTIVE_CAP = 0.5


def _pool(dense: dict[int, float], lexical: np.ndarray, limit: int) -> tuple[list[int], float]:
    """The served fusion's candidates (every dense hit and the lexical top len(dense) + limit) and its floor."""
    lexical_order = fusion._lexical_order(lexical, len(dense) + limit)  # noqa: SLF001 - the served candidates
    floor = max(min(dense.values()), 0.0) if dense else 0.0
    return list(dict.fromkeys([*dense, *lexical_order])), floor


def served_scores(dense: dict[int, float], lexical: np.ndarray, limit: int,
                  lexical_weight: float = 1 - fusion.DENSE_WEIGHT) -> dict[int, float]:
    """The served fusion's passage scores (fusion.fuse, HYBRID), with `lexical_weight` for its 1 − dense weight."""
    candidates, floor = _pool(dense, lexical, limit)
    best = float(lexical.max()) if lexical.size else 0.0
    share = (lambda i: float(lexical[i]) / best) if best > 0 else (lambda i: 0.0)
    return {i: (1 - lexical_weight) * max(dense.get(i, floor), 0.0) + lexical_weight * share(i) for i in candidates}


def mix(weight: float) -> Fuser:
    def fuse(dense: dict[int, float], lexical: np.ndarray, limit: int) -> dict[int, float]:
        scores = served_scores(dense, lexical, limit)
        rrf = rrf_raw(sorted(dense, key=lambda i: -dense[i]),
                      fusion._lexical_order(lexical, len(dense) or limit))  # noqa: SLF001 - the anchor's lists
        top = 2.0 / (fusion.RRF_K + 1)  # first in both lists: the largest RRF term, on every query alike
        return {i: (1 - weight) * s + weight * rrf.get(i, 0.0) / top for i, s in scores.items()}
    return fuse


def rrf_raw(*rankings: list[int]) -> dict[int, float]:
    totals: dict[int, float] = {}
    for ranking in rankings:
        for rank, index in enumerate(ranking):
            totals[index] = totals.get(index, 0.0) + 1.0 / (fusion.RRF_K + rank + 1)
    return totals


def sharpness(lexical: np.ndarray) -> float:
    """1 − the SHARP_AT-th best BM25 score / the best: near 1 when a few passages match far better than the rest."""
    top = fusion._lexical_order(lexical, SHARP_AT)  # noqa: SLF001
    if not top:
        return 0.0
    last = float(lexical[top[-1]]) if len(top) >= SHARP_AT else 0.0
    return 1.0 - last / float(lexical[top[0]])


def adaptive(gain: float) -> Fuser:
    def fuse(dense: dict[int, float], lexical: np.ndarray, limit: int) -> dict[int, float]:
        lexical_weight = 1 - fusion.DENSE_WEIGHT + gain * sharpness(lexical)
        return served_scores(dense, lexical, limit, min(lexical_weight, ADAPTIVE_CAP))
    return fuse


def minmax(weight: float) -> Fuser:
    def fuse(dense: dict[int, float], lexical: np.ndarray, limit: int) -> dict[int, float]:
        candidates, floor = _pool(dense, lexical, limit)
        cosines = np.array(list(dense.values())) if dense else np.zeros(1)
        low, high = float(cosines.min()), float(cosines.max())
        lexical_top = fusion._lexical_order(lexical, len(dense) or limit)  # noqa: SLF001
        lex = lexical[lexical_top] if lexical_top else np.zeros(1)
        lex_low, lex_high = float(lex.min()), float(lex.max())

        def scaled(value: float, lo: float, hi: float) -> float:
            return min(max((value - lo) / (hi - lo), 0.0), 1.0) if hi > lo else 0.0

        return {i: weight * scaled(dense.get(i, floor), low, high)
                + (1 - weight) * scaled(float(lexical[i]), lex_low, lex_high) for i in candidates}
    return fuse


def served(dense: dict[int, float], lexical: np.ndarray, limit: int) -> dict[int, float]:
    return served_scores(dense, lexical, limit)


VARIANTS: dict[str, Fuser] = {
    "control": served,
    "mix 0.2": mix(0.2), "mix 0.35": mix(0.35), "mix 0.5": mix(0.5),
    "adaptive 0.2": adaptive(0.2), "adaptive 0.4": adaptive(0.4),
    "minmax 0.8": minmax(0.8), "minmax 0.9": minmax(0.9),
}


@contextmanager
def fused_by(fuser: Fuser) -> Iterator[None]:
    """Hybrid search ranks passages with `fuser` while inside (every other method as served)."""
    original = retrieval.fuse

    def fuse(method: Method, dense: dict[int, float], lexical: np.ndarray, limit: int,
             dense_weight: float = fusion.DENSE_WEIGHT) -> list[tuple[int, float]]:
        if method is not Method.HYBRID:
            return original(method, dense, lexical, limit, dense_weight)
        ranked = sorted(fuser(dense, lexical, limit).items(), key=lambda item: (-item[1], item[0]))
        return [(i, float(s)) for i, s in ranked[:limit]]

    retrieval.fuse = fuse
    try:
        yield
    finally:
        retrieval.fuse = original


class VariantIndex(KnowledgeIndex):
    """The served index searched with another passage fusion (the same passages, store and pages)."""

    fuser: Fuser

    def search_documents(self, *args: Any, **kwargs: Any) -> Any:
        with fused_by(self.fuser):
            return super().search_documents(*args, **kwargs)


def variant_of(index: KnowledgeIndex, fuser: Fuser) -> KnowledgeIndex:
    variant = object.__new__(VariantIndex)
    variant.__dict__.update(index.__dict__)
    variant.fuser = fuser
    return variant


def page_ranks(index: KnowledgeIndex, per_passage: dict[int, float]) -> list[tuple[str, float]]:
    """Distinct pages by their best passage's score, best first."""
    best: dict[str, float] = {}
    for i, score in per_passage.items():
        key = index.pages.page(index.passages[i].document_id).key
        best[key] = max(best.get(key, -1e9), score)
    return sorted(best.items(), key=lambda item: -item[1])


def explain(index: KnowledgeIndex, anchor: KnowledgeIndex, questions: Any) -> list[dict[str, Any]]:
    """The questions where `search` and the RRF anchor disagree on an acceptable page in the top 5."""
    page_of = lambda d: index.pages.page(d).key  # noqa: E731
    rows = []
    for q in questions:
        # Ranks as the measures count them (relevance_sets.score_ranking): the first listed document among the
        # question's answers, in the anchor's list copies taking slots; the page ranks below go by page.
        ours_documents = rank_public(index, q.text, Method.HYBRID, True)
        rrf_documents = rank_public(anchor, q.text, Method.RRF, False)
        rank = lambda ranked: next((r for r, d in enumerate(ranked, 1) if d in q.answers), None)  # noqa: E731
        ours_rank, rrf_rank = rank(ours_documents), rank(rrf_documents)
        ours, rrf = [page_of(d) for d in ours_documents], [page_of(d) for d in rrf_documents]
        wanted = {page_of(d) for d in q.answers}
        if (ours_rank is not None and ours_rank <= 5) == (rrf_rank is not None and rrf_rank <= 5):
            continue
        text = retrieval.clean_query(q.text)
        lexical = index._lexical.scores(text)  # noqa: SLF001
        dense = dict(index._nearest(index.embed_query(text), retrieval.PAGE_DEPTH, {}))  # noqa: SLF001
        dense_pages = page_ranks(index, dense)
        lexical_pages = page_ranks(index, {int(i): float(lexical[i]) for i in np.flatnonzero(lexical > 0)})

        def where(ranked: list[tuple[str, float]]) -> tuple[int | None, float | None]:
            found = next(((r, s) for r, (p, s) in enumerate(ranked, 1) if p in wanted), None)
            return found if found else (None, None)

        rows.append({"q": q.text, "kind": q.kind, "search": ours_rank, "rrf": rrf_rank,
                     "dense": where(dense_pages), "bm25": where(lexical_pages),
                     "bm25_best": lexical_pages[0][1] if lexical_pages else 0.0,
                     "cos_best": dense_pages[0][1] if dense_pages else 0.0,
                     "sharpness": round(sharpness(lexical), 3),
                     "search_top": ours[:(ours_rank or 6) - 1][:5], "rrf_top": rrf[:(rrf_rank or 6) - 1][:5]})
    return rows


def measure(name: str, embedder: PassageEmbedder, cache_dir: Path, explaining: bool = False) -> dict[str, Any]:
    relevance_set, index, anchor = built_public_set(name, embedder, cache_dir)
    result: dict[str, Any] = {"set": name, "passages": len(index.passages), "questions": len(relevance_set.questions)}
    if explaining:
        result["explained"] = explain(index, anchor, relevance_set.questions)
        return result
    systems: dict[str, tuple[KnowledgeIndex, Method, bool]] = {
        "served": (index, Method.HYBRID, True), **{m.value: (anchor, m, False) for m in ANCHORS},
        **{label: (variant_of(index, fuser), Method.HYBRID, True) for label, fuser in VARIANTS.items()}}
    page_of = lambda d: index.pages.page(d).key  # noqa: E731 - one line, used once
    result["systems"] = score_systems(systems, relevance_set.questions, page_of)
    return result


def print_result(result: dict[str, Any]) -> None:
    print(f"\n{result['set']}: {result['passages']} passages, {result['questions']} questions")
    if "explained" in result:
        for row in result["explained"]:
            won = "search" if row["search"] and row["search"] <= 5 else "rrf"
            print(f"- [{won} wins, {row['kind']}] {row['q']}\n  search rank {row['search']}, rrf rank {row['rrf']};"
                  f" page dense rank/cos {row['dense'][0]}/{_num(row['dense'][1])} (best {row['cos_best']:.3f}),"
                  f" bm25 rank/score {row['bm25'][0]}/{_num(row['bm25'][1])} (best {row['bm25_best']:.2f}),"
                  f" sharpness {row['sharpness']}\n  above it in search: {row['search_top']}"
                  f"\n  above it in rrf: {row['rrf_top']}")
        return
    print_systems(result["systems"], width=14)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    return run_public_sets_with_switch(
        __doc__.splitlines()[0], "--explain",
        "list the questions search and the RRF anchor disagree on, with each channel's ranks", measure, print_result,
        argv)

if __name__ == "__main__":
    sys.exit(main())
