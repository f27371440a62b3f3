"""hexmcp's HTTP endpoints mounted inside another ASGI application (Starlette, FastAPI).

Mounted at a prefix (`app.mount("/mcp", mounted)`), the prefix itself is the Streamable HTTP endpoint,
`PREFIX/{method}` the REST dialect, `PREFIX/ws` the WebSocket endpoint and `PREFIX/health` health, `PREFIX/livez` liveness, with
every guard the standalone server has. The host's lifespan runs the start-up work and the drain when it
is handed `mounted.lifespan`; a host that does not forward lifespan events still gets the start-up work,
begun by the first request.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

from .app import HttpApp
from .asgi import Receive, Scope, Send

# Paths the standalone app serves at the top level (beside /mcp and /mcp/{method}).
_OWN_PATHS = ("/health", "/livez", "/ws", "/metrics", "/docs/")


class MountedApp:
    def __init__(self, app: HttpApp) -> None:
        self.app = app
        self._started: asyncio.Future[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        await self._start_once()
        path = self.inner_path(scope)
        await self.app({**scope, "path": path, "raw_path": path.encode(), "root_path": ""}, receive, send)

    def inner_path(self, scope: Scope) -> str:
        """The standalone app's path for a request under the mount point."""
        root, path = scope.get("root_path", ""), scope["path"]
        below = path[len(root):] if root and path.startswith(root) else path  # Starlette keeps the full path
        if below in ("", "/"):
            return self.app.config.path
        if below.startswith(_OWN_PATHS) or below in ("/ws", "/health", "/livez", "/metrics"):
            return below
        return self.app.config.path + below

    async def _start_once(self) -> None:
        if self._started is None:
            self._started = asyncio.get_running_loop().create_future()
            await self.app.startup()
            self._started.set_result(None)
        await self._started

    @contextlib.asynccontextmanager
    async def lifespan(self, host: Any = None) -> AsyncIterator[None]:
        """For the host application: `Starlette(lifespan=mounted.lifespan)`."""
        await self._start_once()
        try:
            yield
        finally:
            await self.app.shutdown()
