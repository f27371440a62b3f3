"""From a `--vector-store` spec string to an open store; a spec it cannot take is a `BAD_SPEC` error."""

from __future__ import annotations

from .errors import VectorStoreError, VectorStoreErrorCode
from .memory import MemoryVectorStore
from .port import VectorStore

#: The spec forms, as the error for an unknown one lists them.
SPEC_FORMS = ("memory",)


def open_vector_store(spec: str, dimension: int) -> VectorStore:
    text = spec.strip()
    if text == "memory":
        return MemoryVectorStore(dimension)
    raise VectorStoreError(
        VectorStoreErrorCode.BAD_SPEC, f"unknown vector store {spec!r}; expected one of: {', '.join(SPEC_FORMS)}"
    )
