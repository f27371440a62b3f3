"""Reading a request's headers: one value, all values, and what the client accepts."""

from __future__ import annotations

import functools

from .asgi import Scope

JSON = b"application/json"
SSE = b"text/event-stream"


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header `name` (lower-case bytes), or None."""
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


def accepts(scope: Scope) -> tuple[bool, bool]:
    """(accepts JSON, accepts SSE) from the Accept header; no header at all means anything."""
    values = header_values(scope, b"accept")
    if not values:
        return True, True
    return _accepted(values[0] if len(values) == 1 else b",".join(values))


@functools.lru_cache(maxsize=256)  # a client sends the same Accept on every request
def _accepted(value: bytes) -> tuple[bool, bool]:
    text = value.lower()
    wildcard = b"*/*" in text
    return (JSON in text or b"application/*" in text or wildcard), (SSE in text or b"text/*" in text or wildcard)
