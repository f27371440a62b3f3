"""Hybrid retrieval with the real MiniLM embedder: answers, filters, query rules, cache reuse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from exact_store import ExactStore
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.tools.knowledge.builder import build_index
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.errors import QueryError, UnknownIdError
from hexmcp.tools.knowledge.fusion import Method, fuse
from hexmcp.tools.knowledge.queries import MAX_QUERY_CHARS
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex

pytestmark = pytest.mark.slow


def _index(corpus_dir: Path, embedder, cache_dir: Path | None = None) -> KnowledgeIndex:
    return build_index(load_documents(CorpusSpec(roots=[corpus_dir])), embedder, ExactStore(embedder.dimension),
                       cache_dir=cache_dir)


@pytest.mark.parametrize("method", list(Method))
def test_every_method_finds_the_answering_document(corpus_dir: Path, embedder, method: Method) -> None:
    index = _index(corpus_dir, embedder)
    hits = index.search_documents("how do I make a copy of the database", 2, method=method)
    assert hits[0].document.document_id == "guide/storage.md"


def test_passage_hits_carry_offsets_into_the_source_and_scores_in_0_1(corpus_dir: Path, embedder) -> None:
    index = _index(corpus_dir, embedder)
    hits = index.search_passages("forecast for tomorrow: rain and wind", 10)
    assert hits[0].passage.document_id == "notes/weather.txt"
    for hit in hits:
        source = index.document(hit.passage.document_id).text
        assert source[hit.passage.start:hit.passage.end] == hit.passage.text
        assert 0.0 <= hit.score <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_document_filter_confines_the_search(corpus_dir: Path, embedder) -> None:
    index = _index(corpus_dir, embedder)
    hits = index.search_passages("pasta", 5, document_id="guide/install.md")
    assert hits and {h.passage.document_id for h in hits} == {"guide/install.md"}
    with pytest.raises(UnknownIdError, match="nope.md"):
        index.search_passages("pasta", 5, document_id="nope.md")


@pytest.mark.parametrize("query", ["", "   \n\t"])
def test_an_empty_query_is_refused(corpus_dir: Path, embedder, query: str) -> None:
    with pytest.raises(QueryError, match="empty"):
        _index(corpus_dir, embedder).search_passages(query)


def test_an_oversize_query_names_the_limit(corpus_dir: Path, embedder) -> None:
    with pytest.raises(QueryError, match=str(MAX_QUERY_CHARS)):
        _index(corpus_dir, embedder).search_passages("x" * (MAX_QUERY_CHARS + 1))


def test_a_query_of_unknown_words_only_still_answers(corpus_dir: Path, embedder) -> None:
    hits = _index(corpus_dir, embedder).search_passages("zzqx qqwv", 3)
    assert len(hits) == 3  # the dense side still ranks; no lexical term matched


def test_an_edited_file_re_embeds_only_its_own_passages(corpus_dir: Path, embedder, tmp_path_factory) -> None:
    cache = tmp_path_factory.mktemp("vectors")
    first = _index(corpus_dir, embedder, cache)
    before = embedder.embedded
    second = _index(corpus_dir, embedder, cache)
    assert embedder.embedded == before  # everything from the cache
    assert second.version == first.version
    (corpus_dir / "notes/weather.txt").write_text("Sunny and calm all week.\n", encoding="utf-8")
    third = _index(corpus_dir, embedder, cache)
    assert embedder.embedded == before + 1  # weather.txt is one passage
    assert third.version != first.version


_dense = st.dictionaries(st.integers(0, 30), st.floats(-1, 1), max_size=20)
_lexical = st.lists(st.floats(0, 50), min_size=31, max_size=31).map(lambda v: np.asarray(v, dtype=np.float32))


@given(dense=_dense, lexical=_lexical, limit=st.integers(1, 40), method=st.sampled_from(list(Method)))
def test_fused_scores_are_bounded_sorted_and_limited(dense, lexical, limit, method) -> None:
    fused = fuse(method, dense, lexical, limit)
    assert len(fused) <= limit
    assert all(0.0 <= s <= 1.0 + 1e-9 for _, s in fused)
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)
    assert len({i for i, _ in fused}) == len(fused)


def _fuse_over_every_passage(method: Method, dense: dict[int, float], lexical: np.ndarray, limit: int,
                             weight: float = 0.9) -> list[tuple[int, float]]:
    """The definition fuse must keep: every passage scored, then sorted (ties by index)."""
    best = float(lexical.max())
    relative = {i: float(lexical[i]) / best for i in range(len(lexical)) if lexical[i] > 0} if best > 0 else {}
    if method is Method.DENSE:
        scored = {i: max(c, 0.0) for i, c in dense.items()}
    elif method is Method.LEXICAL:
        scored = relative
    elif method is Method.RRF:
        lexical_order = [int(i) for i in np.argsort(-lexical, kind="stable")[:len(dense) or limit] if lexical[i] > 0]
        scores: dict[int, float] = {}
        for ranking in (sorted(dense, key=lambda i: -dense[i]), lexical_order):
            for rank, index in enumerate(ranking):
                scores[index] = scores.get(index, 0.0) + 1.0 / (60 + rank + 1)
        top = max(scores.values(), default=1.0)
        scored = {i: v / top for i, v in scores.items()}
    else:
        floor = max(min(dense.values()), 0.0) if dense else 0.0
        scored = {i: weight * max(dense.get(i, floor), 0.0) + (1 - weight) * relative.get(i, 0.0)
                  for i in {*dense, *relative}}
    return [(i, float(v)) for i, v in sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:limit]]


# Few distinct values, so ties (at the cut, among the dense hits) are common.
_tied_lexical = st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.5, 2.5, 7.0]), min_size=31, max_size=31).map(
    lambda v: np.asarray(v, dtype=np.float32))


@given(dense=st.dictionaries(st.integers(0, 30), st.sampled_from([-0.2, 0.1, 0.4, 0.4, 0.8]), max_size=12),
       lexical=_lexical | _tied_lexical, limit=st.integers(1, 40), method=st.sampled_from(list(Method)))
def test_fusion_scores_only_what_can_rank_and_ranks_as_if_it_scored_everything(dense, lexical, limit, method) -> None:
    assert fuse(method, dense, lexical, limit) == _fuse_over_every_passage(method, dense, lexical, limit)


class _InterruptedAfter:
    """The real embedder, stopped (as by Ctrl-C) once it has embedded `documents` documents."""

    def __init__(self, embedder, documents: int) -> None:
        self.inner, self.left = embedder, documents
        self.model_key, self.dimension, self.embed = embedder.model_key, embedder.dimension, embedder.embed
        self.token_offsets = embedder.token_offsets

    def submit_many(self, texts, **counts):  # the builder queues each document through this, in order
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return self.inner.submit_many(texts, **counts)


def test_an_interrupted_build_resumes_where_it_stopped(corpus_dir: Path, embedder, tmp_path_factory) -> None:
    cache = tmp_path_factory.mktemp("resume")
    documents = load_documents(CorpusSpec(roots=[corpus_dir]))
    with pytest.raises(KeyboardInterrupt):
        build_index(documents, _InterruptedAfter(embedder, 2), ExactStore(embedder.dimension), cache_dir=cache)
    before = embedder.embedded
    index = build_index(documents, embedder, ExactStore(embedder.dimension), cache_dir=cache)

    remaining = sum(len(chunk_document(d)) for d in documents[2:])
    assert embedder.embedded - before == remaining
    assert len(index.passages) == sum(len(chunk_document(d)) for d in documents)


def test_what_is_cached_is_served_before_the_rest_is_embedded(corpus_dir: Path, embedder, tmp_path_factory) -> None:
    cache = tmp_path_factory.mktemp("partial")
    documents = load_documents(CorpusSpec(roots=[corpus_dir]))
    build_index(documents[:2], embedder, ExactStore(embedder.dimension), cache_dir=cache)
    published: list[KnowledgeIndex] = []
    final = build_index(documents, embedder, ExactStore(embedder.dimension), cache_dir=cache,
                        publish=published.append)
    first = published[0]
    assert first.version.endswith("-partial") and set(first.documents) == {d.document_id for d in documents[:2]}
    assert first.search_passages("database backup", 3)  # a partial index answers
    assert published[-1] is final and not final.version.endswith("-partial")
    assert set(final.documents) == {d.document_id for d in documents}


def test_a_cancelled_build_stops_before_the_next_document(corpus_dir: Path, embedder, tmp_path_factory) -> None:
    from hexmcp.tools.knowledge.errors import IndexingCancelled

    documents = load_documents(CorpusSpec(roots=[corpus_dir]))
    calls: list[int] = []
    before = embedder.embedded
    with pytest.raises(IndexingCancelled, match="1 of 4"):
        build_index(documents, embedder, ExactStore(embedder.dimension), cache_dir=tmp_path_factory.mktemp("stop"),
                    cancelled=lambda: calls.append(1) is None and len(calls) > 1)
    assert embedder.embedded - before == len(chunk_document(documents[0]))


def test_documents_embedded_in_one_window_each_keep_their_own_vectors(corpus_dir: Path, embedder,
                                                                      tmp_path_factory) -> None:
    """The whole small corpus fits one window (its documents' passages queue together); what each
    document saves is exactly what embedding it alone gives, in its own passage order."""
    from hexmcp.tools.knowledge.builder import WINDOW_PASSAGES, VectorCache, vectors_key
    from hexmcp.tools.knowledge.embedder import PASSAGE_MAX_TOKENS
    from hexmcp.tools.knowledge.windows import passage_windows

    cache = tmp_path_factory.mktemp("window")
    documents = load_documents(CorpusSpec(roots=[corpus_dir]))
    chunks = {d.document_id: chunk_document(d) for d in documents}
    assert len(documents) > 1 and sum(map(len, chunks.values())) <= WINDOW_PASSAGES
    build_index(documents, embedder, ExactStore(embedder.dimension), cache_dir=cache)
    saved = VectorCache(cache / "knowledge")
    for document in documents:
        windows = [passage_windows(p, embedder.token_offsets, PASSAGE_MAX_TOKENS) for p in chunks[document.document_id]]
        held = saved.load(vectors_key(embedder.model_key, chunks[document.document_id]), len(windows),
                          embedder.dimension)
        assert held is not None, document.document_id
        vectors, counts = held
        assert counts.tolist() == [len(w) for w in windows]
        np.testing.assert_allclose(vectors, embedder.embed_many([t for w in windows for t in w]), atol=1e-6)


@pytest.mark.parametrize("text, headings, expected", [
    ("## Fake Timers", ("Fake Timers",), True),
    ("=================\nFAQ: Installation\n=================\n", ("FAQ: Installation",), True),
    ("Fake Timers\n-----------", ("Fake Timers",), True),
    ("## Fake Timers\n\nUse `jest.useFakeTimers()`.", ("Fake Timers",), False),
    ("A sentence under no heading.", (), False),
])
def test_a_passage_of_only_its_heading_is_told_apart(text: str, headings: tuple, expected: bool) -> None:
    from hexmcp.tools.knowledge.passages import Passage

    passage = Passage(passage_id="p-1", document_id="d.md", title="Doc", headings=headings, start=0, end=len(text),
                      text=text)
    assert passage.only_heading() is expected


def test_a_page_answers_with_a_passage_that_says_something() -> None:
    """search gives fetch a passage id: a heading-only best passage gives way to the document's best-ranked
    telling passage, else to the section opening after it, else stays (nothing better exists)."""
    from hexmcp.tools.knowledge.passages import Passage
    from hexmcp.tools.knowledge.retrieval import _telling

    def passage(n: int, document_id: str, text: str) -> Passage:
        return Passage(passage_id=f"p-{n}", document_id=document_id, title="T", headings=("Setup",), start=0,
                       end=len(text), text=text)

    passages = [passage(0, "a.md", "## Setup"), passage(1, "a.md", "Install it first."),
                passage(2, "a.md", "Then run it."), passage(3, "b.md", "## Setup"), passage(4, "c.md", "Other.")]
    assert _telling(passages, [(0, 0.9), (2, 0.5)], "a.md", 0) == 2  # the best-ranked telling one
    assert _telling(passages, [(0, 0.9), (4, 0.5)], "a.md", 0) == 1  # none ranked: the section's opening
    assert _telling(passages, [(3, 0.9), (4, 0.5)], "b.md", 3) == 3  # nothing after it in its document
    assert _telling(passages, [(1, 0.9)], "a.md", 1) == 1  # a telling best passage stays
