"""BM25 over passages with bm25s (sparse-matrix BM25: rank-bm25 scores in pure Python),
English stop words removed and Snowball-stemmed (PyStemmer) so "indexing" meets "indexed".

Each passage's terms are kept beside the index: a re-index after a file change reuses the unchanged
passages' terms and term ids (a vocabulary handed on: ADRs 0614, 0615) and stems and looks up only the changed ones.
BM25's weights depend on the whole corpus (document frequencies, average length), so the sparse matrix itself
is built whole each time, from kept term ids, by
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
STALE_VOCABULARY = 2  # a vocabulary up to this multiple of the terms in use is handed on


class LexicalIndex:
    def __init__(self, texts: Sequence[str], known: Sequence[Terms | None] | None = None,
                 previous: LexicalIndex | None = None, reused: Sequence[int | None] | None = None) -> None:
        """`known`: each text's terms where an earlier index already has them (None where not); the rest are
        stemmed here, and only those `texts` are read. Or `previous` and `reused`: for each text, the number of
        the same passage in `previous` (None for a new or changed one), whose terms and term ids are taken as
        they are. Scores are the same either way (tests/tools/knowledge/test_knowledge_incremental.py)."""
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at debug

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._stemming = threading.Lock()  # searches run in worker threads; a PyStemmer object is not shared
        self.size = len(texts)
        self._model = bm25s.BM25()
        keep = previous is not None and reused is not None and previous._vocabulary_fresh()
        if previous is not None and reused is not None:
            known = [None if i is None else previous.terms[i] for i in reused]
        self.terms: list[Terms] = list(known) if known is not None else [None] * len(texts)  # type: ignore[list-item]
        missing = [i for i, terms in enumerate(self.terms) if terms is None]
        if missing:
            # Interned: the same term in many passages is one string, so keeping the terms costs pointers.
            for i, terms in zip(missing, self._terms([texts[i] for i in missing])):
                self.terms[i] = tuple(sys.intern(term) for term in terms)
        # Passages of nothing but stop words leave no vocabulary, which bm25s cannot index: every score is 0.
        self._indexed = any(self.terms)
        # The passages' term ids (end to end, and each one's count) in a vocabulary handed from index to index
        # (bm25_matrix.Vocabulary): a passage kept from `previous` keeps its ids, only changed ones are looked up.
        self._vocabulary = previous._vocabulary.handed_on() if keep else bm25_matrix.Vocabulary()  # type: ignore[union-attr]
        if keep:
            new = self._vocabulary.ids_of([self.terms[i] for i, r in enumerate(reused) if r is None])  # type: ignore[arg-type]
            self.ids = bm25_matrix.gather(previous.ids, reused, new)  # type: ignore[union-attr,arg-type]
        else:
            self.ids = self._vocabulary.ids_of(self.terms)
        self._live_terms = 0
        if self._indexed:
            self._live_terms = bm25_matrix.install_ids(self._model, self.ids, self._vocabulary)

    def _vocabulary_fresh(self) -> bool:
        """Whether the vocabulary is worth handing on: terms no passage holds any more (edited away) take a
        column each, so once they outnumber the live ones the next index starts a vocabulary anew."""
        return len(self._vocabulary) <= STALE_VOCABULARY * max(self._live_terms, 1)

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
