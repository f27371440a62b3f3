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


def build(terms: Sequence[Sequence[str]], k1: float = K1, b: float = B) -> tuple[dict[str, Any], dict[str, int]]:
    """bm25s's `scores` (CSC data, indices, indptr, num_docs) and `vocab_dict` for passages' `terms`, as
    `BM25(k1=k1, b=b).index(terms)` would set them. At least one passage must have a term."""
    n_docs = len(terms)
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=n_docs)
    vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)  # a new term gets the next id
    lookup = vocab.__getitem__
    flat = list(itertools.chain.from_iterable(terms))
    ids = np.empty(len(flat), dtype=np.int64)
    for start in range(0, len(flat), SLICE_TERMS):
        part = flat[start:start + SLICE_TERMS]
        ids[start:start + len(part)] = np.fromiter(map(lookup, part), dtype=np.int64, count=len(part))
    del flat
    n_vocab = len(vocab)

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
    vocab_dict = dict(vocab)
    if "" not in vocab_dict:
        vocab_dict[""] = n_vocab  # bm25s adds the empty token past the matrix's columns
    return ({"data": matrix.data, "indices": matrix.indices, "indptr": matrix.indptr, "num_docs": n_docs},
            vocab_dict)


def install(model: Any, terms: Sequence[Sequence[str]]) -> None:
    """Give a `bm25s.BM25()` (default parameters) the index `model.index(terms)` would build."""
    assert model.method == "lucene" and model.idf_method in (None, "lucene"), "only bm25s's default method"
    scores, vocab_dict = build(terms, k1=model.k1, b=model.b)
    model.nonoccurrence_array = None  # bm25s sets it only for its bm25l and bm25+ methods
    model.scores = scores
    model.vocab_dict = vocab_dict
    model.unique_token_ids_set = set(vocab_dict.values())
