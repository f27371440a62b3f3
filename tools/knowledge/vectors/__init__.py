"""Vector stores behind one port: an in-process default and a real vector database adapter.

`open_vector_store(spec, dimension)` turns the `--vector-store` option into a store:
- `memory` (the default): `MemoryVectorStore`, exact search while small, faiss HNSW beyond;
- `qdrant+path:DIR`, `qdrant+http(s)://HOST:PORT[?collection=NAME]`: `QdrantVectorStore`.

Names load on first use (PEP 562): the composition root checks a spec and catches `VectorStoreError`
at start-up, which must not pay for numpy and faiss before the first index build does.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "MemoryVectorStore": ".memory",
    "VectorHit": ".port",
    "VectorStore": ".port",
    "VectorStoreError": ".errors",
    "VectorStoreErrorCode": ".errors",
    "check_vector_store_spec": ".factory",
    "open_vector_store": ".factory",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
