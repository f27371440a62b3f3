"""The relevance set over the bundled corpus: hybrid meets the issue's target and beats each
retriever alone (the same measurement bench/relevance.py prints)."""

from __future__ import annotations

import pytest

from bench.relevance import evaluate, judged_corpus, load_set
from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.fusion import Method

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def test_the_relevance_set_is_large_and_answerable() -> None:
    questions, judged = load_set()
    ids = {d.document_id for d in load_documents(CorpusSpec())}
    assert len(questions) >= 40
    assert {q["document"] for q in questions} <= set(judged) <= ids


def test_hybrid_reaches_the_target_and_beats_each_method_alone(embedder, knowledge_cache) -> None:
    questions, judged = load_set()
    index = build_index(judged_corpus(judged), embedder, new_store(embedder.dimension),
                        cache_dir=knowledge_cache)
    scores = {method: evaluate(index, questions, method) for method in (Method.LEXICAL, Method.DENSE, Method.HYBRID)}
    hybrid = scores[Method.HYBRID]
    assert hybrid["search_recall5"] >= 0.9 and hybrid["passages_recall5"] >= 0.9, scores
    for key in ("search_recall5", "passages_recall5"):
        assert hybrid[key] >= max(scores[Method.LEXICAL][key], scores[Method.DENSE][key]), (key, scores)
