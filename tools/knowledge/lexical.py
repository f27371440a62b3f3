"""BM25 over passages with bm25s (sparse-matrix BM25: rank-bm25 scores in pure Python),
English stop words removed and Snowball-stemmed (PyStemmer) so "indexing" meets "indexed"."""

from __future__ import annotations

import logging
import threading
from typing import Sequence

import numpy as np


class LexicalIndex:
    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at debug

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._stemming = threading.Lock()  # searches run in worker threads; a PyStemmer object is not shared
        self.size = len(texts)
        self._model = bm25s.BM25()
        if texts:
            self._model.index(self._tokenize(list(texts)), show_progress=False)

    def _tokenize(self, texts: list[str]) -> object:
        return self._bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for `query` (zeros where no query term occurs)."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        with self._stemming:
            tokens = self._bm25s.tokenize([query], stopwords="en", stemmer=self._stemmer, show_progress=False,
                                          return_ids=False)[0]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._model.get_scores(tokens), dtype=np.float32)
