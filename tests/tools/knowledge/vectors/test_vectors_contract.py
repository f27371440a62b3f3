"""The vector-store contract, run against every store: the same answers as exact search (within ANN
recall bounds), upsert/delete/filter semantics, refusals with semantic codes, ordering and score range."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vector_store_kinds import STORE_KINDS, ReferenceRows, open_store

from hexmcp.tools.knowledge.vectors import VectorStore, VectorStoreError, VectorStoreErrorCode

DIMENSION = 8


def vector(seed: int, dimension: int = DIMENSION) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dimension).astype(np.float32)


def assert_same_answers(store: VectorStore, reference: ReferenceRows, query: np.ndarray, limit: int,
                        document_id: str | frozenset[str] | None = None) -> None:
    """`document_id` a string confines the search to one document, a set to those documents."""
    one, several = (document_id, None) if not isinstance(document_id, frozenset) else (None, document_id)
    got = store.search(query, limit, document_id=one, document_ids=several)
    want = reference.search(query, limit, one, several)
    # Scores are compared position by position and each hit against its own true score, so rows with
    # equal scores (duplicate vectors) may come in either order without hiding a wrong answer.
    assert len(got) == len(want)
    assert len({hit.passage_id for hit in got}) == len(got)
    np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-5)
    unit = query / np.linalg.norm(query)
    for hit in got:
        row, row_document = reference.rows[hit.passage_id]
        assert one is None or row_document == one
        assert several is None or row_document in several
        assert hit.score == pytest.approx(float(row @ unit), abs=1e-5)


ids = st.integers(0, 24).map(lambda i: f"passage-{i}")
documents = st.integers(0, 3).map(lambda i: f"doc-{i}")
operations = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.lists(st.tuples(ids, documents, st.integers(0, 10**6)), min_size=1, max_size=8)),
        st.tuples(st.just("delete"), st.lists(ids, max_size=6)),
        st.tuples(st.just("delete_document"), documents),
    ),
    max_size=10,
)


@pytest.mark.parametrize("kind", STORE_KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=operations, query_seed=st.integers(0, 10**6), limit=st.integers(0, 30), filter_by=st.none() | documents | st.frozensets(documents, max_size=3))
def test_any_sequence_of_writes_answers_as_exact_search(kind, steps, query_seed, limit, filter_by):
    reference = ReferenceRows()
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(kind, DIMENSION, Path(folder))
        try:
            for name, argument in steps:
                if name == "upsert":
                    batch_ids = [pid for pid, _, _ in argument]
                    batch_docs = [doc for _, doc, _ in argument]
                    batch = np.stack([vector(seed) for _, _, seed in argument])
                    store.upsert(batch_ids, batch, batch_docs)
                    reference.upsert(batch_ids, batch, batch_docs)
                else:
                    getattr(store, name)(argument)
                    getattr(reference, name)(argument)
            assert len(store) == len(reference.rows)
            assert_same_answers(store, reference, vector(query_seed), limit, filter_by)
        finally:
            store.close()


@pytest.fixture(params=STORE_KINDS)
def kind(request) -> str:
    return request.param


@pytest.fixture
def store(kind, tmp_path):
    opened = open_store(kind, DIMENSION, tmp_path)
    yield opened
    opened.close()


def test_upsert_replaces_the_vector_and_the_document(store):
    store.upsert(["a", "b"], np.stack([vector(1), vector(2)]), ["doc-1", "doc-1"])
    store.upsert(["a"], vector(3)[None, :], ["doc-2"])
    assert len(store) == 2
    assert [h.passage_id for h in store.search(vector(3), 5, document_id="doc-1")] == ["b"]
    (best,) = store.search(vector(3), 1, document_id="doc-2")
    assert best.passage_id == "a" and best.score == pytest.approx(1.0, abs=1e-5)


def test_deletes_ignore_unknown_ids_and_documents(store):
    store.upsert(["a", "b", "c"], np.stack([vector(i) for i in range(3)]), ["x", "x", "y"])
    store.delete(["nope", "a"])
    store.delete_document("no-such-document")
    assert len(store) == 2
    store.delete_document("x")
    assert [h.passage_id for h in store.search(vector(0), 10)] == ["c"]
    assert store.search(vector(0), 10, document_id="x") == []


def test_results_are_best_first_with_cosine_scores(store):
    rows = np.stack([vector(i) * (i + 1) for i in range(20)])  # unnormalised on purpose
    store.upsert([f"p{i}" for i in range(20)], rows, ["d"] * 20)
    hits = store.search(vector(7) * 50, 20)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert hits[0].passage_id == "p7" and hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_an_empty_store_answers_nothing(store):
    assert len(store) == 0
    assert store.search(vector(1), 10) == []
    assert store.search(vector(1), 10, document_id="d") == []


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda s: s.upsert(["a"], np.ones((1, DIMENSION + 1), np.float32), ["d"]), VectorStoreErrorCode.BAD_SHAPE),
        (lambda s: s.upsert(["a"], np.ones(DIMENSION, np.float32), ["d"]), VectorStoreErrorCode.BAD_SHAPE),
        (lambda s: s.upsert(["a"], np.full((1, DIMENSION), np.nan, np.float32), ["d"]), VectorStoreErrorCode.BAD_VALUE),
        (lambda s: s.upsert(["a"], np.zeros((1, DIMENSION), np.float32), ["d"]), VectorStoreErrorCode.BAD_VALUE),
        (lambda s: s.upsert(["a", "b"], np.ones((1, DIMENSION), np.float32), ["d"]), VectorStoreErrorCode.BAD_IDS),
        (lambda s: s.upsert([""], np.ones((1, DIMENSION), np.float32), ["d"]), VectorStoreErrorCode.BAD_IDS),
        (lambda s: s.search(np.ones(DIMENSION - 1, np.float32), 3), VectorStoreErrorCode.BAD_SHAPE),
        (lambda s: s.search(np.zeros(DIMENSION, np.float32), 3), VectorStoreErrorCode.BAD_VALUE),
    ],
)
def test_bad_input_is_refused_with_its_code_and_changes_nothing(store, call, code):
    store.upsert(["kept"], vector(1)[None, :], ["d"])
    with pytest.raises(VectorStoreError) as refused:
        call(store)
    assert refused.value.code is code
    assert [h.passage_id for h in store.search(vector(1), 5)] == ["kept"]


def test_approximate_search_keeps_recall_against_exact(kind, tmp_path):
    # 3,000 clustered rows: the memory-ann kind walks its HNSW graph here; the bound is what the
    # knowledge base may lose before fusion (measured figures at 50,000 rows: bench/search.py).
    dimension = 32
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((60, dimension))
    rows = (centres[rng.integers(0, 60, 3000)] + 0.5 * rng.standard_normal((3000, dimension))).astype(np.float32)
    ids = [f"p{i}" for i in range(3000)]
    wide = open_store(kind, dimension, tmp_path)
    try:
        wide.upsert(ids, rows, [f"d{i % 50}" for i in range(3000)])
        reference = ReferenceRows()
        reference.upsert(ids, rows, [f"d{i % 50}" for i in range(3000)])
        recalls = []
        for q in range(40):
            query = rows[q * 70] + 0.3 * rng.standard_normal(dimension).astype(np.float32)
            got = {h.passage_id for h in wide.search(query, 10)}
            recalls.append(len(got & {h.passage_id for h in reference.search(query, 10)}) / 10)
        assert np.mean(recalls) >= 0.95
    finally:
        wide.close()

