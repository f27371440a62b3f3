"""The in-process vector store: exact numpy search while small, faiss HNSW beyond `ann_threshold` rows.

Rows live in slots of one growing float32 matrix. A delete or a replacing upsert only marks the old
slot dead (so an ANN graph built over the slots stays valid); once dead slots outnumber live ones the
store compacts: live rows are copied down in order and the graph, if any, is rebuilt. A search within
one document is always exact over that document's slots: a document holds few passages, and an ANN
walk with a filter that rejects nearly everything would be both slower and lossy.

Thread-safe: one lock serialises writers and readers (numpy and faiss release the GIL inside, so a
search is never slowed by more than the write it waits behind). The graph is built off the lock, on a
thread of its own (at that size it takes far longer than any search): searches stay exact until it is ready, then rows
written meanwhile are added and it takes over; a compaction meanwhile makes it stale and it is
dropped.

The design and its thresholds: docs/adr/0610-in-process-vector-store.md.
"""

from __future__ import annotations

import threading
from typing import Collection, Sequence

import numpy as np
import structlog

from .ann import HnswConfig, HnswIndex
from .port import VectorHit
from .rows import prepare_query, prepare_rows

#: Above this many live rows searches go through the HNSW graph: an exact search grows with the rows
#: and the graph's barely does, while below it the exact search is as fast and never misses.
ANN_THRESHOLD = 30_000
_INITIAL_CAPACITY = 1024

log = structlog.get_logger(__name__)


class MemoryVectorStore:
    def __init__(
        self, dimension: int, *, ann_threshold: int = ANN_THRESHOLD, ann_config: HnswConfig | None = None,
        build_in_background: bool = True,
    ) -> None:
        if dimension <= 0:
            raise ValueError(f"dimension must be positive; got {dimension}")
        self.dimension = dimension
        self._ann_threshold = ann_threshold
        self._ann_config = ann_config or HnswConfig()
        self._build_in_background = build_in_background
        self._lock = threading.RLock()
        self._generation = 0  # bumped whenever slots are renumbered: a graph of an older one is stale
        self._building: threading.Thread | None = None
        self._building_generation: int | None = None
        self._reset(_INITIAL_CAPACITY)

    def _reset(self, capacity: int) -> None:
        self._generation += 1
        self._matrix = np.zeros((capacity, self.dimension), dtype=np.float32)
        self._live = np.zeros(capacity, dtype=bool)
        self._used = 0  # slots handed out so far, live or dead
        self._slot_passage: list[str] = []
        self._slot_document: list[str] = []
        self._slot_of: dict[str, int] = {}
        self._document_slots: dict[str, set[int]] = {}
        self._ann: HnswIndex | None = None
        self._bitmap: np.ndarray | None = None  # packed live mask for the graph, rebuilt lazily

    @property
    def uses_ann(self) -> bool:
        """Whether unfiltered searches currently go through the HNSW graph."""
        return self._ann is not None

    def wait_for_graph(self, timeout: float | None = None) -> bool:
        """Wait for a graph build under way, if any; whether none is under way any more."""
        building = self._building
        if building is not None:
            building.join(timeout)
            return not building.is_alive()
        return True

    def __len__(self) -> int:
        return len(self._slot_of)

    def upsert(self, passage_ids: Sequence[str], vectors: np.ndarray, document_ids: Sequence[str]) -> None:
        ids, rows, documents = prepare_rows(passage_ids, vectors, document_ids, self.dimension)
        with self._lock:
            for passage_id in ids:
                self._kill(passage_id)
            first = self._used
            self._grow(first + len(ids))
            self._matrix[first : first + len(ids)] = rows
            self._live[first : first + len(ids)] = True
            self._used += len(ids)
            for offset, (passage_id, document_id) in enumerate(zip(ids, documents)):
                slot = first + offset
                self._slot_passage.append(passage_id)
                self._slot_document.append(document_id)
                self._slot_of[passage_id] = slot
                self._document_slots.setdefault(document_id, set()).add(slot)
            self._bitmap = None
            if self._ann is not None:
                self._ann.add(rows)
            self._maintain()

    def delete(self, passage_ids: Sequence[str]) -> None:
        with self._lock:
            for passage_id in passage_ids:
                self._kill(passage_id)
            self._maintain()

    def delete_document(self, document_id: str) -> None:
        with self._lock:
            for slot in sorted(self._document_slots.get(document_id, ())):
                self._kill(self._slot_passage[slot])
            self._maintain()

    def search(self, query: np.ndarray, limit: int, *, document_id: str | None = None,
               document_ids: Collection[str] | None = None) -> list[VectorHit]:
        vector = prepare_query(query, self.dimension)
        with self._lock:
            if limit <= 0 or not self._slot_of:
                return []
            if document_id is not None or document_ids is not None:
                wanted = [document_id] if document_id is not None else sorted(document_ids or ())
                slots = np.fromiter(sorted(s for d in wanted for s in self._document_slots.get(d, ())), dtype=np.int64)
                return self._exact(vector, limit, slots)
            if self._ann is not None:
                positions, scores = self._ann.search(vector, limit, self._live_bitmap())
                return self._hits(positions, scores)
            return self._exact(vector, limit, None)

    def close(self) -> None:
        with self._lock:
            self._reset(0)

    # -- internals ---------------------------------------------------------------------------------

    def _exact(self, vector: np.ndarray, limit: int, slots: np.ndarray | None) -> list[VectorHit]:
        if slots is None:
            scores = self._matrix[: self._used] @ vector
            scores[~self._live[: self._used]] = -np.inf
            candidates = len(self._slot_of)
        else:
            if not len(slots):
                return []
            scores = self._matrix[slots] @ vector
            candidates = len(slots)
        count = min(limit, candidates)
        top = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
        # Best score first; equal scores by slot, so the order is the same on every run.
        top = top[np.lexsort((top, -scores[top]))][:count]
        positions = top if slots is None else slots[top]
        return self._hits(positions, scores[top])

    def _hits(self, positions: np.ndarray, scores: np.ndarray) -> list[VectorHit]:
        return [
            # Clipped: float32 rounding can put a vector's similarity to itself a hair above 1.
            VectorHit(passage_id=self._slot_passage[int(slot)], score=min(1.0, max(-1.0, float(score))))
            for slot, score in zip(positions, scores)
        ]

    def _kill(self, passage_id: str) -> None:
        slot = self._slot_of.pop(passage_id, None)
        if slot is None:
            return
        self._live[slot] = False
        document_slots = self._document_slots[self._slot_document[slot]]
        document_slots.discard(slot)
        if not document_slots:
            del self._document_slots[self._slot_document[slot]]
        self._bitmap = None

    def _grow(self, needed: int) -> None:
        if needed <= len(self._matrix):
            return
        capacity = max(needed, 2 * len(self._matrix), _INITIAL_CAPACITY)
        matrix = np.zeros((capacity, self.dimension), dtype=np.float32)
        matrix[: self._used] = self._matrix[: self._used]
        live = np.zeros(capacity, dtype=bool)
        live[: self._used] = self._live[: self._used]
        self._matrix, self._live = matrix, live

    def _live_bitmap(self) -> np.ndarray:
        if self._bitmap is None:
            self._bitmap = np.packbits(self._live[: self._used], bitorder="little")
        return self._bitmap

    def _maintain(self) -> None:
        """Compact when dead slots outnumber live ones; build the graph once live rows pass the threshold."""
        live = len(self._slot_of)
        if self._used - live > live:
            self._compact()
        elif self._ann is None and live > self._ann_threshold and self._building_generation != self._generation:
            self._start_graph()

    def _compact(self) -> None:
        keep = np.flatnonzero(self._live[: self._used])
        rows = self._matrix[keep].copy()
        passages = [self._slot_passage[slot] for slot in keep]
        documents = [self._slot_document[slot] for slot in keep]
        self._reset(max(_INITIAL_CAPACITY, len(keep)))
        self._matrix[: len(keep)] = rows
        self._live[: len(keep)] = True
        self._used = len(keep)
        self._slot_passage, self._slot_document = passages, documents
        for slot, (passage_id, document_id) in enumerate(zip(passages, documents)):
            self._slot_of[passage_id] = slot
            self._document_slots.setdefault(document_id, set()).add(slot)
        if len(keep) > self._ann_threshold:
            self._start_graph()

    def _start_graph(self) -> None:
        rows, generation = self._matrix[: self._used].copy(), self._generation
        self._building_generation = generation
        if not self._build_in_background:
            self._finish_graph(rows, generation)
            return
        self._building = threading.Thread(
            target=self._finish_graph, args=(rows, generation), name="hnsw-build", daemon=True
        )
        self._building.start()

    def _finish_graph(self, rows: np.ndarray, generation: int) -> None:
        try:
            graph = HnswIndex(self.dimension, self._ann_config)
            graph.add(rows)
        except Exception as failure:  # out of memory, say: searches stay exact, which is slower, not wrong
            log.warning("cannot build the HNSW graph; searches stay exact", error=str(failure))
            graph = None
        with self._lock:
            if self._building_generation == generation:
                self._building_generation = None
            if graph is None or generation != self._generation:
                return  # the slots were renumbered meanwhile; the compaction started its own build
            graph.add(self._matrix[len(rows) : self._used])  # rows written while it was building
            self._ann = graph
            self._bitmap = None
