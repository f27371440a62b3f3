"""From a `--vector-store` spec string to an open store; a spec it cannot take is a `BAD_SPEC` error.

Spec forms:
- `memory`: the in-process store (the default);
- `qdrant+path:DIR`: qdrant-client's local mode, the collection kept in files under DIR;
- `qdrant-edge+path:DIR`: Qdrant Edge, Qdrant's own engine in this process, its shard kept in DIR;
- `qdrant+http://HOST:PORT` or `qdrant+https://…`: a Qdrant server or cluster; `?collection=NAME`
  picks the collection (default `hexmcp_passages`); the API key, if any, comes from the
  `QDRANT_API_KEY` environment variable, never from the command line.

Parsing (`parse_vector_store_spec`) is separate from opening so the composition root can refuse a bad
spec, or a local folder it could never use, before serving (exit 2) instead of after the background
build. A server URL is not contacted then: the server may come up later, and /health says if it has not.
"""

from __future__ import annotations

import enum
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit, urlunsplit

import attrs

from .collection import DEFAULT_COLLECTION
from .errors import VectorStoreError, VectorStoreErrorCode
from .qdrant_edge_folder import MISSING_PACKAGE, shard_problem

if TYPE_CHECKING:  # the port imports numpy, which checking a spec at start-up need not load
    from .port import VectorStore


#: The spec forms, as the error for an unknown one lists them.
SPEC_FORMS = ("memory", "qdrant+path:DIR", "qdrant-edge+path:DIR", "qdrant+http://HOST:PORT[?collection=NAME]", "qdrant+https://…")


class StoreKind(enum.Enum):
    MEMORY = "memory"  # in-process
    QDRANT_LOCAL = "qdrant+path"  # qdrant-client's local mode: files under a folder
    QDRANT_EDGE = "qdrant-edge+path"  # Qdrant Edge: Qdrant's engine in-process, its shard in a folder
    QDRANT_SERVER = "qdrant+url"  # a Qdrant server or cluster


@attrs.frozen(kw_only=True)
class VectorStoreSpec:
    """A parsed `--vector-store`: which store, and where (a folder or a URL without its query)."""

    kind: StoreKind
    location: str = ""
    collection: str = DEFAULT_COLLECTION


def parse_vector_store_spec(spec: str) -> VectorStoreSpec:
    """The spec's parts, or a BAD_SPEC error saying what is wrong with it; touches nothing."""
    text = spec.strip()
    if text == "memory":
        return VectorStoreSpec(kind=StoreKind.MEMORY)
    if text.startswith("qdrant+path:"):
        folder = text.removeprefix("qdrant+path:")
        if not folder:
            raise _bad(spec, "qdrant+path: needs a folder, e.g. qdrant+path:.hexmcp/qdrant")
        return VectorStoreSpec(kind=StoreKind.QDRANT_LOCAL, location=folder)
    if text.startswith("qdrant-edge+path:"):
        folder = text.removeprefix("qdrant-edge+path:")
        if not folder:
            raise _bad(spec, "qdrant-edge+path: needs a folder, e.g. qdrant-edge+path:.hexmcp/qdrant-edge")
        return VectorStoreSpec(kind=StoreKind.QDRANT_EDGE, location=folder)
    if text.startswith(("qdrant+http://", "qdrant+https://")):
        parts = urlsplit(text.removeprefix("qdrant+"))
        try:
            parts.port  # noqa: B018 (raises ValueError on a port that is not a number in range)
        except ValueError as error:
            raise _bad(spec, f"the Qdrant URL's port is unusable: {error}") from None
        if not parts.hostname:
            raise _bad(spec, "the Qdrant URL names no host")
        collection = parse_qs(parts.query).get("collection", [DEFAULT_COLLECTION])[-1]
        if not collection:
            raise _bad(spec, "?collection= needs a name")
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return VectorStoreSpec(kind=StoreKind.QDRANT_SERVER, location=url, collection=collection)
    raise _bad(spec, f"expected one of: {', '.join(SPEC_FORMS)}")


def check_vector_store_spec(spec: str) -> VectorStoreSpec:
    """`parse_vector_store_spec`, and for a local store that its folder exists as a writable folder or
    can be made; for Qdrant Edge also that its package is installed and the folder is empty or holds an
    Edge shard. A BAD_SPEC error otherwise. Creates nothing (a server that never starts leaves no trace)."""
    parsed = parse_vector_store_spec(spec)
    if parsed.kind in (StoreKind.QDRANT_LOCAL, StoreKind.QDRANT_EDGE):
        folder = Path(parsed.location).expanduser()
        problem = _folder_problem(folder)
        if problem is None and parsed.kind is StoreKind.QDRANT_EDGE:
            problem = _edge_problem(folder)
        if problem is not None:
            raise _bad(spec, problem)
    return parsed


def open_vector_store(spec: str, dimension: int) -> VectorStore:
    parsed = parse_vector_store_spec(spec)
    if parsed.kind is StoreKind.MEMORY:
        from .memory import MemoryVectorStore

        return MemoryVectorStore(dimension)
    if parsed.kind is StoreKind.QDRANT_EDGE:
        from .qdrant_edge import QdrantEdgeVectorStore

        return QdrantEdgeVectorStore(dimension, path=parsed.location)
    from .qdrant import QdrantVectorStore

    if parsed.kind is StoreKind.QDRANT_LOCAL:
        return QdrantVectorStore(dimension, path=parsed.location)
    return QdrantVectorStore(dimension, url=parsed.location, collection=parsed.collection,
                             api_key=os.environ.get("QDRANT_API_KEY"))


def _folder_problem(folder: Path) -> str | None:
    """Why `folder` could not hold the store's files, or None: the nearest existing ancestor must be
    a writable folder (a regular file on the way makes every later mkdir fail)."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def _edge_problem(folder: Path) -> str | None:
    """Why Qdrant Edge could not open `folder`, found without importing it (the dimension is checked on
    open, once the embedding model is known): the package missing, or the folder someone else's."""
    if importlib.util.find_spec("qdrant_edge") is None:
        return MISSING_PACKAGE
    return shard_problem(folder)


def _bad(spec: str, why: str) -> VectorStoreError:
    return VectorStoreError(VectorStoreErrorCode.BAD_SPEC, f"unusable vector store {spec!r}: {why}")
