"""The one JSON encoder: compact UTF-8 bytes, non-ASCII text as is, for every wire and every text block.

orjson writes nearly everything: the standard library's encoder is several times slower here, and every
message and tool result goes through this. What orjson refuses goes on to orjson with OPT_NON_STR_KEYS
(non-string dict keys become strings, as `json.dumps` does them), which slows every value down and so is
only tried once a plain call failed, and then to the standard library (integers beyond 64 bits, or a
real error, which it raises).

JSON encoded once can stand for its value inside a larger one (`embedded`): a tool's structured content
is encoded for its text block, and the same bytes are written as `structuredContent` (`routing.Ok`).

The design and its trade-offs: docs/adr/0401-json-codec.md.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return _refused(value, 0)


def dumps_line(value: Any) -> bytes:
    """`dumps` with the newline that ends a message on a line-delimited wire, written by orjson itself
    (no copy of a large answer to append one byte)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return _refused(value, orjson.OPT_APPEND_NEWLINE)


def embedded(encoded: bytes) -> Any:
    """JSON that `dumps` made, to stand for its value inside a larger one: written as is, not walked again."""
    return orjson.Fragment(encoded)


def _refused(value: Any, option: int) -> bytes:
    try:
        return orjson.dumps(value, option=option | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_unembedded).encode()
        return encoded + b"\n" if option & orjson.OPT_APPEND_NEWLINE else encoded


def _unembedded(value: Any) -> Any:
    """For the standard library, which cannot write raw JSON: an embedded value decoded again (a Fragment
    keeps its bytes to itself; orjson hands them back). The stdlib reads big integers exactly."""
    if isinstance(value, orjson.Fragment):
        return json.loads(orjson.dumps(value))
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
