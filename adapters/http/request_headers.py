"""Reading a request's headers: one value, all values, and what the client accepts."""

from __future__ import annotations

import functools

from .asgi import Scope

JSON = b"application/json"
SSE = b"text/event-stream"


HEADER_TABLE = "hexmcp.header_table"
"""Scope key of the request's headers as a dict, built on the first lookup: a request's headers are read
about eight times on the hot path (Host, Origin, Authorization, Content-Type, Accept, the session and
version headers), and a scan of the header list each time cost more than the protocol work they guard."""


def header_table(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers by lower-case name, built once per request; of a header sent twice the
    first value wins, as the scan this replaced read it. Hot code takes the table once and reads several
    names from it, instead of one `header` call per name."""
    table = scope.get(HEADER_TABLE)
    if table is None:
        raw = scope["headers"]
        table = dict(raw)
        if len(table) != len(raw):  # some name was sent twice (rare): let its first value win
            table = dict(reversed(raw))
        scope[HEADER_TABLE] = table
    return table  # type: ignore[no-any-return]


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header `name` (lower-case bytes), or None."""
    table = scope.get(HEADER_TABLE)  # built already, on the hot path: one call, not two
    return (table if table is not None else header_table(scope)).get(name)


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


def accepts(scope: Scope) -> tuple[bool, bool]:
    """(accepts JSON, accepts SSE) from the Accept header; no header at all means anything."""
    table = header_table(scope)
    value = table.get(b"accept")
    if value is None:
        return True, True
    if len(table) != len(scope["headers"]):  # some name was sent twice (rare): Accept, maybe
        value = b",".join(header_values(scope, b"accept"))
    return _accepted(value)


@functools.lru_cache(maxsize=256)  # a client sends the same Accept on every request
def _accepted(value: bytes) -> tuple[bool, bool]:
    text = value.lower()
    wildcard = b"*/*" in text
    return (JSON in text or b"application/*" in text or wildcard), (SSE in text or b"text/*" in text or wildcard)
