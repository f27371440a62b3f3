"""Checks and normalisation shared by every store, so all of them refuse the same input the same way."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import VectorStoreError, VectorStoreErrorCode


def prepare_rows(
    passage_ids: Sequence[str], vectors: np.ndarray, document_ids: Sequence[str], dimension: int
) -> tuple[list[str], np.ndarray, list[str]]:
    """Validated ids and L2-normalised float32 rows; within one batch the last row of an id wins."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dimension:
        raise VectorStoreError(
            VectorStoreErrorCode.BAD_SHAPE, f"vectors must have shape (n, {dimension}); got {matrix.shape}"
        )
    ids, docs = list(passage_ids), list(document_ids)
    if not (len(ids) == len(docs) == matrix.shape[0]):
        raise VectorStoreError(
            VectorStoreErrorCode.BAD_IDS,
            f"{len(ids)} passage ids, {matrix.shape[0]} vectors and {len(docs)} document ids must be as many",
        )
    for value in (*ids, *docs):
        if not isinstance(value, str) or not value:
            raise VectorStoreError(VectorStoreErrorCode.BAD_IDS, f"ids must be non-empty strings; got {value!r}")
    matrix = _normalised(matrix, "vector")
    last = {passage_id: index for index, passage_id in enumerate(ids)}
    if len(last) != len(ids):  # keep the final occurrence of each id, in batch order
        keep = sorted(last.values())
        return [ids[i] for i in keep], np.ascontiguousarray(matrix[keep]), [docs[i] for i in keep]
    return ids, np.ascontiguousarray(matrix), docs


def prepare_query(query: np.ndarray, dimension: int) -> np.ndarray:
    """The query as one L2-normalised float32 row of shape (dimension,)."""
    vector = np.asarray(query, dtype=np.float32)
    if vector.shape != (dimension,):
        raise VectorStoreError(
            VectorStoreErrorCode.BAD_SHAPE, f"query must have shape ({dimension},); got {vector.shape}"
        )
    return _normalised(vector[None, :], "query")[0]


def _normalised(matrix: np.ndarray, what: str) -> np.ndarray:
    # Rows are normalised here even though the port asks callers for unit rows: it is idempotent for
    # them and keeps every score a true cosine when one is not, whichever store holds it.
    if not np.isfinite(matrix).all():
        raise VectorStoreError(VectorStoreErrorCode.BAD_VALUE, f"a {what} holds NaN or infinity")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise VectorStoreError(VectorStoreErrorCode.BAD_VALUE, f"a {what} is all zeros and has no direction")
    return matrix / norms
