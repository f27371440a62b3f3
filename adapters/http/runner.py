"""Run the HTTP app under uvicorn, with a shutdown that ends long-lived streams first.

uvicorn's graceful shutdown stops accepting, then waits for every open connection to finish before
it sends the ASGI lifespan shutdown. An SSE stream never finishes by itself, so when shutdown *begins*
(`uvicorn_fence.HookedServer`: listeners closed first, then `before_shutdown`) the app drains: streams
end, the requests and WebSocket calls already received finish within `HttpConfig.drain_timeout_s`, and
uvicorn's own wait gets what is left of that deadline. SIGTERM ends the process with status 0, not
uvicorn's 143.
"""

from __future__ import annotations

import asyncio
import functools
import math
import socket
from typing import Any

import structlog
import uvicorn

from hexmcp.core import McpServer

from hexmcp.core.startup import ExitCode
from .admission import ConnectionLedger
from .app import HttpApp, create_app
from .config import HttpConfig
from .connection_refusals import ConnectionRefusals
from .descriptors import connection_cap, current_soft_limit, raise_open_files_limit
from .uvicorn_fence import GuardedHttpToolsProtocol, HookedServer

log = structlog.get_logger("hexmcp.adapters.http")

DRAIN_FLOOR_S = 1.0
"""What uvicorn's wait for connections still gets after the drain spent its deadline: answers that were
computed in time can still be written."""


class _Server(HookedServer):
    keep_exit_status = True

    def __init__(self, config: uvicorn.Config, app: HttpApp, *, announce: bool = True) -> None:
        super().__init__(config)
        self.http_app = app
        self.announce = announce
        app.on_failure = self.request_exit

    def listening(self) -> None:
        if self.announce:
            port = self.servers[0].sockets[0].getsockname()[1]  # the bound one, whatever --port said
            log.info("listening", url=_http_url(self.http_app.config.host, port), endpoints=self.http_app.endpoints())

    async def before_shutdown(self) -> None:
        started = asyncio.get_running_loop().time()
        await self.http_app.shutdown()
        # One deadline for the whole drain: uvicorn's own wait (for connections still writing) gets what is left.
        left = self.http_app.config.drain_timeout_s - (asyncio.get_running_loop().time() - started)
        self.config.timeout_graceful_shutdown = max(left, DRAIN_FLOOR_S)


def connection_ledger(config: HttpConfig) -> ConnectionLedger:
    """The caps for one server; the total one derived from the open-files limit unless configured."""
    total = config.max_connections or connection_cap(current_soft_limit())
    log.info("connection caps", per_address=config.max_connections_per_address, total=total,
             head_timeout_s=config.head_timeout_s)
    return ConnectionLedger(per_address=config.max_connections_per_address, total=total)


def uvicorn_config(app: HttpApp, config: HttpConfig, *, log_level: str = "warning", **overrides: Any) -> uvicorn.Config:
    # The audit trail, if any, hears the fence's refusals too. The list itself, not a copy: an observer
    # added later is heard. (A bench's bare ASGI app has no core server.)
    observers = getattr(getattr(app, "server", None), "refusal_observers", None)
    protocol = functools.partial(GuardedHttpToolsProtocol, ledger=connection_ledger(config),
                                 head_timeout_s=config.head_timeout_s, max_head_bytes=config.max_head_bytes,
                                 refusals=ConnectionRefusals(observers) if observers is not None else None)
    options: dict[str, Any] = dict(host=config.host, port=config.port, log_level=log_level, lifespan="on",
                                   access_log=False, server_header=False,
                                   timeout_graceful_shutdown=math.ceil(config.drain_timeout_s),
                                   proxy_headers=False, http=protocol,
                                   log_config=None)  # uvicorn's records go through core/log.py's formatter
    options.update(overrides)
    return uvicorn.Config(app, **options)


async def serve_http(server: McpServer, config: HttpConfig, *, log_level: str = "warning",
                     app: HttpApp | None = None, **app_options: Any) -> None:
    """Serve until SIGINT/SIGTERM (or `should_exit`); `app_options` go to `create_app`."""
    http_app = app or create_app(server, config, **app_options)
    await _Server(uvicorn_config(http_app, config, log_level=log_level), http_app).serve()


def _http_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def run_http(server: McpServer, config: HttpConfig, *, log_level: str = "warning",
             uvicorn_options: dict[str, Any] | None = None, sockets: list[socket.socket] | None = None,
             announce: bool = True, **app_options: Any) -> int:
    """Blocking entry point for the CLI and the conformance fixture server; returns the exit status
    (ExitCode.FAILED_AFTER_START when a start-up hook failed and stopped the server).

    Runs on the loop uvicorn would pick for itself (uvloop when installed): a plain `asyncio.run`
    would leave uvicorn on the stdlib loop, which serves noticeably fewer requests a second.
    The soft open-files limit is raised to the hard one first, so the connection cap can use it.
    `sockets`: listening sockets to serve on instead of binding `config.host:port` (a worker of
    `serve --workers N` gets its parent's). `announce`: log where it listens once it accepts (one line,
    "listening", with the URL and the endpoints); the workers of one port leave it to one of them.
    """
    _raise_open_files_limit()
    http_app = create_app(server, config, **app_options)
    uvicorn_server = _Server(uvicorn_config(http_app, config, log_level=log_level, **(uvicorn_options or {})), http_app,
                             announce=announce)
    with asyncio.Runner(loop_factory=uvicorn_server.config.get_loop_factory()) as runner:
        runner.run(uvicorn_server.serve(sockets=sockets))
    return ExitCode.FAILED_AFTER_START if http_app.failure is not None else ExitCode.OK


def _raise_open_files_limit() -> None:
    limit = raise_open_files_limit()
    if limit.error is not None:
        log.warning("open-files limit not raised", soft=limit.soft, hard=limit.hard, error=limit.error)
    else:
        log.info("open-files limit", soft_before=limit.soft_before, soft=limit.soft, hard=limit.hard)


def make_server(server: McpServer, config: HttpConfig, *, log_level: str = "warning",
                **app_options: Any) -> tuple[uvicorn.Server, HttpApp]:
    """An unstarted uvicorn server and its app, for tests that run it in a thread."""
    http_app = create_app(server, config, **app_options)
    return _Server(uvicorn_config(http_app, config, log_level=log_level), http_app), http_app
