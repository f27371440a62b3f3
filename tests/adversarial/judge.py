"""What counts as a clean answer to hostile input: a clear refusal, or a clean close; never a crash.

A refusal is a 4xx (or 503 with Retry-After: a cap, which says when to come back) whose body says what
was wrong: a JSON-RPC error object, the REST dialect's error body, or the HTTP parser's one-line text.
Never a 5xx, never a traceback or a Python exception's repr in the body, and never silence: the server
answers, or closes the connection, within the exchange's time.
"""

from __future__ import annotations

import json
from typing import Any

from .raw_http import Exchange, Response

LEAKS = (b"Traceback (most recent call last)", b'File "/', b"Internal Server Error")


def leaked(body: bytes) -> bytes | None:
    """The first sign of a crash report in a body, if any."""
    return next((marker for marker in LEAKS if marker in body), None)


def is_rpc_error(message: Any) -> bool:
    error = message.get("error") if isinstance(message, dict) else None
    return isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)


def assert_clear_refusal(response: Response, what: str) -> None:
    """`response` to hostile input is a clear 4xx (or a 503 at a cap)."""
    assert 400 <= response.status < 500 or (response.status == 503 and response.header(b"retry-after")), \
        f"{what}: answered {response.status}: {response.body[:300]!r}"
    assert_no_leak(response, what)
    content_type = (response.header(b"content-type") or b"").split(b";")[0].strip()
    if content_type == b"application/json":
        message = json.loads(response.body)
        rest_error = isinstance(message, dict) and isinstance(message.get("error"), str) and "message" in message
        assert is_rpc_error(message) or rest_error, f"{what}: {response.status} without an error object: {message}"
    else:
        assert response.body.strip(), f"{what}: {response.status} with an empty body says nothing"


def assert_no_leak(response: Response, what: str) -> None:
    marker = leaked(response.body)
    assert marker is None, f"{what}: {marker!r} in the body: {response.body[:500]!r}"


def assert_sane(response: Response, what: str) -> None:
    """Any answer at all: not a 5xx (bar a 503 at a cap), no crash report, and a 4xx that says why."""
    if response.status >= 400:
        assert_clear_refusal(response, what)
    else:
        assert_no_leak(response, what)


def assert_answered_or_closed(exchange: Exchange, what: str) -> None:
    """The server neither crashed on the input nor left the connection hanging past its own deadlines."""
    assert exchange.responses or exchange.closed, \
        f"{what}: no answer and the connection still open after {exchange.elapsed_s:.1f} s " \
        f"(received {exchange.leftover[:200]!r})"
    for response in exchange.responses:
        assert_sane(response, what)
