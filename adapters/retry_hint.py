"""The retry hint a refusal carries, and its HTTP form.

A rejection that wants the client back later (a rate limit) puts `retryAfterSeconds` in its data: JSON-RPC
clients (stdio, WebSocket, Streamable HTTP bodies) read it there; HTTP clients get the same wait as a
`Retry-After` header, which holds whole seconds only (RFC 9110 §10.2.3), so it is rounded up, never down.
"""

from __future__ import annotations

import math
from typing import Any

RETRY_AFTER_KEY = "retryAfterSeconds"


def retry_after_seconds(data: Any) -> float | None:
    """The hint in a rejection's data, or None when it has none (or a value that is not a wait)."""
    value = data.get(RETRY_AFTER_KEY) if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def retry_after_header(data: Any) -> list[tuple[bytes, bytes]]:
    """`[(b"retry-after", b"N")]` for a rejection's data carrying a hint, else no headers."""
    seconds = retry_after_seconds(data)
    if seconds is None:
        return []
    return [(b"retry-after", str(max(1, math.ceil(seconds))).encode())]
