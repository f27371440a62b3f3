"""The approximate index the in-process store switches to beyond its threshold: faiss's HNSW graph.

Positions in the graph are the store's slots, added in slot order, so a faiss id *is* a slot. faiss's
HNSW cannot remove a node, so the store's deleted slots are masked at query time with a bitmap
selector (faiss then walks through them but never returns them) until the store compacts and rebuilds.
Why faiss and these parameters: docs/adr/0610-in-process-vector-store.md.
"""

from __future__ import annotations

import attrs
import numpy as np


@attrs.frozen(kw_only=True)
class HnswConfig:
    """Graph degree, build-time and query-time beam widths (faiss's M, efConstruction, efSearch)."""

    neighbours: int = 32
    build_beam: int = 128
    search_beam: int = 256


class HnswIndex:
    def __init__(self, dimension: int, config: HnswConfig) -> None:
        import faiss  # imported only once a store outgrows exact search: it costs start-up time

        self._faiss = faiss
        self._config = config
        self._index = faiss.IndexHNSWFlat(dimension, config.neighbours, faiss.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = config.build_beam

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, rows: np.ndarray) -> None:
        """Append rows; the first gets position len(self)."""
        if len(rows):
            self._index.add(np.ascontiguousarray(rows, dtype=np.float32))

    def search(self, query: np.ndarray, limit: int, live_bitmap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions and inner products of up to `limit` live rows, best first.

        `live_bitmap` is the live mask packed little-endian (bit i of byte i>>3 set when position i
        is live), the layout faiss's IDSelectorBitmap reads; it must cover len(self) positions.
        """
        faiss = self._faiss
        selector = faiss.IDSelectorBitmap(len(self), faiss.swig_ptr(live_bitmap))
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(self._config.search_beam, limit))
        scores, positions = self._index.search(query[None, :], limit, params=params)
        found = positions[0] >= 0  # faiss pads with -1 when fewer rows qualify
        return positions[0][found], scores[0][found]
