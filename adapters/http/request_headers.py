"""Reading request headers: the media types, all values of one header, and what an Accept value accepts.

A request's own header table (first value of each name, built once) is `request.HttpRequest.headers`.
"""

from __future__ import annotations

import functools

from .asgi import Scope

JSON = b"application/json"
SSE = b"text/event-stream"


def is_json(content_type: bytes | None) -> bool:
    """Whether a Content-Type names JSON (`application/json`, parameters such as a charset allowed).

    What keeps a browser page from posting a tool call without a CORS preflight: `text/plain`, a form
    encoding or no type at all are what a cross-origin page may send unasked."""
    if content_type == JSON:  # what nearly every client sends: no splitting for it
        return True
    if content_type is None:
        return False
    return content_type.split(b";", 1)[0].strip().lower() == JSON


def unsupported_coding(content_encoding: bytes | None) -> str | None:
    """The Content-Encoding of a body when it names anything but `identity`, for a 415 that says so; None
    when there is none to undo.

    Bodies are read as sent: nothing is decompressed, so a compressed body can be no bomb, and is refused
    for what it is (RFC 9110 §8.4) rather than parsed as JSON that is "not valid UTF-8", or, under a coding
    that leaves the bytes readable, served as though the header said nothing."""
    if content_encoding is None:
        return None
    if all(coding.strip().lower() in (b"identity", b"") for coding in content_encoding.split(b",")):
        return None
    return content_encoding.decode("latin-1").strip()[:100]


def coding_refusal(coding: str) -> str:
    return f"Unsupported Media Type: Content-Encoding {coding!r} is not supported; send the body uncompressed"


ACCEPT_IDENTITY = [(b"accept-encoding", b"identity")]
"""What a 415 for a content coding names as acceptable (RFC 9110 §12.5.3)."""


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


@functools.lru_cache(maxsize=256)  # a client sends the same Accept on every request
def accepted(value: bytes) -> tuple[bool, bool]:
    """(accepts JSON, accepts SSE) from an Accept header's value."""
    text = value.lower()
    wildcard = b"*/*" in text
    return (JSON in text or b"application/*" in text or wildcard), (SSE in text or b"text/*" in text or wildcard)
