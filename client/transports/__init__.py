"""Transports: each turns a `Target` into a `Wire` the dispatcher sends through (see `base.py`)."""

from __future__ import annotations

from ..target import Target, Transport
from .base import MAX_MESSAGE_BYTES, Inbox, Wire


def wire_for(target: Target, *, auth_token: str | None = None, max_message_bytes: int = MAX_MESSAGE_BYTES) -> Wire:
    """The wire for `target`; transports are imported here, on demand, so `hexmcp call --stdio` never
    pays for importing aiohttp or websockets. `max_message_bytes` bounds each message read from it."""
    headers = {"authorization": f"Bearer {auth_token}"} if auth_token else {}
    if max_message_bytes <= 0:
        raise ValueError(f"max_message_bytes must be positive, got {max_message_bytes}")
    if target.transport is Transport.STDIO:
        from .stdio import StdioWire

        return StdioWire(target.command, max_message_bytes=max_message_bytes)
    if target.transport is Transport.HTTP:
        from .http import HttpWire

        return HttpWire(str(target.url), headers=headers, max_message_bytes=max_message_bytes)
    if target.transport is Transport.REST:
        from .rest import RestWire

        return RestWire(str(target.url), headers=headers, max_message_bytes=max_message_bytes)
    from .ws import WsWire

    return WsWire(str(target.url), chatgpt=target.transport is Transport.WS_CHATGPT, headers=headers,
                  max_message_bytes=max_message_bytes)


__all__ = ["MAX_MESSAGE_BYTES", "Inbox", "Wire", "wire_for"]
