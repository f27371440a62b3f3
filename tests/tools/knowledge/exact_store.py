"""A brute-force VectorStore for the knowledge tests that must not depend on the in-process
store's ANN settings: exact inner products over every row, the port's semantics and nothing else."""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from hexmcp.tools.knowledge.vectors.port import VectorHit


class ExactStore:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.rows: dict[str, tuple[np.ndarray, str]] = {}

    def upsert(self, passage_ids: Sequence[str], vectors: np.ndarray, document_ids: Sequence[str]) -> None:
        for pid, vector, doc in zip(passage_ids, vectors, document_ids, strict=True):
            self.rows[pid] = (np.asarray(vector, dtype=np.float32), doc)

    def delete(self, passage_ids: Sequence[str]) -> None:
        for pid in passage_ids:
            self.rows.pop(pid, None)

    def delete_document(self, document_id: str) -> None:
        self.delete([pid for pid, (_, doc) in self.rows.items() if doc == document_id])

    def search(self, query: np.ndarray, limit: int, *, document_id: str | None = None,
               document_ids: Collection[str] | None = None) -> list[VectorHit]:
        hits = [VectorHit(passage_id=pid, score=float(vector @ query)) for pid, (vector, doc) in self.rows.items()
                if (document_id is None or doc == document_id) and (document_ids is None or doc in document_ids)]
        return sorted(hits, key=lambda h: (-h.score, h.passage_id))[:limit]

    def __len__(self) -> int:
        return len(self.rows)

    def close(self) -> None:
        self.rows.clear()
