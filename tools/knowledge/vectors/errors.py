"""The one error the vector stores raise: a caller handed rows, a query or a store spec they cannot take.

Each carries a semantic `code` (a member of `VectorStoreErrorCode`) so the knowledge base can map it
to `invalid_params` or a start-up failure without parsing the message. It is the shared
`KnowledgeIndexError` too, which is what the concept tools see of it.
"""

from __future__ import annotations

import enum

from hexmcp.tools.ports import KnowledgeIndexError


class VectorStoreErrorCode(enum.Enum):
    """Why a vector-store call was refused."""

    #: Vectors or query of the wrong shape, dtype or dimension.
    BAD_SHAPE = "bad_shape"
    #: A vector holds NaN or infinity, or is all zeros (it has no direction to compare).
    BAD_VALUE = "bad_value"
    #: Ids, vectors and document ids differ in count, or an id is not a non-empty string.
    BAD_IDS = "bad_ids"
    #: A `--vector-store` spec that names no known store or lacks its location.
    BAD_SPEC = "bad_spec"
    #: The store's backing service or files could not be opened.
    UNAVAILABLE = "unavailable"


class VectorStoreError(KnowledgeIndexError, ValueError):
    def __init__(self, code: VectorStoreErrorCode, message: str) -> None:
        super().__init__(message, unavailable=code is VectorStoreErrorCode.UNAVAILABLE)
        self.code = code
