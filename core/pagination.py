"""Opaque cursors for every list: an offset, encoded so clients do not build their own."""

from __future__ import annotations

import base64
from typing import Sequence, TypeVar

from .errors import ErrorCode, ProtocolError

T = TypeVar("T")


def page(items: Sequence[T], cursor: str | None, size: int) -> tuple[list[T], str | None]:
    start = _decode(cursor) if cursor else 0
    end = start + size
    next_cursor = _encode(end) if end < len(items) else None
    return list(items[start:end]), next_cursor


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def _decode(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, offset = text.partition(":")
        if kind != "o" or not offset.isdigit():
            raise ValueError
        return int(offset)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid cursor", {"path": "$.cursor"}) from None
