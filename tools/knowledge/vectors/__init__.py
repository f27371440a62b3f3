"""Vector stores behind one port: an in-process default and a real vector database adapter.

`open_vector_store(spec, dimension)` turns the `--vector-store` option into a store:
- `memory` (the default): `MemoryVectorStore`, exact search while small, faiss HNSW beyond;
- `qdrant+path:DIR`, `qdrant+http(s)://HOST:PORT[?collection=NAME]`: `QdrantVectorStore`.
"""

from .errors import VectorStoreError, VectorStoreErrorCode
from .factory import open_vector_store
from .memory import MemoryVectorStore
from .port import VectorHit, VectorStore

__all__ = [
    "MemoryVectorStore",
    "VectorHit",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreErrorCode",
    "open_vector_store",
]
