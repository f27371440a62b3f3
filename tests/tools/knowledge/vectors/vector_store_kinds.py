"""Every store the contract tests run against, opened the way production opens it, plus the reference.

`STORE_KINDS` names each store configuration; `open_store(kind, dimension, folder)` opens a fresh one.
`memory-ann` sets the threshold to 0 and builds in the foreground, so every search walks the HNSW graph; `qdrant-local` is
qdrant-client's local mode on disk (the same client code that talks to a cluster by URL); `qdrant-edge` is Qdrant
Edge through its spec, and `qdrant-edge-hnsw` the same store optimizing after every write with an HNSW graph built
over even a few rows, so its searches walk Qdrant's graph rather than a plain segment.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hexmcp.tools.knowledge.vectors import MemoryVectorStore, VectorHit, VectorStore, open_vector_store

STORE_KINDS = ("memory-exact", "memory-ann", "qdrant-local", "qdrant-edge", "qdrant-edge-hnsw")


def open_store(kind: str, dimension: int, folder: Path) -> VectorStore:
    if kind == "memory-exact":
        return MemoryVectorStore(dimension, ann_threshold=10**9)
    if kind == "memory-ann":
        return MemoryVectorStore(dimension, ann_threshold=0, build_in_background=False)
    if kind == "qdrant-local":
        return open_vector_store(f"qdrant+path:{folder}", dimension)
    if kind == "qdrant-edge":
        return open_vector_store(f"qdrant-edge+path:{folder / 'edge'}", dimension)
    if kind == "qdrant-edge-hnsw":
        return open_edge_with_graph(dimension, folder / "edge")
    raise AssertionError(f"unknown store kind {kind}")


def open_edge_with_graph(dimension: int, folder: Path, optimize_after: int = 1) -> VectorStore:
    """Qdrant Edge optimizing after every write (or once `optimize_after` rows are written), with thresholds low enough that any segment gets its
    HNSW graph and a search walks it (Qdrant otherwise scans segments under 10,000 KB exactly)."""
    import qdrant_edge as edge

    from hexmcp.tools.knowledge.vectors.qdrant_edge import QdrantEdgeVectorStore

    config = edge.EdgeConfig(
        vectors=edge.EdgeVectorParams(size=dimension, distance=edge.Distance.Cosine),
        hnsw_config=edge.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=1),
        optimizers=edge.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=1),
    )
    edge.EdgeShard.create(str(folder), config).close()  # the store loads the shard with its configuration
    return QdrantEdgeVectorStore(dimension, path=str(folder), optimize_after=optimize_after)


class ReferenceRows:
    """What a store should hold after a sequence of calls: the port's semantics by brute force."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[np.ndarray, str]] = {}

    def upsert(self, ids: list[str], vectors: np.ndarray, documents: list[str]) -> None:
        for passage_id, vector, document_id in zip(ids, vectors, documents, strict=True):
            self.rows[passage_id] = (vector / np.linalg.norm(vector), document_id)

    def delete(self, ids: list[str]) -> None:
        for passage_id in ids:
            self.rows.pop(passage_id, None)

    def delete_document(self, document_id: str) -> None:
        self.delete([pid for pid, (_, doc) in self.rows.items() if doc == document_id])

    def search(self, query: np.ndarray, limit: int, document_id: str | None = None,
               document_ids: frozenset[str] | None = None) -> list[VectorHit]:
        unit = query / np.linalg.norm(query)
        hits = [
            VectorHit(passage_id=pid, score=float(vector @ unit))
            for pid, (vector, doc) in self.rows.items()
            if (document_id is None or doc == document_id) and (document_ids is None or doc in document_ids)
        ]
        return sorted(hits, key=lambda hit: -hit.score)[: max(limit, 0)]
