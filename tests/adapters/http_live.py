"""A live hexmcp HTTP server on a free port, run by uvicorn in a background thread, for adapter tests."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from hexmcp.adapters.http import HttpApp, HttpConfig, make_server
from hexmcp.core import McpServer

from ..support.net import free_port, uvicorn_in_thread


class LiveServer:
    def __init__(self, server: McpServer, config: HttpConfig, app: HttpApp, uvicorn_server: Any) -> None:
        self.server = server
        self.config = config
        self.app = app
        self._uvicorn = uvicorn_server

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.config.port}"

    @property
    def url(self) -> str:
        return self.base + self.config.path


@contextlib.contextmanager
def live_server(server: McpServer, **config: Any) -> Iterator[LiveServer]:
    app_options = {key: config.pop(key) for key in ("health", "ready", "on_startup", "extra_routes") if key in config}
    http_config = HttpConfig(port=free_port(), **config)
    uvicorn_server, app = make_server(server, http_config, log_level="error", **app_options)
    with uvicorn_in_thread(uvicorn_server, what="HTTP server"):
        yield LiveServer(server, http_config, app, uvicorn_server)
