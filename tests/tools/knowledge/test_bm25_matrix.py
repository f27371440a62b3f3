"""bm25_matrix builds the index bm25s's own `index()` builds: every passage's score for every query is the
same float32, so search rankings do not change."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge import bm25_matrix, lexical
from hexmcp.tools.knowledge.lexical import LexicalIndex

TERMS = st.sampled_from([f"w{n}" for n in range(30)] + ["", "é", "x" * 40])
CORPUS = st.lists(st.lists(TERMS, max_size=25).map(tuple), min_size=1, max_size=40).filter(any)


def by_bm25s(terms):
    model = bm25s.BM25()
    model.index([list(t) for t in terms], show_progress=False)
    return model


def by_arrays(terms):
    model = bm25s.BM25()
    bm25_matrix.install(model, terms)
    return model


@settings(max_examples=200, deadline=None)
@given(CORPUS, st.lists(st.lists(TERMS, min_size=1, max_size=4), min_size=1, max_size=5))
def test_every_score_is_bm25s_own(terms, queries):
    expected, built = by_bm25s(terms), by_arrays(terms)
    vocabulary = sorted({term for passage in terms for term in passage})
    assert sorted(built.vocab_dict) == sorted(expected.vocab_dict)
    assert built.scores["num_docs"] == expected.scores["num_docs"] == len(terms)
    assert len(built.scores["data"]) == len(expected.scores["data"])
    for query in [[term] for term in vocabulary] + queries:
        query = [term for term in query if term in built.vocab_dict and term != ""]
        if not query:
            continue
        want, got = expected.get_scores(query), built.get_scores(query)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_term_slices_do_not_change_ids(monkeypatch):
    terms = [tuple(f"t{(n * 7 + k) % 50}" for k in range(n % 9)) for n in range(200)]
    whole = bm25_matrix.build(terms)
    monkeypatch.setattr(bm25_matrix, "SLICE_TERMS", 3)
    sliced = bm25_matrix.build(terms)
    assert sliced[1] == whole[1]
    for key in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(sliced[0][key], whole[0][key])


def test_the_lexical_index_ranks_as_before():
    texts = ["Configure the cache backend", "Caching pages and configuring backends", "Database migrations",
             "Migrations of the database schema, run before tests", "", "the and of"]
    index = LexicalIndex(texts)
    reference = by_bm25s(index.terms)
    for query in ("cache configuration", "database", "migrating schemas", "backend"):
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=index._stemmer, show_progress=False,
                                return_ids=False)[0]
        np.testing.assert_array_equal(index.scores(query), np.asarray(reference.get_scores(tokens), dtype=np.float32))


def test_other_bm25_methods_are_refused():
    with pytest.raises(AssertionError):
        bm25_matrix.install(bm25s.BM25(method="bm25+"), [("a",)])


WORDS = st.sampled_from([f"w{n}" for n in range(40)] + ["the", "configure", "configured", "caching"])
TEXT = st.lists(WORDS, max_size=12).map(" ".join)
# A corpus after the first: each passage is a new text, or (a number) one of the previous corpus's passages kept.
NEXT = st.lists(st.one_of(st.integers(0, 1000), TEXT), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.lists(TEXT, min_size=1, max_size=30), steps=st.lists(NEXT, min_size=1, max_size=6),
       stale=st.sampled_from([2.0, 1.0, 0.0]))
def test_a_vocabulary_handed_on_gives_the_scores_of_a_fresh_build(monkeypatch, first, steps, stale):
    """Passages kept from the previous index keep their term ids (stale terms left in the vocabulary, or a
    vocabulary started anew when they are too many): every score is the one a fresh index gives."""
    monkeypatch.setattr(lexical, "STALE_VOCABULARY", stale)
    texts, index = first, LexicalIndex(first)
    for step in steps:
        reused = [item % len(texts) if isinstance(item, int) else None for item in step]
        now = [texts[r] if r is not None else item for r, item in zip(reused, step)]
        index = LexicalIndex([t if r is None else "" for t, r in zip(now, reused)], previous=index, reused=reused)
        fresh = LexicalIndex(now)
        assert index.terms == fresh.terms
        for query in ["w1", "w7 w3", "configuring caches", "the", "w39 w0 w12", "nothing"]:
            np.testing.assert_array_equal(index.scores(query), fresh.scores(query))
        texts = now
