"""The searchable knowledge base: passages, their BM25 index and their vectors in a VectorStore.

Queries go through `clean_query` (one place for the empty/oversize rules every tool shares), then
both retrievers, then `fusion.fuse`. Document search ranks a document by its best passage.
"""

from __future__ import annotations

from typing import Sequence

import attrs
import numpy as np

from .errors import UnknownIdError
from .fusion import DENSE_WEIGHT, Method, fuse
from .lexical import LexicalIndex
from .passages import Passage, SourceDocument
from .queries import clean_query
from .vectors.port import VectorStore

DENSE_DEPTH = 100  # dense candidates per query before fusion


@attrs.frozen(kw_only=True)
class PassageHit:
    passage: Passage
    score: float


@attrs.frozen(kw_only=True)
class DocumentHit:
    document: SourceDocument
    best: PassageHit


class KnowledgeIndex:
    """Read-only once built; a rebuilt corpus is a new KnowledgeIndex (swapped in whole)."""

    def __init__(self, documents: Sequence[SourceDocument], passages: Sequence[Passage], embed_query: object,
                 store: VectorStore, version: str) -> None:
        self.documents = {d.document_id: d for d in documents}
        self.passages = list(passages)
        self.version = version
        self._by_id = {p.passage_id: i for i, p in enumerate(self.passages)}
        self._lexical = LexicalIndex([p.indexed_text() for p in self.passages])
        self._embed_query = embed_query
        self._store = store
        self.dense_weight = DENSE_WEIGHT  # a knob for bench/relevance.py, not a serving setting

    def passage(self, passage_id: str) -> Passage:
        try:
            return self.passages[self._by_id[passage_id]]
        except KeyError:
            raise UnknownIdError("passage", passage_id) from None

    def document(self, document_id: str) -> SourceDocument:
        try:
            return self.documents[document_id]
        except KeyError:
            raise UnknownIdError("document", document_id) from None

    def embed_query(self, text: str) -> np.ndarray:
        """The query encoder's vector for `text` (L2-normalised), for callers that search by vector."""
        return self._embed_query(text)  # type: ignore[operator]

    def nearest_passages(self, vector: np.ndarray, limit: int) -> list[tuple[Passage, float]]:
        """The passages whose vectors are nearest `vector`, with their cosines, best first."""
        hits = self._store.search(vector, limit) if self.passages else []
        return [(self.passages[self._by_id[h.passage_id]], h.score) for h in hits if h.passage_id in self._by_id]

    def search_passages(self, query: str, limit: int = 10, *, document_id: str | None = None,
                        method: Method = Method.HYBRID) -> list[PassageHit]:
        text = clean_query(query)
        if document_id is not None:
            self.document(document_id)
        lexical = self._lexical.scores(text) if method is not Method.DENSE else np.zeros(len(self.passages))
        if document_id is not None:
            lexical = np.where([p.document_id == document_id for p in self.passages], lexical, 0.0)
        dense: dict[int, float] = {}
        if method is not Method.LEXICAL and self.passages:
            vector = self._embed_query(text)  # type: ignore[operator]
            hits = self._store.search(vector, max(DENSE_DEPTH, limit), document_id=document_id)
            dense = {self._by_id[h.passage_id]: h.score for h in hits if h.passage_id in self._by_id}
        return [PassageHit(passage=self.passages[i], score=min(max(s, 0.0), 1.0))
                for i, s in fuse(method, dense, lexical, limit, self.dense_weight)]

    def search_documents(self, query: str, limit: int = 10, *, method: Method = Method.HYBRID) -> list[DocumentHit]:
        best: dict[str, PassageHit] = {}
        for hit in self.search_passages(query, max(DENSE_DEPTH, limit * 10), method=method):
            best.setdefault(hit.passage.document_id, hit)
        return [DocumentHit(document=self.documents[d], best=h) for d, h in list(best.items())[:limit]]
