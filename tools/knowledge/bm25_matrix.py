"""The BM25 score matrix bm25s builds (its default "lucene" method), built with whole-array numpy steps
instead of bm25s's Python loop per passage and per term.

A re-index after a file change rebuilds this matrix for the whole corpus (BM25's weights depend on every
passage). bm25s does it with a Counter, a set intersection and a few small numpy calls per passage and a
Python call per vocabulary entry, all holding the GIL, which is what a search arriving during a re-index
waited behind. Here the only per-term Python is mapping terms to ids, done in slices so the interpreter can
hand the GIL to a request between them; the rest is sorting and arithmetic on arrays.

Every score is the same float32 bm25s computes (same operations, same order, same float64 intermediates;
tests/tools/knowledge/test_bm25_matrix.py compares them), so rankings do not change. Column numbers differ
(bm25s numbers its vocabulary in set order, which string hashing makes differ between processes anyway)."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

K1 = 1.5  # bm25s.BM25() defaults
B = 0.75
SLICE_TERMS = 20_000  # terms mapped to ids per step: a request waits at most one step for the GIL


def _idf_lucene(df: int, n_docs: int) -> float:
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))  # bm25s.scoring._score_idf_lucene


class Vocabulary:
    """Term ids that outlive one build. A re-index hands its predecessor's vocabulary on, so a passage that
    did not change keeps its id array and only changed passages' terms are looked up: the per-term Python
    of a build is proportional to what changed. Ids are only ever added, so ids mapped for one build are
    valid in every later one; a term no passage holds any more keeps its id and its column stays empty
    (no score: the same as a term outside the vocabulary). One build at a time adds to a vocabulary (the
    service re-indexes under a lock); indexes already built keep their own copy of the term-to-id dict."""

    def __init__(self) -> None:
        self._ids: defaultdict[str, int] = defaultdict(itertools.count().__next__)  # a new term: the next id

    def __len__(self) -> int:
        return len(self._ids)

    def handed_on(self) -> Vocabulary:
        """The same ids in a dict of the next build's own: the index being replaced keeps its vocabulary as it
        was, and a build that fails leaves the serving index's untouched."""
        vocabulary = Vocabulary()
        vocabulary._ids = defaultdict(itertools.count(len(self._ids)).__next__, self._ids)
        return vocabulary

    def ids_of(self, terms: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """The passages' term ids end to end (int32) and each passage's count, mapped in slices so the
        interpreter can hand the GIL to a request between them (a slice is a C loop that never lets go of it)."""
        lookup = self._ids.__getitem__
        lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
        flat = list(itertools.chain.from_iterable(terms))
        ids = np.empty(len(flat), dtype=np.int32)
        for start in range(0, len(flat), SLICE_TERMS):
            part = flat[start:start + SLICE_TERMS]
            ids[start:start + len(part)] = np.fromiter(map(lookup, part), dtype=np.int32, count=len(part))
        return ids, lengths

    def as_dict(self) -> dict[str, int]:
        """A copy for one index's queries (a later build adds to this vocabulary), with the empty token bm25s
        adds past the matrix's columns."""
        vocab_dict = dict(self._ids)
        if "" not in vocab_dict:
            vocab_dict[""] = len(self._ids)
        return vocab_dict


def build(terms: Sequence[Sequence[str]], k1: float = K1, b: float = B) -> tuple[dict[str, Any], dict[str, int]]:
    """bm25s's `scores` (CSC data, indices, indptr, num_docs) and `vocab_dict` for passages' `terms`, as
    `BM25(k1=k1, b=b).index(terms)` would set them. At least one passage must have a term."""
    vocabulary = Vocabulary()
    scores, _ = build_from_ids(*vocabulary.ids_of(terms), len(vocabulary), k1, b)
    return scores, vocabulary.as_dict()


def gather(previous: tuple[np.ndarray, np.ndarray], reused: Sequence[int | None],
           new: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Term ids end to end and counts for passages that are each either `previous`'s passage number `reused[i]`
    or, where that is None, the next of `new`'s, in order: whole-array steps, one array pair per index rather
    than an array per passage."""
    (old_ids, old_lengths), (new_ids, new_lengths) = previous, new
    source = np.fromiter((-1 if r is None else r for r in reused), dtype=np.int64, count=len(reused))
    kept = source >= 0
    lengths = np.empty(len(reused), dtype=np.int64)
    lengths[kept] = old_lengths[source[kept]]
    lengths[~kept] = new_lengths
    starts = np.empty(len(reused), dtype=np.int64)
    starts[kept] = (np.cumsum(old_lengths) - old_lengths)[source[kept]]
    starts[~kept] = np.cumsum(new_lengths) - new_lengths + len(old_ids)
    positions = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
    return np.concatenate((old_ids, new_ids))[positions], lengths


def build_from_ids(flat_ids: np.ndarray, lengths: np.ndarray, n_vocab: int, k1: float = K1, b: float = B
                   ) -> tuple[dict[str, Any], int]:
    """The same `scores` from the passages' term ids end to end and each passage's count (`n_vocab`: ids are
    below it), and how many terms occur in some passage (the rest of the vocabulary is stale)."""
    n_docs = len(lengths)
    ids = flat_ids.astype(np.int64)

    # One entry per (passage, term) with its count, ordered by passage then term id.
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    pairs, tf = np.unique(docs * n_vocab + ids, return_counts=True)
    doc_idx, voc_idx = np.divmod(pairs, n_vocab)
    doc_freq = np.bincount(voc_idx, minlength=n_vocab)

    # idf per distinct document frequency, by bm25s's own formula in Python floats, stored as float32.
    distinct, where = np.unique(doc_freq, return_inverse=True)
    idf = np.array([_idf_lucene(int(df), n_docs) for df in distinct], dtype=np.float32)[where]

    # bm25s per passage: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf), with l_avg a numpy float64, so in
    # float64; times the float32 idf, stored as float32.
    avg_len = np.array(lengths).mean()
    norm = k1 * ((1 - b) + b * lengths.astype(np.float64) / avg_len)
    tf64 = tf.astype(np.float32).astype(np.float64)
    tfc = tf64 / (norm[doc_idx] + tf64)
    scores = (idf[voc_idx].astype(np.float64) * tfc).astype(np.float32)

    matrix = sp.csc_matrix((scores, (doc_idx.astype(np.int32), voc_idx.astype(np.int32))),
                           shape=(n_docs, n_vocab), dtype=np.float32)
    return ({"data": matrix.data, "indices": matrix.indices, "indptr": matrix.indptr, "num_docs": n_docs},
            int(np.count_nonzero(doc_freq)))


def install(model: Any, terms: Sequence[Sequence[str]]) -> None:
    """Give a `bm25s.BM25()` (default parameters) the index `model.index(terms)` would build."""
    _check(model)
    scores, vocab_dict = build(terms, k1=model.k1, b=model.b)
    _set(model, scores, vocab_dict)


def install_ids(model: Any, ids: tuple[np.ndarray, np.ndarray], vocabulary: Vocabulary) -> int:
    """The same from the passages' ids in `vocabulary` (end to end, and each passage's count): scores equal to
    `install`'s for those passages' terms; stale terms of the vocabulary answer no passage. Returns how many
    terms occur in some passage."""
    _check(model)
    scores, live = build_from_ids(*ids, len(vocabulary), k1=model.k1, b=model.b)
    _set(model, scores, vocabulary.as_dict())
    return live


def _check(model: Any) -> None:
    assert model.method == "lucene" and model.idf_method in (None, "lucene"), "only bm25s's default method"


def _set(model: Any, scores: dict[str, Any], vocab_dict: dict[str, int]) -> None:
    model.nonoccurrence_array = None  # bm25s sets it only for its bm25l and bm25+ methods
    model.scores = scores
    model.vocab_dict = vocab_dict
    model.unique_token_ids_set = set(vocab_dict.values())
