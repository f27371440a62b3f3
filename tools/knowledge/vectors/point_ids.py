"""Qdrant point ids for passages: Qdrant takes integers or UUIDs, passages have string ids.

A point's id is the UUID5 of its passage id in a fixed namespace, so the same passage is the same point
on every machine and in every run; the passage id itself travels in the point's payload. Shared by the
qdrant-client adapter (qdrant.py) and the Qdrant Edge one (qdrant_edge.py).
"""

from __future__ import annotations

import uuid

_POINT_NAMESPACE = uuid.UUID("6f0c8e52-3a57-4d0e-9f61-2d1c4b7a9e10")  # fixed: point ids must not change between runs


def point_id(passage_id: str) -> str:
    return str(uuid.uuid5(_POINT_NAMESPACE, passage_id))
