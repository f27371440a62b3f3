"""Transports: each turns a `Target` into a `Wire` the dispatcher sends through (see `base.py`)."""

from __future__ import annotations

from ..target import Target, Transport
from .base import Inbox, Wire


def wire_for(target: Target, *, auth_token: str | None = None) -> Wire:
    """The wire for `target`; transports are imported here, on demand, so `hexmcp call --stdio` never
    pays for importing aiohttp or websockets."""
    headers = {"authorization": f"Bearer {auth_token}"} if auth_token else {}
    if target.transport is Transport.STDIO:
        from .stdio import StdioWire

        return StdioWire(target.command)
    if target.transport is Transport.HTTP:
        from .http import HttpWire

        return HttpWire(str(target.url), headers=headers)
    if target.transport is Transport.REST:
        from .rest import RestWire

        return RestWire(str(target.url), headers=headers)
    from .ws import WsWire

    return WsWire(str(target.url), chatgpt=target.transport is Transport.WS_CHATGPT, headers=headers)


__all__ = ["Inbox", "Wire", "wire_for"]
