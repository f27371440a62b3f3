"""From a `--vector-store` spec string to an open store; a spec it cannot take is a `BAD_SPEC` error.

Spec forms:
- `memory`: the in-process store (the default);
- `qdrant+path:DIR`: Qdrant's local mode, the collection kept in files under DIR;
- `qdrant+http://HOST:PORT` or `qdrant+https://…`: a Qdrant server or cluster; `?collection=NAME`
  picks the collection (default `hexmcp_passages`); the API key, if any, comes from the
  `QDRANT_API_KEY` environment variable, never from the command line.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit, urlunsplit

from .errors import VectorStoreError, VectorStoreErrorCode
from .memory import MemoryVectorStore
from .port import VectorStore
from .qdrant import DEFAULT_COLLECTION, QdrantVectorStore

#: The spec forms, as the error for an unknown one lists them.
SPEC_FORMS = ("memory", "qdrant+path:DIR", "qdrant+http://HOST:PORT[?collection=NAME]", "qdrant+https://…")


def open_vector_store(spec: str, dimension: int) -> VectorStore:
    text = spec.strip()
    if text == "memory":
        return MemoryVectorStore(dimension)
    if text.startswith("qdrant+path:"):
        folder = text.removeprefix("qdrant+path:")
        if not folder:
            raise _bad(spec, "qdrant+path: needs a folder, e.g. qdrant+path:.hexmcp/qdrant")
        return QdrantVectorStore(dimension, path=folder)
    if text.startswith(("qdrant+http://", "qdrant+https://")):
        parts = urlsplit(text.removeprefix("qdrant+"))
        if not parts.hostname:
            raise _bad(spec, "the Qdrant URL names no host")
        collection = parse_qs(parts.query).get("collection", [DEFAULT_COLLECTION])[-1]
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return QdrantVectorStore(dimension, url=url, collection=collection, api_key=os.environ.get("QDRANT_API_KEY"))
    raise _bad(spec, f"expected one of: {', '.join(SPEC_FORMS)}")


def _bad(spec: str, why: str) -> VectorStoreError:
    return VectorStoreError(VectorStoreErrorCode.BAD_SPEC, f"unusable vector store {spec!r}: {why}")
