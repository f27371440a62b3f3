"""A throwaway aiohttp app on a free loopback port, for tests that need a misbehaving HTTP peer (a
gateway that redirects, an upstream that answers too much)."""

from __future__ import annotations

import contextlib
from typing import AsyncIterator, Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextlib.asynccontextmanager
async def serving(routes: dict[tuple[str, str], Handler]) -> AsyncIterator[str]:
    """An aiohttp app with these (method, path) routes on a free local port; yields its base URL."""
    app = web.Application()
    for (method, path), handler in routes.items():
        app.router.add_route(method, path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
