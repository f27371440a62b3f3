"""BM25 over passages with bm25s (sparse-matrix BM25: rank-bm25 scores in pure Python),
English stop words removed and Snowball-stemmed (PyStemmer) so "indexing" meets "indexed".

Each passage's terms are kept beside the index: a re-index after a file change reuses the unchanged
passages' terms and stems only the changed ones. BM25's weights depend on the whole corpus (document
frequencies, average length), so the sparse matrix itself is built whole each time, from kept terms, by
bm25_matrix.py (bm25s's scores with array steps rather than bm25s's Python loop per passage, which held the
GIL for most of a re-index: bench/diaries/knowledge_scale.md)."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Sequence

import numpy as np

from . import bm25_matrix

Terms = tuple[str, ...]  # one passage's stemmed terms, stop words removed, in order


class LexicalIndex:
    def __init__(self, texts: Sequence[str], known: Sequence[Terms | None] | None = None) -> None:
        """`known`: each text's terms where an earlier index already has them (None where not); the rest are
        stemmed here, and only those `texts` are read. Scores are the same either way (tests/tools/knowledge/test_knowledge_incremental.py)."""
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at debug

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._stemming = threading.Lock()  # searches run in worker threads; a PyStemmer object is not shared
        self.size = len(texts)
        self._model = bm25s.BM25()
        self.terms: list[Terms] = list(known) if known is not None else [None] * len(texts)  # type: ignore[list-item]
        missing = [i for i, terms in enumerate(self.terms) if terms is None]
        if missing:
            # Interned: the same term in many passages is one string, so keeping the terms costs pointers.
            for i, terms in zip(missing, self._terms([texts[i] for i in missing])):
                self.terms[i] = tuple(sys.intern(term) for term in terms)
        # Passages of nothing but stop words leave no vocabulary, which bm25s cannot index: every score is 0.
        self._indexed = any(self.terms)
        if self._indexed:
            bm25_matrix.install(self._model, self.terms)

    def _terms(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, show_progress=False,
                                    return_ids=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for `query` (zeros where no query term occurs)."""
        if not self._indexed:
            return np.zeros(self.size, dtype=np.float32)
        with self._stemming:
            tokens = self._bm25s.tokenize([query], stopwords="en", stemmer=self._stemmer, show_progress=False,
                                          return_ids=False)[0]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._model.get_scores(tokens), dtype=np.float32)
