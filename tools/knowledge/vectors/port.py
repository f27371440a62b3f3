"""The vector-store port: what the knowledge base needs from a place that keeps passage vectors.

Vectors are L2-normalised float32 rows of one fixed dimension, so a score is the cosine similarity
(inner product). Ids are the passages' stable ids (strings); each row may carry a `document_id` so a
search can be confined to one document. Implementations: the in-process store (exact search while
small, an ANN index beyond) and an adapter for a distributed vector database.
"""

from __future__ import annotations

from typing import Collection, Protocol, Sequence

import attrs
import numpy as np


@attrs.frozen(kw_only=True)
class VectorHit:
    """One search result: the passage id and its cosine similarity to the query (-1..1)."""

    passage_id: str
    score: float


class VectorStore(Protocol):
    dimension: int

    def upsert(self, passage_ids: Sequence[str], vectors: np.ndarray, document_ids: Sequence[str]) -> None:
        """Insert or replace rows; `vectors` is (n, dimension) float32, L2-normalised."""

    def delete(self, passage_ids: Sequence[str]) -> None:
        """Remove rows by id; unknown ids are ignored."""

    def delete_document(self, document_id: str) -> None:
        """Remove every row of one document."""

    def search(self, query: np.ndarray, limit: int, *, document_id: str | None = None,
               document_ids: Collection[str] | None = None) -> list[VectorHit]:
        """The `limit` rows most similar to `query` (dimension,), best first; optionally within one
        document, or within a set of documents (a client's version or path filter)."""

    def __len__(self) -> int:
        """How many rows the store holds."""

    def close(self) -> None:
        """Release files, connections and threads."""
