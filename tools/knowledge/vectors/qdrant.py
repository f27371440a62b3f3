"""The distributed-database adapter: Qdrant through `qdrant-client`.

One client API for every deployment: `QdrantClient(path=...)` keeps the collection in local files
(tests, a single machine, no server), `QdrantClient(url=...)` talks to a Qdrant server or cluster,
whose sharding and replication are Qdrant's own. A point's id is the UUID5 of its passage id
(point_ids.py), and the passage and document ids travel in its payload. Why Qdrant over Milvus and when to leave the in-process store:
docs/adr/0611-distributed-vector-store.md.
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from .collection import DEFAULT_COLLECTION
from .errors import VectorStoreError, VectorStoreErrorCode
from .point_ids import point_id
from .port import VectorHit
from .rows import prepare_query, prepare_rows

_BATCH = 512  # points per upsert request: bounded request bodies for a remote cluster


class QdrantVectorStore:
    def __init__(
        self, dimension: int, *, url: str | None = None, path: str | None = None,
        collection: str = DEFAULT_COLLECTION, api_key: str | None = None,
    ) -> None:
        try:  # a heavy import, paid only by those who choose Qdrant (the `qdrant` extra)
            from qdrant_client import QdrantClient, models
        except ModuleNotFoundError as missing:
            if missing.name != "qdrant_client":  # a broken install of it says what broke, not "install it"
                raise
            raise VectorStoreError(
                VectorStoreErrorCode.UNAVAILABLE, "the Qdrant store needs qdrant-client: pip install 'hexmcp[qdrant]'"
            ) from missing
        self.dimension = dimension
        self._models = models
        self._collection = collection
        self._remote = url is not None
        try:
            self._client = QdrantClient(url=url, api_key=api_key) if url else QdrantClient(path=path)
            self._ensure_collection()
        except VectorStoreError:
            raise
        except Exception as failure:  # connection refused, locked folder, bad URL: say where, not how
            where = url or path
            raise VectorStoreError(
                VectorStoreErrorCode.UNAVAILABLE, f"cannot open Qdrant at {where}: {type(failure).__name__}: {failure}"
            ) from failure

    def _ensure_collection(self) -> None:
        models = self._models
        if self._client.collection_exists(self._collection):
            vectors = self._client.get_collection(self._collection).config.params.vectors
            size = vectors.size if isinstance(vectors, models.VectorParams) else None
            if size != self.dimension:
                raise VectorStoreError(
                    VectorStoreErrorCode.UNAVAILABLE,
                    f"Qdrant collection {self._collection!r} holds vectors of dimension {size}, "
                    f"the embedding model makes {self.dimension}",
                )
            return
        self._client.create_collection(
            self._collection,
            vectors_config=models.VectorParams(size=self.dimension, distance=models.Distance.COSINE),
        )
        if self._remote:  # local mode has no payload indexes (it scans), a server needs one to filter fast
            self._client.create_payload_index(
                self._collection, field_name="document_id", field_schema=models.PayloadSchemaType.KEYWORD
            )

    def __len__(self) -> int:
        return int(self._client.count(self._collection, exact=True).count)

    def upsert(self, passage_ids: Sequence[str], vectors: np.ndarray, document_ids: Sequence[str]) -> None:
        ids, rows, documents = prepare_rows(passage_ids, vectors, document_ids, self.dimension)
        for start in range(0, len(ids), _BATCH):
            chunk = slice(start, start + _BATCH)
            self._client.upsert(
                self._collection,
                points=self._models.Batch(
                    ids=[point_id(pid) for pid in ids[chunk]],
                    vectors=rows[chunk].tolist(),
                    payloads=[{"passage_id": p, "document_id": d} for p, d in zip(ids[chunk], documents[chunk])],
                ),
                wait=True,
            )

    def delete(self, passage_ids: Sequence[str]) -> None:
        if passage_ids:
            selector = self._models.PointIdsList(points=[point_id(pid) for pid in passage_ids])
            self._client.delete(self._collection, points_selector=selector, wait=True)

    def delete_document(self, document_id: str) -> None:
        selector = self._models.FilterSelector(filter=self._document_filter(document_id, None))
        self._client.delete(self._collection, points_selector=selector, wait=True)

    def search(self, query: np.ndarray, limit: int, *, document_id: str | None = None,
               document_ids: Collection[str] | None = None) -> list[VectorHit]:
        vector = prepare_query(query, self.dimension)
        if limit <= 0:
            return []
        response = self._client.query_points(
            self._collection,
            query=vector.tolist(),
            limit=limit,
            query_filter=self._document_filter(document_id, document_ids),
            with_payload=["passage_id"],
        )
        return [
            VectorHit(passage_id=point.payload["passage_id"], score=min(1.0, max(-1.0, float(point.score))))
            for point in response.points
        ]

    def close(self) -> None:
        self._client.close()

    def _document_filter(self, document_id: str | None, document_ids: Collection[str] | None):
        models = self._models
        if document_id is not None:
            match = models.MatchValue(value=document_id)
        elif document_ids is not None:
            match = models.MatchAny(any=sorted(document_ids))
        else:
            return None
        return models.Filter(must=[models.FieldCondition(key="document_id", match=match)])
