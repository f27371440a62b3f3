"""Pseudo-relevance feedback (RM3-style query expansion) measured on the public sets beside the served pipeline and
the three anchors, in one run.

    python -m bench.relevance_feedback [--set NAME ...] [--json FILE] [--timing]

Each variant searches twice. The first pass is the served one (the query's BM25 scores and dense hits, fused as
`search` fuses them). Its top k passages of distinct pages (the source `fused`), or BM25's alone (`bm25`), are the
feedback: every stemmed term of theirs (the BM25 index's own tokens: stop words out, Snowball stems) is weighted by
its frequency in each feedback passage over that passage's length, summed over the passages, times its idf over
the corpus; the query's own terms, numbers and terms of fewer than three letters are left out. The m best terms
expand the query:
- **lexical** (`lex`): BM25 scores again, the original terms weighted 1 and each expansion term w (bm25s sums a
  query's term scores, so the expanded score is the first pass's plus w × the expansion terms' alone); the dense
  hits are the first pass's. Then fused as served.
- **dense** (`dense`): the expansion terms, each in the surface form most frequent in the feedback passages,
  appended to the text the query encoder embeds; the dense search runs again; BM25 as in the first pass.
- both (`lex+dense`).
`control` runs the same two-pass path with no expansion term (m = 0), so it must reproduce `served`.
`--timing` adds the median per-query latency of `search` (one result per page, top 10) for the served index and
for each variant over every question of each set, and their ratio to the served median measured in the same run.
The figures: bench/diaries/knowledge.md.
"""

from __future__ import annotations

import math
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Collection

import attrs
import numpy as np

from hexmcp.tools.knowledge import fusion
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method, fuse
from hexmcp.tools.knowledge.retrieval import DENSE_DEPTH, KnowledgeIndex

from .relevance import (ANCHORS, built_public_set, print_systems, rank_public, run_public_sets_with_switch,
                        score_systems)

_TERM = re.compile(r"[a-z][a-z0-9_]{2,}")  # a term of three letters or more, not a number


@attrs.frozen(kw_only=True)
class Feedback:
    source: str  # "fused": the served first pass's passages; "bm25": BM25's alone
    passages: int  # k: feedback passages, of distinct pages
    terms: int  # m: expansion terms
    weight: float = 0.0  # w: each expansion term's weight in the BM25 query (0: BM25 not expanded)
    dense: bool = False  # the expansion terms appended to the text the query encoder embeds


VARIANTS: dict[str, Feedback] = {
    "control": Feedback(source="fused", passages=5, terms=0),
    "fused k5 m10 lex .3": Feedback(source="fused", passages=5, terms=10, weight=0.3),
    "fused k3 m5 lex .5": Feedback(source="fused", passages=3, terms=5, weight=0.5),
    "bm25 k5 m10 lex .3": Feedback(source="bm25", passages=5, terms=10, weight=0.3),
    "bm25 k3 m5 lex .5": Feedback(source="bm25", passages=3, terms=5, weight=0.5),
    "fused k3 m5 dense": Feedback(source="fused", passages=3, terms=5, dense=True),
    "fused k3 m5 lex .5+dense": Feedback(source="fused", passages=3, terms=5, weight=0.5, dense=True),
}


class TermStatistics:
    """The BM25 index's tokens per passage (stemmed, stop words out), their idf, and each stem's surface forms."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        stemmed = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)
        surface = bm25s.tokenize(texts, stopwords="en", show_progress=False, return_ids=False)
        self.counts = [Counter(tokens) for tokens in stemmed]
        self.lengths = [max(len(tokens), 1) for tokens in stemmed]
        df = Counter(term for counts in self.counts for term in counts)
        n = len(texts)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}
        # Per passage, each stem's surface words (the unstemmed tokenization keeps the same words in the same order).
        self.surface = [Counter(zip(stemmer.stemWords(words), words)) for words in surface]
        self._stemmer = stemmer

    def query_terms(self, text: str) -> set[str]:
        import bm25s

        return set(bm25s.tokenize([text], stopwords="en", stemmer=self._stemmer, show_progress=False,
                                  return_ids=False)[0])

    def expansion(self, feedback: list[int], excluded: set[str], count: int) -> list[tuple[str, str]]:
        """The `count` best (stem, surface word) pairs of the `feedback` passages: Σ tf / length × idf."""
        weights: Counter[str] = Counter()
        for i in feedback:
            for term, tf in self.counts[i].items():
                if term not in excluded and _TERM.fullmatch(term):
                    weights[term] += tf / self.lengths[i] * self.idf[term]
        chosen = [term for term, _ in sorted(weights.items(), key=lambda item: (-item[1], item[0]))[:count]]
        words: Counter[tuple[str, str]] = Counter()
        for i in feedback:
            words.update({pair: c for pair, c in self.surface[i].items() if pair[0] in chosen})
        return [(term, max((w for (s, w) in words if s == term), key=lambda w: (words[(term, w)], w), default=term))
                for term in chosen]


def distinct_pages(index: KnowledgeIndex, order: list[int], count: int) -> list[int]:
    """The first `count` passages of `order` whose pages differ (a page's versioned copies are one page)."""
    chosen, seen = [], set()
    for i in order:
        key = index.pages.page(index.passages[i].document_id).key
        if key not in seen:
            seen.add(key)
            chosen.append(i)
            if len(chosen) == count:
                break
    return chosen


class FeedbackIndex(KnowledgeIndex):
    """The served index searched with a feedback pass (the same passages, store and pages)."""

    feedback: Feedback
    statistics: TermStatistics

    def _candidates(self, text: str, depth: int, method: Method,
                    allowed: Collection[str] | None) -> list[tuple[int, float]]:
        if method is not Method.HYBRID or allowed is not None or not self.passages:
            return super()._candidates(text, depth, method, allowed)
        setting = self.feedback
        lexical = self._lexical.scores(text)
        dense_depth = max(DENSE_DEPTH, depth)
        dense = dict(self._nearest(self._embed_query(text), dense_depth, {}))  # type: ignore[operator]
        first = fuse(Method.HYBRID, dense, lexical, depth, self.dense_weight)
        order = ([i for i, _ in first] if setting.source == "fused"
                 else fusion._lexical_order(lexical, depth))  # noqa: SLF001 - BM25's ranking, as the anchor's
        feedback = distinct_pages(self, order, setting.passages)
        expansion = self.statistics.expansion(feedback, self.statistics.query_terms(text), setting.terms)
        if not expansion:
            return first
        if setting.weight:
            added = self._lexical._model.get_scores([term for term, _ in expansion])  # noqa: SLF001
            lexical = lexical + setting.weight * np.asarray(added, dtype=np.float32)
        if setting.dense:
            expanded = text + " " + " ".join(word for _, word in expansion)
            dense = dict(self._nearest(self._embed_query(expanded), dense_depth, {}))  # type: ignore[operator]
        return fuse(Method.HYBRID, dense, lexical, depth, self.dense_weight)


def with_feedback(index: KnowledgeIndex, statistics: TermStatistics, setting: Feedback) -> FeedbackIndex:
    variant = object.__new__(FeedbackIndex)
    variant.__dict__.update(index.__dict__)
    variant.feedback = setting
    variant.statistics = statistics
    return variant


def median_latency(index: KnowledgeIndex, questions: Any, rounds: int = 3) -> float:
    """The median over questions of each question's best of `rounds` `search` calls, in milliseconds."""
    per_question = []
    for q in questions:
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            rank_public(index, q.text, Method.HYBRID, True)
            times.append(time.perf_counter() - started)
        per_question.append(min(times) * 1000)
    return statistics.median(per_question)


def measure(name: str, embedder: PassageEmbedder, cache_dir: Path, timing: bool = False) -> dict[str, Any]:
    relevance_set, index, anchor = built_public_set(name, embedder, cache_dir)
    term_statistics = TermStatistics([p.indexed_text() for p in index.passages])
    variants = {label: with_feedback(index, term_statistics, setting) for label, setting in VARIANTS.items()}
    systems: dict[str, tuple[KnowledgeIndex, Method, bool]] = {
        "served": (index, Method.HYBRID, True), **{m.value: (anchor, m, False) for m in ANCHORS},
        **{label: (variant, Method.HYBRID, True) for label, variant in variants.items()}}
    page_of = lambda d: index.pages.page(d).key  # noqa: E731 - one line, used once
    result: dict[str, Any] = {"set": name, "passages": len(index.passages),
                              "questions": len(relevance_set.questions),
                              "systems": score_systems(systems, relevance_set.questions, page_of)}
    if timing:
        served_ms = median_latency(index, relevance_set.questions)
        result["latency_ms"] = {"served": served_ms, **{label: median_latency(variant, relevance_set.questions)
                                                        for label, variant in variants.items()}}
    return result


def print_result(result: dict[str, Any]) -> None:
    print(f"\n{result['set']}: {result['passages']} passages, {result['questions']} questions")
    print_systems(result["systems"], width=24)
    if "latency_ms" in result:
        served_ms = result["latency_ms"]["served"]
        for label, ms in result["latency_ms"].items():
            print(f"  search p50 {label:<24} {ms:7.2f} ms  ({ms / served_ms:.2f}x served)")


def main(argv: list[str] | None = None) -> int:
    return run_public_sets_with_switch(
        __doc__.splitlines()[0], "--timing",
        "also the median per-query latency of each variant against the served search, in the same run", measure,
        print_result, argv)

if __name__ == "__main__":
    sys.exit(main())
