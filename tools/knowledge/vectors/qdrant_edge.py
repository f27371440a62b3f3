"""Qdrant's own engine in this process: an adapter over Qdrant Edge (`qdrant-edge-py`, module `qdrant_edge`).

Qdrant Edge is Qdrant's storage, payload indexes and HNSW, compiled in Rust and run in-process on one
shard kept in a folder (segments, a write-ahead log and `edge_config.json`). Unlike qdrant-client's
local mode (a brute-force scan in Python) it searches an HNSW graph, and unlike a server it needs
nothing running beside hexmcp. Why and when: docs/adr/0612-qdrant-edge-vector-store.md.

What Edge leaves to its caller, and how this adapter does it:
- Indexing is manual: Edge has no background optimizer, and rows stay in a plain segment (an exact
  scan, in Rust) until `optimize()` builds their graph. The adapter optimizes once `optimize_after`
  rows have been written since the last time, and `wait_for_graph()` optimizes what is left. The
  binding holds the GIL while it optimizes (seconds to tens of seconds at 100,000 rows: the diary
  bench/diaries/knowledge_scale.md), so it runs in the writer's thread, between writes, never in a
  search; rows written after the last optimization are scanned exactly until the next.
- Point ids are the UUID5 of the passage id (point_ids.py); passage and document ids travel in the
  payload, with a keyword payload index on `document_id` so a one-document search or delete is
  Qdrant's own filtered search, not a scan.
- Only one shard may be open on a folder: Edge locks its write-ahead log, and the adapter reports
  that lock as the folder being in use.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Collection, Sequence

import numpy as np

from .errors import VectorStoreError, VectorStoreErrorCode
from .point_ids import point_id
from .port import VectorHit
from .qdrant_edge_folder import CONFIG_FILE, MISSING_PACKAGE, shard_problem
from .rows import prepare_query, prepare_rows

#: Rows written since the last optimization that make the write that reaches it build their HNSW graph:
#: an exact scan in Rust over fewer rows is quick, and one optimization over many rows costs less than
#: several over few (figures: bench/diaries/knowledge_scale.md).
OPTIMIZE_AFTER = 20_000
#: The graph's shape and search width: the in-process store's faiss settings (ADR 0610), so the two
#: engines are compared on equal terms; Edge's defaults (m 16, ef_construct 100) lost recall here.
HNSW_M, HNSW_EF_CONSTRUCT, HNSW_EF_SEARCH = 32, 128, 256
#: Qdrant's default: a segment under this many KB of vectors (a document's passages, say) is scanned, not walked.
FULL_SCAN_KB = 10_000
_BATCH = 512  # points per update call: bounded Python lists while converting
_DOCUMENT_FIELD = "document_id"


class QdrantEdgeVectorStore:
    def __init__(self, dimension: int, *, path: str, optimize_after: int = OPTIMIZE_AFTER) -> None:
        try:  # a 35 MB extension, paid only by those who choose Qdrant Edge (the `qdrant-edge` extra)
            import qdrant_edge
        except ModuleNotFoundError as missing:
            if missing.name != "qdrant_edge":  # a broken install of it says what broke, not "install it"
                raise
            raise VectorStoreError(VectorStoreErrorCode.UNAVAILABLE, MISSING_PACKAGE) from missing
        if dimension <= 0:
            raise ValueError(f"dimension must be positive; got {dimension}")
        self.dimension = dimension
        self._edge = qdrant_edge
        self._folder = Path(path).expanduser()
        self._optimize_after = optimize_after
        self._unoptimized = 0  # rows written since the last optimization
        self._search_params = qdrant_edge.SearchParams(hnsw_ef=HNSW_EF_SEARCH)
        self._lock = threading.RLock()  # Edge locks inside too; this one keeps close() from racing a call
        problem = shard_problem(self._folder, dimension)
        if problem is not None:
            raise VectorStoreError(VectorStoreErrorCode.UNAVAILABLE, f"cannot open Qdrant Edge at {self._folder}: {problem}")
        try:
            self._shard = self._open()
        except Exception as failure:  # the WAL's lock held, unreadable files: say where, not how
            raise VectorStoreError(VectorStoreErrorCode.UNAVAILABLE, self._open_failure(failure)) from failure

    def _open(self):
        edge = self._edge
        if (self._folder / CONFIG_FILE).is_file():
            shard = edge.EdgeShard.load(str(self._folder))
            if _DOCUMENT_FIELD in shard.info().payload_schema:
                return shard
        else:
            config = edge.EdgeConfig(
                vectors=edge.EdgeVectorParams(size=self.dimension, distance=edge.Distance.Cosine),
                hnsw_config=edge.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT, full_scan_threshold=FULL_SCAN_KB),
            )
            shard = edge.EdgeShard.create(str(self._folder), config)
        shard.update(edge.UpdateOperation.create_field_index(_DOCUMENT_FIELD, edge.PayloadSchemaType.Keyword))
        return shard

    def _open_failure(self, failure: Exception) -> str:
        text = str(failure)
        if "WouldBlock" in text:  # Edge's WAL is locked by a shard open on the folder, here or in another process
            return f"cannot open Qdrant Edge at {self._folder}: the folder is in use by another open store ({text})"
        return f"cannot open Qdrant Edge at {self._folder}: {type(failure).__name__}: {text}"

    @property
    def uses_ann(self) -> bool:
        """Whether any rows are in an HNSW-indexed segment (the rest are scanned exactly)."""
        with self._lock:
            return self._shard.info().indexed_vectors_count > 0

    def wait_for_graph(self, timeout: float | None = None) -> bool:
        """Build the graph of the rows written since the last optimization, now, in this thread (Edge
        has no background optimizer); `timeout` is accepted for the memory store's signature and not
        used. Always True: nothing is left under way."""
        with self._lock:
            if self._unoptimized:
                self._optimize()
        return True

    def _optimize(self) -> None:
        self._shard.optimize()
        # Flushing lets Edge drop the segments the optimization replaced and trim its write-ahead log;
        # without it they stay mapped, and the process held twice the memory (diary, run 5).
        self._shard.flush()
        self._unoptimized = 0

    def __len__(self) -> int:
        with self._lock:
            return int(self._shard.count(self._edge.CountRequest(exact=True)))

    def upsert(self, passage_ids: Sequence[str], vectors: np.ndarray, document_ids: Sequence[str]) -> None:
        ids, rows, documents = prepare_rows(passage_ids, vectors, document_ids, self.dimension)
        edge = self._edge
        with self._lock:
            for start in range(0, len(ids), _BATCH):
                points = [
                    edge.Point(point_id(pid), row, {"passage_id": pid, _DOCUMENT_FIELD: document})
                    for pid, row, document in zip(ids[start:start + _BATCH], rows[start:start + _BATCH].tolist(),
                                                   documents[start:start + _BATCH])
                ]
                self._shard.update(edge.UpdateOperation.upsert_points(points))
            self._unoptimized += len(ids)
            if self._unoptimized >= self._optimize_after:
                self._optimize()

    def delete(self, passage_ids: Sequence[str]) -> None:
        if passage_ids:
            with self._lock:
                self._shard.update(self._edge.UpdateOperation.delete_points([point_id(pid) for pid in passage_ids]))

    def delete_document(self, document_id: str) -> None:
        with self._lock:
            self._shard.update(self._edge.UpdateOperation.delete_points_by_filter(self._document_filter(document_id, None)))

    def search(self, query: np.ndarray, limit: int, *, document_id: str | None = None,
               document_ids: Collection[str] | None = None) -> list[VectorHit]:
        vector = prepare_query(query, self.dimension)
        if limit <= 0 or (document_id is None and document_ids is not None and not document_ids):
            return []
        edge = self._edge
        request = edge.QueryRequest(
            limit=limit, query=edge.Query.Nearest(vector.tolist()), with_payload=["passage_id"],
            filter=self._document_filter(document_id, document_ids), params=self._search_params,
        )
        with self._lock:
            points = self._shard.query(request)
        return [
            VectorHit(passage_id=point.payload["passage_id"], score=min(1.0, max(-1.0, float(point.score))))
            for point in points
        ]

    def close(self) -> None:
        """Write everything to the folder and release it (and the WAL's lock) for the next open."""
        with self._lock:
            self._shard.flush()
            self._shard.close()

    def _document_filter(self, document_id: str | None, document_ids: Collection[str] | None):
        edge = self._edge
        if document_id is not None:
            match = edge.MatchValue(document_id)
        elif document_ids is not None:
            match = edge.MatchAny(sorted(document_ids))
        else:
            return None
        return edge.Filter(must=[edge.FieldCondition(key=_DOCUMENT_FIELD, match=match)])
