"""`--upstream NAME=TARGET` and the config file's [[upstream]]: other MCP servers whose tools this one
serves as NAME__TOOL, each connected (and reconnected) in the background."""

from __future__ import annotations

import argparse
from typing import Any

from hexmcp.core import McpServer
from hexmcp.core.pack import BackgroundTask

from .config.upstreams import TOKEN_ENV, upstream_specs


def add_upstream_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", action="append", default=[], type=upstream_spec, metavar="NAME=TARGET",
                        help="serve another MCP server's tools as NAME__TOOL (repeatable; TARGET as for hexmcp call; "
                             f"bearer token from ${TOKEN_ENV}; more options: the config file's [[upstream]])")


def upstream_spec(text: str) -> Any:
    from hexmcp.client import ClientError
    from hexmcp.tools.upstreams.mount import parse_upstream

    try:
        return parse_upstream(text)
    except ClientError as error:
        raise argparse.ArgumentTypeError(error.message) from None


def mount_upstreams(server: McpServer, settings: argparse.Namespace) -> list[BackgroundTask]:
    """The background task of each upstream: connect, serve its tools, reconnect when it goes."""
    specs = upstream_specs(settings)
    if not specs:  # the client (aiohttp, websockets) is imported only when something is mounted
        return []
    from .extras import CLIENT_MODULES, require

    require("--upstream", "client", CLIENT_MODULES)
    from hexmcp.tools.upstreams.mount import Upstream

    return [Upstream(server, spec.name, spec.target, auth_token=spec.auth_token, wait_s=spec.wait_s,
                     retry_initial_s=spec.retry_initial_s, retry_max_s=spec.retry_max_s).run for spec in specs]
