"""Run an ASGI app holding a `WsEndpoint` under uvicorn, with the WebSocket-friendly shutdown order.

uvicorn's graceful shutdown closes every open WebSocket at once with 1012 (`connection.shutdown()`)
and only then waits for tasks. Sockets with requests in flight should instead get their answers and
then 1001, so this server runs each endpoint's `shutdown()` first (`uvicorn_fence.HookedServer`, as
the HTTP adapter's runner does for its streams). Used by the tests and the benchmark server.
"""

from __future__ import annotations

from typing import Any, Sequence

import uvicorn

from ..http.uvicorn_fence import HookedServer
from .config import WsConfig
from .endpoint import WsEndpoint


class WsUvicornServer(HookedServer):
    def __init__(self, config: uvicorn.Config, endpoints: Sequence[WsEndpoint]) -> None:
        super().__init__(config)
        self.endpoints = list(endpoints)

    async def before_shutdown(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.shutdown()


def make_server(app: Any, endpoint: WsEndpoint, *, host: str = "127.0.0.1", port: int = 8090,
                ws_config: WsConfig | None = None, log_level: str = "warning", **overrides: Any) -> WsUvicornServer:
    """An unstarted uvicorn server for `app`, with `ws_config`'s frame size and keepalive settings."""
    options: dict[str, Any] = dict(host=host, port=port, log_level=log_level, lifespan="on", access_log=False,
                                   server_header=False, timeout_graceful_shutdown=10,
                                   log_config=None)  # uvicorn's records go through core/log.py's formatter
    options.update((ws_config or endpoint.config).uvicorn_options())
    options.update(overrides)
    return WsUvicornServer(uvicorn.Config(app, **options), [endpoint])
