"""`hexmcp.Server`: a user's own MCP server, served the way `hexmcp serve` and `hexmcp stdio` serve theirs.

    from hexmcp import Server

    server = Server("weather")

    @server.tool()
    async def forecast(city: str, days: int = 3) -> str:
        "The forecast for a city."
        return f"{city}: sunny for {days} days"

    if __name__ == "__main__":
        server.run()  # stdio, what a VS Code mcp.json launches; HEXMCP_TRANSPORT=http: HTTP

Its tools go through the same composition as the built-in packs (compose.py): argument validation
against schemas derived from the type hints, request and event ids, metrics, the audit trail, rate limits
and the tasks extension, on stdio, Streamable HTTP, the REST dialect and WebSocket alike. Settings are
the command's: keyword arguments to `run()`, else `$HEXMCP_<SETTING>`, else the command's default.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Iterable, Mapping

from hexmcp.core import McpServer
from hexmcp.core.pack import Pack
from hexmcp.core.registrar import Registrar

TRANSPORTS = {"stdio": "stdio", "http": "serve"}
TRANSPORT_ENV = "HEXMCP_TRANSPORT"


class Server(Registrar):
    def __init__(self, name: str, version: str = "0.1.0", *, title: str | None = None,
                 instructions: str | None = None, packs: Iterable[str] = ()) -> None:
        """`packs`: built-in or installed tool packs to serve beside this server's own tools, by name
        (`["classification"]`); their flags become settings of `run()`."""
        super().__init__(McpServer(name, version, title=title, instructions=instructions))
        self.pack_names = tuple(packs)

    # --- serving -------------------------------------------------------------------------------------

    def run(self, transport: str | None = None, **settings: Any) -> None:
        """Serve until stopped (EOF on stdin, SIGINT, SIGTERM), then exit with the command's status.
        `transport`: "stdio" or "http" (Streamable HTTP at /mcp, the REST dialect at /mcp/{method},
        WebSocket at /ws and /health, on `host`/`port`, default 127.0.0.1:8090); default
        `$HEXMCP_TRANSPORT`, else stdio, so one file serves a desktop host and, unchanged, the network."""
        sys.exit(self.serve(transport, **settings))

    def serve(self, transport: str | None = None, **settings: Any) -> int:
        """`run()` without the exit: the exit status."""
        from . import serving

        transport = transport or os.environ.get(TRANSPORT_ENV, "stdio")
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        from hexmcp.core.log import configure_logging

        command = TRANSPORTS[transport]
        if command == "stdio":
            from hexmcp.adapters.stdio import claim_stdout

            wire_fd = claim_stdout()  # before anything else can print
            args = self._settings(command, settings)
            configure_logging(args.log_level)
            return serving.run_stdio_serving(serving.Serving.build(args, self._packs(), server=self.mcp), args,
                                             wire_fd=wire_fd)
        args = self._settings(command, settings)
        configure_logging(args.log_level)
        from hexmcp.core.pack import PackProblem

        from .serve_auth import settle_serve_auth

        try:  # as `hexmcp serve` does: a non-loopback host needs a token (or allow_unauthenticated=True)
            settle_serve_auth(args)
        except PackProblem as problem:
            print(f"hexmcp serve: {problem.line}", file=sys.stderr, flush=True)
            return problem.exit_code
        return serving.serve_http(args, self._packs(), server=self.mcp)

    def http_app(self, **settings: Any) -> Any:
        """The HTTP endpoints as one ASGI app to mount in a Starlette or FastAPI service:
        `app.mount("/mcp", server.http_app())` serves Streamable HTTP at /mcp, the REST dialect at
        /mcp/{method}, WebSocket at /mcp/ws and health at /mcp/health. Hand its `lifespan` to the host
        app (`Starlette(lifespan=mcp_app.lifespan)`) to run start-up work and drain at shutdown;
        without it, start-up work begins with the first request."""
        from hexmcp.adapters.http.mounted import MountedApp

        from . import serving

        return MountedApp(serving.http_app(self._settings("serve", settings), self._packs(), server=self.mcp))

    def _settings(self, command: str, given: Mapping[str, Any]) -> argparse.Namespace:
        from .cli import parse_args

        args = parse_args([command])
        for key, value in given.items():
            if not hasattr(args, key):
                raise TypeError(f"unknown setting {key!r} for {command} (the command's flags, with _ for -)")
            setattr(args, key, value)
        return args

    def _packs(self) -> list[Pack]:
        from .packs import installed_packs

        installed = {pack.name: pack for pack in installed_packs()}
        unknown = [name for name in self.pack_names if name not in installed]
        if unknown:
            raise ValueError(f"no installed tool pack named {', '.join(unknown)} (installed: {', '.join(installed)})")
        return [pack for pack in installed.values() if pack.name in self.pack_names]
