"""Noticing that a client has gone while its request is still being worked on."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from .asgi import Receive


async def wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def until_done_or_gone(work: asyncio.Future[Any], receive: Receive, *, keepalive_s: float | None = None,
                             keepalive: Callable[[], Awaitable[None]] | None = None) -> bool:
    """Wait for `work` unless the client disconnects first (True: the work finished).

    With `keepalive`, it is awaited every `keepalive_s` of silence, so long-lived streams stay open
    through proxies.
    """
    gone = asyncio.ensure_future(wait_disconnect(receive))
    try:
        while True:
            done, _ = await asyncio.wait({work, gone}, timeout=keepalive_s if keepalive else None,
                                         return_when=asyncio.FIRST_COMPLETED)
            if work in done:
                return True
            if gone in done:
                return False
            await keepalive()  # type: ignore[misc]
    finally:
        gone.cancel()
